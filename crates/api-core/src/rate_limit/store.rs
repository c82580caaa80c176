//! [`Limiter`]: one API URL and key's limit, bound to the store that keeps its state. Every store
//! answers one interface, [`Store::update`] with an [`Op`], and a store that can fail (the host
//! file, Redis) is wrapped once in a [`Fallback`] with the store that paces while it rests.

use std::convert::Infallible;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::booking::Bookings;
use super::host::{HostFile, LOCK_WAIT};
use super::pacing::{Pace, PaceState, Ticket};
use super::process::ProcessState;
use super::rest::Rest;
use super::{
    FallbackObserver, FallbackTo, REPORTED_WAIT, RateLimit, RateLimitStore, StoreChange,
    StoreFallback, WaitObserver, ns,
};

/// How long the host store's file is left alone after it could not be used (a lock held too long,
/// a hung mount): the process paces alone meanwhile.
const HOST_REST: Duration = Duration::from_secs(30);

/// Which store a state lives in: each keeps counters (generations) of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StoreKind {
    Process,
    Host,
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    Redis,
}

impl StoreKind {
    /// The name a wait span gives it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Process => "process",
            Self::Host => "host",
            Self::Redis => "redis",
        }
    }
}

/// A slot booked, and the store that booked it: only that store's generation says whether a 429
/// came since.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Booked {
    pub(crate) ticket: Ticket,
    pub(crate) store: StoreKind,
}

/// One change of a limit's state.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Op {
    /// Book the next slot.
    Reserve,
    /// At the slot's time: go, unless a 429 came since it was booked (then book again). A slot
    /// booked in another store (before a fallback or a recovery) is booked again here.
    Confirm(Booked),
    /// A 429 that asked to wait this many nanoseconds.
    Throttled(u64),
}

/// What a store answers an [`Op`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Answer {
    /// A slot to wait for.
    Booked(Booked),
    /// The confirmed slot is the caller's: send.
    Go,
    /// The 429 is recorded.
    Recorded,
}

impl Op {
    /// The op as a store of `kind` runs it: a confirmation of a slot another store booked is a
    /// new reservation (this store's generation says nothing of it).
    pub(crate) fn in_store(self, kind: StoreKind) -> Self {
        match self {
            Self::Confirm(booked) if booked.store != kind => Self::Reserve,
            op => op,
        }
    }
}

impl Pace {
    /// Runs `op` on `state` at `now`, in a store of `kind`: the rule every store in Rust shares
    /// (the Redis store runs its Lua twin).
    pub(crate) fn apply(
        &self,
        kind: StoreKind,
        state: PaceState,
        now: u64,
        op: Op,
    ) -> (PaceState, Answer) {
        let booked = |ticket| {
            Answer::Booked(Booked {
                ticket,
                store: kind,
            })
        };
        match op.in_store(kind) {
            Op::Reserve => {
                let (state, ticket) = self.reserve(state, now);
                (state, booked(ticket))
            }
            Op::Confirm(held) => match self.confirm(state, now, held.ticket) {
                (state, None) => (state, Answer::Go),
                (state, Some(ticket)) => (state, booked(ticket)),
            },
            Op::Throttled(wait) => (self.throttled(state, now, wait), Answer::Recorded),
        }
    }
}

/// A store of a limit's state.
pub(crate) trait Store: Send + Sync {
    /// Why the store cannot be used now ([`Infallible`] for one that always can).
    type Error: Send;

    /// Runs `op` on the state.
    fn update(
        &self,
        pace: Pace,
        op: Op,
    ) -> impl Future<Output = Result<Answer, Self::Error>> + Send;

    /// The store that answers now, as a wait span names it.
    fn answering(&self) -> &'static str;
}

impl Store for ProcessState {
    type Error = Infallible;

    async fn update(&self, pace: Pace, op: Op) -> Result<Answer, Infallible> {
        Ok(self.with(|state, now| pace.apply(StoreKind::Process, state, now, op)))
    }

