//! Waiters: poll a pipe or a service until it reaches a state, with backoff and a deadline.

use std::future::Future;
use std::time::{Duration, Instant};

use api_raw::support::{PipeState, ServiceState};

use super::{Pipe, Service};
use crate::error::{Error, Result};
use crate::response::Response;

/// How a waiter polls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitOptions {
    /// Give up after this long.
    pub timeout: Duration,
    /// The first pause between two polls.
    pub initial_interval: Duration,
    /// The longest pause between two polls (the pause grows by half each time).
    pub max_interval: Duration,
    /// How many 404 answers to accept before the pipe is first seen (a new pipe may not be readable yet).
    pub tolerated_not_found: u32,
}

impl Default for WaitOptions {
    /// 10 minutes, polling from every second up to every 10 seconds, tolerating 3 early 404s.
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(600),
            initial_interval: Duration::from_secs(1),
            max_interval: Duration::from_secs(10),
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

    fn next_interval(&self, current: Duration) -> Duration {
        (current + current / 2).min(self.max_interval)
    }
}

/// What a pipe waiter waits for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PipeTarget {
    /// This state.
    State(PipeState),
    /// Any steady state that is not a failure: Running, Stopped, Paused or Completed.
    Steady,
    /// The pipe answers 404 (after a delete).
    Gone,
}

/// Why a waiter stopped without reaching its target.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WaitError {
    /// The pipe entered Failed or InternalError.
    #[error("pipe {} entered {} while waiting", .pipe.name(), .pipe.state())]
    PipeFailed {
        /// The pipe as last seen.
        pipe: Box<Pipe>,
    },
    /// A one-shot pipe finished (Completed) while waiting for another state, which it can no longer
    /// reach.
    #[error("pipe {} finished (Completed) while waiting for {target:?}", .pipe.name())]
    PipeFinished {
        /// What was waited for.
        target: PipeTarget,
        /// The pipe as last seen.
        pipe: Box<Pipe>,
    },
    /// The pipe answered 404 after it had been seen, while waiting for a state.
    #[error("pipe disappeared while waiting (last seen in state {})", last_state(.last_seen))]
    PipeGone {
        /// The pipe as last seen.
        last_seen: Option<Box<Pipe>>,
    },
    /// The pipe did not reach the target in time.
    #[error("pipe did not reach {target:?} within {waited:?} (last seen in state {})", last_state(.last_seen))]
    PipeTimedOut {
        /// What was waited for.
        target: PipeTarget,
        /// How long it waited.
        waited: Duration,
        /// The pipe as last seen, if it was ever seen.
        last_seen: Option<Box<Pipe>>,
    },
    /// The service entered `failed`.
    #[error("service {} failed while waiting", .service.name())]
    ServiceFailed {
        /// The service as last seen.
        service: Box<Service>,
    },
    /// The service did not reach the target in time.
    #[error("service did not reach {target} within {waited:?}")]
    ServiceTimedOut {
        /// What was waited for.
        target: ServiceState,
        /// How long it waited.
        waited: Duration,
        /// The service as last seen, if it was ever seen.
        last_seen: Option<Box<Service>>,
    },
}

fn last_state(pipe: &Option<Box<Pipe>>) -> String {
    pipe.as_ref()
        .map(|p| p.state().to_string())
        .unwrap_or_else(|| "never seen".to_string())
}

impl WaitError {
    /// The pipe as last seen, for pipe waits.
    pub fn last_seen_pipe(&self) -> Option<&Pipe> {
        match self {
            WaitError::PipeFailed { pipe } | WaitError::PipeFinished { pipe, .. } => Some(pipe),
            WaitError::PipeGone { last_seen } => last_seen.as_deref(),
            WaitError::PipeTimedOut { last_seen, .. } => last_seen.as_deref(),
            _ => None,
        }
    }
}

