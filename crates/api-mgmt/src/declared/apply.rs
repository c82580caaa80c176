//! [`Plan::apply`]: carrying a plan out, recording every step so that a create happens exactly once
//! across crashes and unknown outcomes.

use std::collections::HashMap;
use std::sync::Mutex;

use api_core::management::operations as ops;
use api_core::management::{
    Pipe, PipeState, ServiceState, WaitFor, WaitOptions, wait_for_pipe, wait_for_pipe_gone,
};
use api_core::{DecodeError, Error, PipeId, Response};
use chrono::Utc;
use futures::StreamExt as _;
use futures::stream::FuturesUnordered;
use serde_json::Value;
use tokio::sync::Semaphore;

use super::fingerprint::{Memory, observed_form};
use super::plan::{ActionKind, Creation, Plan, PlanAction};
use super::stop::{StopSignal, unless_stopped};
use super::store::LeaseClock;
use super::{
    PendingCreate, RecordedPipe, RecordedState, ServiceTarget, StateError, StateLock, StateStore,
};
use crate::ServiceHandle;

/// How an apply runs.
#[derive(Debug, Clone)]
pub struct ApplyOptions {
    parallelism: usize,
    max_unavailable: usize,
    max_destructive: Option<usize>,
    wait: WaitOptions,
    stop: Option<StopSignal>,
}

impl Default for ApplyOptions {
    /// Four calls at a time, one declared pipe down at a time; waits as
    /// [`WaitOptions::default`] (up to 10 minutes each).
    fn default() -> Self {
        Self {
            parallelism: 4,
            max_unavailable: 1,
            max_destructive: None,
            wait: WaitOptions::default(),
            stop: None,
        }
    }
}

impl ApplyOptions {
    /// How many calls (creates, deletes, and the reads of pipes being waited for) are in flight at
    /// once (at least 1). A wait holds no slot between its reads: every pipe being provisioned or
    /// deleted is read in turn (the slots are handed out first come, first served), so a bulk apply
    /// goes at the pace of the client's rate limit, shared store included, not of the waits.
    ///
    /// A wait's timeout counts the time its reads queue for a slot: with many pipes, few slots and
    /// a short timeout, a wait can end before its pipe was read often.
    pub fn parallelism(mut self, calls: usize) -> Self {
        self.parallelism = calls.clamp(1, Semaphore::MAX_PERMITS);
        self
    }

    /// How many declared pipes may be down at once (at least 1): a replace (delete, create, wait for
    /// `Running`) starts only while fewer are down, counting pipes down already (gone, failed, a
    /// replace that did not finish, one whose replace failed). The default is 1: one pipe after
    /// another, so a change to many files never takes them all down together.
    pub fn max_unavailable(mut self, pipes: usize) -> Self {
        self.max_unavailable = pipes.max(1);
        self
    }

    /// Refuses, before any call, an apply whose deletes, replaces and recreates together are more
    /// than `actions` ([`StateError::TooDestructive`]). No cap by default.
    pub fn max_destructive(mut self, actions: usize) -> Self {
        self.max_destructive = Some(actions);
        self
    }

    /// How each wait polls and how long it may take (a service start or stop, a created pipe to be
    /// `Running`, a deleted pipe to be gone).
    pub fn wait(mut self, options: WaitOptions) -> Self {
        self.wait = options;
        self
    }

    /// Stops the apply when `signal` is given (see [`StopSignal`]): nothing new starts, the creates
    /// and deletes in flight end, the waits (the service's start or stop included) end early, and
    /// what was done is recorded.
    pub fn stop_signal(mut self, signal: StopSignal) -> Self {
        self.stop = Some(signal);
        self
    }
}

/// Where an apply is, for a progress display: the pipe (or `None` for the service), the step, and
/// the state last seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    /// The pipe's name; `None` for the service.
    pub name: Option<String>,
    /// The step: `starting`, `stopping`, `recorded`, `deleting`, `waiting until gone`, `creating`,
    /// `waiting for Running`, `done`, `failed`, `pending`, `skipped`, `unreadable`.
    pub step: String,
    /// The state last seen, when one was read.
    pub state: Option<String>,
}

/// What became of one action.
#[derive(Debug)]
#[non_exhaustive]
pub enum Outcome {
    /// Done: the pipe is as declared (created and `Running`, or recorded as it is), or gone
    /// (deleted).
    Done {
        /// The state the pipe was last seen in (`None` for a delete).
        state: Option<PipeState>,
    },
    /// The action failed; the state records where it stopped (a created pipe keeps its id even when
    /// its wait failed).
    Failed(Error),
    /// The create was sent and its outcome is not known: the intent stays pending.
    OutcomeUnknown(Error),
    /// A pending create blocks this name: nothing was sent.
    Blocked,
    /// Not run, for the reason given (the service did not start, the delete of a replace failed, no
    /// room under `max_unavailable`, an answer that cannot be read).
    Skipped(String),
    /// Not sent: the apply's lease of the service may have lapsed by its own clock
    /// ([`StateLock::check_lease`]), so another apply may hold the service; nothing that changes
    /// the server is sent after that.
    LeaseLost,
    /// The apply was asked to stop ([`StopSignal`]): the action was not started, or its wait was
    /// cut short (a created pipe is recorded with its id; a deleted one stays recorded until a
    /// plan finds it gone).
    Interrupted,
}

