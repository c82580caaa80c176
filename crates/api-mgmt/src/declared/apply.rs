//! [`Plan::apply`]: carrying a plan out, recording every step so that a create happens exactly once
//! across crashes and unknown outcomes.

use std::collections::HashMap;
use std::sync::Mutex;

use api_core::management::{Pipe, PipeState, WaitFor, WaitOptions, wait_for_pipe};
use api_core::{Error, PipeId, Response};
use chrono::Utc;
use futures::StreamExt as _;

use super::plan::{ActionKind, Creation, Plan, PlanAction};
use super::{PendingCreate, RecordedPipe, RecordedState, ServiceTarget, StateError, StateStore};

/// How an apply runs.
#[derive(Debug, Clone)]
pub struct ApplyOptions {
    parallelism: usize,
    wait: WaitOptions,
}

impl Default for ApplyOptions {
    /// Four actions at a time; waits as [`WaitOptions::default`] (up to 10 minutes each).
    fn default() -> Self {
        Self {
            parallelism: 4,
            wait: WaitOptions::default(),
        }
    }
}

impl ApplyOptions {
    /// How many actions run at once (at least 1). Every call still takes its slot of the client's
    /// rate limit, shared store included.
    pub fn parallelism(mut self, actions: usize) -> Self {
        self.parallelism = actions.max(1);
        self
    }

    /// How each wait polls and how long it may take (a service start or stop, a created pipe to be
    /// `Running`, a deleted pipe to be gone).
    pub fn wait(mut self, options: WaitOptions) -> Self {
        self.wait = options;
        self
    }
}

/// Where an apply is, for a progress display: the pipe (or `None` for the service), the step, and
/// the state last seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    /// The pipe's name; `None` for the service.
    pub name: Option<String>,
    /// The step: `starting`, `stopping`, `deleting`, `waiting until gone`, `creating`,
    /// `waiting for Running`, `done`, `failed`, `pending`, `skipped`.
    pub step: String,
    /// The state last seen, when one was read.
    pub state: Option<String>,
}

/// What became of one action.
#[derive(Debug)]
#[non_exhaustive]
pub enum Outcome {
    /// Done: the pipe is as declared (created and `Running`), or gone (deleted).
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
    /// Not run, for the reason given (the service did not start, the delete of a replace failed).
    Skipped(String),
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
    /// The service's start or stop, when the plan had one: the error, when it failed.
    pub service: Option<Result<(), Error>>,
    /// Every action, in the plan's order.
    pub actions: Vec<ActionReport>,
}

impl ApplyReport {
    /// Whether every action is done: the service now matches its declaration.
    pub fn is_complete(&self) -> bool {
        self.service.as_ref().is_none_or(Result::is_ok)
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
}

impl Recording<'_> {
    fn change(&self, change: impl FnOnce(&mut RecordedState)) -> Result<(), StateError> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        change(&mut state);
        self.store.save(&state)
    }
}

impl Plan {
    /// Carries the plan out, as [`apply_with`](Self::apply_with) does, without progress reports.
    pub async fn apply(
        &self,
        store: &dyn StateStore,
        options: &ApplyOptions,
    ) -> Result<ApplyReport, StateError> {
        self.apply_with(store, options, &|_| {}).await
    }

