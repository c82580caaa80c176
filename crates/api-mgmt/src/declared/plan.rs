//! [`plan`]: what it takes to bring a service to its declaration, read from the server and written
//! nowhere.

mod binding;
mod decide;
mod read;

use std::collections::{BTreeMap, BTreeSet};

use api_core::management::{NewPipe, ServiceState};
use api_core::{Error, PipeId};
use serde::Serialize;
use serde_json::Value;

pub(crate) use self::binding::{Bindings, DeclaredBinding};
use self::decide::Decided;
use super::cpu_work::{ShutDown, on_every_core};
use super::diff::Change;
use super::fingerprint::{Fingerprint, Memory, declared_form};
use super::impact::Impact;
use super::{Declaration, DeclaredError, Lifecycle, RecordedState, ServiceTarget, StateTarget};
use crate::ServiceHandle;

/// What an action does to one named pipe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum ActionKind {
    /// Declared, not recorded: create it.
    Create,
    /// Recorded, but gone from the server, or there in a failed state (`Failed`, `InternalError`):
    /// create it again (deleting the failed one first).
    Recreate,
    /// Differs from the declaration (the API has no update): delete it, then create it.
    Replace,
    /// The file changed to what the server already has (or no longer declares a member): the state
    /// records the file's declaration; the pipe is not touched.
    Record,
    /// Recorded, no longer declared: delete it.
    Delete,
    /// A create was sent without a known outcome: nothing is done until the intent is resolved
    /// (adopt the pipe by its id, or confirm that nothing was made).
    Pending,
    /// The server's answer for the recorded pipe cannot be decoded: nothing is done to it (the note
    /// says why); the other pipes are planned.
    Unreadable,
    /// Recorded, no longer declared, and retained on delete ([`Lifecycle::retain_on_delete`]): the
    /// state forgets it; the pipe is not touched.
    Forget,
}

impl ActionKind {
    /// Whether the action deletes a pipe (a delete, a replace, or a recreate; a recreate of a pipe
    /// gone already deletes nothing, and still counts): what `max_destructive` caps.
    pub fn is_destructive(self) -> bool {
        matches!(self, Self::Delete | Self::Replace | Self::Recreate)
    }
}

/// Why an action is planned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum ActionCause {
    /// Declared and not recorded: a new pipe.
    New,
    /// The declaration (its file, or what the file reads from the environment) changed since it
    /// was applied.
    Declaration,
    /// The pipe changed on the server, in a member its file declares.
    Drift,
    /// Both the declaration and the pipe on the server changed.
    DeclarationAndDrift,
    /// The pipe is gone from the server.
    Gone,
    /// The pipe is in a failed state (`Failed`, `InternalError`).
    Failed,
    /// A replace began and did not finish.
    Unfinished,
    /// Only the declared lifecycle changed.
    Lifecycle,
    /// No file declares it any more.
    Undeclared,
    /// A create has no known outcome.
    Pending,
    /// The server's answer cannot be decoded.
    Unreadable,
}

impl std::fmt::Display for ActionCause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::New => "new",
            Self::Declaration => "the declaration changed",
            Self::Drift => "changed on the server",
            Self::DeclarationAndDrift => "the declaration and the server changed",
            Self::Gone => "gone from the server",
            Self::Failed => "failed on the server",
            Self::Unfinished => "a replace did not finish",
            Self::Lifecycle => "the lifecycle changed",
            Self::Undeclared => "no longer declared",
            Self::Pending => "a create has no known outcome",
            Self::Unreadable => "the answer cannot be read",
        })
    }
}

impl std::fmt::Display for ActionKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Create => "create",
            Self::Recreate => "recreate",
            Self::Replace => "replace",
            Self::Record => "record",
            Self::Delete => "delete",
            Self::Pending => "pending",
            Self::Unreadable => "unreadable",
            Self::Forget => "forget",
        })
    }
}

