//! Waiters: poll a pipe or a service until a [`Condition`] holds, fail fast when it no longer can, and
//! give up at a deadline keeping the last value seen.

use std::fmt;
use std::future::Future;
use std::time::{Duration, Instant};

use tracing::Instrument;

use super::{Pipe, Service};
use crate::error::{Error, Result};
use crate::response::Response;

mod condition;
mod error;
mod options;

pub use condition::{And, Condition, Not, Or, WaitFor};
pub use error::WaitError;
pub use options::WaitOptions;

/// The shortest pause between two polls, whatever the options say: a zero interval still backs off.
const MIN_PAUSE: Duration = Duration::from_millis(10);

/// The clock of one wait: its deadline and its growing pause.
struct Pacer<'a> {
    options: &'a WaitOptions,
    started: Instant,
    interval: Duration,
    last_poll_done: bool,
}

impl<'a> Pacer<'a> {
    fn new(options: &'a WaitOptions) -> Self {
        Self {
            options,
            started: Instant::now(),
            interval: options.first_interval(),
            last_poll_done: false,
        }
    }

    /// The state changed: polls come at the first pace again.
    fn changed(&mut self) {
        self.interval = self.options.first_interval();
    }

    /// Runs one read of the wait within the time that is left (`None` when it runs out), so the
    /// timeout holds even when one read is slow (retries, server waits).
    async fn read<T>(&self, call: impl Future<Output = T>) -> Option<T> {
        tokio::time::timeout(self.remaining(), call).await.ok()
    }

    fn remaining(&self) -> Duration {
        self.options.timeout.saturating_sub(self.started.elapsed())
    }

    fn waited(&self) -> Duration {
        self.started.elapsed()
    }

    /// Sleeps before the next poll; `false` when the time is up. When the next pause would pass the
    /// deadline, it sleeps half of what is left instead and allows one last poll in the other half, so a
    /// waiter neither stops early nor overruns its timeout.
    async fn pause(&mut self) -> bool {
        let remaining = self.remaining();
        if self.interval < remaining {
            sleep(self.interval).await;
            self.interval = self.options.next_interval(self.interval);
            return true;
        }
        if self.last_poll_done || remaining < MIN_PAUSE {
            return false;
        }
        self.last_poll_done = true;
        sleep(remaining / 2).await;
        true
    }
}

/// Runs a waiter's polls in its span (`wait pipe`, `wait service`), and records how the wait ended.
async fn traced<T>(
    kind: &'static str,
    target: &dyn fmt::Display,
    polls: impl Future<Output = Result<T>>,
) -> Result<T> {
    let span = crate::spans::wait(kind, target);
    let result = polls.instrument(span.clone()).await;
    crate::spans::record_wait_end(&span, &result);
    result
}

/// A waiter's sleep between two polls, in a span of its own.
async fn sleep(delay: Duration) {
    tokio::time::sleep(delay)
        .instrument(crate::spans::wait_sleep(delay))
        .await;
}

/// Polls `get` until the pipe meets `target`, and returns it.
///
/// Fails fast with [`WaitError::PipeFailed`] when the target can no longer be reached, with
/// [`WaitError::PipeGone`] when the pipe disappears after it was seen, and with
/// [`WaitError::PipeTimedOut`] (carrying the last seen pipe, or `seen` if it never answered) when time
/// runs out. Up to `tolerated_not_found` 404s are accepted before the pipe is first seen; other
/// errors end the wait, wrapped in [`WaitError::PipeWaitInterrupted`] when a pipe was seen (or given
/// as `seen`), so that the pipe is not lost.
pub async fn wait_for_pipe<F, Fut>(
    get: F,
    target: &WaitFor<Pipe>,
    seen: Option<Pipe>,
    options: &WaitOptions,
) -> Result<Pipe>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<Response<Pipe>>>,
{
    traced("pipe", target, poll_pipe(get, target, seen, options)).await
}

async fn poll_pipe<F, Fut>(
    mut get: F,
    target: &WaitFor<Pipe>,
    seen: Option<Pipe>,
    options: &WaitOptions,
) -> Result<Pipe>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<Response<Pipe>>>,
{
    let mut pacer = Pacer::new(options);
    let mut last_seen: Option<Box<Pipe>> = seen.map(Box::new);
    let mut seen_by_poll = false;
    let mut not_found = 0u32;
    let timed_out = |pacer: &Pacer<'_>, last_seen| WaitError::PipeTimedOut {
        target: target.to_string(),
        waited: pacer.waited(),
        last_seen,
    };
    loop {
        // A 404 the wait tolerates (a pipe not visible yet) is no error of its call.
        let polled = if !seen_by_poll && not_found < options.tolerated_not_found {
            pacer.read(crate::spans::expecting_not_found(get())).await
        } else {
            pacer.read(get()).await
        };
        let Some(polled) = polled else {
            return Err(timed_out(&pacer, last_seen).into());
        };
        match polled {
            Ok(response) => {
                let pipe = response.into_inner();
                tracing::debug!(state = %pipe.state, "pipe polled");
                if target.is_done(&pipe) {
                    return Ok(pipe);
                }
                if target.is_failed(&pipe) {
                    return Err(WaitError::PipeFailed {
                        target: target.to_string(),
                        pipe: Box::new(pipe),
                    }
                    .into());
                }
                if last_seen
                    .as_ref()
                    .is_some_and(|seen| seen.state != pipe.state)
                {
                    pacer.changed();
                }
                last_seen = Some(Box::new(pipe));
                seen_by_poll = true;
            }
            Err(e) if e.is_not_found() && seen_by_poll => {
                return Err(WaitError::PipeGone {
                    target: target.to_string(),
                    last_seen,
                }
                .into());
            }
            Err(e) if e.is_not_found() && not_found < options.tolerated_not_found => {
                not_found = not_found.saturating_add(1);
            }
            Err(e) => return Err(interrupted(target, last_seen, e)),
        }
        if !pacer.pause().await {
            return Err(timed_out(&pacer, last_seen).into());
        }
    }
}

