//! [`plan`]: what it takes to bring a service to its declaration, read from the server and written
//! nowhere.

use api_core::management::{NewPipe, ServiceState};
use api_core::raw::support::schema::SchemaSet;
use api_core::{Error, PipeId};
use futures::StreamExt as _;
use serde::Serialize;
use serde_json::Value;

use super::diff::{Change, changes};
use super::fingerprint::{Fingerprint, declared_form};
use super::{Declaration, DeclaredError, RecordedState, ServiceTarget, StateTarget};
use crate::ServiceHandle;

/// How many recorded pipes a plan reads at once (each read still takes its slot of the rate limit).
const READS_AT_ONCE: usize = 4;

/// What an action does to one named pipe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum ActionKind {
    /// Declared, not recorded: create it.
    Create,
    /// Recorded, but gone from the server: create it again.
    Recreate,
    /// Differs from the declaration (the API has no update): delete it, then create it.
    Replace,
    /// Recorded, no longer declared: delete it.
    Delete,
    /// A create was sent without a known outcome: nothing is done until the intent is resolved
    /// (adopt the pipe by its id, or confirm that nothing was made).
    Pending,
}

impl std::fmt::Display for ActionKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Create => "create",
            Self::Recreate => "recreate",
            Self::Replace => "replace",
            Self::Delete => "delete",
            Self::Pending => "pending",
        })
    }
}

/// One change a plan makes to one named pipe.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanAction {
    /// The pipe's name.
    pub name: String,
    /// What is done.
    pub kind: ActionKind,
    /// The pipe's id, where one is known (the recorded pipe).
    pub id: Option<PipeId>,
    /// For a replace, every member that differs.
    pub changes: Vec<Change>,
    /// More about it, in words (a pending create's reason, a pipe already gone).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// What is created, with its declared form (create, recreate, replace).
    #[serde(skip)]
    pub(crate) create: Option<Creation>,
}

/// A pipe to create, with the form the state will record for it.
#[derive(Debug, Clone)]
pub(crate) struct Creation {
    pub pipe: NewPipe,
    pub form: Value,
    pub fingerprint: Fingerprint,
}

/// The service's state, as it is and as declared.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServiceChange {
    /// The state the service was read in (`unknown` when it could not be read).
    pub from: ServiceState,
    /// The declared state.
    pub to: ServiceTarget,
    /// Whether the state was read. A server that refuses the read (see the state command's
    /// description in the spec) leaves it unknown: the plan cannot tell a change, and an apply
    /// sends the declared command anyway, which changes nothing on a service already there.
    pub known: bool,
}

/// What it takes to bring a service to its declaration: made by [`plan`], carried out by
/// [`Plan::apply`](Plan::apply).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    /// The service's state, when the declaration has one that differs.
    pub service: Option<ServiceChange>,
    /// The changes, in the order of names.
    pub actions: Vec<PlanAction>,
    /// The names of the pipes that need nothing.
    pub unchanged: Vec<String>,
    /// The calls the plan made (one read per recorded pipe, and one of the service when its state
    /// is declared); it writes nothing.
    pub reads: u32,
    #[serde(skip)]
    pub(crate) handle: ServiceHandle,
    #[serde(skip)]
    pub(crate) recorded: RecordedState,
}

impl Plan {
    /// Whether the service already matches its declaration, as far as the plan can tell (a
    /// service state it could not read is no known change).
    pub fn is_empty(&self) -> bool {
        self.service.as_ref().is_none_or(|s| !s.known) && self.actions.is_empty()
    }

    /// The pending creates: names that a create may or may not have made, which no apply creates
    /// again until they are resolved.
    pub fn pending(&self) -> impl Iterator<Item = &PlanAction> {
        self.actions
            .iter()
            .filter(|a| a.kind == ActionKind::Pending)
    }

    /// The state the plan was made against.
    pub fn recorded(&self) -> &RecordedState {
        &self.recorded
    }
}

