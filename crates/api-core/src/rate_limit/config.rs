//! [`RateLimit`]: a limit, where its state lives ([`RateLimitStore`]) and whom it tells, as built in
//! code or read from the environment.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

#[cfg(feature = "redis")]
use api_raw::support::Secret;

use super::observers::{FallbackObserver, StoreChange, WaitObserver};
use super::process::ProcessState;
use crate::error::ConfigError;

/// The slowest pace a limiter takes: one request a day.
pub(crate) const MAX_PERIOD: Duration = Duration::from_secs(24 * 60 * 60);

/// The environment variable with a limit, `MAX/WINDOW` (`20/2s`, `10/10s`, `100/1m`).
pub const RATE_LIMIT_VAR: &str = "CLOUD_RATE_LIMIT";

/// The environment variable with the store of the limit: `process`, `host`, or a `redis://` /
/// `rediss://` URL.
pub const RATE_LIMIT_STORE_VAR: &str = "CLOUD_RATE_LIMIT_STORE";

/// Where the state of a [`RateLimit`] lives, and so who shares it.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RateLimitStore {
    /// In this process: shared by every clone of the `RateLimit` (and the clients given one).
    Process,
    /// In a small state file of this user on this host, under an OS file lock: shared by every
    /// process of the user that calls the same API URL with the same key. The file lives in
    /// `dir`, or in the user's runtime directory (`$XDG_RUNTIME_DIR`), else cache directory, under
    /// `cloud-sdk/rate-limit/`; a process killed with SIGKILL releases the lock, and a corrupt or
    /// foreign file is replaced, never trusted.
    Host {
        /// The directory of the state files; `None` for the default.
        dir: Option<PathBuf>,
    },
    /// In Redis or Valkey at this `redis://` or `rediss://` URL (cargo feature `redis`; built by
    /// [`RateLimitStore::redis`]): shared by every process on every host that calls the same API
    /// URL with the same key. One atomic script per request, keys named from the API URL and the
    /// key id (never the secret) and expiring on their own. When Redis cannot be reached, the
    /// limiter paces through the host store instead and says so (in `tracing`, and to
    /// [`RateLimit::on_fallback`], as when it answers again); a call never hangs on it.
    Redis(RedisUrl),
}

/// A Redis URL that parsed when it was given (see [`RateLimitStore::redis`]); its password never
/// shows.
#[derive(Clone, PartialEq, Eq)]
pub struct RedisUrl {
    #[cfg(feature = "redis")]
    url: Secret,
    /// Without the `redis` feature no Redis URL can be built.
    #[cfg(not(feature = "redis"))]
    pub(super) never: std::convert::Infallible,
}

impl RedisUrl {
    /// The URL without its user part (user name and password, however written: the rule's
    /// [`describe_url`](api_raw::support::redact::describe_url)).
    pub fn describe(&self) -> String {
        #[cfg(feature = "redis")]
        {
            api_raw::support::redact::describe_url(self.url.expose())
        }
        #[cfg(not(feature = "redis"))]
        match self.never {}
    }

    /// The URL, password included.
    #[cfg(feature = "redis")]
    pub(crate) fn expose(&self) -> &str {
        self.url.expose()
    }
}

impl fmt::Debug for RedisUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

impl RateLimitStore {
    /// The host store in its default directory.
    pub fn host() -> Self {
        Self::Host { dir: None }
    }

    /// The Redis store at `url` (`redis://[user:password@]host:port[/db]` or `rediss://...`). The
    /// URL is parsed here: one that cannot be used (`redis://host:notaport`) is an error now, not a
    /// silent fallback on the first call.
    pub fn redis(url: impl Into<String>) -> Result<Self, ConfigError> {
        let url = url.into();
        let scheme = url.split_once("://").map(|(scheme, _)| scheme);
        if !matches!(scheme, Some("redis" | "rediss")) {
            return Err(ConfigError(
                "a Redis rate limit store needs a redis:// or rediss:// URL".into(),
            ));
        }
        #[cfg(feature = "redis")]
        {
            use ::redis::IntoConnectionInfo;
            if let Err(e) = url.as_str().into_connection_info() {
                let redactor = api_raw::support::redact::Redactor::new().url(&url);
                return Err(ConfigError(format!(
                    "{} is not a Redis URL that can be used: {}",
                    api_raw::support::redact::describe_url(&url),
                    redactor.text(&e.to_string())
                )));
            }
            Ok(Self::Redis(RedisUrl {
                url: Secret::new(url),
            }))
        }
        #[cfg(not(feature = "redis"))]
        Err(ConfigError(
            "a Redis rate limit store needs the `redis` cargo feature".into(),
        ))
    }