/// One change a plan makes to one named pipe.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PlanAction {
    /// The pipe's name.
    pub name: String,
    /// What is done.
    pub kind: ActionKind,
    /// Why.
    pub cause: ActionCause,
    /// The pipe's id, where one is known (the recorded pipe).
    pub id: Option<PipeId>,
    /// For a replace, every member that differs.
    pub changes: Vec<Change>,
    /// More about it, in words (a pending create's reason, a pipe already gone).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The pipe's lifecycle: the declared one (recorded by the apply), or the recorded one for a
    /// pipe no file declares.
    pub lifecycle: Lifecycle,
    /// Whether the action would delete a protected pipe ([`Lifecycle::protect`], declared or
    /// recorded): shown by the plan, refused by an apply before any call.
    pub protected: bool,
    /// What the action does to the data (`x-data-impact` of the spec): empty for an action that
    /// deletes and reads nothing again.
    pub impact: Vec<Impact>,
    /// The declared form as last applied (secrets as fingerprints), for a recorded pipe.
    #[serde(skip)]
    pub(crate) before: Option<Value>,
    /// Whether the plan's read found the pipe gone: its delete deletes nothing, so no protection
    /// stands in its way.
    #[serde(skip)]
    pub(crate) gone: bool,
    /// What is created, with its declared form (create, recreate, replace).
    #[serde(skip)]
    pub(crate) create: Option<Creation>,
    /// Whether the recorded pipe is deleted (and waited until gone) before the create: a replace, or
    /// the recreate of a failed pipe.
    #[serde(skip)]
    pub(crate) delete_first: bool,
    /// Whether the declared pipe is down already (gone, failed, or a replace that did not finish):
    /// such actions run first, and count against the pipes an apply may have down at once.
    #[serde(skip)]
    pub(crate) down: bool,
    /// What a record-only update records: the file's form, its fingerprint, the server's form.
    #[serde(skip)]
    pub(crate) record: Option<Recorded>,
}

impl PlanAction {
    /// The declared form the action applies: what it creates, or what a record-only update
    /// records.
    pub(crate) fn after(&self) -> Option<&Value> {
        self.create
            .as_ref()
            .map(|c| &c.form)
            .or(self.record.as_ref().map(|r| &r.form))
    }
}

/// What a record-only update writes into the state.
#[derive(Debug, Clone)]
pub(crate) struct Recorded {
    pub form: Value,
    pub fingerprint: Fingerprint,
    pub observed: Value,
    pub lifecycle: Lifecycle,
}

/// A recorded pipe that changed on the server in members its file leaves out: shown, not acted on.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Drift {
    /// The pipe's name.
    pub name: String,
    /// The pipe's id.
    pub id: PipeId,
    /// Each member that changed, with the server's value now ([`Effect::None`](super::diff::Effect::None)).
    pub changes: Vec<Change>,
}

/// A pipe to create, with the form the state will record for it.
#[derive(Debug, Clone)]
pub(crate) struct Creation {
    pub pipe: NewPipe,
    pub form: Value,
    pub fingerprint: Fingerprint,
    pub lifecycle: Lifecycle,
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
    /// Pipes that need nothing but changed on the server in members their files leave out.
    pub drift: Vec<Drift>,
    /// Pipes the server now writes another way than it did when they were made (an upgrade that
    /// respelled a type or a value of a set, a set in another order): no change; an apply records
    /// the new forms ([`Cause::Respelled`](super::diff::Cause::Respelled)).
    pub respelled: Vec<Drift>,
    /// The calls the plan made (one read per recorded pipe it covers, and one of the service when
    /// its state is declared and the server lets it be read; none without a refresh); it writes
    /// nothing.
    pub reads: u32,
    /// Whether the server was read ([`Plan::is_refreshed`]).
    pub(crate) refreshed: bool,
    /// Recorded pipes outside the plan's targets that a replace left down: they count against
    /// [`max_unavailable`](super::ApplyOptions::max_unavailable).
    #[serde(skip)]
    pub(crate) down_elsewhere: usize,
    #[serde(skip)]
    pub(crate) handle: ServiceHandle,
    #[serde(skip)]
    pub(crate) recorded: RecordedState,
    /// The observed forms an apply records without touching a pipe: read for pipes of a state
    /// written before observed forms existed, or with the server's respellings adopted.
    #[serde(skip)]
    pub(crate) observations: BTreeMap<String, Value>,
    /// What the plan read, so that a saved plan can tell whether anything moved.
    #[serde(skip)]
    pub(crate) bindings: Bindings,
    /// The names the plan was limited to ([`PlanOptions::target`]).
    #[serde(skip)]
    pub(crate) targets: Option<BTreeSet<String>>,
    /// The declared service state.
    #[serde(skip)]
    pub(crate) declared_service: Option<ServiceTarget>,
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

    /// Whether an apply of this plan would do anything: start or stop the service, act on a pipe,
    /// or record what the server answered (for pipes of a state written before version 2, or
    /// respelled since).
    pub fn has_work(&self) -> bool {
        self.service.is_some()
            || !self.observations.is_empty()
            || self
                .actions
                .iter()
                .any(|a| !matches!(a.kind, ActionKind::Pending | ActionKind::Unreadable))
    }

    /// Whether the server was read (see [`PlanOptions::refresh`]): a plan made without it cannot be
    /// applied.
    pub fn is_refreshed(&self) -> bool {
        self.refreshed
    }

    /// The recorded pipes whose answers could not be decoded: nothing is done to them.
    pub fn unreadable(&self) -> impl Iterator<Item = &PlanAction> {
        self.actions
            .iter()
            .filter(|a| a.kind == ActionKind::Unreadable)
    }