/// What happened to one action.
#[derive(Debug)]
pub struct ActionReport {
    /// The pipe's name.
    pub name: String,
    /// What was to be done.
    pub kind: ActionKind,
    /// The pipe's id: the one created, else the one acted on.
    pub id: Option<PipeId>,
    /// What became of it.
    pub outcome: Outcome,
}

/// What an apply did.
#[derive(Debug, Default)]
pub struct ApplyReport {
    /// The service's start or stop, when the plan had one and it was sent: the error, when it
    /// failed.
    pub service: Option<Result<(), Error>>,
    /// Every action, in the plan's order.
    pub actions: Vec<ActionReport>,
    /// Whether the apply stopped sending changes because its lease may have lapsed (the service's
    /// start or stop, or an action, was not sent: [`Outcome::LeaseLost`]).
    pub lease_lost: bool,
    /// Whether the apply was asked to stop ([`StopSignal`]) before it was done: the service's
    /// change or an action was not started or not waited for ([`Outcome::Interrupted`]).
    pub interrupted: bool,
    /// The lineage of the state as the apply left it ([`RecordedState::lineage`]).
    pub lineage: String,
    /// The serial of the state as the apply left it ([`RecordedState::serial`]): with the
    /// lineage, the generation a later plan can be bound to.
    pub serial: u64,
}

impl ApplyReport {
    /// Whether every action is done: the service now matches its declaration.
    pub fn is_complete(&self) -> bool {
        !self.lease_lost
            && !self.interrupted
            && self.service.as_ref().is_none_or(Result::is_ok)
            && self
                .actions
                .iter()
                .all(|a| matches!(a.outcome, Outcome::Done { .. }))
    }
}

/// The recorded state while an apply changes it: every change is saved before the apply goes on.
struct Recording<'a> {
    state: Mutex<RecordedState>,
    store: &'a dyn StateStore,
    lock: &'a StateLock,
    /// Asked to stop: a write the store did not take is not tried again.
    stop: Option<&'a StopSignal>,
}

impl Recording<'_> {
    /// Changes the state and writes it as its next generation. A store that cannot be reached (a
    /// restart, a failover, a connection cut) is written to again while this apply's lease holds,
    /// from 50 ms apart up to a second: the change stays in the state meanwhile (every later write
    /// carries it), and the creates in flight are awaited and recorded once the store answers.
    /// Past the lease, or for any other failure, the error is the answer.
    async fn change(&self, change: impl FnOnce(&mut RecordedState)) -> Result<(), StateError> {
        let failed = {
            let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
            change(&mut state);
            match state.save_to(self.store, self.lock) {
                Ok(()) => return Ok(()),
                Err(error) => error,
            }
        };
        let mut pause = STORE_RETRY_FIRST;
        let mut failed = failed;
        // At most one lease's length of tries: a store that keeps renewing the lease and refusing
        // the write (full, read-only) is an error, not a wait without end.
        let until = self
            .lock
            .lease_ttl()
            .map(|ttl| std::time::Instant::now() + ttl);
        while matches!(failed, StateError::Store { .. })
            && until.is_some_and(|until| std::time::Instant::now() < until)
            && self
                .lock
                .lease_valid_for()
                .is_some_and(|left| !left.is_zero())
            && !self.stop.is_some_and(StopSignal::is_stopped)
        {
            tracing::warn!(error = %failed, "the state store failed a write; writing again");
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(STORE_RETRY_MOST);
            // Whatever the state is now: later changes of other actions are in it too.
            let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
            match state.save_to(self.store, self.lock) {
                Ok(()) => return Ok(()),
                Err(error) => failed = error,
            }
        }
        Err(failed)
    }
}

/// The first pause before a write that a store could not take is tried again.
const STORE_RETRY_FIRST: std::time::Duration = std::time::Duration::from_millis(50);

/// The longest pause between two tries of a write.
const STORE_RETRY_MOST: std::time::Duration = std::time::Duration::from_secs(1);

/// What is asked before every call that changes the server: whether the apply was asked to stop,
/// and whether its lease still holds by this process's clock. Asked by the apply before it starts
/// a step, and again by the client right before each such request leaves (after the rate limit's
/// wait and any backoff, which can outlast a lease): `handle` is the plan's service handle with
/// that check.
#[derive(Clone, Copy)]
struct Gate<'a> {
    lease: Option<&'a LeaseClock>,
    stop: Option<&'a StopSignal>,
    handle: &'a ServiceHandle,
}

/// Why nothing more may be sent, if so: the apply asked to stop, else its lease lapsed by this
/// process's own clock. The one rule of the apply's gate and of its client's send check.
fn refusal(stop: Option<&StopSignal>, lease: Option<&LeaseClock>) -> Option<Outcome> {
    if stop.is_some_and(StopSignal::is_stopped) {
        Some(Outcome::Interrupted)
    } else if lease.is_some_and(LeaseClock::lapsed) {
        Some(Outcome::LeaseLost)
    } else {
        None
    }
}

/// The plan's service handle, its client asking right before each request that is not a read
/// leaves whether the apply may still send it ([`refusal`]); a refusal sends nothing and ends the
/// call with [`Error::Withheld`].
fn guarded(handle: &ServiceHandle, lock: &StateLock, stop: Option<&StopSignal>) -> ServiceHandle {
    let lease = lock.lease().cloned();
    let stop = stop.cloned();
    let client = handle.client.with_send_check(move |op| {
        if op.method == "GET" {
            return Ok(());
        }
        match refusal(stop.as_ref(), lease.as_ref()) {
            Some(Outcome::Interrupted) => Err("the apply was asked to stop".into()),
            Some(_) => Err(
                "the apply's lease of the state may have lapsed while the request waited".into(),
            ),
            None => Ok(()),
        }
    });
    ServiceHandle::new(client, handle.organization, handle.service)
}