    /// Reads `process`, `host` or a Redis URL (what `CLOUD_RATE_LIMIT_STORE` holds).
    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        match text.trim() {
            "process" => Ok(Self::Process),
            "host" => Ok(Self::host()),
            url if url.starts_with("redis://") || url.starts_with("rediss://") => Self::redis(url),
            other => Err(ConfigError(format!(
                "a rate limit store is process, host or a redis:// URL, not {:?}",
                api_raw::support::redact::describe_url(other)
            ))),
        }
    }

    /// `process`, `host`, or the Redis URL with its password redacted.
    pub fn describe(&self) -> String {
        match self {
            Self::Process => "process".into(),
            Self::Host { dir: None } => "host".into(),
            Self::Host { dir: Some(dir) } => format!("host ({})", dir.display()),
            Self::Redis(url) => url.describe(),
        }
    }
}

impl fmt::Debug for RateLimitStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

/// A client-side rate limiter. It keeps at most `max` requests in any interval of `window` (plus a
/// 2% margin for network jitter, and 25 ms more when calls go in bursts): a sliding log of the slots
/// booked on the key, so a burst of up to `max` goes at once and the next goes when the first's
/// window is over, safe whether the server
/// counts in fixed or sliding windows (a limit of more than [`MAX_BURST`] per window is kept as at
/// most that many per a share of the window); every call, retry and waiter poll takes a slot.
/// Sharers of a key configured differently read the one log each with its own limit: one
/// configured lower waits longer itself and delays no one.
///
/// Where its state lives is its [`RateLimitStore`]: this process (the default; clones share it), a
/// state file every process of the user on this host shares, or Redis for processes on many hosts.
/// A 429 is shared too: its wait (`Retry-After`, `X-RateLimit-Reset`) holds every process back, and
/// no call booked before it goes out into the block (each checks, just before it sends, that no 429
/// came since it booked). The block is at most [`BLOCK_WINDOWS`] windows, whatever the header says.
/// After a 429 calls go one at a time at a learned rate: [`DECREASE`] times the rate that drew it
/// (its own, or, when lower, one call more than the refused request's window held before it: the
/// server refused that many; a 429 of the same burst that cuts nothing more still lowers it so),
/// never below one [`MAX_SLOWDOWN`]th. It climbs back to just under the rate that drew the 429 (or
/// the first of a run of them) within [`RECOVERY_WINDOWS`] windows, however deep the cut, then
/// slowly above it (a fourth more every [`ABOVE_WINDOWS`] times as many windows): a server limit
/// below the configured one is learned from the first burst's 429s and kept to with a 429 now and
/// then.
///
/// A bound limiter (a client and its clones) holds at most [`MAX_BOOKED`] slots booked in its store
/// at once; its other callers wait their turn in the process. A process killed while it waits
/// stalls the others by at most those slots per limiter it had, and a caller that gives up while it
/// waits for its slot (a dropped `acquire()`) leaves the slot to the limiter's next caller.
///
/// ```
/// use std::time::Duration;
/// use api_core::{RateLimit, RateLimitStore};
///
/// let one_host = RateLimit::management().store(RateLimitStore::host());
/// let custom: RateLimit = "20/2s".parse()?;
/// assert_eq!(custom.max(), 20);
/// assert_eq!(custom.window(), Duration::from_secs(2));
/// # let _ = one_host;
/// # Ok::<(), api_core::ConfigError>(())
/// ```
///
/// [`ABOVE_WINDOWS`]: crate::ABOVE_WINDOWS
/// [`BLOCK_WINDOWS`]: crate::BLOCK_WINDOWS
/// [`MAX_BURST`]: crate::MAX_BURST
/// [`DECREASE`]: crate::DECREASE
/// [`MAX_SLOWDOWN`]: crate::MAX_SLOWDOWN
/// [`RECOVERY_WINDOWS`]: crate::RECOVERY_WINDOWS
/// [`MAX_BOOKED`]: crate::MAX_BOOKED
#[derive(Clone)]
pub struct RateLimit {
    max: u32,
    window: Duration,
    interval: Duration,
    pub(super) store: RateLimitStore,
    /// The process store's state, shared by clones.
    pub(super) process: Arc<ProcessState>,
    pub(super) observer: Option<WaitObserver>,
    pub(super) on_fallback: Option<FallbackObserver>,
}