/// The [`StateTarget`] of `service`: its API URL, organization and id.
pub fn target_of(service: &ServiceHandle) -> StateTarget {
    StateTarget {
        api_url: service.client.config().base_url().to_string(),
        organization_id: service.organization_id(),
        service_id: service.id(),
    }
}

/// Plans how to bring `service` to `declaration`, from what `recorded` says earlier applies did.
///
/// It reads each recorded pipe once (`getPipe`, a few at a time) and, when the declaration has a
/// service state, the service once; it writes nothing. A recorded pipe the server no longer has is
/// recreated; a declared pipe that differs from the server, or from the declaration it was created
/// with, is replaced and every differing member named (see [`Change`]); a recorded pipe no longer
/// declared is deleted; a name with a pending create is left alone until it is resolved.
///
/// ```no_run
/// # async fn run(service: api_mgmt::ServiceHandle, orders: api_mgmt::NewPipe) -> Result<(), api_mgmt::declared::DeclaredError> {
/// use api_mgmt::declared::{self, Declaration, FileStateStore, RecordedState, StateStore};
///
/// let store = FileStateStore::new("pipes/.state.json");
/// let recorded = store.load()?.unwrap_or_else(|| RecordedState::new(declared::target_of(&service)));
/// let plan = declared::plan(&service, &Declaration::new().pipe(orders), &recorded).await?;
/// for action in &plan.actions {
///     println!("{} {}", action.kind, action.name);
///     for change in &action.changes {
///         println!("  {}: {:?} -> {:?}", change.path, change.old, change.new);
///     }
/// }
/// # Ok(()) }
/// ```
pub async fn plan(
    service: &ServiceHandle,
    declaration: &Declaration,
    recorded: &RecordedState,
) -> Result<Plan, DeclaredError> {
    recorded.check_target(&target_of(service))?;
    let schemas = SchemaSet::management();
    let (request, response) = (schemas.schema("PipeCreateRequest"), schemas.schema("Pipe"));

    let reads = futures::stream::iter(recorded.pipes.iter().map(|(name, record)| async move {
        let read = service.pipe(record.id).get_wire().await;
        (name.clone(), read)
    }))
    .buffer_unordered(READS_AT_ONCE)
    .collect::<Vec<_>>()
    .await;
    let mut calls = 0u32;
    let mut on_server = std::collections::BTreeMap::new();
    for (name, read) in reads {
        calls += 1;
        match read {
            Ok(pipe) => {
                let json = serde_json::to_value(pipe.into_inner()).map_err(|e| {
                    DeclaredError::Refused(format!("pipe {name} cannot be written as JSON: {e}"))
                })?;
                on_server.insert(name, Some(json));
            }
            Err(e) if e.is_not_found() => {
                on_server.insert(name, None);
            }
            Err(e) => return Err(DeclaredError::Api(e)),
        }
    }

    let mut actions = Vec::new();
    let mut unchanged = Vec::new();
    for (name, pipe) in declaration.pipes() {
        if let Some(pending) = recorded.pending.get(name) {
            actions.push(pending_action(name, pending));
            continue;
        }
        match (recorded.pipes.get(name), on_server.get(name)) {
            (None, _) => {
                let creation = creation(pipe, &Fingerprint::fresh())?;
                actions.push(action(
                    name,
                    ActionKind::Create,
                    None,
                    Vec::new(),
                    Some(creation),
                ));
            }
            (Some(record), Some(None) | None) => {
                let creation = creation(pipe, &Fingerprint::fresh())?;
                let note = Some(format!("pipe {} is gone from the server", record.id));
                let mut recreate = action(
                    name,
                    ActionKind::Recreate,
                    Some(record.id),
                    Vec::new(),
                    Some(creation),
                );
                recreate.note = note;
                actions.push(recreate);
            }
            (Some(record), Some(Some(server))) => {
                let (form, fingerprint) = declared_form(pipe, &record.fingerprint)?;
                let same_declaration = fingerprint.digest == record.fingerprint.digest;
                let recorded_form = (!same_declaration).then_some(&record.declared);
                let differences = changes(&form, recorded_form, Some(server), request, response);
                if differences.is_empty() {
                    unchanged.push(name.to_string());
                } else {
                    // A new salt for the new pipe: each record's fingerprints are its own.
                    let creation = creation(pipe, &Fingerprint::fresh())?;
                    actions.push(action(
                        name,
                        ActionKind::Replace,
                        Some(record.id),
                        differences,
                        Some(creation),
                    ));
                }
            }
        }
    }
    for (name, record) in &recorded.pipes {
        if declaration.get(name).is_none() {
            let mut delete = action(name, ActionKind::Delete, Some(record.id), Vec::new(), None);
            if matches!(on_server.get(name), Some(None)) {
                delete.note = Some(format!(
                    "pipe {} is already gone from the server",
                    record.id
                ));
            }
            actions.push(delete);
        }
    }
    for (name, pending) in &recorded.pending {
        if declaration.get(name).is_none() {
            actions.push(pending_action(name, pending));
        }
    }
    actions.sort_by(|a, b| a.name.cmp(&b.name));

    let service_change = match declaration.declared_service_state() {
        Some(target) => {
            calls += 1;
            // A server may refuse the read (400): a plan must not write, so it cannot tell the
            // state, and plans the command (which changes nothing on a service already there).
            let learned = service.client.parts().0.learned();
            let read = if learned.refuses_command_less_read() {
                None
            } else {
                match service.get().await {
                    Ok(now) => now.into_inner().state,
                    Err(e) if e.status() == Some(400) => {
                        learned.learn_command_less_read_refused();
                        None
                    }
                    Err(e) => return Err(DeclaredError::Api(e)),
                }
            };
            let known = read.is_some();
            let state = read.unwrap_or_else(|| ServiceState::from("unknown"));
            let reached = match target {
                ServiceTarget::Running => state == ServiceState::Running,
                ServiceTarget::Stopped => state == ServiceState::Stopped,
            };
            (!reached).then_some(ServiceChange {
                from: state,
                to: target,
                known,
            })
        }
        None => None,
    };
    if declaration.declared_service_state() == Some(ServiceTarget::Stopped) {
        let creating: Vec<&str> = actions
            .iter()
            .filter(|a| a.create.is_some())
            .map(|a| a.name.as_str())
            .collect();
        if !creating.is_empty() {
            return Err(DeclaredError::Refused(format!(
                "the service is declared stopped, and a stopped service takes no new pipe; the plan \
                 would create {}",
                creating.join(", ")
            )));
        }
    }
    Ok(Plan {
        service: service_change,
        actions,
        unchanged,
        reads: calls,
        handle: service.clone(),
        recorded: recorded.clone(),
    })
}

