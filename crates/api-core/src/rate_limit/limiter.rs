//! [`RateLimiter`]: a rate limit bound to one API URL and key, for pacing one's own work with the
//! SDK's calls; and the [`Limiter`] inside it (and inside every client): the store it was bound
//! to, and how a caller waits there for its slot.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::booking::{Booked, Bookings, MAX_BOOKED, StoreKind};
use super::clock::ns;
use super::config::{RateLimit, RateLimitStore};
#[cfg(feature = "redis")]
use super::fallback::{Fallback, RedisChain};
use super::fallback::{HostChain, host_chain};
use super::host::state_name;
#[cfg(feature = "redis")]
use super::observers::FallbackTo;
use super::observers::{REPORTED_WAIT, WaitObserver};
use super::pacing::{Pace, Ticket};
use super::process::ProcessState;
use super::store::{Answer, Op, Store};

/// A [`RateLimit`] bound to one API URL and key in its store: the limiter a client paces its calls
/// with (`client.rate_limiter()`), or one of [`RateLimit::bind`]. Clones share it.
///
/// ```
/// # async fn run() -> Result<(), api_core::ConfigError> {
/// use std::time::Duration;
///
/// let limiter = "20/2s".parse::<api_core::RateLimit>()?.bind("https://api.example.com", "key-1");
/// limiter.acquire().await;
/// // ... one request of one's own; it answered 429 with `Retry-After: 3`:
/// limiter.throttled(Some(Duration::from_secs(3))).await;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct RateLimiter {
    limiter: Limiter,
}

impl RateLimiter {
    pub(crate) fn new(limiter: Limiter) -> Self {
        Self { limiter }
    }

    /// Waits for the next slot of the shared limit (and, when a 429 came anywhere the state is
    /// shared since it booked, for one after the block); returns how long it waited.
    pub async fn acquire(&self) -> Duration {
        self.limiter.acquire().await
    }

    /// Tells the limit that a request of one's own was answered 429, with the server's wait (else
    /// one interval): everyone sharing the state waits it out and the pace slows, as for the SDK's
    /// own 429s.
    pub async fn throttled(&self, wait: Option<Duration>) {
        self.limiter.throttled(wait, None).await;
    }
}

impl fmt::Debug for RateLimiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RateLimiter")
    }
}

impl RateLimit {
    /// The limiter of the API at `base_url` with the key `key_id`, in this limit's store: the
    /// state a client given this limit uses (its `rate_limiter()` answers the same), so that work of
    /// one's own can be paced with the SDK's calls.
    ///
    /// ```
    /// # async fn run() -> Result<(), api_core::ConfigError> {
    /// let limit: api_core::RateLimit = "20/2s".parse()?;
    /// let limiter = limit.bind("https://api.example.com", "key-1");
    /// limiter.acquire().await; // the first goes at once
    /// # Ok(()) }
    /// ```
    pub fn bind(&self, base_url: &str, key_id: &str) -> RateLimiter {
        RateLimiter::new(Limiter::new(self, base_url, key_id))
    }
}

/// The limit of one API URL and key: where its state lives, and how to wait for a slot.
#[derive(Clone)]
pub(crate) struct Limiter {
    pace: Pace,
    backend: Backend,
    observer: Option<WaitObserver>,
    /// The slots this limiter holds booked (at most [`MAX_BOOKED`]),
    /// and those its callers gave up.
    bookings: Arc<Bookings>,
}

#[derive(Clone)]
enum Backend {
    Process(Arc<ProcessState>),
    Host(Arc<HostChain>),
    #[cfg(feature = "redis")]
    Redis(Arc<RedisChain>),
}

