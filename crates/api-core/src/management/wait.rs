//! Waiters: poll a pipe or a service until a [`Condition`] holds, fail fast when it no longer can, and
//! give up at a deadline keeping the last value seen.

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use api_raw::support::{PipeState, ServiceState};
use tracing::Instrument;

use super::{Pipe, Service, ServiceCommand};
use crate::error::{Error, Result};
use crate::response::Response;

/// The shortest pause between two polls, whatever the options say: a zero interval still backs off.
const MIN_PAUSE: Duration = Duration::from_millis(10);

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
    fn next_interval(&self, current: Duration) -> Duration {
        let cap = self.max_interval.max(MIN_PAUSE);
        current.saturating_add(current / 2).clamp(MIN_PAUSE, cap)
    }

    fn first_interval(&self) -> Duration {
        self.initial_interval
            .clamp(MIN_PAUSE, self.max_interval.max(MIN_PAUSE))
    }
}

/// A condition on a value (a [`Pipe`], a [`Service`]), in the style of kube's `await_condition`:
/// any `Fn(&T) -> bool` is one, and conditions compose with [`and`](Condition::and),
/// [`or`](Condition::or) and [`not`](Condition::not).
///
/// ```
/// use api_core::management::{Condition, Pipe, PipeState};
///
/// let running = |pipe: &Pipe| pipe.state == PipeState::Running;
/// let scaled = |pipe: &Pipe| pipe.scaling.replicas == Some(2);
/// let ready = running.and(scaled);
/// # let _ = ready;
/// ```
pub trait Condition<T: ?Sized> {
    /// Whether `value` meets the condition.
    fn matches(&self, value: &T) -> bool;

    /// Both conditions hold.
    fn and<C: Condition<T>>(self, other: C) -> And<Self, C>
    where
        Self: Sized,
    {
        And(self, other)
    }

    /// Either condition holds.
    fn or<C: Condition<T>>(self, other: C) -> Or<Self, C>
    where
        Self: Sized,
    {
        Or(self, other)
    }

    /// The condition does not hold.
    fn not(self) -> Not<Self>
    where
        Self: Sized,
    {
        Not(self)
    }
}

impl<T: ?Sized, F: Fn(&T) -> bool> Condition<T> for F {
    fn matches(&self, value: &T) -> bool {
        self(value)
    }
}

/// Both conditions: see [`Condition::and`].
#[derive(Debug, Clone, Copy)]
pub struct And<A, B>(A, B);

impl<T: ?Sized, A: Condition<T>, B: Condition<T>> Condition<T> for And<A, B> {
    fn matches(&self, value: &T) -> bool {
        self.0.matches(value) && self.1.matches(value)
    }
}

/// Either condition: see [`Condition::or`].
#[derive(Debug, Clone, Copy)]
pub struct Or<A, B>(A, B);

impl<T: ?Sized, A: Condition<T>, B: Condition<T>> Condition<T> for Or<A, B> {
    fn matches(&self, value: &T) -> bool {
        self.0.matches(value) || self.1.matches(value)
    }
}

/// The negation: see [`Condition::not`].
#[derive(Debug, Clone, Copy)]
pub struct Not<A>(A);

impl<T: ?Sized, A: Condition<T>> Condition<T> for Not<A> {
    fn matches(&self, value: &T) -> bool {
        !self.0.matches(value)
    }
}

type Check<T> = Arc<dyn Fn(&T) -> bool + Send + Sync>;

/// `check` or `more`.
fn either<T: ?Sized + 'static>(
    check: Check<T>,
    more: impl Condition<T> + Send + Sync + 'static,
) -> Check<T> {
    Arc::new(move |value| check(value) || more.matches(value))
}

/// What a waiter waits for: done when its condition holds, failed as soon as its failure condition
/// holds (a state from which the target cannot be reached); for a service, also when its command was
/// not taken and is sent again ([`resend_if`](Self::resend_if)). Named targets are built on it
/// ([`WaitFor::pipe_state`], [`WaitFor::pipe_steady`], [`WaitFor::service_state`]; a state converts
/// into its target); any condition can be waited for with [`WaitFor::condition`].
///
/// ```
/// use api_core::management::{Pipe, PipeState, WaitFor};
///
/// // Running with two replicas; give up at once if the pipe fails.
/// let target = WaitFor::condition("running on 2 replicas", |pipe: &Pipe| {
///     pipe.state == PipeState::Running && pipe.scaling.replicas == Some(2)
/// })
/// .fail_if(|pipe: &Pipe| pipe.state.is_failed());
/// assert_eq!(target.to_string(), "running on 2 replicas");
/// ```
#[derive(Clone)]
pub struct WaitFor<T> {
    description: String,
    done: Check<T>,
    fail: Check<T>,
    resend: Check<T>,
}