    fn answering(&self) -> &'static str {
        StoreKind::Process.name()
    }
}

/// The host store: the state file, worked on off the async threads, with a bound on the wait (a
/// lock held elsewhere past [`LOCK_WAIT`], a hung mount).
pub(crate) struct HostStore(Arc<HostFile>);

impl HostStore {
    pub(crate) fn new(file: HostFile) -> Self {
        Self(Arc::new(file))
    }

    /// The state file's path.
    #[cfg(test)]
    pub(crate) fn path(&self) -> &std::path::Path {
        self.0.path()
    }
}

impl Store for HostStore {
    type Error = String;

    async fn update(&self, pace: Pace, op: Op) -> Result<Answer, String> {
        let file = Arc::clone(&self.0);
        let work = tokio::task::spawn_blocking(move || {
            file.update(|state, now| pace.apply(StoreKind::Host, state, now, op))
        });
        match tokio::time::timeout(LOCK_WAIT + Duration::from_millis(500), work).await {
            Ok(Ok(Ok(answer))) => Ok(answer),
            Ok(Ok(Err(e))) => Err(e.to_string()),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err("no answer in time".to_string()),
        }
    }

    fn answering(&self) -> &'static str {
        StoreKind::Host.name()
    }
}

/// A store that can fail, and the store that paces while it rests after a failure: the one
/// fallback rule. A failure leaves the primary alone for a while (a hung mount or an unreachable
/// Redis then costs the calls that follow nothing), and every change is told: each fall back, and
/// each recovery when the primary answers again.
pub(crate) struct Fallback<P, F> {
    primary: P,
    fallback: F,
    /// The primary as events name it: `host (<file>)`, or the Redis URL with its password redacted.
    store: String,
    /// What the fallback is.
    instead: FallbackTo,
    /// How long the primary is left alone after a failure.
    rest: Duration,
    resting: Rest,
    /// Since when the primary has been out (a failure not yet followed by an answer).
    out: Mutex<Option<Instant>>,
    on_change: Option<FallbackObserver>,
}

impl<P, F> Fallback<P, F> {
    pub(crate) fn new(
        primary: P,
        fallback: F,
        store: String,
        instead: FallbackTo,
        rest: Duration,
        on_change: Option<FallbackObserver>,
    ) -> Self {
        Self {
            primary,
            fallback,
            store,
            instead,
            rest,
            resting: Rest::default(),
            out: Mutex::new(None),
            on_change,
        }
    }

    /// Whether the primary is out now (it failed and has not answered since).
    #[cfg(test)]
    pub(crate) fn is_out(&self) -> bool {
        self.out
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }

    /// The primary, for the tests.
    #[cfg(test)]
    pub(crate) fn primary(&self) -> &P {
        &self.primary
    }

    fn tell(&self, change: &StoreChange) {
        match change {
            StoreChange::FellBack(fallback) => {
                tracing::warn!(store = %fallback.store, error = %fallback.reason, "{change}");
            }
            _ => tracing::info!(store = %self.store, "{change}"),
        }
        if let Some(observer) = &self.on_change {
            observer(change);
        }
    }

    /// The primary failed: it rests, and a fall back is told unless it is out already. Told under
    /// the lock, so that the changes reach the observer in the order they happened.
    fn failed(&self, reason: String) {
        self.resting.rest_for(self.rest);
        let mut out = self.out.lock().unwrap_or_else(PoisonError::into_inner);
        if out.is_none() {
            *out = Some(Instant::now());
            self.tell(&StoreChange::FellBack(StoreFallback {
                store: self.store.clone(),
                instead: self.instead,
                reason,
            }));
        }
    }

    /// The primary answered a request sent at `sent`: a recovery when it was out, and the request
    /// went after the failure (one sent before it, answered late, says nothing of the store now).
    fn answered(&self, sent: Instant) {
        let mut out = self.out.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(since) = *out
            && sent > since
        {
            *out = None;
            self.tell(&StoreChange::Recovered {
                store: self.store.clone(),
                from: self.instead,
                after: since.elapsed(),
            });
        }
    }
}

