//! The process store: the pacing state in memory, shared by the clones of one `RateLimit`, on this
//! process's monotonic clock.

use std::sync::{Mutex, PoisonError};

use super::clock;
use super::pacing::PaceState;

/// One limit's state in this process.
#[derive(Debug, Default)]
pub(crate) struct ProcessState(Mutex<PaceState>);

impl ProcessState {
    /// Runs `change` on the state at this process's clock's time, under the lock.
    pub(crate) fn with<T>(&self, change: impl FnOnce(PaceState, u64) -> (PaceState, T)) -> T {
        let mut state = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let (next, result) = change(*state, clock::process());
        *state = next;
        result
    }
}