    /// The actions that would delete a protected pipe: an apply of this plan is refused before
    /// any call ([`StateError::Protected`](super::StateError::Protected)).
    pub fn protected(&self) -> impl Iterator<Item = &PlanAction> {
        self.actions.iter().filter(|a| a.protected)
    }

    /// How many actions delete a pipe (deletes, replaces, recreates), which
    /// [`ApplyOptions::max_destructive`](super::ApplyOptions::max_destructive) caps.
    pub fn destructive(&self) -> usize {
        self.actions
            .iter()
            .filter(|a| a.kind.is_destructive())
            .count()
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

/// How a plan is made: [`PlanOptions::default`] reads every recorded pipe and plans every name.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PlanOptions {
    refresh: bool,
    targets: Option<BTreeSet<String>>,
}

impl Default for PlanOptions {
    fn default() -> Self {
        Self {
            refresh: true,
            targets: None,
        }
    }
}

impl PlanOptions {
    /// Whether the plan reads the server (the default). Without it, the plan compares the files
    /// with the recorded state alone and makes no call: a quick check of what a change of files
    /// does, which cannot see a pipe gone, failed or changed on the server, and cannot be applied.
    pub fn refresh(mut self, read: bool) -> Self {
        self.refresh = read;
        self
    }

    /// Plans only the pipe `name` (and others given the same way): the pipes of other names are
    /// neither read nor acted on, so one of them gone or failed on the server is not seen; one a
    /// replace left down (in the state) still counts against
    /// [`max_unavailable`](super::ApplyOptions::max_unavailable). A declared service state is still
    /// planned, as the pipes need it. A name that no file declares and the state does not record
    /// is refused.
    pub fn target(mut self, name: impl Into<String>) -> Self {
        self.targets
            .get_or_insert_with(BTreeSet::new)
            .insert(name.into());
        self
    }

    fn covers(&self, name: &str) -> bool {
        self.targets.as_ref().is_none_or(|t| t.contains(name))
    }
}

/// Plans how to bring `service` to `declaration`, from what `recorded` says earlier applies did,
/// with the default [`PlanOptions`]: see [`plan_with`].
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
    plan_with(service, declaration, recorded, &PlanOptions::default()).await
}

/// Plans how to bring `service` to `declaration`, from what `recorded` says earlier applies did.
///
/// It reads each recorded pipe once (`getPipe`, a few at a time) and, when the declaration has a
/// service state, the service once; it writes nothing. A recorded pipe the server no longer has is
/// recreated; a declared pipe that differs from the server, or from the declaration it was created
/// with, is replaced and every differing member named (see [`Change`]); a recorded pipe no longer
/// declared is deleted; a name with a pending create is left alone until it is resolved. The
/// secrets' fingerprints (Argon2id) are made off the async runtime's threads, on every core.
///
/// ```no_run
/// # async fn run(service: api_mgmt::ServiceHandle, declaration: api_mgmt::declared::Declaration, recorded: api_mgmt::declared::RecordedState) -> Result<(), api_mgmt::declared::DeclaredError> {
/// use api_mgmt::declared::{self, PlanOptions};
///
/// // A quick check in review: the files against the state, no call made.
/// let quick = declared::plan_with(&service, &declaration, &recorded, &PlanOptions::default().refresh(false)).await?;
/// // Only the pipe `orders`, read from the server.
/// let orders = declared::plan_with(&service, &declaration, &recorded, &PlanOptions::default().target("orders")).await?;
/// # Ok(()) }
/// ```
pub async fn plan_with(
    service: &ServiceHandle,
    declaration: &Declaration,
    recorded: &RecordedState,
    options: &PlanOptions,
) -> Result<Plan, DeclaredError> {
    recorded.check_target(&target_of(service))?;
    check_targets(declaration, recorded, options)?;
    // Read: each recorded pipe the plan covers, from the server (or as it was last seen).
    let (mut on_server, mut reads) = read::pipes(service, recorded, options).await?;
    // Compare and decide: each declared pipe, then each recorded one no longer declared.
    let mut decided = Decided::default();
    let compared = decided.without_comparing(declaration, recorded, options, &mut on_server);
    decided.by_comparing(compared, recorded).await?;
    decided.undeclared(declaration, recorded, options, &on_server);
    decided.actions.sort_by(|a, b| a.name.cmp(&b.name));
    // The service's state, then what each create sends, then what each action does to the data
    // and whether a protected pipe stands in its way.
    let service_change = read::service_change(service, declaration, options, &mut reads).await?;
    let mut actions = with_creations(decided.actions, declaration).await?;
    for action in &mut actions {
        decide::weigh(action, recorded);
        if let Some(creation) = &action.create {
            decided
                .bindings
                .declared
                .entry(action.name.clone())
                .or_insert(DeclaredBinding {
                    form: creation.form.clone(),
                    lifecycle: creation.lifecycle,
                });
        }
    }
    Ok(Plan {
        service: service_change,
        actions,
        unchanged: decided.unchanged,
        drift: decided.drift,
        respelled: decided.respelled,
        reads,
        refreshed: options.refresh,
        down_elsewhere: recorded
            .pipes
            .iter()
            .filter(|(name, record)| !options.covers(name) && record.replacing.is_some())
            .count(),
        handle: service.clone(),
        recorded: recorded.clone(),
        observations: decided.observations,
        bindings: decided.bindings,
        targets: options.targets.clone(),
        declared_service: declaration.declared_service_state(),
    })
}

