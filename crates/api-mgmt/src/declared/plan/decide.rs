//! The plan's decisions, pipe by pipe: what each declared pipe needs (from its pending create, its
//! record and the server's answer, comparing the forms where it is there and working), and what
//! each recorded pipe no longer declared needs.

use std::collections::BTreeMap;

use api_core::PipeId;
use api_core::management::{NewPipe, PipeState};
use api_core::raw::support::schema::{SchemaSet, Shape};
use serde_json::Value;

use super::read::Read;
use super::{
    ActionCause, ActionKind, Bindings, DeclaredBinding, Drift, PlanAction, PlanOptions, Recorded,
    shut_down,
};
use crate::declared::cpu_work::on_every_core;
use crate::declared::diff::{Cause, Change, Effect, Sides, compare};
use crate::declared::fingerprint::{Fingerprint, Memory, declared_form, digest, observed_form};
use crate::declared::impact::impacts;
use crate::declared::{
    Declaration, DeclaredError, Lifecycle, PendingCreate, RecordedState, SavedObserved,
};

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
    /// What the plan read.
    pub bindings: Bindings,
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
    /// The state the server answered, when it was read.
    state: Option<String>,
    /// The declared lifecycle.
    lifecycle: Lifecycle,
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
            let lifecycle = declaration.lifecycle_of(name);
            if let Some(pending) = recorded.pending.get(name) {
                self.actions.push(pending_action(name, pending, recorded));
                continue;
            }
            let Some(record) = recorded.pipes.get(name) else {
                let mut create = action(name, ActionKind::Create, None, Vec::new());
                create.cause = ActionCause::New;
                create.lifecycle = lifecycle;
                self.actions.push(create);
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
                    unreadable.cause = ActionCause::Unreadable;
                    unreadable.lifecycle = lifecycle;
                    unreadable.note = Some(format!(
                        "the server's answer cannot be read, so nothing is done to it: {why}"
                    ));
                    self.actions.push(unreadable);
                    self.observe(name, SavedObserved::without_answer(record.id, "unreadable"));
                    continue;
                }
                Some(Read::Gone) | None => {
                    let note = join_notes(
                        format!("pipe {} is gone from the server", record.id),
                        unfinished,
                    );
                    let mut recreate = recreate(name, record.id, note, false);
                    recreate.cause = ActionCause::Gone;
                    recreate.lifecycle = lifecycle;
                    recreate.before = Some(record.declared.clone());
                    self.actions.push(recreate);
                    if options.refresh {
                        self.observe(name, SavedObserved::without_answer(record.id, "gone"));
                    }
                    continue;
                }
            };
            let state = server
                .get("state")
                .and_then(Value::as_str)
                .map(PipeState::from);
            if let Some(state) = state.as_ref().filter(|s| s.is_failed()) {
                let note = format!(
                    "pipe {} is {state}: it is deleted and created again",
                    record.id
                );
                let mut recreate = recreate(name, record.id, note, true);
                recreate.cause = ActionCause::Failed;
                recreate.lifecycle = lifecycle;
                recreate.before = Some(record.declared.clone());
                self.actions.push(recreate);
                if read {
                    self.observe(name, SavedObserved::failed(record.id, state.to_string()));
                }
                continue;
            }
            compared.push(Compared {
                name: name.to_string(),
                pipe: pipe.clone(),
                fingerprint: record.fingerprint.clone(),
                server,
                read,
                unfinished,
                state: state.map(|s| s.to_string()),
                lifecycle,
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
        let formed = on_every_core(compared, |memory: &mut Memory, compared| {
            let forms =
                declared_form(&compared.pipe, &compared.fingerprint, memory).and_then(|declared| {
                    let now = if compared.read {
                        observed_form(&compared.server, &compared.fingerprint, memory)?
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
        let lifecycle_changed = compared.lifecycle != record.lifecycle;
        self.bindings.declared.insert(
            name.to_string(),
            DeclaredBinding {
                form: form.clone(),
                lifecycle: compared.lifecycle,
            },
        );
        if compared.read {
            let found = SavedObserved::found(record.id, compared.state.clone(), digest(&now));
            self.observe(name, found);
        }
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
            let replacing = |cause: Cause| {
                differences
                    .iter()
                    .any(|c| c.cause == cause && c.effect == Effect::Replace)
            };
            let cause = match (
                unfinished.is_some(),
                replacing(Cause::Declaration),
                replacing(Cause::Server),
            ) {
                (true, _, _) => ActionCause::Unfinished,
                (_, true, true) => ActionCause::DeclarationAndDrift,
                (_, false, true) => ActionCause::Drift,
                _ => ActionCause::Declaration,
            };
            let mut replace = action(name, ActionKind::Replace, Some(record.id), differences);
            replace.cause = cause;
            replace.lifecycle = compared.lifecycle;
            replace.before = Some(record.declared.clone());
            replace.delete_first = true;
            replace.down = unfinished.is_some();
            replace.note = unfinished;
            self.actions.push(replace);
        } else if file_changed || strongest == Some(Effect::Record) || lifecycle_changed {
            let only_lifecycle = !file_changed && strongest != Some(Effect::Record);
            let mut update = action(name, ActionKind::Record, Some(record.id), differences);
            update.cause = if only_lifecycle {
                ActionCause::Lifecycle
            } else {
                ActionCause::Declaration
            };
            update.lifecycle = compared.lifecycle;
            update.before = Some(record.declared.clone());
            update.note = Some(if only_lifecycle {
                format!(
                    "the lifecycle changed from {} to {}: only the state changes",
                    record.lifecycle, compared.lifecycle
                )
            } else {
                "the server already has what the file says: only the state changes".into()
            });
            update.record = Some(Recorded {
                form,
                fingerprint,
                observed: now,
                lifecycle: compared.lifecycle,
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
                let retained = record.lifecycle.retain_on_delete;
                let kind = if retained {
                    ActionKind::Forget
                } else {
                    ActionKind::Delete
                };
                let mut delete = action(name, kind, Some(record.id), Vec::new());
                delete.cause = ActionCause::Undeclared;
                delete.lifecycle = record.lifecycle;
                delete.before = Some(record.declared.clone());
                let read = match on_server.get(name) {
                    Some(Read::Gone) => {
                        delete.gone = true;
                        if !retained {
                            delete.note = Some(format!(
                                "pipe {} is already gone from the server",
                                record.id
                            ));
                        }
                        Some("gone")
                    }
                    Some(Read::Found(_)) => Some("found"),
                    Some(Read::Unreadable(_)) => Some("unreadable"),
                    Some(Read::Assumed(_)) | None => None,
                };
                if retained {
                    delete.note = Some(
                        "retained on delete: the state forgets it, and the pipe is not touched"
                            .into(),
                    );
                }
                if let Some(read) = read {
                    self.observe(name, SavedObserved::without_answer(record.id, read));
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

impl Decided {
    fn observe(&mut self, name: &str, read: SavedObserved) {
        self.bindings.observed.insert(name.to_string(), read);
    }
}

/// Sets what `action` does to the data and whether it would delete a protected pipe (protected by
/// its file or by its record).
pub(super) fn weigh(action: &mut PlanAction, recorded: &RecordedState) {
    let record = recorded.pipes.get(&action.name);
    let gone = action.kind == ActionKind::Recreate && !action.delete_first;
    action.impact = impacts(action.kind, action.before.as_ref(), action.after(), gone);
    let recorded_protect = record.is_some_and(|r| r.lifecycle.protect);
    action.protected = match action.kind {
        // A pipe gone already loses nothing to its delete (which only forgets it).
        ActionKind::Delete => recorded_protect && !action.gone,
        ActionKind::Replace => recorded_protect || action.lifecycle.protect,
        ActionKind::Recreate if action.delete_first => recorded_protect || action.lifecycle.protect,
        _ => false,
    };
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
        cause: ActionCause::Declaration,
        id,
        changes,
        note: None,
        lifecycle: Lifecycle::default(),
        protected: false,
        impact: Vec::new(),
        before: None,
        gone: false,
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
    action.cause = ActionCause::Pending;
    action.lifecycle = pending.lifecycle;
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

#[cfg(test)]
mod tests {
    use chrono::Utc;
    use serde_json::json;

    use super::{ActionKind, action, weigh};
    use crate::declared::fingerprint::Fingerprint;
    use crate::declared::{Lifecycle, RecordedPipe, RecordedState, StateTarget};

    fn recorded(lifecycle: Lifecycle) -> RecordedState {
        let mut state = RecordedState::new(StateTarget {
            api_url: "http://127.0.0.1:1".into(),
            organization_id: "3f0c5e2a-8d41-4b7e-9a6c-1e2f3a4b5c6d".parse().unwrap(),
            service_id: "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d".parse().unwrap(),
        });
        state.pipes.insert(
            "orders".into(),
            RecordedPipe {
                id: "0f9e8d7c-6b5a-4f3e-9d2c-1b0a9f8e7d6c".parse().unwrap(),
                fingerprint: Fingerprint::fresh(),
                declared: json!({"name": "orders", "source": {"kafka": {}}, "destination": {}}),
                observed: None,
                replacing: None,
                lifecycle,
                recorded_at: Utc::now(),
            },
        );
        state
    }

    #[test]
    fn protection_is_the_record_s_or_the_file_s_and_a_pipe_gone_has_none_left() {
        let id = Some("0f9e8d7c-6b5a-4f3e-9d2c-1b0a9f8e7d6c".parse().unwrap());
        let protected = recorded(Lifecycle::default().protect(true));
        let open = recorded(Lifecycle::default());
        let weighed =
            |kind: ActionKind, state: &RecordedState, declared: bool, gone: bool, first: bool| {
                let mut a = action("orders", kind, id, Vec::new());
                a.lifecycle = Lifecycle::default().protect(declared);
                a.gone = gone;
                a.delete_first = first;
                weigh(&mut a, state);
                a.protected
            };
        // A delete: the record protects, unless the pipe is gone already.
        assert!(weighed(ActionKind::Delete, &protected, false, false, false));
        assert!(!weighed(ActionKind::Delete, &protected, false, true, false));
        assert!(!weighed(ActionKind::Delete, &open, false, false, false));
        // A replace, and the recreate of a failed pipe: the record or the file protects.
        for (kind, first) in [(ActionKind::Replace, true), (ActionKind::Recreate, true)] {
            assert!(weighed(kind, &protected, false, false, first), "{kind}");
            assert!(weighed(kind, &open, true, false, first), "{kind}");
            assert!(!weighed(kind, &open, false, false, first), "{kind}");
        }
        // The recreate of a pipe gone deletes nothing.
        assert!(!weighed(
            ActionKind::Recreate,
            &protected,
            true,
            false,
            false
        ));
        // Nothing else is destructive.
        for kind in [ActionKind::Create, ActionKind::Record, ActionKind::Forget] {
            assert!(!weighed(kind, &protected, true, false, false), "{kind}");
        }
    }
}
