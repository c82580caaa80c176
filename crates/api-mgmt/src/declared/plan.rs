//! [`plan`]: what it takes to bring a service to its declaration, read from the server and written
//! nowhere.

use std::collections::{BTreeMap, BTreeSet};

use api_core::management::{NewPipe, PipeState, ServiceState};
use api_core::raw::support::schema::SchemaSet;
use api_core::{Error, PipeId};
use futures::StreamExt as _;
use serde::Serialize;
use serde_json::Value;

use super::cpu_work::{ShutDown, on_every_core};
use super::diff::{Cause, Change, Effect, Sides, compare};
use super::fingerprint::{Fingerprint, declared_form, observed_form};
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

/// What a record-only update writes into the state.
#[derive(Debug, Clone)]
pub(crate) struct Recorded {
    pub form: Value,
    pub fingerprint: Fingerprint,
    pub observed: Value,
}

/// A recorded pipe that changed on the server in members its file leaves out: shown, not acted on.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Drift {
    /// The pipe's name.
    pub name: String,
    /// The pipe's id.
    pub id: PipeId,
    /// Each member that changed, with the server's value now ([`Effect::None`]).
    pub changes: Vec<Change>,
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
    /// Pipes that need nothing but changed on the server in members their files leave out.
    pub drift: Vec<Drift>,
    /// Pipes the server now writes another way than it did when they were made (an upgrade that
    /// respelled a type or a value of a set, a set in another order): no change; an apply records
    /// the new forms ([`Cause::Respelled`]).
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
}

/// What a plan's read of one recorded pipe found.
enum Read {
    /// The pipe, as the server wrote it (the generated type's JSON).
    Found(Value),
    /// 404.
    Gone,
    /// An answer that cannot be decoded, and why.
    Unreadable(String),
    /// Not read (refresh off): what it was last seen as, in its stored form.
    Assumed(Value),
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
    if let Some(targets) = &options.targets {
        let unknown: Vec<&str> = targets
            .iter()
            .map(String::as_str)
            .filter(|&name| {
                declaration.get(name).is_none()
                    && !recorded.pipes.contains_key(name)
                    && !recorded.pending.contains_key(name)
            })
            .collect();
        if !unknown.is_empty() {
            return Err(DeclaredError::Refused(format!(
                "no pipe is declared or recorded under the target name {}",
                unknown.join(", ")
            )));
        }
    }
    let schemas = SchemaSet::management();
    let (request, response) = (schemas.schema("PipeCreateRequest"), schemas.schema("Pipe"));

    let mut calls = 0u32;
    let mut on_server = BTreeMap::new();
    if options.refresh {
        let reads = futures::stream::iter(
            recorded
                .pipes
                .iter()
                .filter(|(name, _)| options.covers(name))
                .map(|(name, record)| async move {
                    let read = service.pipe(record.id).get_wire().await;
                    (name.clone(), read)
                }),
        )
        .buffer_unordered(READS_AT_ONCE)
        .collect::<Vec<_>>()
        .await;
        for (name, read) in reads {
            calls += 1;
            let read = match read {
                Ok(pipe) => match serde_json::to_value(pipe.into_inner()) {
                    Ok(json) => Read::Found(json),
                    Err(e) => {
                        Read::Unreadable(format!("the answer cannot be written as JSON: {e}"))
                    }
                },
                Err(e) if e.is_not_found() => Read::Gone,
                // One answer the SDK cannot decode blocks only its own pipe.
                Err(e @ Error::Decode(_)) => Read::Unreadable(e.to_string()),
                Err(e) => return Err(DeclaredError::Api(e)),
            };
            on_server.insert(name, read);
        }
    } else {
        // No read: the server is taken to answer what it answered when it was last seen.
        for (name, record) in recorded.pipes.iter().filter(|(n, _)| options.covers(n)) {
            let seen = record.observed.as_ref().unwrap_or(&record.declared);
            on_server.insert(name.clone(), Read::Assumed(seen.clone()));
        }
    }