/// Polls `get` until the pipe reaches `target`: returns the pipe, or `None` exactly when the target is
/// [`PipeTarget::Gone`].
///
/// Fails fast with [`WaitError::PipeFailed`] when the pipe enters Failed or InternalError (unless that is
/// the target), and with [`WaitError::PipeTimedOut`], carrying the last seen pipe, when time runs out.
/// Up to `tolerated_not_found` 404s are accepted before the pipe is first seen; other errors end the wait.
pub async fn wait_for_pipe<F, Fut>(
    mut get: F,
    target: PipeTarget,
    options: &WaitOptions,
) -> Result<Option<Pipe>>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<Response<Pipe>>>,
{
    let started = Instant::now();
    let mut interval = options.initial_interval;
    let mut last_seen: Option<Box<Pipe>> = None;
    let mut not_found = 0u32;
    loop {
        // Each poll gets only the time that is left, so the timeout holds even when one read is slow
        // (retries, server waits).
        let remaining = options.timeout.saturating_sub(started.elapsed());
        let Ok(polled) = tokio::time::timeout(remaining, get()).await else {
            return Err(WaitError::PipeTimedOut {
                target,
                waited: started.elapsed(),
                last_seen,
            }
            .into());
        };
        match polled {
            Ok(response) => {
                let pipe = response.into_inner();
                let state = pipe.state();
                tracing::debug!(state = %state, "pipe polled");
                let reached = match &target {
                    PipeTarget::State(wanted) => &state == wanted,
                    PipeTarget::Steady => state.is_steady() && !state.is_failed(),
                    PipeTarget::Gone => false,
                };
                if reached {
                    return Ok(Some(pipe));
                }
                if state.is_failed() && target != PipeTarget::Gone {
                    return Err(WaitError::PipeFailed {
                        pipe: Box::new(pipe),
                    }
                    .into());
                }
                if state == PipeState::Completed && matches!(target, PipeTarget::State(_)) {
                    return Err(WaitError::PipeFinished {
                        target,
                        pipe: Box::new(pipe),
                    }
                    .into());
                }
                last_seen = Some(Box::new(pipe));
            }
            Err(e) if e.is_not_found() => match (&target, last_seen.take()) {
                (PipeTarget::Gone, _) => return Ok(None),
                (_, Some(seen)) => {
                    return Err(WaitError::PipeGone {
                        last_seen: Some(seen),
                    }
                    .into());
                }
                (_, None) if not_found < options.tolerated_not_found => not_found += 1,
                (_, None) => return Err(e),
            },
            Err(e) => return Err(e),
        }
        if started.elapsed() + interval > options.timeout {
            return Err(WaitError::PipeTimedOut {
                target,
                waited: started.elapsed(),
                last_seen,
            }
            .into());
        }
        tokio::time::sleep(interval).await;
        interval = options.next_interval(interval);
    }
}

