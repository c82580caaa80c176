//! [`Condition`]s a waiter polls for, combined with [`And`], [`Or`] and [`Not`], and [`WaitFor`]: a
//! condition with the states that end a wait early.

use std::fmt;
use std::sync::Arc;

use api_raw::support::{PipeState, ServiceState};

use crate::management::{Pipe, Service, ServiceCommand};

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