fn creation(pipe: &NewPipe, fingerprint: &Fingerprint) -> Result<Creation, DeclaredError> {
    let (form, fingerprint) = declared_form(pipe, fingerprint)?;
    Ok(Creation {
        pipe: pipe.clone(),
        form,
        fingerprint,
    })
}

fn action(
    name: &str,
    kind: ActionKind,
    id: Option<PipeId>,
    changes: Vec<Change>,
    create: Option<Creation>,
) -> PlanAction {
    PlanAction {
        name: name.to_string(),
        kind,
        id,
        changes,
        note: None,
        create,
    }
}

fn pending_action(name: &str, pending: &super::PendingCreate) -> PlanAction {
    let reason = pending
        .reason
        .as_deref()
        .map_or_else(String::new, |reason| format!(" ({reason})"));
    let mut action = action(name, ActionKind::Pending, None, Vec::new(), None);
    action.note = Some(format!(
        "a create sent at {} has no known outcome{reason}: the pipe may exist, and the API cannot \
         find it by name; adopt it by its id, or confirm that nothing was made",
        pending
            .started_at
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    ));
    action
}

/// Reads of errors the plan can meet, kept apart so the caller can tell them.
impl From<Error> for DeclaredError {
    fn from(error: Error) -> Self {
        DeclaredError::Api(error)
    }
}
