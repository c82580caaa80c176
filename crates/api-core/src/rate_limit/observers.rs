//! What a limit tells as it works: a long wait ([`WaitObserver`]), and each change of the store
//! that paces ([`FallbackObserver`], [`StoreChange`]).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// A wait on the limiter longer than this is reported to
/// [`RateLimit::on_wait`](crate::RateLimit::on_wait).
pub const REPORTED_WAIT: Duration = Duration::from_secs(1);

/// Something to tell when a call waits on the limiter for longer than [`REPORTED_WAIT`]: the wait.
pub type WaitObserver = Arc<dyn Fn(Duration) + Send + Sync>;

/// Something to tell when a limit's store cannot be used and another paces instead, and when it
/// answers again.
pub type FallbackObserver = Arc<dyn Fn(&StoreChange) + Send + Sync>;

/// A change of the store that paces a limit, told each time it happens (see
/// [`RateLimit::on_fallback`]): a store that could not be used, or one that answers again.
///
/// [`RateLimit::on_fallback`]: crate::RateLimit::on_fallback
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoreChange {
    /// The store could not be used: another paces instead, and the store is tried again later.
    FellBack(StoreFallback),
    /// The store answers again after a fall back: it paces from now on.
    Recovered {
        /// The store: `host (<state file>)`, or the Redis URL with its password redacted.
        store: String,
        /// What paced while it was out.
        from: FallbackTo,
        /// How long it was out (from the failure to its first answer since).
        after: std::time::Duration,
    },
}

impl fmt::Display for StoreChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::FellBack(fallback) => fallback.fmt(f),
            Self::Recovered { store, after, .. } => write!(
                f,
                "the rate limit store {store} answers again after {:.1}s; pacing through it",
                after.as_secs_f64()
            ),
        }
    }
}

/// A store that could not be used (see [`RateLimit::on_fallback`](crate::RateLimit::on_fallback)).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoreFallback {
    /// The store: `host (<state file>)`, or the Redis URL with its password redacted.
    pub store: String,
    /// What paces instead.
    pub instead: FallbackTo,
    /// Why, as the store's error said it (nothing secret).
    pub reason: String,
}

/// What paces when a store cannot be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FallbackTo {
    /// The host store (when Redis cannot be reached): shared by this host's processes only.
    Host,
    /// This process alone (when the host store's file cannot be used).
    Process,
}

impl fmt::Display for StoreFallback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let instead = match self.instead {
            FallbackTo::Host => "the host store (this host's processes only)",
            FallbackTo::Process => "this process only",
        };
        write!(
            f,
            "the rate limit store {} cannot be used ({}); pacing through {instead}",
            self.store, self.reason
        )
    }
}