impl<P, F> Store for Fallback<P, F>
where
    P: Store<Error = String>,
    F: Store,
{
    type Error = F::Error;

    async fn update(&self, pace: Pace, op: Op) -> Result<Answer, F::Error> {
        if !self.resting.is_resting() {
            let sent = Instant::now();
            match self.primary.update(pace, op).await {
                Ok(answer) => {
                    self.answered(sent);
                    return Ok(answer);
                }
                Err(reason) => self.failed(reason),
            }
        }
        self.fallback.update(pace, op).await
    }

    fn answering(&self) -> &'static str {
        if self.resting.is_resting() {
            self.fallback.answering()
        } else {
            self.primary.answering()
        }
    }
}

/// The host store, and this process while its file cannot be used.
pub(crate) type HostChain = Fallback<HostStore, ProcessState>;

/// Redis, and the host store while Redis cannot be reached.
#[cfg(feature = "redis")]
pub(crate) type RedisChain = Fallback<super::redis::RedisStore, HostChain>;

/// The limit of one API URL and key: where its state lives, and how to wait for a slot.
#[derive(Clone)]
pub(crate) struct Limiter {
    pace: Pace,
    backend: Backend,
    observer: Option<WaitObserver>,
    /// The slots this limiter holds booked (at most [`MAX_BOOKED`](super::booking::MAX_BOOKED)),
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

/// The host chain of the state file `name` in `dir` (the default directory for `None`).
pub(crate) fn host_chain(
    dir: Option<&std::path::Path>,
    name: &str,
    on_change: Option<FallbackObserver>,
) -> HostChain {
    let file = HostFile::new(dir, name);
    let store = format!("host ({})", file.path().display());
    Fallback::new(
        HostStore::new(file),
        ProcessState::default(),
        store,
        FallbackTo::Process,
        HOST_REST,
        on_change,
    )
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
                super::redis::RedisStore::new(url, &redis_key(base_url, key_id)),
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
            pace: Pace {
                interval: ns(limit.interval),
                window: ns(limit.window),
            },
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
                },
                store: StoreKind::Process,
            },
        }
    }

    /// Takes the next slot and waits for it; just before it goes, checks that no 429 came in the
    /// meantime anywhere the state is shared (else it books again, after the block). At most
    /// [`MAX_BOOKED`](super::booking::MAX_BOOKED) callers of this limiter hold a booking at once
    /// (the others wait their turn here), and a caller dropped before its slot leaves it to the
    /// next. Returns how long it waited.
    pub(crate) async fn acquire(&self) -> Duration {
        self.acquire_traced(&tracing::Span::none()).await
    }

    /// [`acquire`](Self::acquire), telling `span` (a rate-limit wait span) whether a block held the
    /// slot back.
    pub(crate) async fn acquire_traced(&self, span: &tracing::Span) -> Duration {
        let (mut turn, mut waited) = self
            .bookings
            .turn(|ahead| {
                // Its slot comes after the bookings held and one per caller ahead: said now, as
                // an estimate at the configured pace, when it is long.
                let slots = u32::try_from(ahead)
                    .unwrap_or(u32::MAX)
                    .saturating_add(super::booking::MAX_BOOKED + 1);
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
        waited
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

    /// A 429 answered: everyone sharing the state waits `wait` (the server's, else one interval;
    /// at most a few windows), the reservations made before it are stale, and the rate drops.
    pub(crate) async fn throttled(&self, wait: Option<Duration>) {
        let wait = wait.map_or(self.pace.interval, ns);
        self.update(Op::Throttled(wait)).await;
    }
}

/// The state file's name for an API URL and key id: readable, safe in a file name, and distinct
/// per pair (the secret never enters it).
fn state_name(base_url: &str, key_id: &str) -> String {
    let host: String = base_url
        .split("://")
        .nth(1)
        .unwrap_or(base_url)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    format!(
        "{host}-{:016x}",
        fnv(format!("{base_url}\n{key_id}").as_bytes())
    )
}

/// The Redis key for an API URL and key id.
#[cfg_attr(not(feature = "redis"), allow(dead_code))]
fn redis_key(base_url: &str, key_id: &str) -> String {
    format!("cloud-sdk:rate-limit:{base_url}:{key_id}")
}

/// FNV-1a, 64 bits: a stable name and checksum (not a secret's hash: no secret goes in).
pub(crate) fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::*;

    /// A 429 with a 300 ms wait seen through `throttled` holds the next request of `waiting` back.
    async fn a_429_holds_back(throttled: &Limiter, waiting: &Limiter) {
        throttled.throttled(Some(Duration::from_millis(300))).await;
        let held = std::time::Instant::now();
        waiting.acquire().await;
        assert!(
            held.elapsed() >= Duration::from_millis(250),
            "{:?}",
            held.elapsed()
        );
    }

    #[test]
    fn state_names_are_safe_and_per_url_and_key() {
        let a = state_name("https://api.example.com:8443/v1", "key-1");
        assert!(a.starts_with("api.example.com_8443_v1-"), "{a}");
        assert!(
            a.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        );
        assert_ne!(a, state_name("https://api.example.com:8443/v1", "key-2"));
        assert_ne!(a, state_name("https://other.example.com", "key-1"));
        assert_eq!(fnv(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv(b"a"), 0xaf63_dc4c_8601_ec8c);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn two_limiters_on_one_host_file_share_the_pace() {
        let dir = tempfile::tempdir().unwrap();
        let limit = RateLimit::new(10, Duration::from_millis(500))
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

    /// Three calls of `waiting` book their slots (0, 102 and 204 ms); 20 ms in, `throttled` draws a
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
        throttled.throttled(Some(Duration::from_secs(1))).await;
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
        let limit =
            RateLimit::new(10, Duration::from_secs(1))
                .unwrap()
                .store(RateLimitStore::Host {
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
                    &Limiter::new(&RateLimit::new(10, Duration::from_secs(1)).unwrap(), "", ""),
                    &Limiter::new(&RateLimit::new(10, Duration::from_secs(1)).unwrap(), "", ""),
                )
                .await,
            ),
        ] {
            if store == "process" {
                // Two process stores share nothing: the control, where the booked calls go on.
                assert!(went[2] < Duration::from_millis(500), "{store}: {went:?}");
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
        let shared = RateLimit::new(10, Duration::from_secs(1)).unwrap();
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
        let pace = Pace {
            interval: 1_000,
            window: 1_000_000,
        };
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
        assert!(
            told.lock().unwrap()[1]
                .to_string()
                .starts_with("the rate limit store host answers again after 0.")
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
        let pace = Pace {
            interval: 1_000,
            window: 1_000_000,
        };
        let early = chain.update(pace, Op::Throttled(0));
        let failing = async {
            tokio::time::sleep(Duration::from_millis(10)).await;
            chain.update(pace, Op::Throttled(0)).await
        };
        let _ = tokio::join!(early, failing);
        assert_eq!(told.lock().unwrap().len(), 1, "{:?}", told.lock().unwrap());
        assert!(chain.is_out(), "still out after the late answer");
        tokio::time::sleep(Duration::from_millis(250)).await;
        let _ = chain.update(pace, Op::Throttled(0)).await;
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
        let pace = Pace {
            interval: 1_000,
            window: 1_000_000,
        };
        let ticket = Ticket {
            wait: 0,
            generation: 0,
            blocked: false,
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
        let limiter = Limiter::new(
            &RateLimit::new(10, Duration::from_secs(1)).unwrap(),
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
        let limit =
            RateLimit::new(20, Duration::from_secs(1))
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

    #[test]
    fn redis_keys_name_the_url_and_the_key_id() {
        assert_eq!(
            redis_key("https://api.example.com", "key-1"),
            "cloud-sdk:rate-limit:https://api.example.com:key-1"
        );
    }
}
