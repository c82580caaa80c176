//! [`Limiter`]: one API URL and key's limit, bound to the store that keeps its state.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::booking::Bookings;
use super::host::{HostFile, LOCK_WAIT};
use super::pacing::{Pace, Ticket};
use super::process::ProcessState;
use super::rest::Rest;
use super::{
    FallbackObserver, FallbackTo, REPORTED_WAIT, RateLimit, RateLimitStore, StoreFallback,
    WaitObserver, ns,
};

/// How long the host store's file is left alone after it could not be used (a lock held too long,
/// a hung mount): the process paces alone meanwhile.
const HOST_REST: Duration = Duration::from_secs(30);

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
    Host(Arc<Host>),
    #[cfg(feature = "redis")]
    Redis(Arc<super::redis::RedisStore>),
}

/// The host store, and the process state it falls back on when the file cannot be used.
pub(crate) struct Host {
    file: HostFile,
    fallback: ProcessState,
    warned: AtomicBool,
    /// Until when the file is left alone after it did not answer in time.
    resting: Rest,
    on_fallback: Option<FallbackObserver>,
}

impl Host {
    pub(crate) fn new(file: HostFile, on_fallback: Option<FallbackObserver>) -> Self {
        Self {
            file,
            fallback: ProcessState::default(),
            warned: AtomicBool::new(false),
            resting: Rest::default(),
            on_fallback,
        }
    }

    /// Runs `change` on the file's state (off the async threads), or `None` when the file cannot
    /// be used: an error, a lock held elsewhere past [`LOCK_WAIT`], or no answer within a little
    /// more (a hung mount). The file is then left alone for [`HOST_REST`]; said once.
    async fn with_file<T: Send + 'static>(
        self: &Arc<Self>,
        change: impl FnOnce(super::pacing::PaceState, u64) -> (super::pacing::PaceState, T)
        + Send
        + 'static,
    ) -> Option<T> {
        if self.resting.is_resting() {
            return None;
        }
        let host = Arc::clone(self);
        let work = tokio::task::spawn_blocking(move || host.file.update(change));
        let failure = match tokio::time::timeout(LOCK_WAIT + Duration::from_millis(500), work).await
        {
            Ok(Ok(Ok(result))) => return Some(result),
            Ok(Ok(Err(e))) => e.to_string(),
            Ok(Err(e)) => e.to_string(),
            Err(_) => "no answer in time".to_string(),
        };
        // Left alone for a while: a lock held this long, or a mount that hangs, would cost every
        // call the wait.
        self.resting.rest_for(HOST_REST);
        self.fell_back(&failure);
        None
    }

    /// The store that answers now: the file, or this process while the file is left alone.
    pub(crate) fn answering(&self) -> &'static str {
        if self.resting.is_resting() {
            "process"
        } else {
            "host"
        }
    }

    /// Reserves a slot in the file, or in this process when the file cannot be used.
    pub(crate) async fn reserve(self: &Arc<Self>, pace: Pace) -> Ticket {
        match self
            .with_file(move |state, now| pace.reserve(state, now))
            .await
        {
            Some(ticket) => ticket,
            None => self.fallback.reserve(&pace),
        }
    }

    /// Confirms `ticket` at its slot: `None` to go, else a new reservation.
    pub(crate) async fn confirm(self: &Arc<Self>, pace: Pace, ticket: Ticket) -> Option<Ticket> {
        match self
            .with_file(move |state, now| pace.confirm(state, now, ticket))
            .await
        {
            Some(again) => again,
            None => self.fallback.confirm(&pace, ticket),
        }
    }

    /// Records a 429 in the file (or in this process when the file cannot be used).
    pub(crate) async fn throttled(self: &Arc<Self>, pace: Pace, wait: u64) {
        let written = self
            .with_file(move |state, now| (pace.throttled(state, now, wait), ()))
            .await;
        if written.is_none() {
            self.fallback.throttled(&pace, wait);
        }
    }

    fn fell_back(&self, why: &str) {
        if !self.warned.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                file = %self.file.path().display(),
                error = why,
                "the shared rate limit file cannot be used; pacing within this process only"
            );
            if let Some(observer) = &self.on_fallback {
                observer(&StoreFallback {
                    store: format!("host ({})", self.file.path().display()),
                    instead: FallbackTo::Process,
                    reason: why.to_string(),
                });
            }
        }
    }
}

