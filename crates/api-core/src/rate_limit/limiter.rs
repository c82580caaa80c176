//! [`RateLimiter`]: a rate limit bound to one API URL and key, for pacing one's own work with the
//! SDK's calls.

use std::fmt;
use std::time::Duration;

use super::store::Limiter;

/// A [`RateLimit`](super::RateLimit) bound to one API URL and key in its store: the limiter a client
/// paces its calls with (`client.rate_limiter()`), or one of [`RateLimit::bind`](super::RateLimit::bind).
/// Clones share it.
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
        self.limiter.throttled(wait).await;
    }
}

impl fmt::Debug for RateLimiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("RateLimiter")
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::RateLimit;

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
