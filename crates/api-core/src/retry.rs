//! [`RetryPolicy`]: bounded exponential backoff with full jitter.

use std::time::Duration;

/// When and how often a failed call is tried again.
///
/// Only safe retries happen: GET, DELETE and the service state PATCH are retried on 429, 502, 503, 504,
/// connection errors and attempt timeouts; a create (POST) only when the request provably did not reach
/// the server (429, or a connection that could not be made). A wait asked for by the server
/// (`Retry-After`, `X-RateLimit-Reset`) is honoured; otherwise the delay before retry `n` is drawn
/// uniformly from `0..=min(max_backoff, initial_backoff * 2^n)` (full jitter).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    pub(crate) max_attempts: u32,
    pub(crate) initial_backoff: Duration,
    pub(crate) max_backoff: Duration,
    pub(crate) max_elapsed: Duration,
}

impl Default for RetryPolicy {
    /// 4 attempts, backoff from 250 ms up to 8 s, at most 90 s spent retrying.
    fn default() -> Self {
        Self {
            max_attempts: 4,
            initial_backoff: Duration::from_millis(250),
            max_backoff: Duration::from_secs(8),
            max_elapsed: Duration::from_secs(90),
        }
    }
}

impl RetryPolicy {
    /// No retries: every call is tried once.
    pub fn disabled() -> Self {
        Self {
            max_attempts: 1,
            ..Self::default()
        }
    }

    /// Attempts in all, the first included (at least 1).
    pub fn max_attempts(mut self, attempts: u32) -> Self {
        self.max_attempts = attempts.max(1);
        self
    }

    /// The base of the exponential backoff (default 250 ms). Zero means retries come at once;
    /// `Duration::MAX` is capped by [`max_backoff`](Self::max_backoff).
    pub fn initial_backoff(mut self, backoff: Duration) -> Self {
        self.initial_backoff = backoff;
        self
    }

    /// The longest backoff between two attempts, server-requested waits excepted (default 8 s; zero
    /// means retries come at once).
    pub fn max_backoff(mut self, backoff: Duration) -> Self {
        self.max_backoff = backoff;
        self
    }

    /// The longest time spent on one call, retries and waits included, before giving up retrying
    /// (default 90 s; zero means no retry ever starts, `Duration::MAX` leaves only the operation
    /// timeout).
    pub fn max_elapsed(mut self, elapsed: Duration) -> Self {
        self.max_elapsed = elapsed;
        self
    }

    /// The configured number of attempts.
    pub fn attempts(&self) -> u32 {
        self.max_attempts
    }

    /// The delay before retry number `retry` (1 for the first retry), with full jitter.
    pub fn backoff(&self, retry: u32) -> Duration {
        jitter(self.backoff_cap(retry))
    }

    /// The delay before a retry the server asked to wait `wait` for (`Retry-After`, a rate-limit
    /// reset): that wait plus up to a fifth of it again (at least 100 ms, at most 5 s), so clients
    /// sharing a key do not all come back at the same instant of a fixed window.
    pub fn server_wait(&self, wait: Duration) -> Duration {
        wait.saturating_add(jitter(self.server_jitter_cap(wait)))
    }

    /// The most [`server_wait`](Self::server_wait) adds to a server-requested wait.
    pub fn server_jitter_cap(&self, wait: Duration) -> Duration {
        (wait / 5).clamp(Duration::from_millis(100), Duration::from_secs(5))
    }

    /// The upper bound of the jittered delay before retry number `retry`.
    pub fn backoff_cap(&self, retry: u32) -> Duration {
        let factor = 2u32.saturating_pow(retry.saturating_sub(1));
        self.initial_backoff
            .saturating_mul(factor)
            .min(self.max_backoff)
    }
}