/// The error that ended a pipe wait, with the pipe when one was seen.
fn interrupted(target: &WaitFor<Pipe>, last_seen: Option<Box<Pipe>>, error: Error) -> Error {
    match last_seen {
        Some(pipe) => WaitError::PipeWaitInterrupted {
            target: target.to_string(),
            last_seen: pipe,
            source: Box::new(error),
        }
        .into(),
        None => error,
    }
}

/// Polls `get` until the pipe answers 404 (after a delete). Times out with
/// [`WaitError::PipeTimedOut`] carrying the last seen pipe.
pub async fn wait_for_pipe_gone<F, Fut>(get: F, options: &WaitOptions) -> Result<()>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<Response<Pipe>>>,
{
    traced("pipe", &"gone", poll_pipe_gone(get, options)).await
}

async fn poll_pipe_gone<F, Fut>(mut get: F, options: &WaitOptions) -> Result<()>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<Response<Pipe>>>,
{
    let mut pacer = Pacer::new(options);
    let mut last_seen = None;
    loop {
        // The 404 is what this wait waits for.
        let answered = match pacer.read(crate::spans::expecting_not_found(get())).await {
            Some(Ok(response)) => {
                last_seen = Some(Box::new(response.into_inner()));
                true
            }
            Some(Err(e)) if e.is_not_found() => return Ok(()),
            Some(Err(e)) => return Err(e),
            None => false,
        };
        if !answered || !pacer.pause().await {
            return Err(WaitError::PipeTimedOut {
                target: "gone".to_string(),
                waited: pacer.waited(),
                last_seen,
            }
            .into());
        }
    }
}

/// The two calls a service waiter makes: send the command, and read the service as it is.
pub trait ServiceWait {
    /// Sends the state command; answers with the service at that instant.
    fn send(&self) -> impl Future<Output = Result<Response<Service>>>;
    /// Reads the service without changing it: the state endpoint without a command, or, where the
    /// server refuses that, the waiter's own command (which changes nothing once the service is on
    /// its way). `None` when the read tells only that the service is moving (that command refused
    /// with 409 while the service finishes the other): the wait goes on.
    fn observe(&self) -> impl Future<Output = Result<Option<Response<Service>>>>;
}

/// Sends the command of `probe` once, then reads the service until it meets `target`, and returns it.
///
/// The wait ends when the service meets `target`; when it fails fast ([`WaitError::ServiceFailed`]:
/// for a state target, a dead end such as failed, terminating or terminated); at the timeout
/// ([`WaitError::ServiceTimedOut`], with the last seen service); or at an error other than a 409 to
/// the command. Every other state keeps the wait going with reads only, no command: provisioning,
/// starting, stopping, idle, awaking, partially_running, degraded, a state this SDK does not know,
/// or none.
///
/// The command is sent again only when a read shows it was not taken ([`WaitFor::needs_resend`]:
/// `stopped` while waiting for `running`, `running` while waiting for `stopped`), once per such
/// read. So a start refused with 409 because the service is still stopping is sent again when the
/// service reads `stopped`, and a service that falls back to `stopped` gets one more start.
pub async fn wait_for_service(
    probe: &impl ServiceWait,
    target: &WaitFor<Service>,
    options: &WaitOptions,
) -> Result<Service> {
    traced("service", target, poll_service(probe, target, options)).await
}

async fn poll_service(
    probe: &impl ServiceWait,
    target: &WaitFor<Service>,
    options: &WaitOptions,
) -> Result<Service> {
    let mut pacer = Pacer::new(options);
    let mut last_seen: Option<Box<Service>> = None;
    let mut send = true;
    let timed_out = |pacer: &Pacer<'_>, last_seen| {
        Error::Wait(WaitError::ServiceTimedOut {
            target: target.to_string(),
            waited: pacer.waited(),
            last_seen,
        })
    };
    loop {
        // A command, once sent, is awaited to its answer (a command cut short would leave its
        // outcome unsaid); reads get the time that is left. The command's own answer is the service
        // at that instant, before the change; only a read says whether the command was taken.
        let polled = if send {
            match probe.send().await {
                Err(e) if e.is_conflict() => {
                    tracing::debug!("the service did not take the command; reading its state");
                    pacer.read(probe.observe()).await.map(|read| (read, true))
                }
                sent => Some((sent.map(Some), false)),
            }
        } else {
            pacer.read(probe.observe()).await.map(|read| (read, true))
        };
        let Some((answer, read)) = polled else {
            return Err(timed_out(&pacer, last_seen));
        };
        let Some(service) = answer? else {
            // The service is moving (the read's command was refused while it finishes the other).
            send = false;
            if !pacer.pause().await {
                return Err(timed_out(&pacer, last_seen));
            }
            continue;
        };
        let service = service.into_inner();
        tracing::debug!(state = service.state_name(), "service polled");
        if target.is_done(&service) {
            return Ok(service);
        }
        if target.is_failed(&service) {
            return Err(WaitError::ServiceFailed {
                target: target.to_string(),
                service: Box::new(service),
            }
            .into());
        }
        send = read && target.needs_resend(&service);
        if last_seen
            .as_ref()
            .is_some_and(|seen| seen.state != service.state)
        {
            pacer.changed();
        }
        last_seen = Some(Box::new(service));
        if !pacer.pause().await {
            return Err(timed_out(&pacer, last_seen));
        }
    }
}

#[cfg(test)]
mod tests;
