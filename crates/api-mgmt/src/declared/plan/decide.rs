//! The plan's decisions, pipe by pipe: what each declared pipe needs (from its pending create, its
//! record and the server's answer, comparing the forms where it is there and working), and what
//! each recorded pipe no longer declared needs.

use std::collections::BTreeMap;

use api_core::PipeId;
use api_core::management::{NewPipe, PipeState};
use api_core::raw::support::schema::{SchemaSet, Shape};
use serde_json::Value;

use super::read::Read;
use super::{ActionKind, Drift, PlanAction, PlanOptions, Recorded, shut_down};
use crate::declared::cpu_work::on_every_core;
use crate::declared::diff::{Cause, Change, Effect, Sides, compare};
use crate::declared::fingerprint::{Fingerprint, declared_form, observed_form};
use crate::declared::{Declaration, DeclaredError, PendingCreate, RecordedState};

/// What the plan decided so far.
#[derive(Default)]
pub(super) struct Decided {
    /// The changes.
    pub actions: Vec<PlanAction>,
    /// The names of the pipes that need nothing.
    pub unchanged: Vec<String>,
    /// Unchanged pipes that changed on the server in members their files leave out.
    pub drift: Vec<Drift>,
    /// Unchanged pipes the server now writes another way.
    pub respelled: Vec<Drift>,
    /// The observed forms recorded without touching a pipe.
    pub observations: BTreeMap<String, Value>,
}

/// A recorded, declared pipe to compare with what the server has, before its forms are made.
pub(super) struct Compared {
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

impl Decided {
    /// Decides each declared pipe `options` covers that needs no comparison (a pending create, a
    /// new name, an unreadable answer, a pipe gone or failed); answers the others, to compare.
    /// Takes each read it uses out of `on_server`.
    pub fn without_comparing(
        &mut self,
        declaration: &Declaration,
        recorded: &RecordedState,
        options: &PlanOptions,
        on_server: &mut BTreeMap<String, Read>,
    ) -> Vec<Compared> {
        let mut compared = Vec::new();
        for (name, pipe) in declaration.pipes().filter(|(name, _)| options.covers(name)) {
            if let Some(pending) = recorded.pending.get(name) {
                self.actions.push(pending_action(name, pending, recorded));
                continue;
            }
            let Some(record) = recorded.pipes.get(name) else {
                self.actions
                    .push(action(name, ActionKind::Create, None, Vec::new()));
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
                    self.actions.push(unreadable);
                    continue;
                }
                Some(Read::Gone) | None => {
                    let note = join_notes(
                        format!("pipe {} is gone from the server", record.id),
                        unfinished,
                    );
                    self.actions.push(recreate(name, record.id, note, false));
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
                self.actions.push(recreate(name, record.id, note, true));
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
        compared
    }

    /// Decides each pipe of `compared` by comparing its file's form, its record and the server's
    /// answer: a replace, a record-only update, or no change (with its drift and respellings). The
    /// secrets' fingerprints (Argon2id) are made off the runtime, on every core.
    pub async fn by_comparing(
        &mut self,
        compared: Vec<Compared>,
        recorded: &RecordedState,
    ) -> Result<(), DeclaredError> {
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
        let schemas = SchemaSet::management();
        let shapes = (schemas.schema("PipeCreateRequest"), schemas.schema("Pipe"));
        for (compared, forms) in formed {
            let ((form, fingerprint), now) = forms?;
            self.compare_one(compared, recorded, shapes, (form, fingerprint), now);
        }
        Ok(())
    }

    /// Decides one compared pipe from its file's form (under its fingerprint) and the server's
    /// answer `now`, in stored form, with the shapes of the create request and of the pipe.
    fn compare_one(
        &mut self,
        compared: Compared,
        recorded: &RecordedState,
        (request, response): (Option<Shape<'_>>, Option<Shape<'_>>),
        (form, fingerprint): (Value, Fingerprint),
        now: Value,
    ) {
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
            self.actions.push(replace);
        } else if file_changed || strongest == Some(Effect::Record) {
            let mut update = action(name, ActionKind::Record, Some(record.id), differences);
            update.note =
                Some("the server already has what the file says: only the state changes".into());
            update.record = Some(Recorded {
                form,
                fingerprint,
                observed: now,
            });
            self.actions.push(update);
        } else {
            let (respellings, differences): (Vec<Change>, Vec<Change>) = differences
                .drain(..)
                .partition(|c| c.cause == Cause::Respelled);
            if !differences.is_empty() {
                self.drift.push(Drift {
                    name: name.to_string(),
                    id: record.id,
                    changes: differences,
                });
            }
            if !respellings.is_empty() {
                self.respelled.push(Drift {
                    name: name.to_string(),
                    id: record.id,
                    changes: respellings,
                });
            }
            if compared.read && record.observed.is_none() {
                self.observations.insert(name.to_string(), now);
            } else if let Some(adopted) = adopted.filter(|_| compared.read) {
                self.observations.insert(name.to_string(), adopted);
            }
            self.unchanged.push(name.to_string());
        }
    }

    /// Decides each recorded pipe, and each pending create, that `options` covers and no file
    /// declares any more: a delete, or the pending create said once more.
    pub fn undeclared(
        &mut self,
        declaration: &Declaration,
        recorded: &RecordedState,
        options: &PlanOptions,
        on_server: &BTreeMap<String, Read>,
    ) {
        for (name, record) in &recorded.pipes {
            // A name with a pending create is said once, as pending (its record is that of the
            // pipe a replace deleted).
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
                self.actions.push(delete);
            }
        }
        for (name, pending) in &recorded.pending {
            if options.covers(name) && declaration.get(name).is_none() {
                self.actions.push(pending_action(name, pending, recorded));
            }
        }
    }
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

fn join_notes(first: String, second: Option<String>) -> String {
    match second {
        Some(second) => format!("{first}; {second}"),
        None => first,
    }
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
fn pending_action(name: &str, pending: &PendingCreate, recorded: &RecordedState) -> PlanAction {
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