impl Gate<'_> {
    /// Why nothing more may be sent, if so ([`refusal`]).
    fn closed(&self) -> Option<Outcome> {
        refusal(self.stop, self.lease)
    }

    /// Why the client withheld a request ([`Error::Withheld`]): the stop, else the lease (also
    /// when a renewal came after the refusal).
    fn withheld(&self) -> Outcome {
        self.closed().unwrap_or(Outcome::LeaseLost)
    }
}

/// The progress step of an action that was not sent.
fn not_sent(outcome: &Outcome) -> &'static str {
    match outcome {
        Outcome::Interrupted => "interrupted",
        _ => "lease lost",
    }
}

impl Plan {
    /// Carries the plan out, as [`apply_with`](Self::apply_with) does, without progress reports.
    pub async fn apply(
        &self,
        lock: &StateLock,
        store: &dyn StateStore,
        options: &ApplyOptions,
    ) -> Result<ApplyReport, StateError> {
        self.apply_with(lock, store, options, &|_| {}).await
    }

    /// Carries the plan out and records it in `store`, calling `progress` at every step. `lock` is
    /// the store's lock of the plan's service ([`StateStore::lock`]), held from before the plan to
    /// the end of the apply: an apply without it, or with another service's, is refused.
    ///
    /// In order: the service's state (start or stop, and wait); what only changes the state (a
    /// record-only update, the observed form of a pipe recorded by an older version); every delete
    /// of a pipe no longer declared (each waited until gone); then the pipes that are down already
    /// (gone, failed, a replace that did not finish) and the new ones, up to
    /// [`parallelism`](ApplyOptions::parallelism) at a time; then every replace, each a delete, a
    /// wait until gone, a create and a wait until `Running` (`Completed` for a one-shot object
    /// storage pipe), with at most [`max_unavailable`](ApplyOptions::max_unavailable) declared pipes
    /// down at any moment. A rollout stops at its first failure: a replace that did not finish
    /// leaves its pipe down, and no other starts while that would take more down.
    ///
    /// Before a replace deletes, the state records it (`replacing`); before each create it records
    /// an intent (name, fingerprint, time, intent id), the deleted pipe's record kept with its mark;
    /// the created pipe's record replaces both, and the pipe's answer once it runs is recorded as
    /// its observed form. A create of a replace that ends pending or refused so still counts as
    /// down for `max_unavailable`, in this apply and the next, which finishes it first.
    ///
    /// After its own delete, a replace's create answered 409 is sent again (the waits' pauses,
    /// within their timeout) while the deleted pipe still holds its name, as a production delete
    /// acknowledged before its teardown does; a 409 past that is a failure, not an unknown outcome.
    ///
    /// A replace (or a recreate of a failed pipe) deletes before it creates: when the service is
    /// not running (read once, unless the plan started it), where the create would be refused
    /// after the delete, each is skipped before its delete. A server that refuses a read of the
    /// service without a command, or fails it, leaves this unknown, and the replaces go on.
    ///
    /// A known failure of a create clears its intent, except a 409 (a pipe of that name may exist:
    /// the intent stays, with its reason). An unknown outcome (a 5xx, a
    /// timeout, a connection lost after sending, a process killed mid-call) leaves it pending, and
    /// later plans refuse to create that name again until it is resolved. A kill at any point
    /// leaves at most `max_unavailable` pipes down, and the next apply finishes those first.
    ///
    /// A plan made without reading the server ([`PlanOptions::refresh`](super::PlanOptions::refresh)
    /// off) is refused.
    ///
    /// An error of the API ends only its own action (see [`ApplyReport`]); a store that cannot save
    /// ends the apply, since going on could create without a record (a pipe created but not
    /// recorded is named in [`StateError::CreatedNotRecorded`]).
    ///
    /// Before every call that changes the server (the service's start or stop, each create and
    /// each delete) the lease is checked by this process's own clock
    /// ([`StateLock::check_lease`]): once it may have lapsed, nothing more is sent, the actions
    /// not started end [`Outcome::LeaseLost`], those in flight end as they do, and
    /// [`ApplyReport::lease_lost`] is set.
    ///
    /// A store that [requires an init](StateStore::requires_init) and holds no state of the
    /// service is refused ([`StateError::Missing`]), whatever the plan was made from.
    pub async fn apply_with(
        &self,
        lock: &StateLock,
        store: &dyn StateStore,
        options: &ApplyOptions,
        progress: &(dyn Fn(Progress) + Sync),
    ) -> Result<ApplyReport, StateError> {
        lock.check(&self.recorded.target)?;
        // What the plan may not do at all is refused before anything else.
        let protected: Vec<String> = self.protected().map(|a| a.name.clone()).collect();
        if !protected.is_empty() {
            return Err(StateError::Protected { names: protected });
        }
        let destructive = self.destructive();
        if let Some(max) = options.max_destructive.filter(|&max| destructive > max) {
            return Err(StateError::TooDestructive {
                planned: destructive,
                max,
            });
        }
        // A lease lost while the plan was made (a pause past it) is said as such, before the
        // state's comparison below would call it another apply's change.
        store.check_held(lock)?;
        if !self.is_refreshed() {
            return Err(StateError::Refused(
                "this plan was made without reading the server (refresh off), so it cannot tell a \
                 pipe gone, failed or changed there; make a plan that reads it to apply"
                    .into(),
            ));
        }
        // A plan is made against one recorded state: applied twice, or after another apply changed
        // the state, it would create again what was created since.
        let current = store.load()?;
        if current.is_none() && store.requires_init() {
            return Err(StateError::Missing {
                store: store.describe_store(),
                target: Box::new(self.recorded.target.clone()),
            });
        }
        let fresh = self.recorded.pipes.is_empty() && self.recorded.pending.is_empty();
        let unchanged = match &current {
            Some(current) => current == &self.recorded,
            None => fresh,
        };
        if !unchanged {
            // Another apply's change, unless this one lost its lease after the check above.
            store.check_held(lock)?;
            return Err(StateError::Refused(
                "the recorded state changed since this plan was made (another apply, or this plan \
                 applied already); make a new plan"
                    .into(),
            ));
        }
        let recording = Recording {
            state: Mutex::new(self.recorded.clone()),
            store,
            lock,
            stop: options.stop.as_ref(),
        };
        let handle = guarded(&self.handle, lock, options.stop.as_ref());
        let gate = Gate {
            lease: lock.lease(),
            stop: options.stop.as_ref(),
            handle: &handle,
        };
        // The calls in flight: fair, so every waiting pipe is read in its turn.
        let calls = Semaphore::new(options.parallelism);
        let mut report = ApplyReport::default();
        let mut service_ok = true;
        let service_closed = self.service.as_ref().and_then(|_| gate.closed());
        if let Some(outcome) = service_closed {
            report.lease_lost = matches!(outcome, Outcome::LeaseLost);
            report.interrupted = matches!(outcome, Outcome::Interrupted);
            service_ok = false;
        } else if let Some(change) = &self.service {
            let step = match change.to {
                ServiceTarget::Running => "starting",
                ServiceTarget::Stopped => "stopping",
            };
            progress(Progress {
                name: None,
                step: step.into(),
                state: Some(change.from.as_str().to_string()),
            });
            let changed = unless_stopped(gate.stop, async {
                match change.to {
                    ServiceTarget::Running => gate.handle.start_and_wait(&options.wait).await,
                    ServiceTarget::Stopped => gate.handle.stop_and_wait(&options.wait).await,
                }
            })
            .await;
            if let Some(Err(Error::Withheld { .. })) = changed {
                let outcome = gate.withheld();
                progress(Progress {
                    name: None,
                    step: not_sent(&outcome).into(),
                    state: None,
                });
                report.lease_lost = matches!(outcome, Outcome::LeaseLost);
                report.interrupted = matches!(outcome, Outcome::Interrupted);
                service_ok = false;
            } else if let Some(result) = changed {
                service_ok = result.is_ok();
                let state = result.as_ref().ok().map(|s| s.state_name().to_string());
                progress(Progress {
                    name: None,
                    step: if service_ok { "done" } else { "failed" }.into(),
                    state,
                });
                report.service = Some(result.map(|_| ()));
            } else {
                progress(Progress {
                    name: None,
                    step: "interrupted".into(),
                    state: None,
                });
                report.interrupted = true;
                service_ok = false;
            }
        }

        // What only changes the state: one write.
        let updates: Vec<&PlanAction> = self
            .actions
            .iter()
            .filter(|a| matches!(a.kind, ActionKind::Record | ActionKind::Forget))
            .collect();
        if !updates.is_empty() || !self.observations.is_empty() {
            recording
                .change(|state| {
                    for (name, observed) in &self.observations {
                        if let Some(pipe) = state.pipes.get_mut(name) {
                            pipe.observed = Some(observed.clone());
                        }
                    }
                    for action in &updates {
                        if action.kind == ActionKind::Forget {
                            state.pipes.remove(&action.name);
                        } else if let (Some(pipe), Some(record)) =
                            (state.pipes.get_mut(&action.name), &action.record)
                        {
                            pipe.declared = record.form.clone();
                            pipe.fingerprint = record.fingerprint.clone();
                            pipe.observed = Some(record.observed.clone());
                            pipe.lifecycle = record.lifecycle;
                            pipe.recorded_at = Utc::now();
                        }
                    }
                })
                .await?;
            for action in &updates {
                let done = if action.kind == ActionKind::Forget {
                    "forgotten"
                } else {
                    "recorded"
                };
                progress(step(action, done, None));
            }
        }

        // Deletes of pipes no longer declared: nothing is written before them, so the lease is
        // checked first (the service's wait may have been long).
        let deleting: Vec<&PlanAction> = self
            .actions
            .iter()
            .filter(|a| a.kind == ActionKind::Delete)
            .collect();
        if !deleting.is_empty() {
            store.check_held(lock)?;
        }
        let deleted: HashMap<String, Result<(), Outcome>> = deleting
            .into_iter()
            .map(|action| async {
                let result = self
                    .delete(action, None, gate, &calls, &options.wait, progress)
                    .await;
                (action.name.clone(), result)
            })
            .collect::<FuturesUnordered<_>>()
            .collect()
            .await;
        for (name, result) in &deleted {
            if result.is_ok() {
                let recorded = recording
                    .change(|state| {
                        state.pipes.remove(name);
                    })
                    .await;
                match recorded {
                    // A store out of reach once the lease may have lapsed: the pipe is gone and
                    // still recorded, which the next plan sees (a delete of a pipe already gone);
                    // the apply goes on to say what it did, sending nothing more.
                    Err(StateError::Store { .. } | StateError::Fenced { .. })
                        if lock.check_lease().is_err() =>
                    {
                        report.lease_lost = true;
                    }
                    other => other?,
                }
            }
        }

        // The pipes down already and the new ones first, then the replaces (which take a pipe
        // down), rolling.
        let (first, replaces): (Vec<&PlanAction>, Vec<&PlanAction>) = self
            .actions
            .iter()
            .filter(|a| a.create.is_some())
            .partition(|a| a.down || !a.delete_first);
        let ctx = Context {
            plan: self,
            recording: &recording,
            calls: &calls,
            wait: &options.wait,
            progress,
            service_ok,
            gate,
            stopped: self.stopped_service().await,
        };
        // Pipes outside a targeted plan that a replace left down count too.
        // A pending create of a replace counts too: its pipe may be down.
        let pending_down = self
            .actions
            .iter()
            .filter(|a| a.kind == ActionKind::Pending && a.down)
            .count();
        let down = first.iter().filter(|a| a.down).count() + pending_down + self.down_elsewhere;
        let (opened, down) = rollout(&ctx, &first, options, down).await?;
        let (replaced, _) = rollout(&ctx, &replaces, options, down).await?;
        let mut created: HashMap<String, ActionReport> = opened
            .into_iter()
            .chain(replaced)
            .map(|run| (run.name.clone(), run))
            .collect();

        let mut deleted = deleted;
        for action in &self.actions {
            let outcome = match (action.kind, deleted.remove(&action.name)) {
                (ActionKind::Pending, _) => {
                    progress(step(action, "pending", None));
                    report_of(action, None, Outcome::Blocked)
                }
                (ActionKind::Unreadable, _) => {
                    progress(step(action, "unreadable", None));
                    let why = action.note.clone().unwrap_or_default();
                    report_of(action, action.id, Outcome::Skipped(why))
                }
                (ActionKind::Record | ActionKind::Forget, _) => {
                    report_of(action, action.id, Outcome::Done { state: None })
                }
                (_, Some(Err(outcome))) => report_of(action, action.id, outcome),
                (ActionKind::Delete, _) => {
                    report_of(action, action.id, Outcome::Done { state: None })
                }
                _ => match created.remove(&action.name) {
                    Some(report) => report,
                    None => report_of(action, action.id, Outcome::Skipped(String::new())),
                },
            };
            report.actions.push(outcome);
        }
        report.lease_lost |= report
            .actions
            .iter()
            .any(|a| matches!(a.outcome, Outcome::LeaseLost));
        report.interrupted |= report
            .actions
            .iter()
            .any(|a| matches!(a.outcome, Outcome::Interrupted));
        let state = recording
            .state
            .into_inner()
            .unwrap_or_else(|p| p.into_inner());
        (report.lineage, report.serial) = (state.lineage, state.serial);
        Ok(report)
    }