impl RateLimit {
    /// At most `max` requests per `window`, paced in this process.
    pub fn new(max: u32, window: Duration) -> Result<Self, ConfigError> {
        if max == 0 {
            return Err(ConfigError("a rate limit needs max >= 1".into()));
        }
        if window.is_zero() {
            return Err(ConfigError(
                "a rate limit needs a window longer than zero".into(),
            ));
        }
        // One request every `window / max`, 2% slower; checked, so an absurd window is an error.
        let even = window / max;
        let interval = Duration::try_from_secs_f64(even.as_secs_f64() * 1.02)
            .ok()
            .filter(|_| even <= MAX_PERIOD && !even.is_zero())
            .ok_or_else(|| {
                ConfigError(format!(
                    "a rate limit of {max} per {window:?} paces slower than one request a day or faster than one a nanosecond"
                ))
            })?;
        Ok(Self {
            max,
            window,
            interval,
            store: RateLimitStore::Process,
            process: Arc::default(),
            observer: None,
            on_fallback: None,
        })
    }

    /// The documented management limit: 10 requests per 10 seconds per key.
    pub fn management() -> Self {
        Self::new(10, Duration::from_secs(10))
            .unwrap_or_else(|_| unreachable!("a valid constant quota"))
    }

    /// The documented observability limit: 100 requests per 60 seconds per key.
    pub fn observability() -> Self {
        Self::new(100, Duration::from_secs(60))
            .unwrap_or_else(|_| unreachable!("a valid constant quota"))
    }

    /// Keeps the state in `store`.
    pub fn store(mut self, store: RateLimitStore) -> Self {
        self.store = store;
        self
    }

    /// Calls `observer` with the wait whenever a call is about to wait on the limiter for longer than
    /// [`REPORTED_WAIT`] (a command-line tool can say that it waits on a shared limit).
    ///
    /// [`REPORTED_WAIT`]: crate::REPORTED_WAIT
    pub fn on_wait(mut self, observer: impl Fn(Duration) + Send + Sync + 'static) -> Self {
        self.observer = Some(Arc::new(observer));
        self
    }

    /// Calls `observer` on every change of the store that paces: each time the store cannot be
    /// used and another paces instead (Redis out of reach: the host store; the host file unusable:
    /// this process alone), and each time it answers again, so that a tool can say whether the
    /// limit is shared as configured. Each store is tried again 30 s after it failed.
    pub fn on_fallback(mut self, observer: impl Fn(&StoreChange) + Send + Sync + 'static) -> Self {
        self.on_fallback = Some(Arc::new(observer));
        self
    }

    /// The limit and store from `CLOUD_RATE_LIMIT` and `CLOUD_RATE_LIMIT_STORE` read through
    /// `lookup`, starting from `default` (the API's documented limit): `None` when neither is set.
    pub fn from_lookup(
        default: RateLimit,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<Self>, ConfigError> {
        let set = |name: &str| lookup(name).filter(|value| !value.trim().is_empty());
        let (limit, store) = (set(RATE_LIMIT_VAR), set(RATE_LIMIT_STORE_VAR));
        if limit.is_none() && store.is_none() {
            return Ok(None);
        }
        let mut rate = match limit {
            Some(text) => text
                .parse::<RateLimit>()
                .map_err(|e| ConfigError(format!("{RATE_LIMIT_VAR}: {}", e.0)))?,
            None => default,
        };
        if let Some(store) = store {
            rate = rate.store(
                RateLimitStore::parse(&store)
                    .map_err(|e| ConfigError(format!("{RATE_LIMIT_STORE_VAR}: {}", e.0)))?,
            );
        }
        Ok(Some(rate))
    }

    /// The most requests per window.
    pub fn max(&self) -> u32 {
        self.max
    }

    /// The window.
    pub fn window(&self) -> Duration {
        self.window
    }

    /// The time between two requests at the limit's rate (the window over the maximum, 2% slower):
    /// the pace of one call at a time, after a 429.
    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// Where the state lives.
    pub fn store_kind(&self) -> &RateLimitStore {
        &self.store
    }
}

impl std::str::FromStr for RateLimit {
    type Err = ConfigError;

