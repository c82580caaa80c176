//! [`Limiter`]: one API URL and key's limit, bound to the store that keeps its state.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::host::HostFile;
use super::pacing::Pace;
use super::process::ProcessState;
use super::{REPORTED_WAIT, RateLimit, RateLimitStore, WaitObserver, now_ns, ns};

/// The limit of one API URL and key: where its state lives, and how to wait for a slot.
#[derive(Clone)]
pub(crate) struct Limiter {
    pace: Pace,
    backend: Backend,
    observer: Option<WaitObserver>,
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
}

impl Host {
    pub(crate) fn new(file: HostFile) -> Self {
        Self {
            file,
            fallback: ProcessState::default(),
            warned: AtomicBool::new(false),
        }
    }

    /// Reserves a slot in the file (off the async threads), or in this process when the file
    /// cannot be used (said once in `tracing`).
    pub(crate) async fn reserve(self: &Arc<Self>, pace: Pace) -> u64 {
        let host = Arc::clone(self);
        let reserved = tokio::task::spawn_blocking(move || {
            host.file.update(|state| pace.reserve(state, now_ns()))
        })
        .await;
        match reserved {
            Ok(Ok(wait)) => wait,
            Ok(Err(e)) => {
                self.fell_back(&e.to_string());
                self.fallback.reserve(&pace, now_ns())
            }
            Err(e) => {
                self.fell_back(&e.to_string());
                self.fallback.reserve(&pace, now_ns())
            }
        }
    }

    /// Records a 429 in the file (or in this process when the file cannot be used).
    pub(crate) async fn throttled(self: &Arc<Self>, pace: Pace, wait: u64) {
        let host = Arc::clone(self);
        let written = tokio::task::spawn_blocking(move || {
            host.file
                .update(|state| (pace.throttled(state, now_ns(), wait), ()))
        })
        .await;
        if !matches!(written, Ok(Ok(()))) {
            self.fallback.throttled(&pace, now_ns(), wait);
        }
    }

    fn fell_back(&self, why: &str) {
        if !self.warned.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                file = %self.file.path().display(),
                error = why,
                "the shared rate limit file cannot be used; pacing within this process only"
            );
        }
    }
}

impl Limiter {
    pub(crate) fn new(limit: &RateLimit, base_url: &str, key_id: &str) -> Self {
        let name = state_name(base_url, key_id);
        let backend = match &limit.store {
            RateLimitStore::Process => Backend::Process(Arc::clone(&limit.process)),
            RateLimitStore::Host { dir } => {
                Backend::Host(Arc::new(Host::new(HostFile::new(dir.as_deref(), &name))))
            }
            #[cfg(feature = "redis")]
            RateLimitStore::Redis(url) => Backend::Redis(Arc::new(super::redis::RedisStore::new(
                url,
                &redis_key(base_url, key_id),
                Host::new(HostFile::new(None, &name)),
            ))),
            #[cfg(not(feature = "redis"))]
            RateLimitStore::Redis(_) => {
                // Only `RateLimitStore::redis` checks the feature; a variant built by hand paces
                // as an unreachable Redis would.
                tracing::warn!(
                    "a Redis rate limit store needs the `redis` cargo feature; pacing through the host store"
                );
                Backend::Host(Arc::new(Host::new(HostFile::new(None, &name))))
            }
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
        }
    }

    /// Takes the next slot and waits for it; returns how long it waited.
    pub(crate) async fn acquire(&self) -> Duration {
        let wait = match &self.backend {
            Backend::Process(state) => state.reserve(&self.pace, now_ns()),
            Backend::Host(host) => host.reserve(self.pace).await,
            #[cfg(feature = "redis")]
            Backend::Redis(redis) => redis.reserve(self.pace).await,
        };
        let wait = Duration::from_nanos(wait);
        if wait > REPORTED_WAIT
            && let Some(observer) = &self.observer
        {
            observer(wait);
        }
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
        wait
    }

    /// A 429 answered: everyone sharing the state waits `wait` (the server's, else one interval),
    /// and the pace slows down.
    pub(crate) async fn throttled(&self, wait: Option<Duration>) {
        let wait = wait.map_or(self.pace.interval, ns);
        match &self.backend {
            Backend::Process(state) => state.throttled(&self.pace, now_ns(), wait),
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
        let (a, b) = (limit.bind("http://h", "k"), limit.bind("http://h", "k"));
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
        let other = limit.bind("http://h", "other");
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
        let limiter = limit.bind("http://h", "k");
        assert_eq!(limiter.acquire().await, Duration::ZERO);
        // The next slot is 1.224 s away: told, then waited.
        let waited = limiter.acquire().await;
        assert!(waited > REPORTED_WAIT, "{waited:?}");
        assert_eq!(told.lock().unwrap().as_slice(), &[waited]);
        let short = RateLimit::new(2, Duration::from_millis(1200)).unwrap();
        let seen = Arc::new(AtomicBool::new(false));
        let noticed = seen.clone();
        let short = short.on_wait(move |_| noticed.store(true, Ordering::Relaxed));
        let limiter = short.bind("http://h", "k");
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
        let limiter = limit.bind("http://h", "k");
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
        let (a, b) = (limit.bind("", ""), limit.clone().bind("", ""));
        a_429_holds_back(&a, &b).await;
    }

    #[test]
    fn redis_keys_name_the_url_and_the_key_id() {
        assert_eq!(
            redis_key("https://api.example.com", "key-1"),
            "cloud-sdk:rate-limit:https://api.example.com:key-1"
        );
    }
}