    /// Deletes the action's pipe (a 404 is fine: it is gone) and waits until it is gone, each call
    /// in one of the `calls` slots; the outcome instead when it failed, was not sent (the gate
    /// closed) or its wait was cut short by a stop.
    async fn delete<'s>(
        &self,
        action: &PlanAction,
        taken: Option<Slot<'s>>,
        gate: Gate<'_>,
        calls: &'s Semaphore,
        wait: &WaitOptions,
        progress: &(dyn Fn(Progress) + Sync),
    ) -> Result<(), Outcome> {
        let Some(id) = action.id else {
            return Ok(());
        };
        let pipe = gate.handle.pipe(id);
        // A slot taken (and the gate checked) by the caller, else one waited for here and the
        // gate checked once it is had, right before the call: a wait for a slot can be long.
        let slot = match taken {
            Some(slot) => slot,
            None => {
                let slot = calls.acquire().await;
                if let Some(outcome) = gate.closed() {
                    progress(step(action, not_sent(&outcome), None));
                    return Err(outcome);
                }
                slot
            }
        };
        progress(step(action, "deleting", None));
        let deleted = pipe.delete_if_exists().await;
        drop(slot);
        let result = match deleted {
            Err(Error::Withheld { .. }) => {
                let outcome = gate.withheld();
                progress(step(action, not_sent(&outcome), None));
                return Err(outcome);
            }
            Err(error) => Err(error),
            Ok(_) => {
                progress(step(action, "waiting until gone", None));
                let gone = wait_for_pipe_gone(|| in_slot(calls, pipe.get()), wait);
                match unless_stopped(gate.stop, gone).await {
                    Some(result) => result,
                    None => {
                        progress(step(action, "interrupted", None));
                        return Err(Outcome::Interrupted);
                    }
                }
            }
        };
        match result {
            Err(e) => {
                progress(step(action, "failed", Some(e.to_string())));
                Err(Outcome::Failed(e))
            }
            Ok(()) => {
                if action.kind == ActionKind::Delete {
                    progress(step(action, "done", Some("gone".into())));
                }
                Ok(())
            }
        }
    }
}