    /// Carries the plan out and records it in `store`, calling `progress` at every step.
    ///
    /// In order: the service's state (start or stop, and wait), then every delete (and the delete of
    /// each replace, each waited until gone), then every create, recreate and replace, each waited
    /// until `Running` (`Completed` for a one-shot object storage pipe), up to
    /// [`ApplyOptions::parallelism`] at a time. Before each create the store records an intent (name,
    /// fingerprint, time, intent id); the created pipe's id replaces it, and a known failure clears
    /// it. An unknown outcome (a 5xx, a timeout, a connection lost after sending, a process killed
    /// mid-call) leaves it pending, and later plans refuse to create that name again until it is
    /// resolved. Hold the store's lock ([`FileStateStore::lock`](super::FileStateStore::lock))
    /// from before the plan to the end of the apply.
    ///
    /// An error of the API ends only its own action (see [`ApplyReport`]); a store that cannot save
    /// ends the apply, since going on could create without a record.
    pub async fn apply_with(
        &self,
        store: &dyn StateStore,
        options: &ApplyOptions,
        progress: &(dyn Fn(Progress) + Sync),
    ) -> Result<ApplyReport, StateError> {
        // A plan is made against one recorded state: applied twice, or after another apply changed
        // the state, it would create again what was created since.
        let current = store.load()?;
        let fresh = self.recorded.pipes.is_empty() && self.recorded.pending.is_empty();
        let unchanged = match &current {
            Some(current) => current == &self.recorded,
            None => fresh,
        };
        if !unchanged {
            return Err(StateError::Refused(
                "the recorded state changed since this plan was made (another apply, or this plan \
                 applied already); make a new plan"
                    .into(),
            ));
        }
        let recording = Recording {
            state: Mutex::new(self.recorded.clone()),
            store,
        };
        let mut report = ApplyReport::default();
        let mut service_ok = true;
        if let Some(change) = &self.service {
            let step = match change.to {
                ServiceTarget::Running => "starting",
                ServiceTarget::Stopped => "stopping",
            };
            progress(Progress {
                name: None,
                step: step.into(),
                state: Some(change.from.as_str().to_string()),
            });
            let result = match change.to {
                ServiceTarget::Running => self.handle.start_and_wait(&options.wait).await,
                ServiceTarget::Stopped => self.handle.stop_and_wait(&options.wait).await,
            };
            service_ok = result.is_ok();
            let state = result.as_ref().ok().map(|s| s.state_name().to_string());
            progress(Progress {
                name: None,
                step: if service_ok { "done" } else { "failed" }.into(),
                state,
            });
            report.service = Some(result.map(|_| ()));
        }

        // Deletes, and the delete half of each replace (not when the service did not come to its
        // declared state: the create half could not follow).
        let deleting: Vec<&PlanAction> = self
            .actions
            .iter()
            .filter(|a| {
                a.kind == ActionKind::Delete || (a.kind == ActionKind::Replace && service_ok)
            })
            .collect();
        let mut deleted: HashMap<String, Result<(), Error>> = futures::stream::iter(deleting)
            .map(|action| async {
                let result = self.delete(action, &options.wait, progress).await;
                (action.name.clone(), result)
            })
            .buffer_unordered(options.parallelism)
            .collect()
            .await;
        for (name, result) in &deleted {
            if result.is_ok() {
                recording.change(|state| {
                    state.pipes.remove(name);
                })?;
            }
        }

        // Creates, recreates, and the create half of each replace whose delete went through.
        let creating = self.actions.iter().filter(|action| {
            action.create.is_some() && deleted.get(&action.name).is_none_or(Result::is_ok)
        });
        let mut created: HashMap<String, ActionReport> = HashMap::new();
        let mut runs = futures::stream::iter(creating)
            .map(|action| {
                let recording = &recording;
                async move {
                    match &action.create {
                        Some(creation) if service_ok => {
                            self.create(action, creation, recording, &options.wait, progress)
                                .await
                        }
                        _ => {
                            progress(step(action, "skipped", None));
                            let why = "the service did not reach its declared state".to_string();
                            Ok(report_of(action, action.id, Outcome::Skipped(why)))
                        }
                    }
                }
            })
            .buffer_unordered(options.parallelism);
        while let Some(run) = runs.next().await {
            let run = run?;
            created.insert(run.name.clone(), run);
        }
        drop(runs);

        for action in &self.actions {
            let outcome = match (action.kind, deleted.remove(&action.name)) {
                (ActionKind::Pending, _) => {
                    progress(step(action, "pending", None));
                    report_of(action, None, Outcome::Blocked)
                }
                // The delete of a delete, or of a replace that could not go on.
                (_, Some(Err(error))) => report_of(action, action.id, Outcome::Failed(error)),
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
        Ok(report)
    }

    /// Deletes the action's pipe (a 404 is fine: it is gone) and waits until it is gone.
    async fn delete(
        &self,
        action: &PlanAction,
        wait: &WaitOptions,
        progress: &(dyn Fn(Progress) + Sync),
    ) -> Result<(), Error> {
        let Some(id) = action.id else {
            return Ok(());
        };
        let pipe = self.handle.pipe(id);
        progress(step(action, "deleting", None));
        let result = async {
            pipe.delete_if_exists().await?;
            progress(step(action, "waiting until gone", None));
            pipe.wait_until_gone(wait).await
        }
        .await;
        if let Err(e) = &result {
            progress(step(action, "failed", Some(e.to_string())));
        } else if action.kind == ActionKind::Delete {
            progress(step(action, "done", Some("gone".into())));
        }
        result
    }

    /// Records the intent, creates, records the id, and waits for the pipe to run.
    async fn create(
        &self,
        action: &PlanAction,
        creation: &Creation,
        recording: &Recording<'_>,
        wait: &WaitOptions,
        progress: &(dyn Fn(Progress) + Sync),
    ) -> Result<ActionReport, StateError> {
        let name = action.name.clone();
        let intent = PendingCreate {
            fingerprint: creation.fingerprint.clone(),
            declared: creation.form.clone(),
            started_at: Utc::now(),
            intent_id: uuid::Uuid::new_v4().to_string(),
            request_id: None,
            reason: None,
        };
        tracing::info!(pipe = %name, intent = %intent.intent_id, "creating a declared pipe");
        recording.change(|state| {
            state.pending.insert(name.clone(), intent);
        })?;
        progress(step(action, "creating", None));
        let created = match self.handle.pipes().create(&creation.pipe).await {
            Ok(created) => created.into_inner(),
            Err(error) if error.is_outcome_unknown() => {
                recording.change(|state| {
                    if let Some(pending) = state.pending.get_mut(&name) {
                        pending.reason = Some(short_reason(&error));
                        pending.request_id = error.request_id().map(str::to_string);
                    }
                })?;
                progress(step(action, "pending", None));
                return Ok(report_of(action, None, Outcome::OutcomeUnknown(error)));
            }
            Err(error) => {
                recording.change(|state| {
                    state.pending.remove(&name);
                })?;
                progress(step(action, "failed", Some(error.to_string())));
                return Ok(report_of(action, None, Outcome::Failed(error)));
            }
        };
        let id = created.id;
        recording.change(|state| {
            state.pending.remove(&name);
            state.pipes.insert(
                name.clone(),
                RecordedPipe {
                    id,
                    fingerprint: creation.fingerprint.clone(),
                    declared: creation.form.clone(),
                    recorded_at: Utc::now(),
                },
            );
        })?;
        let target = WaitFor::pipe_state(running_state(&creation.form));
        progress(step(
            action,
            &format!("waiting for {target}"),
            Some(created.state.to_string()),
        ));
        let pipe = self.handle.pipe(id);
        let waited = if target.is_done(&created) {
            Ok(created)
        } else {
            let read = || async {
                let answer: Result<Response<Pipe>, Error> = pipe.get().await;
                if let Ok(read) = &answer {
                    progress(step(
                        action,
                        &format!("waiting for {target}"),
                        Some(read.state.to_string()),
                    ));
                }
                answer
            };
            wait_for_pipe(read, &target, Some(created), wait).await
        };
        Ok(match waited {
            Ok(running) => {
                progress(step(action, "done", Some(running.state.to_string())));
                report_of(
                    action,
                    Some(id),
                    Outcome::Done {
                        state: Some(running.state),
                    },
                )
            }
            Err(error) => {
                progress(step(action, "failed", Some(error.to_string())));
                report_of(action, Some(id), Outcome::Failed(error))
            }
        })
    }
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