    /// `MAX/WINDOW`: `20/2s`, `10/10s`, `100/1m`, `5/500ms`, `1000/1h`.
    fn from_str(text: &str) -> Result<Self, ConfigError> {
        let bad = || {
            ConfigError(format!(
                "a rate limit is MAX/WINDOW such as 20/2s or 100/1m, not {text:?}"
            ))
        };
        let (max, window) = text.trim().split_once('/').ok_or_else(bad)?;
        let max: u32 = max.trim().parse().map_err(|_| bad())?;
        let window = window.trim();
        let digits = window
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(window.len());
        let (count, unit) = window.split_at(digits);
        let count: u64 = if count.is_empty() {
            1
        } else {
            count.parse().map_err(|_| bad())?
        };
        let unit = match unit {
            "ms" => Duration::from_millis(1),
            "s" | "" => Duration::from_secs(1),
            "m" | "min" => Duration::from_secs(60),
            "h" => Duration::from_secs(3600),
            _ => return Err(bad()),
        };
        let window = u32::try_from(count)
            .ok()
            .and_then(|count| unit.checked_mul(count))
            .ok_or_else(bad)?;
        RateLimit::new(max, window)
    }
}

impl fmt::Debug for RateLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RateLimit({} per {:?}", self.max, self.window)?;
        if self.store != RateLimitStore::Process {
            write!(f, ", {}", self.store.describe())?;
        }
        f.write_str(")")
    }
}

