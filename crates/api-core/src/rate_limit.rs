//! [`RateLimit`]: a client-side limiter so bulk work runs at the allowed rate.

use std::fmt;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use governor::{DefaultDirectRateLimiter, Quota};

use crate::error::ConfigError;

/// The slowest pace a limiter takes: one request a day.
const MAX_PERIOD: Duration = Duration::from_secs(24 * 60 * 60);

/// A client-side rate limiter, shared by every clone of the client (and by any client given a clone of
/// it). It paces requests evenly, one every `window / max` plus a 2% margin for network jitter, so that
/// no window of the server's length holds more than `max` requests, whether the server counts in fixed
/// or sliding windows.
#[derive(Clone)]
pub struct RateLimit {
    limiter: Arc<DefaultDirectRateLimiter>,
    max: u32,
    window: Duration,
}

impl RateLimit {
    /// At most `max` requests per `window`.
    pub fn new(max: u32, window: Duration) -> Result<Self, ConfigError> {
        let count = NonZeroU32::new(max)
            .ok_or_else(|| ConfigError("a rate limit needs max >= 1".into()))?;
        // One request every `window / max`, 2% slower; checked, so an absurd window is an error.
        let even = window / count.get();
        let period = Duration::try_from_secs_f64(even.as_secs_f64() * 1.02)
            .ok()
            .filter(|_| even <= MAX_PERIOD)
            .ok_or_else(|| {
                ConfigError(format!(
                    "a rate limit of {max} per {window:?} paces slower than one request a day"
                ))
            })?;
        let quota = Quota::with_period(period)
            .ok_or_else(|| ConfigError("a rate limit needs a window longer than zero".into()))?;
        Ok(Self {
            limiter: Arc::new(DefaultDirectRateLimiter::direct(quota)),
            max,
            window,
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

    /// Waits until one more request is allowed.
    pub async fn acquire(&self) {
        self.limiter.until_ready().await;
    }
}

impl fmt::Debug for RateLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RateLimit({} per {:?})", self.max, self.window)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "current_thread")]
    async fn requests_are_paced_evenly() {
        let limit = RateLimit::new(10, Duration::from_millis(500)).unwrap();
        let start = std::time::Instant::now();
        for _ in 0..6 {
            limit.acquire().await;
        }
        // The first is immediate, the next five wait 50 ms each.
        assert!(
            start.elapsed() >= Duration::from_millis(240),
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
}