impl Plan {
    /// The service's state when it is known not to be running and the plan deletes a pipe to make
    /// it again: read once, and only when the plan has no service action. With one, the service
    /// runs once it succeeded (a plan that stops the service and creates a pipe is refused), and
    /// every create is skipped when it did not.
    async fn stopped_service(&self) -> Option<String> {
        let deletes_first = self
            .actions
            .iter()
            .any(|a| a.create.is_some() && a.delete_first && a.id.is_some());
        if !deletes_first || self.service.is_some() {
            return None;
        }
        // Unknown (a read refused without a command, or failed): the replaces go on as planned.
        let service = self.handle.get().await.ok()?.into_inner();
        let state = service.state?;
        (state != ServiceState::Running).then(|| state.as_str().to_string())
    }
}

/// What every run of a create, recreate or replace shares.
struct Context<'a> {
    /// The service's state when it is known not to be running: nothing is deleted to be made
    /// again, since the create would be refused.
    stopped: Option<String>,
    plan: &'a Plan,
    recording: &'a Recording<'a>,
    /// The slots of the calls in flight.
    calls: &'a Semaphore,
    wait: &'a WaitOptions,
    progress: &'a (dyn Fn(Progress) + Sync),
    service_ok: bool,
    gate: Gate<'a>,
}