    let mut observations = BTreeMap::new();
    let mut drift = Vec::new();
    let mut respelled = Vec::new();
    let mut actions = Vec::new();
    let mut unchanged = Vec::new();
    // The recorded, declared pipes the server has in a working state: compared once their forms
    // are made.
    let mut compared = Vec::new();
    for (name, pipe) in declaration.pipes().filter(|(name, _)| options.covers(name)) {
        if let Some(pending) = recorded.pending.get(name) {
            actions.push(pending_action(name, pending, recorded));
            continue;
        }
        let Some(record) = recorded.pipes.get(name) else {
            actions.push(action(name, ActionKind::Create, None, Vec::new()));
            continue;
        };
        let unfinished = record.replacing.map(|at| {
            format!(
                "a replace begun at {} did not finish",
                at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
            )
        });
        let (server, read) = match on_server.remove(name) {
            Some(Read::Found(server)) => (server, true),
            Some(Read::Assumed(seen)) => (seen, false),
            Some(Read::Unreadable(why)) => {
                let mut unreadable =
                    action(name, ActionKind::Unreadable, Some(record.id), Vec::new());
                unreadable.note = Some(format!(
                    "the server's answer cannot be read, so nothing is done to it: {why}"
                ));
                actions.push(unreadable);
                continue;
            }
            Some(Read::Gone) | None => {
                let note = join_notes(
                    format!("pipe {} is gone from the server", record.id),
                    unfinished,
                );
                actions.push(recreate(name, record.id, note, false));
                continue;
            }
        };
        let state = server
            .get("state")
            .and_then(Value::as_str)
            .map(PipeState::from);
        if let Some(state) = state.filter(PipeState::is_failed) {
            let note = format!(
                "pipe {} is {state}: it is deleted and created again",
                record.id
            );
            actions.push(recreate(name, record.id, note, true));
            continue;
        }
        compared.push(Compared {
            name: name.to_string(),
            pipe: pipe.clone(),
            fingerprint: record.fingerprint.clone(),
            server,
            read,
            unfinished,
        });
    }

    // Each secret's fingerprint (Argon2id) off the runtime, on every core.
    let formed = on_every_core(compared, |compared| {
        let forms = declared_form(&compared.pipe, &compared.fingerprint).and_then(|declared| {
            let now = if compared.read {
                observed_form(&compared.server, &compared.fingerprint)?
            } else {
                // Recorded as stored already.
                compared.server.clone()
            };
            Ok((declared, now))
        });
        (compared, forms)
    })
    .await
    .map_err(shut_down)?;
    for (compared, forms) in formed {
        let ((form, fingerprint), now) = forms?;
        let (name, unfinished) = (compared.name.as_str(), compared.unfinished);
        let record = &recorded.pipes[name];
        let file_changed = fingerprint.digest != record.fingerprint.digest;
        // Without a read, the server is taken to be as it was seen, so only the file can differ.
        // A record that never got its observed form (an apply interrupted between the create and
        // its answer, or a state of version 1) adopts the answer now when the file has not changed
        // since: a pipe just made is never replaced for the server's own way of writing it.
        let observed = match (compared.read, &record.observed) {
            (true, Some(observed)) => Some(observed),
            (true, None) if file_changed => None,
            _ => Some(&now),
        };
        let sides = Sides {
            file: &form,
            recorded: file_changed.then_some(&record.declared),
            observed,
            now: &now,
            // The stored form (a credential in a string is its fingerprint, as in the file's).
            answer: &now,
        };
        let (mut differences, adopted) = compare(&sides, request, response);
        let strongest = differences.iter().map(|c| c.effect).max();
        if strongest == Some(Effect::Replace) || unfinished.is_some() {
            let mut replace = action(name, ActionKind::Replace, Some(record.id), differences);
            replace.delete_first = true;
            replace.down = unfinished.is_some();
            replace.note = unfinished;
            actions.push(replace);
        } else if file_changed || strongest == Some(Effect::Record) {
            let mut update = action(name, ActionKind::Record, Some(record.id), differences);
            update.note =
                Some("the server already has what the file says: only the state changes".into());
            update.record = Some(Recorded {
                form,
                fingerprint,
                observed: now,
            });
            actions.push(update);
        } else {
            let (respellings, differences): (Vec<Change>, Vec<Change>) = differences
                .drain(..)
                .partition(|c| c.cause == Cause::Respelled);
            if !differences.is_empty() {
                drift.push(Drift {
                    name: name.to_string(),
                    id: record.id,
                    changes: differences,
                });
            }
            if !respellings.is_empty() {
                respelled.push(Drift {
                    name: name.to_string(),
                    id: record.id,
                    changes: respellings,
                });
            }
            if compared.read && record.observed.is_none() {
                observations.insert(name.to_string(), now);
            } else if let Some(adopted) = adopted.filter(|_| compared.read) {
                observations.insert(name.to_string(), adopted);
            }
            unchanged.push(name.to_string());
        }
    }
    for (name, record) in &recorded.pipes {
        // A name with a pending create is said once, as pending (its record is that of the pipe
        // a replace deleted).
        if options.covers(name)
            && declaration.get(name).is_none()
            && !recorded.pending.contains_key(name)
        {
            let mut delete = action(name, ActionKind::Delete, Some(record.id), Vec::new());
            if matches!(on_server.get(name), Some(Read::Gone)) {
                delete.note = Some(format!(
                    "pipe {} is already gone from the server",
                    record.id
                ));
            }
            actions.push(delete);
        }
    }
    for (name, pending) in &recorded.pending {
        if options.covers(name) && declaration.get(name).is_none() {
            actions.push(pending_action(name, pending, recorded));
        }
    }
    actions.sort_by(|a, b| a.name.cmp(&b.name));

