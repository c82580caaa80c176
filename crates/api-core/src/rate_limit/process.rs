//! The process store: the pacing state in memory, shared by the clones of one `RateLimit`, on this
//! process's monotonic clock.

use std::sync::{Mutex, PoisonError};

use super::clock;
use super::pacing::{Pace, PaceState, Ticket};

/// One limit's state in this process.
#[derive(Debug, Default)]
pub(crate) struct ProcessState(Mutex<PaceState>);

impl ProcessState {
    fn with<T>(&self, change: impl FnOnce(PaceState, u64) -> (PaceState, T)) -> T {
        let mut state = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let (next, result) = change(*state, clock::process());
        *state = next;
        result
    }

    /// Reserves the next slot.
    pub(crate) fn reserve(&self, pace: &Pace) -> Ticket {
        self.with(|state, now| pace.reserve(state, now))
    }

    /// Confirms `ticket` at its slot: `None` to go, else a new reservation.
    pub(crate) fn confirm(&self, pace: &Pace, ticket: Ticket) -> Option<Ticket> {
        self.with(|state, now| pace.confirm(state, now, ticket))
    }

    /// Records a 429 that asked to wait `wait` nanoseconds.
    pub(crate) fn throttled(&self, pace: &Pace, wait: u64) {
        self.with(|state, now| (pace.throttled(state, now, wait), ()));
    }
}