/// Runs `actions` (their calls take the context's slots, at most
/// [`parallelism`](ApplyOptions::parallelism) in flight), those that take a declared pipe down (a
/// replace) only while fewer than [`max_unavailable`](ApplyOptions::max_unavailable) are down.
/// `down` is how many are down as it starts; an action of a pipe that is down (or that it takes
/// down) brings it back when it is done, and leaves it down when it is not. Answers the reports and
/// how many are down at the end; actions that cannot start for lack of room are skipped, with the
/// reason.
async fn rollout(
    ctx: &Context<'_>,
    actions: &[&PlanAction],
    options: &ApplyOptions,
    mut down: usize,
) -> Result<(Vec<ActionReport>, usize), StateError> {
    let mut reports = Vec::new();
    let mut waiting = actions.iter().copied().peekable();
    let mut running = FuturesUnordered::new();
    loop {
        while let Some(action) = waiting.peek().copied() {
            let takes_down = action.delete_first && !action.down;
            if takes_down && down >= options.max_unavailable {
                break;
            }
            waiting.next();
            if takes_down {
                down += 1;
            }
            running.push(async move { (action, run(ctx, action).await) });
        }
        let Some((action, result)) = running.next().await else {
            break;
        };
        let report = match result {
            Ok(report) => report,
            // The store failed past its retries: nothing new starts, and the actions in flight
            // end (a create cut mid-call would leave an outcome unknown); each error beyond the
            // first is logged, a created pipe's id with it.
            Err(error) => {
                while let Some((other, ended)) = running.next().await {
                    if let Err(also) = ended {
                        tracing::error!(pipe = %other.name, error = %also, "the state could not record an action");
                    }
                }
                return Err(error);
            }
        };
        if (action.down || action.delete_first) && matches!(report.outcome, Outcome::Done { .. }) {
            down -= 1;
        }
        reports.push(report);
    }
    for action in waiting {
        (ctx.progress)(step(action, "skipped", None));
        let why = format!(
            "{down} declared pipe{} down and at most {} may be: a replace that did not finish stops \
             the rollout",
            if down == 1 { " is" } else { "s are" },
            options.max_unavailable
        );
        reports.push(report_of(action, action.id, Outcome::Skipped(why)));
    }
    Ok((reports, down))
}

/// One create, recreate or replace: the delete first where it has one, then the create.
async fn run(ctx: &Context<'_>, action: &PlanAction) -> Result<ActionReport, StateError> {
    let Some(creation) = action.create.as_ref().filter(|_| ctx.service_ok) else {
        (ctx.progress)(step(action, "skipped", None));
        let why = "the service did not reach its declared state".to_string();
        return Ok(report_of(action, action.id, Outcome::Skipped(why)));
    };
    let replacing = action.delete_first && action.id.is_some();
    if let Some(state) = ctx.stopped.as_ref().filter(|_| replacing) {
        (ctx.progress)(step(action, "skipped", None));
        let why = format!(
            "the service is {state}: a replace deletes before it creates, and the create would be \
             refused; start the service first (nothing was deleted)"
        );
        return Ok(report_of(action, action.id, Outcome::Skipped(why)));
    }
    if let Some(outcome) = ctx.gate.closed() {
        (ctx.progress)(step(action, not_sent(&outcome), None));
        return Ok(report_of(action, action.id, outcome));
    }
    if replacing {
        // The delete's slot first, then the gate, then the mark: a mark is never left on a pipe
        // whose delete was not sent (the next plan would take it for a replace under way).
        let slot = ctx.calls.acquire().await;
        if let Some(outcome) = ctx.gate.closed() {
            (ctx.progress)(step(action, not_sent(&outcome), None));
            return Ok(report_of(action, action.id, outcome));
        }
        let marked_before = ctx
            .recording
            .state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pipes
            .get(&action.name)
            .is_some_and(|p| p.replacing.is_some());
        ctx.recording
            .change(|state| {
                if let Some(pipe) = state.pipes.get_mut(&action.name) {
                    pipe.replacing.get_or_insert_with(Utc::now);
                }
            })
            .await?;
        // The mark's write may have taken long: checked again before the call, the mark taken
        // back (if this apply made it and the store takes the write) when it closed meanwhile.
        if let Some(outcome) = ctx.gate.closed() {
            if !marked_before {
                let _ = ctx
                    .recording
                    .change(|state| {
                        if let Some(pipe) = state.pipes.get_mut(&action.name) {
                            pipe.replacing = None;
                        }
                    })
                    .await;
            }
            (ctx.progress)(step(action, not_sent(&outcome), None));
            return Ok(report_of(action, action.id, outcome));
        }
        if let Err(outcome) = ctx
            .plan
            .delete(
                action,
                Some(slot),
                ctx.gate,
                ctx.calls,
                ctx.wait,
                ctx.progress,
            )
            .await
        {
            return Ok(report_of(action, action.id, outcome));
        }
    }
    create(ctx, action, creation).await
}