    let service_change = match declaration.declared_service_state() {
        Some(target) => {
            // A server may refuse the read (400): a plan must not write, so it cannot tell the
            // state, and plans the command (which changes nothing on a service already there).
            let learned = service.client.parts().0.learned();
            let read = if !options.refresh || learned.refuses_command_less_read() {
                None
            } else {
                calls += 1;
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
    // What each create sends and records, with a fresh salt for each new pipe (a record's
    // fingerprints are its own): off the runtime, on every core.
    let to_create: Vec<(usize, NewPipe)> = creating
        .into_iter()
        .filter_map(|i| Some((i, declaration.get(&actions[i].name)?.clone())))
        .collect();
    for (i, creation) in on_every_core(to_create, |(i, pipe)| {
        (i, creation(&pipe, &Fingerprint::fresh()))
    })
    .await
    .map_err(shut_down)?
    {
        actions[i].create = Some(creation?);
    }
    Ok(Plan {
        service: service_change,
        actions,
        unchanged,
        drift,
        respelled,
        reads: calls,
        refreshed: options.refresh,
        down_elsewhere: recorded
            .pipes
            .iter()
            .filter(|(name, record)| !options.covers(name) && record.replacing.is_some())
            .count(),
        handle: service.clone(),
        recorded: recorded.clone(),
        observations,
    })
}

/// A recorded, declared pipe to compare with what the server has, before its forms are made.
struct Compared {
    name: String,
    pipe: NewPipe,
    fingerprint: Fingerprint,
    /// The server's answer (the generated type's JSON), or what it was last seen as.
    server: Value,
    /// Whether `server` was read now.
    read: bool,
    /// A replace begun and not finished.
    unfinished: Option<String>,
}

/// The recreate of the recorded pipe `id` (down: gone, or failed and then deleted first when
/// `delete_first`).
fn recreate(name: &str, id: PipeId, note: String, delete_first: bool) -> PlanAction {
    let mut recreate = action(name, ActionKind::Recreate, Some(id), Vec::new());
    recreate.note = Some(note);
    recreate.delete_first = delete_first;
    recreate.down = true;
    recreate
}

/// The plan's error when the runtime shut down under its fingerprints.
fn shut_down(_: ShutDown) -> DeclaredError {
    DeclaredError::Refused(
        "the async runtime shut down while the plan fingerprinted its secrets; nothing was planned"
            .into(),
    )
}

fn join_notes(first: String, second: Option<String>) -> String {
    match second {
        Some(second) => format!("{first}; {second}"),
        None => first,
    }
}

fn creation(pipe: &NewPipe, fingerprint: &Fingerprint) -> Result<Creation, DeclaredError> {
    let (form, fingerprint) = declared_form(pipe, fingerprint)?;
    Ok(Creation {
        pipe: pipe.clone(),
        form,
        fingerprint,
    })
}

fn action(name: &str, kind: ActionKind, id: Option<PipeId>, changes: Vec<Change>) -> PlanAction {
    PlanAction {
        name: name.to_string(),
        kind,
        id,
        changes,
        note: None,
        create: None,
        delete_first: false,
        down: false,
        record: None,
    }
}

/// The action of a pending create: down when it is the create of a replace (or a recreate), whose
/// record keeps its mark until the create is recorded.
fn pending_action(
    name: &str,
    pending: &super::PendingCreate,
    recorded: &RecordedState,
) -> PlanAction {
    let reason = pending
        .reason
        .as_deref()
        .map_or_else(String::new, |reason| format!(" ({reason})"));
    let mut action = action(name, ActionKind::Pending, None, Vec::new());
    action.down = recorded
        .pipes
        .get(name)
        .is_some_and(|record| record.replacing.is_some());
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
        ] {
            let json = serde_json::to_value(kind).unwrap();
            assert_eq!(Some(kind.to_string().as_str()), json.as_str());
        }
        assert_eq!(ActionKind::Unreadable.to_string(), "unreadable");
    }
}