/// Polls `poll` (which re-sends the state command and returns the service as it is) until the service
/// is in `target`. Fails fast when the service enters `failed`.
pub async fn wait_for_service<F, Fut>(
    mut poll: F,
    target: ServiceState,
    options: &WaitOptions,
) -> Result<Service>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<Response<Service>>>,
{
    let started = Instant::now();
    let mut interval = options.initial_interval;
    loop {
        let remaining = options.timeout.saturating_sub(started.elapsed());
        let Ok(polled) = tokio::time::timeout(remaining, poll()).await else {
            return Err(Error::Wait(WaitError::ServiceTimedOut {
                target,
                waited: started.elapsed(),
                last_seen: None,
            }));
        };
        let service = polled?.into_inner();
        let state = service.state();
        tracing::debug!(state = ?state, "service polled");
        if state.as_ref() == Some(&target) {
            return Ok(service);
        }
        if state == Some(ServiceState::Failed) {
            return Err(WaitError::ServiceFailed {
                service: Box::new(service),
            }
            .into());
        }
        if started.elapsed() + interval > options.timeout {
            let waited = started.elapsed();
            return Err(Error::Wait(WaitError::ServiceTimedOut {
                target,
                waited,
                last_seen: Some(Box::new(service)),
            }));
        }
        tokio::time::sleep(interval).await;
        interval = options.next_interval(interval);
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::sync::Mutex;

    use api_raw::management::types as raw;

    use super::*;
    use crate::error::ApiError;
    use crate::response::ResponseMeta;

    fn pipe(state: &str) -> Result<Response<Pipe>> {
        let raw = raw::Pipe {
            name: Some("p".into()),
            state: Some(state.into()),
            ..Default::default()
        };
        let meta = ResponseMeta {
            status: 200,
            headers: Default::default(),
            request_id: None,
            attempts: 1,
        };
        Ok(Response::new(Pipe::from(raw), meta))
    }

    fn not_found() -> Result<Response<Pipe>> {
        Err(Error::from(ApiError {
            operation: "getPipe",
            status: 404,
            code: Some("NOT_FOUND".into()),
            message: "no such pipe".into(),
            request_id: None,
            body: String::new(),
            retry_after: None,
            attempts: 1,
        }))
    }

    fn fast() -> WaitOptions {
        WaitOptions::default()
            .interval(Duration::from_millis(1), Duration::from_millis(2))
            .timeout(Duration::from_secs(5))
    }

    async fn run(
        script: Vec<Result<Response<Pipe>>>,
        target: PipeTarget,
        options: WaitOptions,
    ) -> (Result<Option<Pipe>>, usize) {
        let script = Mutex::new(VecDeque::from(script));
        let polls = std::sync::atomic::AtomicUsize::new(0);
        let result = wait_for_pipe(
            || {
                polls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let next = script
                    .lock()
                    .unwrap()
                    .pop_front()
                    .unwrap_or_else(|| pipe("Provisioning"));
                async move { next }
            },
            target,
            &options,
        )
        .await;
        (result, polls.into_inner())
    }

    #[tokio::test]
    async fn reaches_running_after_provisioning() {
        let (result, polls) = run(
            vec![pipe("Provisioning"), pipe("Provisioning"), pipe("Running")],
            PipeTarget::State(PipeState::Running),
            fast(),
        )
        .await;
        assert_eq!(result.unwrap().unwrap().state(), PipeState::Running);
        assert_eq!(polls, 3);
    }

    #[tokio::test]
    async fn fails_fast_on_failed() {
        let script = vec![pipe("Provisioning"), pipe("Failed"), pipe("Running")];
        let (result, polls) = run(script, PipeTarget::State(PipeState::Running), fast()).await;
        let err = result.unwrap_err();
        assert!(
            matches!(&err, Error::Wait(WaitError::PipeFailed { pipe }) if pipe.state() == PipeState::Failed),
            "{err}"
        );
        assert_eq!(polls, 2);
    }

    #[tokio::test]
    async fn tolerates_early_not_found_but_not_too_many() {
        let (result, _) = run(
            vec![not_found(), not_found(), pipe("Running")],
            PipeTarget::Steady,
            fast(),
        )
        .await;
        assert_eq!(result.unwrap().unwrap().state(), PipeState::Running);
        let (result, polls) = run(
            vec![not_found(), not_found()],
            PipeTarget::Steady,
            fast().tolerated_not_found(1),
        )
        .await;
        assert!(result.unwrap_err().is_not_found());
        assert_eq!(polls, 2);
    }

    #[tokio::test]
    async fn gone_waits_for_a_not_found() {
        let (result, polls) = run(
            vec![pipe("Running"), pipe("Stopping"), not_found()],
            PipeTarget::Gone,
            fast(),
        )
        .await;
        assert!(result.unwrap().is_none());
        assert_eq!(polls, 3);
    }

    #[tokio::test]
    async fn a_pipe_that_vanishes_while_waiting_for_a_state_is_reported() {
        let (result, _) = run(
            vec![pipe("Provisioning"), not_found()],
            PipeTarget::State(PipeState::Running),
            fast(),
        )
        .await;
        assert!(matches!(
            result.unwrap_err(),
            Error::Wait(WaitError::PipeGone { .. })
        ));
    }

    #[tokio::test]
    async fn timeout_returns_the_last_seen_pipe() {
        let options = fast().timeout(Duration::from_millis(30));
        let (result, _) = run(vec![], PipeTarget::State(PipeState::Running), options).await;
        match result.unwrap_err() {
            Error::Wait(err @ WaitError::PipeTimedOut { .. }) => {
                assert_eq!(
                    err.last_seen_pipe().map(Pipe::state),
                    Some(PipeState::Provisioning)
                );
                assert!(
                    err.to_string().contains("last seen in state Provisioning"),
                    "{err}"
                );
            }
            other => panic!("unexpected {other}"),
        }
    }

    #[tokio::test]
    async fn steady_does_not_accept_failure_or_transitions() {
        let (result, polls) = run(
            vec![pipe("Setup"), pipe("Snapshot"), pipe("Completed")],
            PipeTarget::Steady,
            fast(),
        )
        .await;
        assert_eq!(result.unwrap().unwrap().state(), PipeState::Completed);
        assert_eq!(polls, 3);
        let (result, _) = run(vec![pipe("InternalError")], PipeTarget::Steady, fast()).await;
        assert!(matches!(
            result.unwrap_err(),
            Error::Wait(WaitError::PipeFailed { .. })
        ));
    }

    #[tokio::test]
    async fn a_completed_pipe_ends_a_wait_for_another_state() {
        let (result, polls) = run(
            vec![pipe("Running"), pipe("Completed")],
            PipeTarget::State(PipeState::Stopped),
            fast(),
        )
        .await;
        assert!(matches!(
            result.unwrap_err(),
            Error::Wait(WaitError::PipeFinished { .. })
        ));
        assert_eq!(polls, 2);
    }

    #[tokio::test]
    async fn a_slow_read_cannot_stretch_the_timeout() {
        let options = fast().timeout(Duration::from_millis(50));
        let started = std::time::Instant::now();
        let result = wait_for_pipe(
            || async {
                tokio::time::sleep(Duration::from_secs(5)).await;
                pipe("Running")
            },
            PipeTarget::State(PipeState::Running),
            &options,
        )
        .await;
        assert!(matches!(
            result.unwrap_err(),
            Error::Wait(WaitError::PipeTimedOut { .. })
        ));
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn intervals_grow_by_half_up_to_the_cap() {
        let options = WaitOptions::default();
        assert_eq!(
            options.next_interval(Duration::from_secs(1)),
            Duration::from_millis(1500)
        );
        assert_eq!(
            options.next_interval(Duration::from_secs(8)),
            Duration::from_secs(10)
        );
    }
}
