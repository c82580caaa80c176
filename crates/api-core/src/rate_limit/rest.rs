//! [`Rest`]: a shared store left alone for a while after it failed, so that a hung mount or an
//! unreachable Redis costs the calls that follow nothing while it rests.

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Until when a store is left alone (none: it is used).
#[derive(Debug, Default)]
pub(crate) struct Rest(Mutex<Option<Instant>>);

impl Rest {
    /// Whether the store is still left alone now.
    pub(crate) fn is_resting(&self) -> bool {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some_and(|until| Instant::now() < until)
    }

    /// Leaves the store alone for `period` from now.
    pub(crate) fn rest_for(&self, period: Duration) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(Instant::now() + period);
    }
}