/// A duration drawn uniformly from `0..=cap`, to the microsecond (a cap under a millisecond still
/// spreads), saturating for a cap beyond `u64` microseconds.
fn jitter(cap: Duration) -> Duration {
    let micros = u64::try_from(cap.as_micros()).unwrap_or(u64::MAX);
    Duration::from_micros(fastrand::u64(0..=micros))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_exponentially_up_to_the_cap_with_jitter_below_it() {
        let policy = RetryPolicy::default();
        assert_eq!(policy.backoff_cap(1), Duration::from_millis(250));
        assert_eq!(policy.backoff_cap(2), Duration::from_millis(500));
        assert_eq!(policy.backoff_cap(4), Duration::from_secs(2));
        assert_eq!(policy.backoff_cap(30), Duration::from_secs(8));
        let draws: Vec<Duration> = (0..200).map(|_| policy.backoff(3)).collect();
        assert!(draws.iter().all(|d| *d <= Duration::from_secs(1)));
        assert!(
            draws.iter().any(|d| *d < Duration::from_millis(500)),
            "full jitter reaches low values"
        );
        assert!(
            draws.iter().any(|d| *d > Duration::from_millis(500)),
            "and high ones"
        );
    }

    #[test]
    fn server_waits_get_jitter_on_top() {
        let policy = RetryPolicy::default();
        let wait = Duration::from_secs(10);
        assert_eq!(policy.server_jitter_cap(wait), Duration::from_secs(2));
        assert_eq!(
            policy.server_jitter_cap(Duration::ZERO),
            Duration::from_millis(100)
        );
        assert_eq!(
            policy.server_jitter_cap(Duration::from_secs(3600)),
            Duration::from_secs(5)
        );
        let draws: Vec<Duration> = (0..200).map(|_| policy.server_wait(wait)).collect();
        assert!(
            draws
                .iter()
                .all(|d| *d >= wait && *d <= wait + Duration::from_secs(2))
        );
        assert!(draws.iter().any(|d| *d < wait + Duration::from_millis(700)));
        assert!(
            draws
                .iter()
                .any(|d| *d > wait + Duration::from_millis(1300))
        );
        assert_eq!(
            policy.server_wait(Duration::MAX),
            Duration::MAX,
            "saturates"
        );
    }

    #[test]
    fn every_setter_takes_effect() {
        let ms = Duration::from_millis;
        let policy = RetryPolicy::default()
            .initial_backoff(ms(10))
            .max_backoff(ms(40));
        assert_eq!(policy.backoff_cap(1), ms(10));
        assert_eq!(policy.backoff_cap(2), ms(20));
        assert_eq!(policy.backoff_cap(9), ms(40));
        assert_eq!(RetryPolicy::default().attempts(), 4);
        assert_eq!(RetryPolicy::default().max_attempts(7).attempts(), 7);
        let default = RetryPolicy::default();
        assert_ne!(default.clone().max_elapsed(Duration::from_secs(5)), default);
        assert_eq!(
            default
                .clone()
                .max_elapsed(Duration::from_secs(5))
                .max_elapsed,
            Duration::from_secs(5)
        );
        assert_ne!(default.clone().initial_backoff(ms(1)), default);
        assert_ne!(default.clone().max_backoff(ms(1)), default);
    }

    #[test]
    fn jitter_spreads_below_a_millisecond_and_saturates_above_u64() {
        let draws: Vec<Duration> = (0..200)
            .map(|_| jitter(Duration::from_micros(900)))
            .collect();
        assert!(draws.iter().all(|d| *d <= Duration::from_micros(900)));
        assert!(draws.iter().any(|d| *d > Duration::from_micros(450)));
        assert!(jitter(Duration::MAX) <= Duration::from_micros(u64::MAX));
        assert_eq!(jitter(Duration::ZERO), Duration::ZERO);
    }

    #[test]
    fn disabled_means_one_attempt() {
        assert_eq!(RetryPolicy::disabled().attempts(), 1);
        assert_eq!(RetryPolicy::default().max_attempts(0).attempts(), 1);
    }
}