impl fmt::Display for RateLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{:?}", self.max, self.window)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rate_limit::clock::ns;

    #[tokio::test(flavor = "current_thread")]
    async fn requests_go_in_bursts_of_max_per_window() {
        let limit = RateLimit::new(10, Duration::from_millis(500)).unwrap();
        let limiter = limit.bind("http://h", "k");
        let start = std::time::Instant::now();
        for _ in 0..10 {
            limiter.acquire().await;
        }
        // Ten at once; the eleventh when the first ten's window (510 ms) is over.
        let burst = start.elapsed();
        assert!(burst < Duration::from_millis(100), "{burst:?}");
        limiter.acquire().await;
        assert!(
            start.elapsed() >= Duration::from_millis(500),
            "{:?}",
            start.elapsed()
        );
        assert!(RateLimit::new(0, Duration::from_secs(1)).is_err());
        assert!(RateLimit::new(1, Duration::ZERO).is_err());
        assert!(RateLimit::new(u32::MAX, Duration::from_nanos(1)).is_err());
        let absurd = RateLimit::new(1, Duration::MAX).unwrap_err();
        assert!(
            absurd.to_string().contains("slower than one request a day"),
            "{absurd}"
        );
        assert!(RateLimit::new(1, Duration::from_secs(80_000)).is_ok());
        assert!(
            RateLimit::new(1, MAX_PERIOD).is_ok(),
            "one a day is allowed"
        );
        assert_eq!(
            format!("{:?}", RateLimit::management()),
            "RateLimit(10 per 10s)"
        );
    }

    #[test]
    fn the_interval_the_text_and_the_clock() {
        let limit: RateLimit = "20/2s".parse().unwrap();
        assert_eq!(limit.interval(), Duration::from_millis(102));
        assert_eq!(limit.to_string(), "20/2s");
        assert_eq!(ns(Duration::MAX), u64::MAX);
    }

    #[test]
    fn limits_and_stores_parse_from_text() {
        let parse = |text: &str| text.parse::<RateLimit>().map(|r| (r.max(), r.window()));
        assert_eq!(parse("20/2s").unwrap(), (20, Duration::from_secs(2)));
        assert_eq!(parse(" 100 / 1m ").unwrap(), (100, Duration::from_secs(60)));
        assert_eq!(parse("5/500ms").unwrap(), (5, Duration::from_millis(500)));
        assert_eq!(parse("10/s").unwrap(), (10, Duration::from_secs(1)));
        assert_eq!(parse("1000/1h").unwrap(), (1000, Duration::from_secs(3600)));
        for bad in [
            "",
            "20",
            "x/2s",
            "20/2d",
            "0/1s",
            "20/0s",
            "20/99999999999999s",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            RateLimitStore::parse("host").unwrap(),
            RateLimitStore::host()
        );
        assert_eq!(
            RateLimitStore::parse("process").unwrap(),
            RateLimitStore::Process
        );
        let err = RateLimitStore::parse("memcached://u:pw-1@h")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("process, host or a redis://") && !err.contains("pw-1"),
            "{err}"
        );
        #[cfg(feature = "redis")]
        {
            let redis = RateLimitStore::parse("redis://u:pw-1@h:6379").unwrap();
            assert_eq!(format!("{redis:?}"), "redis://[REDACTED]@h:6379");
            let RateLimitStore::Redis(url) = &redis else {
                panic!("a Redis store")
            };
            assert_eq!(format!("{url:?}"), "redis://[REDACTED]@h:6379");
            // A password that holds what ends a URI in running text (an ElastiCache token may
            // hold `<` and `>`): shown nowhere, in part or whole.
            for (password, usable) in [
                ("pw<1> 2", true),
                ("it's\"pw-1\"", true),
                // A `#` begins a fragment the Redis client refuses: said without the password.
                ("p@ss/wd?1#x", false),
            ] {
                let text = format!("rediss://default:{password}@cache.example:6379/0");
                match RateLimitStore::parse(&text) {
                    Ok(store) => {
                        assert!(usable, "{password}");
                        let RateLimitStore::Redis(url) = &store else {
                            panic!("a Redis store")
                        };
                        for shown in [format!("{store:?}"), store.describe(), format!("{url:?}")] {
                            assert_eq!(shown, "rediss://[REDACTED]@cache.example:6379/0");
                        }
                    }
                    Err(refused) => {
                        let refused = refused.to_string();
                        assert!(!usable, "{password}: {refused}");
                        assert!(
                            refused.contains("rediss://[REDACTED]@cache.example:6379/0 is not")
                                && !refused.contains("pw")
                                && !refused.contains("ss/"),
                            "{refused}"
                        );
                    }
                }
                let refused = RateLimitStore::parse(&format!("memcached://u:{password}@h"))
                    .unwrap_err()
                    .to_string();
                assert!(
                    !refused.contains("pw") && !refused.contains("ss/"),
                    "{refused}"
                );
                let refused = RateLimitStore::parse(&format!("redis://u:{password}@h:notaport"))
                    .unwrap_err()
                    .to_string();
                assert!(
                    !refused.contains("pw") && !refused.contains("ss/"),
                    "{refused}"
                );
            }
            // A URL that cannot be used is an error when it is given, not a fallback later.
            for bad in [
                "redis://u:pw-1@h:notaport",
                "redis://u:pw-1@h:99999",
                "rediss://",
            ] {
                let err = RateLimitStore::parse(bad).unwrap_err().to_string();
                assert!(
                    err.contains("is not a Redis URL that can be used") && !err.contains("pw-1"),
                    "{bad}: {err}"
                );
            }
        }
    }

    #[test]
    fn the_environment_chooses_the_limit_and_the_store() {
        let vars = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        let none = RateLimit::from_lookup(RateLimit::management(), &vars(&[])).unwrap();
        assert!(none.is_none());
        let both = RateLimit::from_lookup(
            RateLimit::management(),
            &vars(&[(RATE_LIMIT_VAR, "20/2s"), (RATE_LIMIT_STORE_VAR, "host")]),
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            (both.max(), both.store_kind()),
            (20, &RateLimitStore::host())
        );
        let store_only = RateLimit::from_lookup(
            RateLimit::management(),
            &vars(&[(RATE_LIMIT_STORE_VAR, "host")]),
        )
        .unwrap()
        .unwrap();
        assert_eq!(store_only.max(), 10, "the API's limit, shared");
        let err =
            RateLimit::from_lookup(RateLimit::management(), &vars(&[(RATE_LIMIT_VAR, "fast")]))
                .unwrap_err();
        assert!(err.to_string().contains("CLOUD_RATE_LIMIT"), "{err}");
    }
}
