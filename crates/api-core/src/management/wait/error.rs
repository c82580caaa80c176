//! [`WaitError`]: how a wait ended without its condition, with the last value seen.

use std::time::Duration;

use crate::error::Error;
use crate::management::{Pipe, Service};

/// Why a waiter stopped without reaching its target. Each variant keeps the last value seen.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WaitError {
    /// The pipe reached a state from which the target cannot be reached (Failed, InternalError, or
    /// Completed while waiting for another state).
    #[error("pipe {} is {}, from which it cannot reach {target}", .pipe.name, .pipe.state)]
    PipeFailed {
        /// What was waited for.
        target: String,
        /// The pipe as last seen.
        pipe: Box<Pipe>,
    },
    /// The pipe answered 404 after it had been seen, while waiting for a state.
    #[error("pipe disappeared while waiting for {target} (last seen in state {})", last_state(.last_seen))]
    PipeGone {
        /// What was waited for.
        target: String,
        /// The pipe as last seen.
        last_seen: Option<Box<Pipe>>,
    },
    /// The pipe did not reach the target in time.
    #[error("pipe did not reach {target} within {waited:?} (last seen in state {})", last_state(.last_seen))]
    PipeTimedOut {
        /// What was waited for.
        target: String,
        /// How long it waited.
        waited: Duration,
        /// The pipe as last seen, if it was ever seen.
        last_seen: Option<Box<Pipe>>,
    },
    /// The service reached a state from which the target cannot be reached (failed, terminating,
    /// terminated, deleted).
    #[error("service {} is {}, from which it cannot reach {target}", .service.name, .service.state_name())]
    ServiceFailed {
        /// What was waited for.
        target: String,
        /// The service as last seen.
        service: Box<Service>,
    },
    /// An error ended the wait for a pipe that had been created: the error, and the pipe as last seen
    /// (at least as the create answered it), so its id is never lost.
    #[error("waiting for pipe {} ({}) to reach {target} failed: {source}", .last_seen.name, .last_seen.id)]
    PipeWaitInterrupted {
        /// What was waited for.
        target: String,
        /// The pipe as last seen.
        last_seen: Box<Pipe>,
        /// The error that ended the wait.
        #[source]
        source: Box<Error>,
    },
    /// The service did not reach the target in time.
    #[error("service did not reach {target} within {waited:?} (last seen {})", last_service_state(.last_seen))]
    ServiceTimedOut {
        /// What was waited for.
        target: String,
        /// How long it waited.
        waited: Duration,
        /// The service as last seen, if it was ever seen.
        last_seen: Option<Box<Service>>,
    },
}

fn last_state(pipe: &Option<Box<Pipe>>) -> String {
    pipe.as_ref()
        .map(|p| p.state.to_string())
        .unwrap_or_else(|| "never seen".to_string())
}

fn last_service_state(service: &Option<Box<Service>>) -> String {
    service
        .as_ref()
        .map(|s| format!("in state {}", s.state_name()))
        .unwrap_or_else(|| "never".to_string())
}

impl WaitError {
    /// The pipe as last seen, for pipe waits.
    pub fn last_seen_pipe(&self) -> Option<&Pipe> {
        match self {
            WaitError::PipeFailed { pipe, .. } => Some(pipe),
            WaitError::PipeWaitInterrupted { last_seen, .. } => Some(last_seen),
            WaitError::PipeGone { last_seen, .. } | WaitError::PipeTimedOut { last_seen, .. } => {
                last_seen.as_deref()
            }
            _ => None,
        }
    }

    /// The service as last seen, for service waits.
    pub fn last_seen_service(&self) -> Option<&Service> {
        match self {
            WaitError::ServiceFailed { service, .. } => Some(service),
            WaitError::ServiceTimedOut { last_seen, .. } => last_seen.as_deref(),
            _ => None,
        }
    }

    /// Whether the waiter ran out of time.
    pub fn is_timeout(&self) -> bool {
        matches!(
            self,
            WaitError::PipeTimedOut { .. } | WaitError::ServiceTimedOut { .. }
        )
    }
}
