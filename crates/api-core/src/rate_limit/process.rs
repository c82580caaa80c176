//! The process store: the pacing state in memory, shared by the clones of one `RateLimit`.

use std::sync::{Mutex, PoisonError};

use super::pacing::{Pace, PaceState};

/// One limit's state in this process.
#[derive(Debug, Default)]
pub(crate) struct ProcessState(Mutex<PaceState>);

impl ProcessState {
    /// Reserves the next slot: how long to wait, in nanoseconds.
    pub(crate) fn reserve(&self, pace: &Pace, now: u64) -> u64 {
        let mut state = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let (next, wait) = pace.reserve(*state, now);
        *state = next;
        wait
    }

    /// Records a 429 that asked to wait `wait` nanoseconds.
    pub(crate) fn throttled(&self, pace: &Pace, now: u64, wait: u64) {
        let mut state = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        *state = pace.throttled(*state, now, wait);
    }
}