impl Limiter {
    pub(crate) fn new(limit: &RateLimit, base_url: &str, key_id: &str) -> Self {
        let name = state_name(base_url, key_id);
        let on_change = limit.on_fallback.clone();
        let backend = match &limit.store {
            RateLimitStore::Process => Backend::Process(Arc::clone(&limit.process)),
            RateLimitStore::Host { dir } => {
                Backend::Host(Arc::new(host_chain(dir.as_deref(), &name, on_change)))
            }
            #[cfg(feature = "redis")]
            RateLimitStore::Redis(url) => Backend::Redis(Arc::new(Fallback::new(
                super::redis::RedisStore::new(url, &super::redis::key(base_url, key_id)),
                host_chain(None, &name, on_change.clone()),
                url.describe(),
                FallbackTo::Host,
                super::redis::RETRY_AFTER,
                on_change,
            ))),
            #[cfg(not(feature = "redis"))]
            RateLimitStore::Redis(url) => match url.never {},
        };
        Self {
            backend,
            ..Self::in_process(limit)
        }
    }

    /// The limit paced in this process's own state, whatever its store.
    pub(crate) fn in_process(limit: &RateLimit) -> Self {
        Self {
            pace: Pace::new(limit.max(), ns(limit.window())),
            backend: Backend::Process(Arc::clone(&limit.process)),
            observer: limit.observer.clone(),
            bookings: Arc::default(),
        }
    }

    /// Runs `op` in the store, or in what paces while it cannot be used.
    async fn update(&self, op: Op) -> Answer {
        let answered = match &self.backend {
            Backend::Process(state) => state.update(self.pace, op).await,
            Backend::Host(host) => host.update(self.pace, op).await,
            #[cfg(feature = "redis")]
            Backend::Redis(redis) => redis.update(self.pace, op).await,
        };
        let Ok(answer) = answered;
        answer
    }

    /// A booking from `answer` (a reservation always answers one).
    async fn book(&self, op: Op) -> Booked {
        match self.update(op).await {
            Answer::Booked(booked) => booked,
            // Only a confirmation answers `Go`, and a 429 `Recorded`: not asked here.
            Answer::Go | Answer::Recorded => Booked {
                ticket: Ticket {
                    wait: 0,
                    generation: 0,
                    blocked: false,
                    before: 0,
                },
                store: StoreKind::Process,
            },
        }
    }

    /// Takes the next slot and waits for it; just before it goes, checks that no 429 came in the
    /// meantime anywhere the state is shared (else it books again, after the block). At most
    /// [`MAX_BOOKED`] callers of this limiter hold a booking at once
    /// (the others wait their turn here), and a caller dropped before its slot leaves it to the
    /// next. Returns how long it waited.
    pub(crate) async fn acquire(&self) -> Duration {
        self.acquire_traced(&tracing::Span::none()).await.0
    }

    /// [`acquire`](Self::acquire), telling `span` (a rate-limit wait span) whether a block held the
    /// slot back; with the slot the request goes on (for [`throttled`](Self::throttled)).
    pub(crate) async fn acquire_traced(&self, span: &tracing::Span) -> (Duration, Booked) {
        let (mut turn, mut waited) = self
            .bookings
            .turn(|ahead| {
                // Its slot comes after the bookings held and one per caller ahead: said now, as
                // an estimate at the configured pace, when it is long.
                let slots = u32::try_from(ahead)
                    .unwrap_or(u32::MAX)
                    .saturating_add(MAX_BOOKED + 1);
                let estimate = Duration::from_nanos(self.pace.interval).saturating_mul(slots);
                if estimate > REPORTED_WAIT
                    && let Some(observer) = &self.observer
                {
                    observer(estimate);
                }
            })
            .await;
        let mut booked = match turn.spare() {
            Some(spare) => spare,
            None => self.book(Op::Reserve).await,
        };
        let mut blocked = booked.ticket.blocked;
        while booked.ticket.wait > 0 {
            let wait = Duration::from_nanos(booked.ticket.wait);
            if wait > REPORTED_WAIT
                && let Some(observer) = &self.observer
            {
                observer(wait);
            }
            turn.wait_for(booked).await;
            waited += wait;
            match self.update(Op::Confirm(booked)).await {
                Answer::Booked(again) => {
                    blocked |= again.ticket.blocked;
                    booked = again;
                }
                Answer::Go | Answer::Recorded => break,
            }
        }
        drop(turn);
        if !span.is_disabled() {
            span.record("cloud_api.rate_limit.blocked", blocked);
            span.record("cloud_api.rate_limit.store", self.answering());
        }
        (waited, booked)
    }