impl<T> fmt::Debug for WaitFor<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("WaitFor").field(&self.description).finish()
    }
}

impl<T> fmt::Display for WaitFor<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.description)
    }
}

impl<T: 'static> WaitFor<T> {
    /// Wait until `done` holds; `description` names it in errors. Nothing fails fast until
    /// [`fail_if`](Self::fail_if) says what should, and no command is sent again.
    pub fn condition(
        description: impl Into<String>,
        done: impl Condition<T> + Send + Sync + 'static,
    ) -> Self {
        Self {
            description: description.into(),
            done: Arc::new(move |value| done.matches(value)),
            fail: Arc::new(|_| false),
            resend: Arc::new(|_| false),
        }
    }

    /// Also fail as soon as `fail` holds (checked after the target, so a value that meets both is done).
    pub fn fail_if(mut self, fail: impl Condition<T> + Send + Sync + 'static) -> Self {
        self.fail = either(self.fail, fail);
        self
    }

    /// Whether `value` is what is waited for.
    pub fn is_done(&self, value: &T) -> bool {
        (self.done)(value)
    }

    /// Whether `value` can no longer reach it.
    pub fn is_failed(&self, value: &T) -> bool {
        (self.fail)(value)
    }
}

impl WaitFor<Pipe> {
    /// The pipe is in `state`. Fails fast in Failed or InternalError, and in Completed (a one-shot
    /// pipe that finished), unless that is the state waited for. A [`PipeState`] converts into this.
    pub fn pipe_state(state: PipeState) -> Self {
        let target = state.clone();
        Self::condition(state.to_string(), move |pipe: &Pipe| pipe.state == target).fail_if(
            move |pipe: &Pipe| {
                pipe.state != state
                    && (pipe.state.is_failed() || pipe.state == PipeState::Completed)
            },
        )
    }

    /// The pipe is in a steady state that is not a failure: Running, Stopped, Paused or Completed.
    /// Fails fast in Failed or InternalError.
    pub fn pipe_steady() -> Self {
        Self::condition("a steady state", |pipe: &Pipe| {
            pipe.state.is_steady() && !pipe.state.is_failed()
        })
        .fail_if(|pipe: &Pipe| pipe.state.is_failed())
    }
}

impl WaitFor<Service> {
    /// The service is in `state`. Fails fast in a dead end ([`ServiceState::is_dead_end`]: failed,
    /// terminating, terminated, softdeleting, softdeleted), unless that is the state waited for. For
    /// `running` and `stopped`, a service read back in the state its command starts from
    /// ([`ServiceCommand::starts_from`]) has not taken the command, which is sent again. Any other
    /// state keeps the wait going. A [`ServiceState`] converts into this.
    pub fn service_state(state: ServiceState) -> Self {
        let target = state.clone();
        let not_taken = ServiceCommand::leading_to(&state).map(ServiceCommand::starts_from);
        Self::condition(state.to_string(), move |service: &Service| {
            service.state.as_ref() == Some(&target)
        })
        .fail_if(move |service: &Service| {
            service
                .state
                .as_ref()
                .is_some_and(|s| s != &state && s.is_dead_end())
        })
        .resend_if(move |service: &Service| {
            not_taken
                .as_ref()
                .is_some_and(|from| service.state.as_ref() == Some(from))
        })
    }

    /// Also send the command again when a read of the service shows `not_taken`: the service did
    /// not take the command (it was refused with 409 while another transition ran) or fell back.
    pub fn resend_if(mut self, not_taken: impl Condition<Service> + Send + Sync + 'static) -> Self {
        self.resend = either(self.resend, not_taken);
        self
    }

    /// Whether a service read as `value` has not taken the command, which is then sent again.
    pub fn needs_resend(&self, value: &Service) -> bool {
        (self.resend)(value)
    }
}

impl From<PipeState> for WaitFor<Pipe> {
    fn from(state: PipeState) -> Self {
        Self::pipe_state(state)
    }
}

impl From<ServiceState> for WaitFor<Service> {
    fn from(state: ServiceState) -> Self {
        Self::service_state(state)
    }
}

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
        let Some(polled) = pacer.read(get()).await else {
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
        let answered = match pacer.read(get()).await {
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