/// Takes a call slot, records the intent (the deleted pipe's record kept, marked, beside it),
/// creates, records the id, gives the slot back, waits for the pipe to run (each read in a slot),
/// and records its observed form.
async fn create(
    ctx: &Context<'_>,
    action: &PlanAction,
    creation: &Creation,
) -> Result<ActionReport, StateError> {
    let (recording, progress) = (ctx.recording, ctx.progress);
    let name = action.name.clone();
    // The slot first: an intent is written only for a create about to be sent, so a kill leaves
    // pending only the creates that were (or were being) sent.
    let slot = ctx.calls.acquire().await;
    let intent = PendingCreate {
        fingerprint: creation.fingerprint.clone(),
        declared: creation.form.clone(),
        started_at: Utc::now(),
        intent_id: uuid::Uuid::new_v4().to_string(),
        request_id: None,
        reason: None,
        lifecycle: creation.lifecycle,
    };
    tracing::info!(pipe = %name, intent = %intent.intent_id, "creating a declared pipe");
    if let Some(outcome) = ctx.gate.closed() {
        progress(step(action, not_sent(&outcome), None));
        return Ok(report_of(action, action.id, outcome));
    }
    // The record of the pipe a replace deleted (or a recreate replaces) stays, marked, until the
    // new one is recorded: a create that ends pending or refused still counts as down, and the
    // next apply finishes it first.
    recording
        .change(|state| {
            if let Some(pipe) = state.pipes.get_mut(&name) {
                pipe.replacing.get_or_insert_with(Utc::now);
            }
            state.pending.insert(name.clone(), intent);
        })
        .await?;
    // The intent's write may have taken long (a slow store): checked again right before the call.
    if let Some(outcome) = ctx.gate.closed() {
        return Ok(not_created(ctx, action, outcome).await);
    }
    progress(step(action, "creating", None));
    // After this apply's own delete, a 409 is the deleted pipe still holding its name (a production
    // delete is acknowledged before its teardown): the create is sent again once the name is free,
    // within the wait's time. A 409 proves nothing was made, so sending again is safe.
    let after_delete = action.delete_first && action.id.is_some();
    let mut slot = Some(slot);
    let answered = {
        let until = std::time::Instant::now() + ctx.wait.timeout;
        let least = std::time::Duration::from_millis(10);
        let mut pause = ctx.wait.initial_interval.max(least);
        loop {
            let answered = ctx.gate.handle.pipes().create(&creation.pipe).await;
            let held = after_delete
                && answered.as_ref().err().and_then(Error::status) == Some(409)
                && std::time::Instant::now() + pause < until;
            if !held {
                break answered;
            }
            progress(step(action, "waiting for the name to be free", None));
            drop(slot.take());
            tokio::time::sleep(pause).await;
            pause = pause
                .saturating_add(pause / 2)
                .min(ctx.wait.max_interval)
                .max(least);
            slot = Some(ctx.calls.acquire().await);
            if let Some(outcome) = ctx.gate.closed() {
                return Ok(not_created(ctx, action, outcome).await);
            }
        }
    };
    let created = match answered {
        Ok(created) => created.into_inner(),
        // Held back right before it left (a lease lapsed or a stop while it waited for its turn):
        // known not sent, so its intent goes.
        Err(Error::Withheld { .. }) => {
            return Ok(not_created(ctx, action, ctx.gate.withheld()).await);
        }
        // A 409 says a pipe of that name exists (a resolve that said `--absent` wrongly): it may be
        // this create's, so the name stays blocked. Not after this apply's own delete: there it
        // is the deleted pipe's name, held past the wait, and the create is known not made.
        Err(error)
            if error.is_outcome_unknown() || (error.status() == Some(409) && !after_delete) =>
        {
            recording
                .change(|state| {
                    if let Some(pending) = state.pending.get_mut(&name) {
                        pending.reason = Some(short_reason(&error));
                        pending.request_id = error.request_id().map(str::to_string);
                    }
                })
                .await?;
            progress(step(action, "pending", None));
            return Ok(report_of(action, None, Outcome::OutcomeUnknown(error)));
        }
        Err(error) => {
            recording
                .change(|state| {
                    state.pending.remove(&name);
                })
                .await?;
            progress(step(action, "failed", Some(error.to_string())));
            return Ok(report_of(action, None, Outcome::Failed(error)));
        }
    };
    drop(slot);
    let id = created.id;
    recording
        .change(|state| {
            state.pending.remove(&name);
            state.pipes.insert(
                name.clone(),
                RecordedPipe {
                    id,
                    fingerprint: creation.fingerprint.clone(),
                    declared: creation.form.clone(),
                    observed: None,
                    replacing: None,
                    lifecycle: creation.lifecycle,
                    recorded_at: Utc::now(),
                },
            );
        })
        .await
        .map_err(|error| StateError::CreatedNotRecorded {
            name: name.clone(),
            id,
            error: Box::new(error),
        })?;
    let target = WaitFor::pipe_state(running_state(&creation.form));
    progress(step(
        action,
        &format!("waiting for {target}"),
        Some(created.state.to_string()),
    ));
    let pipe = ctx.gate.handle.pipe(id);
    let last_answer: Mutex<Option<Value>> = Mutex::new(None);
    let waited = if target.is_done(&created) {
        Some(Ok(created))
    } else {
        let read = || async {
            let (raw, meta) = in_slot(ctx.calls, pipe.get_wire()).await?.into_parts();
            let (json, read) = decoded(raw)?;
            *last_answer.lock().unwrap_or_else(|p| p.into_inner()) = Some(json);
            progress(step(
                action,
                &format!("waiting for {target}"),
                Some(read.state.to_string()),
            ));
            Ok(Response::new(read, meta))
        };
        unless_stopped(
            ctx.gate.stop,
            wait_for_pipe(read, &target, Some(created), ctx.wait),
        )
        .await
    };
    let mut answer = last_answer.into_inner().unwrap_or_else(|p| p.into_inner());
    if answer.is_none() {
        // Done at its create, or stopped before a read: one read for the form the server keeps.
        answer = match in_slot(ctx.calls, pipe.get_wire()).await {
            Ok(read) => serde_json::to_value(read.into_inner()).ok(),
            Err(_) => None,
        };
    }
    if let Some(answer) = answer {
        let observed = observed_form(&answer, &creation.fingerprint, &mut Memory::default())?;
        recording
            .change(|state| {
                if let Some(pipe) = state.pipes.get_mut(&name).filter(|p| p.id == id) {
                    pipe.observed = Some(observed);
                }
            })
            .await?;
    }
    Ok(match waited {
        None => {
            progress(step(action, "interrupted", None));
            report_of(action, Some(id), Outcome::Interrupted)
        }
        Some(Ok(running)) => {
            progress(step(action, "done", Some(running.state.to_string())));
            report_of(
                action,
                Some(id),
                Outcome::Done {
                    state: Some(running.state),
                },
            )
        }
        Some(Err(error)) => {
            progress(step(action, "failed", Some(error.to_string())));
            report_of(action, Some(id), Outcome::Failed(error))
        }
    })
}