impl Limiter {
    pub(crate) fn new(limit: &RateLimit, base_url: &str, key_id: &str) -> Self {
        let name = state_name(base_url, key_id);
        let on_fallback = limit.on_fallback.clone();
        let host = |dir: Option<&std::path::Path>| {
            Host::new(HostFile::new(dir, &name), on_fallback.clone())
        };
        let backend = match &limit.store {
            RateLimitStore::Process => Backend::Process(Arc::clone(&limit.process)),
            RateLimitStore::Host { dir } => Backend::Host(Arc::new(host(dir.as_deref()))),
            #[cfg(feature = "redis")]
            RateLimitStore::Redis(url) => Backend::Redis(Arc::new(super::redis::RedisStore::new(
                url,
                &redis_key(base_url, key_id),
                host(None),
                on_fallback.clone(),
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

    async fn reserve(&self) -> Ticket {
        match &self.backend {
            Backend::Process(state) => state.reserve(&self.pace),
            Backend::Host(host) => host.reserve(self.pace).await,
            #[cfg(feature = "redis")]
            Backend::Redis(redis) => redis.reserve(self.pace).await,
        }
    }

    async fn confirm(&self, ticket: Ticket) -> Option<Ticket> {
        match &self.backend {
            Backend::Process(state) => state.confirm(&self.pace, ticket),
            Backend::Host(host) => host.confirm(self.pace, ticket).await,
            #[cfg(feature = "redis")]
            Backend::Redis(redis) => redis.confirm(self.pace, ticket).await,
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
        let (mut turn, mut waited) = self.bookings.turn().await;
        let mut ticket = match turn.spare() {
            Some(spare) => spare,
            None => self.reserve().await,
        };
        let mut blocked = ticket.blocked;
        while ticket.wait > 0 {
            let wait = Duration::from_nanos(ticket.wait);
            if wait > REPORTED_WAIT
                && let Some(observer) = &self.observer
            {
                observer(wait);
            }
            turn.wait_for(ticket).await;
            waited += wait;
            match self.confirm(ticket).await {
                None => break,
                Some(again) => {
                    blocked |= again.blocked;
                    ticket = again;
                }
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
            Backend::Process(_) => "process",
            Backend::Host(host) => host.answering(),
            #[cfg(feature = "redis")]
            Backend::Redis(redis) => redis.answering(),
        }
    }

    /// A 429 answered: everyone sharing the state waits `wait` (the server's, else one interval;
    /// at most a few windows), the reservations made before it are stale, and the rate drops.
    pub(crate) async fn throttled(&self, wait: Option<Duration>) {
        let wait = wait.map_or(self.pace.interval, ns);
        match &self.backend {
            Backend::Process(state) => state.throttled(&self.pace, wait),
            Backend::Host(host) => host.throttled(self.pace, wait).await,
            #[cfg(feature = "redis")]
            Backend::Redis(redis) => redis.throttled(self.pace, wait).await,
        }
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
        assert!(!host.warned.load(Ordering::Relaxed));
        limiter.acquire().await;
        assert!(host.warned.load(Ordering::Relaxed), "said once");
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

    #[tokio::test(flavor = "current_thread")]
    async fn a_host_file_locked_elsewhere_paces_in_the_process_and_says_so_once() {
        let dir = tempfile::tempdir().unwrap();
        let told = Arc::new(std::sync::Mutex::new(Vec::<StoreFallback>::new()));
        let seen = Arc::clone(&told);
        let limit = RateLimit::new(10, Duration::from_millis(500))
            .unwrap()
            .store(RateLimitStore::Host {
                dir: Some(dir.path().to_path_buf()),
            })
            .on_fallback(move |fallback| seen.lock().unwrap().push(fallback.clone()));
        let limiter = Limiter::new(&limit, "http://h", "k");
        limiter.acquire().await;
        let Backend::Host(host) = &limiter.backend else {
            panic!("a host store")
        };
        // Another process holds the file's lock and hangs.
        let holder = std::fs::File::open(host.file.path()).unwrap();
        holder.lock().unwrap();
        let started = std::time::Instant::now();
        limiter.acquire().await;
        limiter.acquire().await;
        assert!(started.elapsed() < LOCK_WAIT * 2, "{:?}", started.elapsed());
        let told = told.lock().unwrap();
        assert_eq!(told.len(), 1, "{told:?}");
        assert_eq!(told[0].instead, FallbackTo::Process);
        assert!(told[0].to_string().contains("stayed locked"), "{}", told[0]);
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
