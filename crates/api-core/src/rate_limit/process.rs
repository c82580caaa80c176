//! The process store: the pacing state in memory, shared by the clones of one `RateLimit`, on this
//! process's monotonic clock.

use std::convert::Infallible;
use std::sync::{Mutex, PoisonError};

use super::booking::StoreKind;
use super::clock;
use super::pacing::{Pace, PaceState};
use super::store::{Answer, Op, Store};

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

impl Store for ProcessState {
    type Error = Infallible;

    async fn update(&self, pace: Pace, op: Op) -> Result<Answer, Infallible> {
        Ok(self.with(|state, now| pace.apply(StoreKind::Process, state, now, op)))
    }

    fn answering(&self) -> &'static str {
        StoreKind::Process.name()
    }
}