/// A create whose intent was written and that is not sent (`outcome`: the gate closed): the intent
/// is taken back if the store still takes writes, else it stays pending (it blocks the name until
/// resolved, which is safe).
async fn not_created(ctx: &Context<'_>, action: &PlanAction, outcome: Outcome) -> ActionReport {
    let _ = ctx
        .recording
        .change(|state| {
            state.pending.remove(&action.name);
        })
        .await;
    (ctx.progress)(step(action, not_sent(&outcome), None));
    report_of(action, action.id, outcome)
}

/// A pipe as the generated type read it: its JSON (for the observed form) and the SDK's pipe.
fn decoded(raw: crate::raw::types::Pipe) -> Result<(Value, Pipe), Error> {
    let undecodable = |e: serde_json::Error| {
        Error::Decode(DecodeError::new(ops::GET_PIPE.id, ".", e.to_string()))
    };
    let json = serde_json::to_value(raw).map_err(undecodable)?;
    let pipe = serde_json::from_value(json.clone()).map_err(undecodable)?;
    Ok((json, pipe))
}

/// Why an outcome is not known, in a few words: `HTTP 504 GATEWAY_TIMEOUT`, or the first sentence of
/// the error (a connection lost after sending).
pub fn short_reason(error: &Error) -> String {
    match (error.status(), error.code()) {
        (Some(status), Some(code)) => format!("HTTP {status} {}", code.as_str()),
        (Some(status), None) => format!("HTTP {status}"),
        _ => {
            let text = error.to_string();
            let first = text.split(['.', ';']).next().unwrap_or_default();
            first.trim().to_string()
        }
    }
}

/// The state a created pipe is waited for: `Running`, or `Completed` for a one-shot object storage
/// load (`isContinuous: false`), which never stays running.
fn running_state(form: &serde_json::Value) -> PipeState {
    let one_shot = form
        .pointer("/source/objectStorage/isContinuous")
        .and_then(serde_json::Value::as_bool)
        == Some(false);
    if one_shot {
        PipeState::Completed
    } else {
        PipeState::Running
    }
}

fn step(action: &PlanAction, step: &str, state: Option<String>) -> Progress {
    Progress {
        name: Some(action.name.clone()),
        step: step.to_string(),
        state,
    }
}

fn report_of(action: &PlanAction, id: Option<PipeId>, outcome: Outcome) -> ActionReport {
    ActionReport {
        name: action.name.clone(),
        kind: action.kind,
        id: id.or(action.id),
        outcome,
    }
}

/// One of the slots of the calls in flight (an apply never closes its semaphore).
type Slot<'s> = Result<tokio::sync::SemaphorePermit<'s>, tokio::sync::AcquireError>;

/// `call`, made in one of the `slots` (waiting for one first come, first served).
async fn in_slot<T>(slots: &Semaphore, call: impl Future<Output = T>) -> T {
    // The apply never closes its semaphore, so a slot always comes.
    let _slot = slots.acquire().await;
    call.await
}
