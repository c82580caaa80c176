//! [`WaitOptions`]: how a waiter polls, and for how long.

use std::time::Duration;

use super::MIN_PAUSE;

/// How a waiter polls. Every combination of values is safe: sums saturate and pauses never drop below
/// 10 ms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitOptions {
    /// Give up after this long: each read gets no more than the time that is left, so a slow read
    /// cannot stretch it. Every value is safe: `Duration::ZERO` gives up at once, `Duration::MAX`
    /// never. A command (start, stop) is never cut short once sent: it is awaited to its answer
    /// (within the client's operation timeout), so a wait never ends with a command half-sent.
    pub timeout: Duration,
    /// The first pause between two polls, and the pause again after the state changes.
    pub initial_interval: Duration,
    /// The longest pause between two polls: while nothing changes the pause grows by half each
    /// time, up to this, so long waits spend little of the key's rate limit (polls go through it).
    pub max_interval: Duration,
    /// How many 404 answers to accept before the pipe is first seen (a new pipe may not be readable yet).
    pub tolerated_not_found: u32,
}

impl Default for WaitOptions {
    /// 10 minutes, polling from every second up to every 60 seconds, tolerating 3 early 404s.
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(600),
            initial_interval: Duration::from_secs(1),
            max_interval: Duration::from_secs(60),
            tolerated_not_found: 3,
        }
    }
}

impl WaitOptions {
    /// Give up after `timeout`.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Poll every `interval` at first, never slower than `max`.
    pub fn interval(mut self, interval: Duration, max: Duration) -> Self {
        self.initial_interval = interval;
        self.max_interval = max.max(interval);
        self
    }

    /// Accept this many 404 answers before the pipe is first seen.
    pub fn tolerated_not_found(mut self, count: u32) -> Self {
        self.tolerated_not_found = count;
        self
    }

    /// The pause after `current`: half as long again, within `[10 ms, max_interval]`.
    pub(super) fn next_interval(&self, current: Duration) -> Duration {
        let cap = self.max_interval.max(MIN_PAUSE);
        current.saturating_add(current / 2).clamp(MIN_PAUSE, cap)
    }

    pub(super) fn first_interval(&self) -> Duration {
        self.initial_interval
            .clamp(MIN_PAUSE, self.max_interval.max(MIN_PAUSE))
    }
}