    /// The store that answers now, as a wait span names it: `process`, `host` or `redis` (the
    /// host store while Redis is left alone after a failure, the process while the host file is).
    fn answering(&self) -> &'static str {
        match &self.backend {
            Backend::Process(state) => state.answering(),
            Backend::Host(host) => host.answering(),
            #[cfg(feature = "redis")]
            Backend::Redis(redis) => redis.answering(),
        }
    }

    /// A 429 answered to a request sent on the slot `sent` (when known): everyone sharing the
    /// state waits `wait` (the server's, else one interval; at most a few windows), the
    /// reservations made before it are stale, and the rate drops, unless another 429 cut it since
    /// the request's slot was booked.
    pub(crate) async fn throttled(&self, wait: Option<Duration>, sent: Option<Booked>) {
        let wait = wait.map_or(self.pace.interval, ns);
        self.update(Op::Throttled { wait, sent }).await;
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{Backend, Limiter};
    use crate::RateLimit;
    use crate::rate_limit::pacing::DECREASE;

    /// Ten calls sent on slots of one generation, each answered 429 without a wait, the answers
    /// spread past each one's block: the rate is cut once; ten 429s of unknown slots (a caller's
    /// own) cut it each time, as the rule did for all of them before.
    #[tokio::test(flavor = "current_thread")]
    async fn ten_429s_of_calls_in_flight_together_cut_the_rate_once() {
        let share_after = |known: bool| {
            // A state of its own each time.
            let limiter =
                Limiter::in_process(&RateLimit::new(1000, Duration::from_secs(1)).unwrap());
            async move {
                let mut slots = Vec::new();
                for _ in 0..10 {
                    slots.push(limiter.acquire_traced(&tracing::Span::none()).await.1);
                    // Each alone in its span (32 ms) when booked: what a 429 says of the server's
                    // limit is another test's (pacing.rs); this one is about when 429s cut.
                    tokio::time::sleep(Duration::from_millis(40)).await;
                }
                for slot in slots {
                    // Past the block of the 429 before (one interval, 1 ms).
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    limiter.throttled(None, known.then_some(slot)).await;
                }
                let Backend::Process(state) = &limiter.backend else {
                    panic!("a process store")
                };
                state.with(|state, now| (state, limiter.pace.share(&state, now)))
            }
        };
        let known = share_after(true).await;
        assert!((known - DECREASE).abs() < 0.01, "one cut: {known}");
        let unknown = share_after(false).await;
        assert!(unknown < DECREASE.powi(9), "a cut each: {unknown}");
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_429_of_ones_own_holds_the_next_slot_back() {
        let limiter = RateLimit::new(100, Duration::from_secs(1))
            .unwrap()
            .bind("http://h", "k");
        assert_eq!(format!("{limiter:?}"), "RateLimiter");
        assert_eq!(limiter.acquire().await, Duration::ZERO);
        limiter.throttled(Some(Duration::from_millis(300))).await;
        let waited = limiter.clone().acquire().await;
        assert!(waited >= Duration::from_millis(250), "{waited:?}");
    }
}

#[cfg(test)]
mod limiter_tests {
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::*;
    use crate::rate_limit::fallback::Fallback;
    use crate::rate_limit::host::{HostFile, HostStore, LOCK_WAIT};
    use crate::rate_limit::observers::{FallbackObserver, FallbackTo, StoreChange};
    use crate::rate_limit::pacing::PaceState;

    /// A 429 with a 300 ms wait seen through `throttled` holds the next request of `waiting` back.
    async fn a_429_holds_back(throttled: &Limiter, waiting: &Limiter) {
        throttled
            .throttled(Some(Duration::from_millis(300)), None)
            .await;
        let held = std::time::Instant::now();
        waiting.acquire().await;
        assert!(
            held.elapsed() >= Duration::from_millis(250),
            "{:?}",
            held.elapsed()
        );
    }

    #[tokio::test(flavor = "current_thread")]
    async fn two_limiters_on_one_host_file_share_the_pace() {
        let dir = tempfile::tempdir().unwrap();
        // One at a time, 102 ms apart (and a block of up to 400 ms).
        let limit = RateLimit::new(1, Duration::from_millis(100))
            .unwrap()
            .store(RateLimitStore::Host {
                dir: Some(dir.path().to_path_buf()),
            });
        // Two bindings stand for two processes: they share nothing but the file.
        let (a, b) = (
            Limiter::new(&limit, "http://h", "k"),
            Limiter::new(&limit, "http://h", "k"),
        );
        let started = std::time::Instant::now();
        for _ in 0..3 {
            a.acquire().await;
            b.acquire().await;
        }
        assert!(
            started.elapsed() >= Duration::from_millis(250),
            "{:?}",
            started.elapsed()
        );
        // Another key has a file (and a pace) of its own.
        let other = Limiter::new(&limit, "http://h", "other");
        let quick = std::time::Instant::now();
        other.acquire().await;
        assert!(quick.elapsed() < Duration::from_millis(40));
        // A 429 holds everyone sharing the file back.
        a_429_holds_back(&a, &b).await;
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_long_wait_is_told_and_a_short_one_is_not() {
        let told = Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = told.clone();
        let limit = RateLimit::new(1, Duration::from_millis(1200))
            .unwrap()
            .on_wait(move |wait| seen.lock().unwrap().push(wait));
        let limiter = Limiter::new(&limit, "http://h", "k");
        assert_eq!(limiter.acquire().await, Duration::ZERO);
        // The next slot is 1.224 s away: told, then waited.
        let waited = limiter.acquire().await;
        assert!(waited > REPORTED_WAIT, "{waited:?}");
        assert_eq!(told.lock().unwrap().as_slice(), &[waited]);
        let short = RateLimit::new(2, Duration::from_millis(1200)).unwrap();
        let seen = Arc::new(AtomicBool::new(false));
        let noticed = seen.clone();
        let short = short.on_wait(move |_| noticed.store(true, Ordering::Relaxed));
        let limiter = Limiter::new(&short, "http://h", "k");
        limiter.acquire().await;
        limiter.acquire().await;
        assert!(
            !seen.load(Ordering::Relaxed),
            "a wait under a second is not told"
        );
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_host_file_that_cannot_be_used_paces_in_the_process_and_keeps_429s() {
        let dir = tempfile::tempdir().unwrap();
        // A file where the state's directory would be: nothing can be created under it.
        let blocked = dir.path().join("not-a-dir");
        std::fs::write(&blocked, "x").unwrap();
        let limit = RateLimit::new(10, Duration::from_millis(500))
            .unwrap()
            .store(RateLimitStore::Host {
                dir: Some(blocked.join("inner")),
            });
        let limiter = Limiter::new(&limit, "http://h", "k");
        let Backend::Host(host) = &limiter.backend else {
            panic!("a host store")
        };
        assert!(!host.is_out());
        limiter.acquire().await;
        assert!(host.is_out(), "fell back");
        a_429_holds_back(&limiter, &limiter).await;
    }

    #[tokio::test(flavor = "current_thread")]
    async fn the_process_store_shares_429s_between_clones() {
        let limit = RateLimit::new(100, Duration::from_secs(1)).unwrap();
        let (a, b) = (
            Limiter::new(&limit, "", ""),
            Limiter::new(&limit.clone(), "", ""),
        );
        a_429_holds_back(&a, &b).await;
    }

    /// Three calls of `waiting` book their slots (0, 306 and 612 ms); 20 ms in, `throttled` draws a
    /// 429 asking for a second. The calls booked before it do not go out into the block: each
    /// checks just before it sends, and books again after it. The times the three went at.
    async fn booked_calls_during_a_block(throttled: &Limiter, waiting: &Limiter) -> Vec<Duration> {
        let started = std::time::Instant::now();
        let calls: Vec<_> = (0..3)
            .map(|_| {
                let waiting = waiting.clone();
                tokio::spawn(async move {
                    waiting.acquire().await;
                    started.elapsed()
                })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(20)).await;
        throttled
            .throttled(Some(Duration::from_secs(1)), None)
            .await;
        let mut went = Vec::new();
        for call in calls {
            went.push(call.await.unwrap());
        }
        went.sort();
        went
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_call_booked_before_a_429_does_not_go_out_into_the_block() {
        let dir = tempfile::tempdir().unwrap();
        // One at a time, 306 ms apart; a block of up to 1.2 s.
        let one = || RateLimit::new(1, Duration::from_millis(300)).unwrap();
        let limit = one().store(RateLimitStore::Host {
            dir: Some(dir.path().to_path_buf()),
        });
        for (store, went) in [
            (
                "host",
                booked_calls_during_a_block(
                    &Limiter::new(&limit, "http://h", "k"),
                    &Limiter::new(&limit, "http://h", "k"),
                )
                .await,
            ),
            (
                "process",
                booked_calls_during_a_block(
                    &Limiter::new(&one(), "", ""),
                    &Limiter::new(&one(), "", ""),
                )
                .await,
            ),
        ] {
            if store == "process" {
                // Two process stores share nothing: the control, where the booked calls go on.
                assert!(went[2] < Duration::from_millis(900), "{store}: {went:?}");
                continue;
            }
            assert!(
                went[0] < Duration::from_millis(50),
                "the first went at once: {went:?}"
            );
            // The two booked ones go after the block (1.02 s), at the slower pace the 429 left.
            assert!(went[1] >= Duration::from_millis(1_000), "{store}: {went:?}");
            assert!(
                went[2] >= went[1] + Duration::from_millis(120),
                "{store}: {went:?}"
            );
        }
        // Clones of one process store share the 429 the same way.
        let shared = one();
        let went = booked_calls_during_a_block(
            &Limiter::new(&shared, "", ""),
            &Limiter::new(&shared.clone(), "", ""),
        )
        .await;
        assert!(went[1] >= Duration::from_millis(1_000), "process: {went:?}");
    }

    /// The changes told to an observer, kept.
    fn recording() -> (Arc<std::sync::Mutex<Vec<StoreChange>>>, FallbackObserver) {
        let told = Arc::new(std::sync::Mutex::new(Vec::<StoreChange>::new()));
        let seen = Arc::clone(&told);
        let observer: FallbackObserver =
            Arc::new(move |change: &StoreChange| seen.lock().unwrap().push(change.clone()));
        (told, observer)
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_host_file_locked_elsewhere_paces_in_the_process_and_says_so_once() {
        let dir = tempfile::tempdir().unwrap();
        let (told, observer) = recording();
        let limit = RateLimit::new(10, Duration::from_millis(500))
            .unwrap()
            .store(RateLimitStore::Host {
                dir: Some(dir.path().to_path_buf()),
            })
            .on_fallback(move |change| observer(change));
        let limiter = Limiter::new(&limit, "http://h", "k");
        limiter.acquire().await;
        let Backend::Host(host) = &limiter.backend else {
            panic!("a host store")
        };
        // Another process holds the file's lock and hangs.
        let holder = std::fs::File::open(host.primary().path()).unwrap();
        holder.lock().unwrap();
        let started = std::time::Instant::now();
        limiter.acquire().await;
        limiter.acquire().await;
        assert!(started.elapsed() < LOCK_WAIT * 2, "{:?}", started.elapsed());
        let told = told.lock().unwrap();
        assert_eq!(told.len(), 1, "said once while it rests: {told:?}");
        let StoreChange::FellBack(fallback) = &told[0] else {
            panic!("{told:?}")
        };
        assert_eq!(fallback.instead, FallbackTo::Process);
        assert!(told[0].to_string().contains("stayed locked"), "{}", told[0]);
    }

    /// Every change is told, not only the first: a fall back, the store answering again after its
    /// rest, a second outage, a second recovery; and a slot booked in the fallback is not confirmed
    /// by the store's own generation (the caller books again in the store that answers).
    #[tokio::test(flavor = "current_thread")]
    async fn each_fall_back_and_each_recovery_is_told() {
        let dir = tempfile::tempdir().unwrap();
        let (told, observer) = recording();
        let file = HostFile::new(Some(dir.path()), "k");
        let path = file.path().to_path_buf();
        let chain = Fallback::new(
            HostStore::new(file),
            ProcessState::default(),
            "host".to_string(),
            FallbackTo::Process,
            Duration::from_millis(300),
            Some(observer),
        );
        let pace = Pace::new(1_000, 1_000_000);
        let Ok(Answer::Booked(first)) = chain.update(pace, Op::Reserve).await else {
            panic!("a reservation books")
        };
        assert_eq!(first.store, StoreKind::Host);
        let holder = std::fs::File::open(&path).unwrap();
        for outage in 1..=2 {
            holder.lock().unwrap();
            let Ok(Answer::Booked(during)) = chain.update(pace, Op::Reserve).await else {
                panic!("the process paces")
            };
            assert_eq!(during.store, StoreKind::Process);
            holder.unlock().unwrap();
            tokio::time::sleep(Duration::from_millis(350)).await;
            // Back in the file: the slot the process booked is booked again there.
            let Ok(Answer::Booked(again)) = chain.update(pace, Op::Confirm(during)).await else {
                panic!("booked again, not confirmed by another store's generation")
            };
            assert_eq!(again.store, StoreKind::Host);
            let told = told.lock().unwrap();
            assert_eq!(told.len(), 2 * outage, "{told:?}");
            assert!(matches!(told[2 * outage - 2], StoreChange::FellBack(_)));
            let StoreChange::Recovered { from, after, .. } = &told[2 * outage - 1] else {
                panic!("{told:?}")
            };
            assert_eq!(*from, FallbackTo::Process);
            assert!(*after >= Duration::from_millis(300), "{after:?}");
        }
        // Said with the store and how long it was out, whatever that was on a loaded machine (the
        // rest is 300 ms, the file's lock and the sleep above can take a second and more).
        let told = told.lock().unwrap();
        let StoreChange::Recovered { after, .. } = &told[1] else {
            panic!("{told:?}")
        };
        assert_eq!(
            told[1].to_string(),
            format!(
                "the rate limit store host answers again after {:.1}s; pacing through it",
                after.as_secs_f64()
            )
        );
    }

    /// A store that answers from a script: each request takes the next `(delay, answered)`.
    struct Scripted(std::sync::Mutex<std::collections::VecDeque<(Duration, bool)>>);

    impl Store for Scripted {
        type Error = String;

        async fn update(&self, _pace: Pace, _op: Op) -> Result<Answer, String> {
            let next = self.0.lock().unwrap().pop_front();
            let (delay, answered) = next.expect("a scripted answer");
            tokio::time::sleep(delay).await;
            if answered {
                Ok(Answer::Recorded)
            } else {
                Err("refused".into())
            }
        }

        fn answering(&self) -> &'static str {
            "scripted"
        }
    }

    /// A request sent before the store failed, answered after, is no recovery: the store rests
    /// on, and only a request sent after the failure that gets an answer tells one.
    #[tokio::test(flavor = "current_thread")]
    async fn a_late_answer_to_a_request_sent_before_a_failure_is_no_recovery() {
        let (told, observer) = recording();
        let script = [
            (Duration::from_millis(100), true),
            (Duration::ZERO, false),
            (Duration::ZERO, true),
        ];
        let chain = Fallback::new(
            Scripted(std::sync::Mutex::new(script.into())),
            ProcessState::default(),
            "scripted".to_string(),
            FallbackTo::Process,
            Duration::from_millis(200),
            Some(observer),
        );
        let pace = Pace::new(1_000, 1_000_000);
        let early = chain.update(
            pace,
            Op::Throttled {
                wait: 0,
                sent: None,
            },
        );
        let failing = async {
            tokio::time::sleep(Duration::from_millis(10)).await;
            chain
                .update(
                    pace,
                    Op::Throttled {
                        wait: 0,
                        sent: None,
                    },
                )
                .await
        };
        let _ = tokio::join!(early, failing);
        assert_eq!(told.lock().unwrap().len(), 1, "{:?}", told.lock().unwrap());
        assert!(chain.is_out(), "still out after the late answer");
        tokio::time::sleep(Duration::from_millis(250)).await;
        let _ = chain
            .update(
                pace,
                Op::Throttled {
                    wait: 0,
                    sent: None,
                },
            )
            .await;
        let told = told.lock().unwrap();
        assert!(
            matches!(
                told.as_slice(),
                [StoreChange::FellBack(_), StoreChange::Recovered { .. }]
            ),
            "{told:?}"
        );
    }

    #[test]
    fn a_confirmation_in_another_store_is_a_new_reservation() {
        let pace = Pace::new(1_000, 1_000_000);
        let ticket = Ticket {
            wait: 0,
            generation: 0,
            blocked: false,
            before: 0,
        };
        let from_redis = Booked {
            ticket,
            store: StoreKind::Redis,
        };
        // Same generation number (0), other store: booked anew, not told to go.
        let (_, answer) = pace.apply(
            StoreKind::Host,
            PaceState::default(),
            5,
            Op::Confirm(from_redis),
        );
        assert!(matches!(answer, Answer::Booked(b) if b.store == StoreKind::Host));
        let (_, answer) = pace.apply(
            StoreKind::Redis,
            PaceState::default(),
            5,
            Op::Confirm(from_redis),
        );
        assert_eq!(answer, Answer::Go);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_caller_that_gives_up_leaves_its_slot_to_the_next() {
        // One at a time, 102 ms apart.
        let limiter = Limiter::new(
            &RateLimit::new(1, Duration::from_millis(100)).unwrap(),
            "http://h",
            "k",
        );
        let started = std::time::Instant::now();
        limiter.acquire().await;
        // The second books the slot at 102 ms, and gives up 20 ms in.
        let gave_up = tokio::time::timeout(Duration::from_millis(20), limiter.acquire()).await;
        assert!(gave_up.is_err());
        // The third goes in that slot, not one after it.
        limiter.acquire().await;
        let third = started.elapsed();
        limiter.acquire().await;
        let fourth = started.elapsed();
        assert!(
            third >= Duration::from_millis(95) && third < Duration::from_millis(180),
            "the third went at {third:?}"
        );
        assert!(fourth >= Duration::from_millis(195), "{fourth:?}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_busy_limiter_books_two_slots_ahead_and_no_more() {
        let dir = tempfile::tempdir().unwrap();
        // One at a time, 51 ms apart.
        let limit =
            RateLimit::new(1, Duration::from_millis(50))
                .unwrap()
                .store(RateLimitStore::Host {
                    dir: Some(dir.path().to_path_buf()),
                });
        // Forty callers of one process (a `buffer_unordered(40)`), and another process.
        let busy = Limiter::new(&limit, "http://h", "k");
        let callers: Vec<_> = (0..40)
            .map(|_| {
                let busy = busy.clone();
                tokio::spawn(async move { busy.acquire().await })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(30)).await;
        let other = Limiter::new(&limit, "http://h", "k");
        let waited = other.acquire().await;
        // The busy process holds two slots (51 ms apart, `MAX_BOOKED`), the other takes the
        // next: not the 41st, two seconds away.
        assert!(
            waited <= Duration::from_millis(51 * 3),
            "the other process waited {waited:?}"
        );
        for caller in callers {
            caller.abort();
        }
    }
}