/// Refuses a target name that no file declares and the state does not record.
fn check_targets(
    declaration: &Declaration,
    recorded: &RecordedState,
    options: &PlanOptions,
) -> Result<(), DeclaredError> {
    let Some(targets) = &options.targets else {
        return Ok(());
    };
    let unknown: Vec<&str> = targets
        .iter()
        .map(String::as_str)
        .filter(|&name| {
            declaration.get(name).is_none()
                && !recorded.pipes.contains_key(name)
                && !recorded.pending.contains_key(name)
        })
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    Err(DeclaredError::Refused(format!(
        "no pipe is declared or recorded under the target name {}",
        unknown.join(", ")
    )))
}

/// `actions` with what each create sends and records (a fresh salt for each new pipe: a record's
/// fingerprints are its own), made off the runtime on every core; refused when the service is
/// declared stopped, which takes no new pipe.
async fn with_creations(
    mut actions: Vec<PlanAction>,
    declaration: &Declaration,
) -> Result<Vec<PlanAction>, DeclaredError> {
    let creating: Vec<usize> = actions
        .iter()
        .enumerate()
        .filter(|(_, a)| {
            matches!(
                a.kind,
                ActionKind::Create | ActionKind::Recreate | ActionKind::Replace
            )
        })
        .map(|(i, _)| i)
        .collect();
    if declaration.declared_service_state() == Some(ServiceTarget::Stopped) && !creating.is_empty()
    {
        let names: Vec<&str> = creating.iter().map(|&i| actions[i].name.as_str()).collect();
        return Err(DeclaredError::Refused(format!(
            "the service is declared stopped, and a stopped service takes no new pipe; the plan \
             would create {}",
            names.join(", ")
        )));
    }
    let to_create: Vec<(usize, NewPipe, Lifecycle)> = creating
        .into_iter()
        .filter_map(|i| {
            let name = &actions[i].name;
            Some((
                i,
                declaration.get(name)?.clone(),
                declaration.lifecycle_of(name),
            ))
        })
        .collect();
    for (i, creation) in on_every_core(to_create, |memory: &mut Memory, (i, pipe, lifecycle)| {
        (i, creation(&pipe, &Fingerprint::fresh(), lifecycle, memory))
    })
    .await
    .map_err(shut_down)?
    {
        actions[i].create = Some(creation?);
    }
    Ok(actions)
}

/// The plan's error when the runtime shut down under its fingerprints.
pub(super) fn shut_down(_: ShutDown) -> DeclaredError {
    DeclaredError::Refused(
        "the async runtime shut down while the plan fingerprinted its secrets; nothing was planned"
            .into(),
    )
}

fn creation(
    pipe: &NewPipe,
    fingerprint: &Fingerprint,
    lifecycle: Lifecycle,
    memory: &mut Memory,
) -> Result<Creation, DeclaredError> {
    let (form, fingerprint) = declared_form(pipe, fingerprint, memory)?;
    Ok(Creation {
        pipe: pipe.clone(),
        form,
        fingerprint,
        lifecycle,
    })
}

/// Reads of errors the plan can meet, kept apart so the caller can tell them.
impl From<Error> for DeclaredError {
    fn from(error: Error) -> Self {
        DeclaredError::Api(error)
    }
}

#[cfg(test)]
mod tests {
    use super::ActionKind;

    #[test]
    fn each_action_is_shown_by_its_word_as_in_json() {
        for kind in [
            ActionKind::Create,
            ActionKind::Recreate,
            ActionKind::Replace,
            ActionKind::Record,
            ActionKind::Delete,
            ActionKind::Pending,
            ActionKind::Unreadable,
            ActionKind::Forget,
        ] {
            let json = serde_json::to_value(kind).unwrap();
            assert_eq!(Some(kind.to_string().as_str()), json.as_str());
        }
        assert_eq!(ActionKind::Unreadable.to_string(), "unreadable");
    }
}
