//! What differs between a declared pipe, the declaration it was recorded with, what the server
//! answered when the pipe was made (its observed form), and what the server answers now: each member
//! by its JSON path, with no false difference against a server that answers in its own forms.
//!
//! Two questions, asked apart:
//! - **a change in the file**: the file's declared form against the recorded declaration. A changed
//!   member the server already has as the file now says (a console edit the file accepts), or one the
//!   file no longer declares (the server keeps what it has), is recorded without touching the pipe
//!   ([`Effect::Record`]); any other needs the pipe replaced ([`Effect::Replace`]);
//! - **drift on the server**: the server's answer now against the recorded observed form, never
//!   against the file, so a server that rewrites a value the same way every time (`Decimal(18, 2)`
//!   for `Decimal(18,2)`) shows no difference. Drift of a member the file declares is replaced (unless
//!   the file says what the server now has); drift of a member the file leaves out is shown, not
//!   acted on ([`Effect::None`]).
//!
//! Only members of the create request are compared (a pipe's `state`, `createdAt`, and anything else
//! the server adds are never a difference); a member that the observed form or the answer lacks is
//! not compared; numbers compare by value (`3` is `3.0`); secrets compare by their fingerprints. A
//! state written before the observed form existed compares the file with the answer instead, as
//! version 0.1 did, until the next apply records the observed form.
//!
//! Arrays pair as the spec's `x-compare` says ([`pairing`](super::pairing)): columns by name and
//! field mappings by source field, whatever their order (a path names such an item by its key:
//! `destination.columns[name=id].type`), sets (endpoint ids) as sets. An answer that differs from
//! the observed form only as the server writes a value again ([`respell`](super::respell):
//! whitespace, the letter case of a type keyword or a value of a set, a set's order) is
//! [`Cause::Respelled`]: no change, and the new form is recorded.

use api_core::raw::support::redact::{REDACTED, Redactor};
use api_core::raw::support::schema::Shape;
use serde::Serialize;
use serde_json::Value;

use api_core::raw::support::schema::{Comparison, is_secret};

use super::fingerprint::SECRET_PREFIX;
use super::pairing::{SetOf, as_sets, pairs};
use super::respell::respelled;

/// One member that differs, by its JSON path (`scaling.replicas`, `destination.columns[1].type`).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Change {
    /// The member's path in the create request.
    pub path: String,
    /// What there is now: the server's value where it answers the member, else the recorded
    /// declaration's; `None` when absent. A secret is `"[REDACTED]"`.
    pub old: Option<Value>,
    /// What the file declares; `None` when it leaves the member out. A secret is `"[REDACTED]"`.
    pub new: Option<Value>,
    /// Where the difference comes from.
    pub cause: Cause,
    /// What the plan does about it.
    pub effect: Effect,
}

/// Where a difference comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum Cause {
    /// The file changed since it was applied.
    Declaration,
    /// The pipe on the server changed since it was made (out of band: a console edit).
    Server,
    /// The server writes the member another way than it did when the pipe was made (an upgrade
    /// that respelled a type, a set in another order): not a change. `old` is the recorded form,
    /// `new` the answer now, which the next apply records.
    Respelled,
}

/// What a plan does about a difference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum Effect {
    /// Nothing: drift of a member the file leaves out (shown, not acted on).
    None,
    /// The state records the file's declaration (and the server's form) without touching the pipe:
    /// the server already has what the file says, or the file no longer declares the member.
    Record,
    /// The pipe is replaced (the API has no update).
    Replace,
}

/// What the comparison of one recorded pipe is given.
pub(crate) struct Sides<'v> {
    /// The file's declared form (secrets as fingerprints under the record's salt).
    pub file: &'v Value,
    /// The recorded declaration, when the file's digest differs from it.
    pub recorded: Option<&'v Value>,
    /// The recorded observed form; `None` in a state written before it existed.
    pub observed: Option<&'v Value>,
    /// The server's answer now, in the observed form.
    pub now: &'v Value,
    /// The server's answer now, for a state without an observed form: in the stored form (as
    /// `now`), so that a string holding a credential compares by its fingerprint.
    pub answer: &'v Value,
}

/// Every difference of one recorded pipe (see the [module](self) docs). `request` and `response`
/// are the spec's schemas of the create request and of the pipe.
pub(crate) fn changes(
    sides: &Sides<'_>,
    request: Option<Shape<'_>>,
    response: Option<Shape<'_>>,
) -> Vec<Change> {
    compare(sides, request, response).0
}

/// [`changes`], and the observed form with the answer's respellings adopted when there are any
/// (what the next apply records for a pipe that needs nothing else).
pub(crate) fn compare(
    sides: &Sides<'_>,
    request: Option<Shape<'_>>,
    response: Option<Shape<'_>>,
) -> (Vec<Change>, Option<Value>) {
    let mut out = Vec::new();
    let mut adopted = None;
    if let Some(recorded) = sides.recorded {
        declared(
            &mut String::new(),
            Some(sides.file),
            Some(recorded),
            Some(sides.now),
            request,
            None,
            &mut out,
        );
    }
    match sides.observed {
        Some(observed) => {
            let mut respelled = observed.clone();
            let said = out.len();
            drift(
                &mut String::new(),
                observed,
                sides.now,
                Some(sides.file),
                request,
                &mut respelled,
                &mut out,
            );
            if out[said..].iter().any(|c| c.cause == Cause::Respelled) {
                adopted = Some(respelled);
            }
        }
        None => drifted(
            &mut String::new(),
            sides.file,
            sides.answer,
            request,
            response,
            None,
            &mut out,
        ),
    }
    // One change per path, the strongest effect winning. Both entries of a path show the server's
    // value there as `old` (the file's change takes it from the same answer as the drift does).
    let mut merged: Vec<Change> = Vec::new();
    for change in out {
        match merged.iter_mut().find(|c| c.path == change.path) {
            Some(existing) => existing.effect = existing.effect.max(change.effect),
            None => merged.push(change),
        }
    }
    (merged, adopted)
}

/// The file's form against the recorded declaration; `now` is the server's observed form there.
fn declared(
    path: &mut String,
    new: Option<&Value>,
    old: Option<&Value>,
    now: Option<&Value>,
    shape: Option<Shape<'_>>,
    name: Option<&str>,
    out: &mut Vec<Change>,
) {
    let secret = name.is_some_and(|n| is_secret(n, shape.as_ref()));
    let comparison = shape.map_or(Comparison::Exact, |s| s.comparison());
    // An object on one side only is compared member by member with an empty one.
    let empty = Value::Object(serde_json::Map::new());
    let (new, old) = match (present(new), present(old)) {
        (Some(n @ Value::Object(_)), None) => (Some(n), Some(&empty)),
        (None, Some(o @ Value::Object(_))) => (Some(&empty), Some(o)),
        other => other,
    };
    let now = present(now);
    // Arrays paired item by item, or by their key.
    let paired = match (new, old) {
        (Some(Value::Array(n)), Some(Value::Array(o))) if !secret => pairs(o, n, comparison),
        _ => None,
    };
    match (new, old) {
        (Some(Value::Object(n)), Some(Value::Object(o))) if !secret => {
            let mut names: Vec<&String> = n.keys().chain(o.keys()).collect();
            names.sort();
            names.dedup();
            for member in names {
                let length = enter(path, member);
                let inner = shape.and_then(|s| s.member(member));
                let there = now.and_then(|v| v.get(member));
                declared(
                    path,
                    n.get(member),
                    o.get(member),
                    there,
                    inner,
                    Some(member),
                    out,
                );
                path.truncate(length);
            }
        }
        (Some(Value::Array(n)), Some(Value::Array(o)))
            if !secret
                && comparison == Comparison::Set
                && as_sets(o, n, Comparison::Exact, same_value) != SetOf::Different => {}
        (Some(Value::Array(_)), Some(Value::Array(_))) if paired.is_some() => {
            let inner = shape.and_then(|s| s.items());
            for (at, o, n) in paired.into_iter().flatten() {
                let length = path.len();
                path.push_str(&at.segment());
                let there = at.find(now);
                match (n, o) {
                    (Some(n), Some(o)) => declared(path, Some(n), Some(o), there, inner, name, out),
                    // An item added to the file, or taken out of it: the array is still declared,
                    // so the pipe is replaced unless the server is as the file now says.
                    (n, _) => {
                        let effect = match (n, there) {
                            (Some(n), Some(there)) if covers(n, there) => Effect::Record,
                            (None, None) => Effect::Record,
                            _ => Effect::Replace,
                        };
                        out.push(Change {
                            path: path.clone(),
                            old: there.or(o).map(|v| shown(v, false)),
                            new: n.map(|v| shown(v, false)),
                            cause: Cause::Declaration,
                            effect,
                        });
                    }
                }
                path.truncate(length);
            }
        }
        _ => {
            let same = match (present(new), present(old)) {
                (Some(n), Some(o)) => same_value(n, o),
                (None, None) => true,
                _ => false,
            };
            if same {
                return;
            }
            let effect = match (present(new), now) {
                // No longer declared: the server keeps what it has.
                (None, _) => Effect::Record,
                // Declared as the server already has it.
                (Some(n), Some(there)) if covers(n, there) => Effect::Record,
                _ => Effect::Replace,
            };
            out.push(Change {
                path: path.clone(),
                old: now.or(present(old)).map(|v| shown(v, secret)),
                new: present(new).map(|v| shown(v, secret)),
                cause: Cause::Declaration,
                effect,
            });
        }
    }
}

/// The server's answer now against its recorded observed form: only members both have; `file` is
/// the file's form there, `shape` the create request's schema there. A respelling is written into
/// `adopted` (the observed form as the walk goes, at the same place).
fn drift(
    path: &mut String,
    observed: &Value,
    now: &Value,
    file: Option<&Value>,
    shape: Option<Shape<'_>>,
    adopted: &mut Value,
    out: &mut Vec<Change>,
) {
    let file = present(file);
    let comparison = shape.map_or(Comparison::Exact, |s| s.comparison());
    // Arrays paired item by item, or by their key.
    let paired = match (observed, now) {
        (Value::Array(o), Value::Array(n)) => pairs(o, n, comparison),
        _ => None,
    };
    match (observed, now) {
        (Value::Object(o), Value::Object(n)) => {
            for (member, was) in o {
                let Some(is) = n.get(member).filter(|v| !v.is_null()) else {
                    continue;
                };
                let Some(slot) = adopted.get_mut(member).filter(|_| !was.is_null()) else {
                    continue;
                };
                let length = enter(path, member);
                let inner = shape.and_then(|s| s.member(member));
                drift(
                    path,
                    was,
                    is,
                    file.and_then(|f| f.get(member)),
                    inner,
                    slot,
                    out,
                );
                path.truncate(length);
            }
        }
        (Value::Array(o), Value::Array(n)) if comparison == Comparison::Set => {
            let items = shape
                .and_then(|s| s.items())
                .map_or(Comparison::Exact, |s| s.comparison());
            match as_sets(o, n, items, same_value) {
                SetOf::Same => {}
                SetOf::Respelled => {
                    out.push(respelling(path, observed, now));
                    *adopted = now.clone();
                }
                SetOf::Different => out.push(drifted_to(path, now, file)),
            }
        }
        (Value::Array(_), Value::Array(_)) if paired.is_some() => {
            let items = shape.and_then(|s| s.items());
            for (at, was, is) in paired.into_iter().flatten() {
                let length = path.len();
                path.push_str(&at.segment());
                let declared = at.find(file);
                match (was, is) {
                    (Some(was), Some(is)) => {
                        if let Some(slot) = at.find_mut(adopted) {
                            drift(path, was, is, declared, items, slot, out);
                        }
                    }
                    // An item the server added, or one it no longer has: drift of the array.
                    (_, is) => out.push(Change {
                        path: path.clone(),
                        old: is.map(|v| shown(v, false)),
                        new: declared.map(|v| shown(v, false)),
                        cause: Cause::Server,
                        effect: match (file, declared, is) {
                            // The file leaves the array out: shown, not acted on.
                            (None, _, _) => Effect::None,
                            // The file says what the server now has.
                            (Some(_), Some(d), Some(is)) if covers(d, is) => Effect::Record,
                            (Some(_), None, None) => Effect::Record,
                            _ => Effect::Replace,
                        },
                    }),
                }
                path.truncate(length);
            }
        }
        _ if same_value(observed, now) => {}
        _ if respelled(observed, now, comparison) => {
            out.push(respelling(path, observed, now));
            *adopted = now.clone();
        }
        _ => out.push(drifted_to(path, now, file)),
    }
}

/// The server's value at `path` changed to `now`; `file` is the file's form there.
fn drifted_to(path: &str, now: &Value, file: Option<&Value>) -> Change {
    let effect = match file {
        None => Effect::None,
        Some(declared) if covers(declared, now) => Effect::Record,
        Some(_) => Effect::Replace,
    };
    Change {
        path: path.to_string(),
        old: Some(shown(now, false)),
        new: file.map(|v| shown(v, false)),
        cause: Cause::Server,
        effect,
    }
}

/// The server writes the value at `path` as `now` where it wrote `was`: no change.
fn respelling(path: &str, was: &Value, now: &Value) -> Change {
    Change {
        path: path.to_string(),
        old: Some(shown(was, false)),
        new: Some(shown(now, false)),
        cause: Cause::Respelled,
        effect: Effect::None,
    }
}

/// For a state without an observed form: the declaration against the server's pipe, only members
/// both schemas have, only where the declaration has them and the server shows them.
fn drifted(
    path: &mut String,
    new: &Value,
    server: &Value,
    request: Option<Shape<'_>>,
    response: Option<Shape<'_>>,
    name: Option<&str>,
    out: &mut Vec<Change>,
) {
    if name.is_some_and(|n| is_secret(n, request.as_ref())) || server.is_null() {
        return;
    }
    match (new, server) {
        (Value::Object(n), Value::Object(s)) => {
            for (member, value) in n {
                let request_only = request
                    .as_ref()
                    .is_some_and(|r| r.is_request_only(member, response.as_ref()));
                let Some(there) = s.get(member).filter(|_| !request_only) else {
                    continue;
                };
                let length = enter(path, member);
                let inner_request = request.and_then(|r| r.member(member));
                let inner_response = response.and_then(|r| r.member(member));
                drifted(
                    path,
                    value,
                    there,
                    inner_request,
                    inner_response,
                    Some(member),
                    out,
                );
                path.truncate(length);
            }
        }
        (Value::Array(n), Value::Array(s)) if n.len() == s.len() => {
            let (items_request, items_response) = (
                request.and_then(|r| r.items()),
                response.and_then(|r| r.items()),
            );
            for (i, (n, s)) in n.iter().zip(s).enumerate() {
                let length = path.len();
                path.push_str(&format!("[{i}]"));
                drifted(path, n, s, items_request, items_response, name, out);
                path.truncate(length);
            }
        }
        _ if !covers(new, server) => out.push(Change {
            path: path.clone(),
            old: Some(shown(server, false)),
            new: Some(shown(new, false)),
            cause: Cause::Server,
            effect: Effect::Replace,
        }),
        _ => {}
    }
}

/// Whether the server's `there` has everything the declared `declared` says (members the server
/// adds to an object are not a difference).
fn covers(declared: &Value, there: &Value) -> bool {
    match (declared, there) {
        (Value::Object(d), Value::Object(t)) => d
            .iter()
            .all(|(name, value)| t.get(name).is_none_or(|v| v.is_null() || covers(value, v))),
        (Value::Array(d), Value::Array(t)) => {
            d.len() == t.len() && d.iter().zip(t).all(|(d, t)| covers(d, t))
        }
        _ => same_value(declared, there),
    }
}

/// Two JSON values are the same value: numbers by value, the rest by structure.
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(_), Value::Number(_)) => api_core::raw::support::same_number(a, b),
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same_value(a, b))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(name, value)| b.get(name).is_some_and(|v| same_value(value, v)))
        }
        _ => a == b,
    }
}

/// A value that is there (`null` counts as absent).
fn present(value: Option<&Value>) -> Option<&Value> {
    value.filter(|v| !v.is_null())
}

/// A value as a plan shows it: a secret (or a fingerprint of one) as `"[REDACTED]"`, secret-named
/// members inside it too.
fn shown(value: &Value, secret: bool) -> Value {
    if secret {
        return Value::String(REDACTED.into());
    }
    let mut shown = value.clone();
    super::fingerprint::normalise(&mut shown);
    hide_fingerprints(&mut shown);
    Redactor::new().json(&mut shown);
    shown
}

fn hide_fingerprints(value: &mut Value) {
    match value {
        Value::String(text) if text.starts_with(SECRET_PREFIX) => *text = REDACTED.into(),
        Value::Array(items) => items.iter_mut().for_each(hide_fingerprints),
        Value::Object(members) => members.values_mut().for_each(hide_fingerprints),
        _ => {}
    }
}

/// Appends `.member` (or `member` at the top) to `path`; answers the length to cut back to.
fn enter(path: &mut String, member: &str) -> usize {
    let length = path.len();
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(member);
    length
}

#[cfg(test)]
mod tests {
    use api_core::raw::support::schema::SchemaSet;
    use serde_json::json;

    use super::*;

    /// The changes of `file` recorded as `recorded`, observed as `observed` (`None`: a state of
    /// version 1), with the server answering `server` (its observed form is itself here: these
    /// tests hold no secret the server answers).
    fn diff(file: Value, recorded: Value, observed: Option<Value>, server: Value) -> Vec<String> {
        compared_with(file, recorded, observed, server).0
    }

    /// The changes of the unchanged `file` whose pipe was observed as `observed` (an observed form)
    /// and answers `server` now, and the observed form with its respellings adopted.
    fn compared(file: Value, observed: Value, server: Value) -> (Vec<String>, Option<Value>) {
        compared_with(file.clone(), file, Some(observed), server)
    }

    fn compared_with(
        file: Value,
        recorded: Value,
        observed: Option<Value>,
        server: Value,
    ) -> (Vec<String>, Option<Value>) {
        let schemas = SchemaSet::management();
        let request = schemas.schema("PipeCreateRequest");
        let now = super::super::fingerprint::observed_form(
            &server,
            &super::super::Fingerprint::fresh(),
            &mut super::super::fingerprint::Memory::default(),
        )
        .unwrap();
        let sides = Sides {
            file: &file,
            recorded: (file != recorded).then_some(&recorded),
            observed: observed.as_ref(),
            now: &now,
            answer: &server,
        };
        let (changes, adopted) = compare(&sides, request, schemas.schema("Pipe"));
        let shown = changes
            .into_iter()
            .map(|c| {
                let show =
                    |v: &Option<Value>| v.as_ref().map_or("(absent)".to_string(), Value::to_string);
                format!(
                    "{:?} {:?} {}: {} -> {}",
                    c.effect,
                    c.cause,
                    c.path,
                    show(&c.old),
                    show(&c.new)
                )
            })
            .collect();
        (shown, adopted)
    }

    fn declared_pipe() -> Value {
        json!({
            "name": "orders",
            "source": {"kafka": {"brokers": "b:9092", "topics": "a, b",
                                 "credentials": {"username": "reader", "password": "argon2id:AAAA"}},
                       "validateSamples": true},
            "destination": {"database": "d", "table": "t", "managedTable": true, "roles": ["w"],
                            "columns": [{"name": "id", "type": "Decimal(18,2)"}]},
            "fieldMappings": [{"sourceField": "id", "destinationField": "id"}],
            "scaling": {"replicas": 2, "replicaMemoryGb": 0.5},
            "settings": {"kafka_max_poll_records": 500},
        })
    }

    /// The pipe as a database-backed server answers it: its own forms, its own defaults.
    fn server_pipe() -> Value {
        json!({
            "id": "0f9e8d7c-6b5a-4f3e-9d2c-1b0a9f8e7d6c", "state": "Snapshot", "createdAt": "2026-01-01T00:00:00Z",
            "name": "orders",
            "source": {"kafka": {"brokers": "b:9092", "topics": "a,b", "consumerGroup": "filled-in"}},
            "destination": {"database": "d", "table": "t", "managedTable": true,
                            "columns": [{"name": "id", "type": "Decimal(18, 2)", "extra": 1}]},
            "fieldMappings": [{"sourceField": "id", "destinationField": "id"}],
            "scaling": {"replicas": 2.0, "replicaMemoryGb": 0.50, "concurrency": 1, "replicaCpuMillicores": 500},
            "settings": {"kafka_max_poll_records": 500, "db_max_threads": 0},
        })
    }

    fn observed() -> Option<Value> {
        let observed = super::super::fingerprint::observed_form(
            &server_pipe(),
            &super::super::Fingerprint::fresh(),
            &mut super::super::fingerprint::Memory::default(),
        )
        .unwrap();
        Some(observed)
    }

    #[test]
    fn a_server_that_rewrites_values_its_own_way_shows_no_difference() {
        assert_eq!(
            diff(declared_pipe(), declared_pipe(), observed(), server_pipe()),
            Vec::<String>::new()
        );
    }

    #[test]
    fn without_an_observed_form_the_file_is_compared_with_the_answer_as_version_1_did() {
        let mut echoing = server_pipe();
        echoing["source"]["kafka"]["topics"] = json!("a, b");
        echoing["destination"]["columns"][0]["type"] = json!("Decimal(18,2)");
        assert!(diff(declared_pipe(), declared_pipe(), None, echoing).is_empty());
        assert_eq!(
            diff(declared_pipe(), declared_pipe(), None, server_pipe()),
            [
                "Replace Server destination.columns[0].type: \"Decimal(18, 2)\" -> \"Decimal(18,2)\"",
                "Replace Server source.kafka.topics: \"a,b\" -> \"a, b\"",
            ]
        );
    }

    #[test]
    fn drift_of_a_declared_member_is_replaced_and_of_an_undeclared_one_shown() {
        let mut server = server_pipe();
        server["scaling"]["replicas"] = json!(3);
        server["source"]["kafka"]["consumerGroup"] = json!("changed-in-console");
        server["settings"]["db_max_threads"] = json!(4);
        assert_eq!(
            diff(declared_pipe(), declared_pipe(), observed(), server),
            [
                "Replace Server scaling.replicas: 3 -> 2",
                "None Server settings.db_max_threads: 4 -> (absent)",
                "None Server source.kafka.consumerGroup: \"changed-in-console\" -> (absent)",
            ]
        );
    }

    #[test]
    fn a_file_edited_to_what_the_server_has_is_recorded_not_replaced() {
        let mut server = server_pipe();
        server["scaling"]["replicas"] = json!(3);
        let mut file = declared_pipe();
        file["scaling"]["replicas"] = json!(3);
        assert_eq!(
            diff(file, declared_pipe(), observed(), server),
            ["Record Declaration scaling.replicas: 3 -> 3"]
        );
    }

    #[test]
    fn declaring_what_the_server_filled_in_or_leaving_a_member_out_is_recorded() {
        let mut file = declared_pipe();
        file["scaling"]["concurrency"] = json!(1);
        file["scaling"]
            .as_object_mut()
            .unwrap()
            .remove("replicaMemoryGb");
        assert_eq!(
            diff(file, declared_pipe(), observed(), server_pipe()),
            [
                "Record Declaration scaling.concurrency: 1 -> 1",
                "Record Declaration scaling.replicaMemoryGb: 0.5 -> (absent)",
            ]
        );
    }

    #[test]
    fn a_changed_file_the_server_does_not_have_is_replaced_and_secrets_are_redacted() {
        let mut file = declared_pipe();
        file["source"]["kafka"]["credentials"]["password"] = json!("argon2id:BBBB");
        file["source"]["validateSamples"] = json!(false);
        file["destination"]["roles"] = json!(["w", "r"]);
        file["scaling"]["replicas"] = json!(4);
        file["scaling"]["concurrency"] = json!(5);
        assert_eq!(
            diff(file, declared_pipe(), observed(), server_pipe()),
            [
                "Replace Declaration destination.roles: [\"w\"] -> [\"w\",\"r\"]",
                "Replace Declaration scaling.concurrency: 1 -> 5",
                "Replace Declaration scaling.replicas: 2 -> 4",
                "Replace Declaration source.kafka.credentials.password: \"[REDACTED]\" -> \"[REDACTED]\"",
                "Replace Declaration source.validateSamples: true -> false",
            ]
        );
    }

    #[test]
    fn a_member_the_server_or_the_observed_form_lacks_is_not_compared() {
        let mut server = server_pipe();
        server["destination"]
            .as_object_mut()
            .unwrap()
            .remove("table");
        server["scaling"]["replicas"] = Value::Null;
        server["settings"]["new_server_setting"] = json!(7);
        assert!(diff(declared_pipe(), declared_pipe(), observed(), server).is_empty());
    }

    #[test]
    fn keyed_lists_compare_by_their_key_and_name_the_item() {
        let mut server = server_pipe();
        server["destination"]["columns"][0]["type"] = json!("String");
        assert_eq!(
            diff(declared_pipe(), declared_pipe(), observed(), server.clone()),
            ["Replace Server destination.columns[name=id].type: \"String\" -> \"Decimal(18,2)\""]
        );
        // The column removed on the server: a replace naming it.
        server["destination"]["columns"] = json!([]);
        assert_eq!(
            diff(declared_pipe(), declared_pipe(), observed(), server.clone()),
            [
                "Replace Server destination.columns[name=id]: (absent) -> {\"name\":\"id\",\"type\":\"Decimal(18,2)\"}"
            ]
        );
        // A column the server added that the file does not declare: replaced too.
        server["destination"]["columns"] = json!([
            {"name": "extra", "type": "String"},
            {"name": "id", "type": "Decimal(18, 2)"},
        ]);
        assert_eq!(
            diff(declared_pipe(), declared_pipe(), observed(), server),
            [
                "Replace Server destination.columns[name=extra]: {\"name\":\"extra\",\"type\":\"String\"} -> (absent)"
            ]
        );
    }

    #[test]
    fn a_reordered_keyed_list_or_set_and_a_respelled_value_are_no_change() {
        let mut recorded_server = server_pipe();
        recorded_server["destination"]["columns"] = json!([
            {"name": "id", "type": "Decimal(18, 2)"},
            {"name": "at", "type": "DateTime64(3, 'UTC')"},
        ]);
        recorded_server["source"]["kafka"]["reversePrivateEndpointIds"] = json!([
            "0f9e8d7c-6b5a-4f3e-9d2c-1b0a9f8e7d6c",
            "1a2b3c4d-6b5a-4f3e-9d2c-1b0a9f8e7d6c"
        ]);
        let observed = super::super::fingerprint::observed_form(
            &recorded_server,
            &super::super::Fingerprint::fresh(),
            &mut super::super::fingerprint::Memory::default(),
        )
        .unwrap();
        let mut now = recorded_server.clone();
        now["destination"]["columns"] = json!([
            {"name": "at", "type": "datetime64(3,'UTC')"},
            {"name": "id", "type": "Decimal(18,2)"},
        ]);
        now["source"]["kafka"]["reversePrivateEndpointIds"] = json!([
            "1A2B3C4D-6B5A-4F3E-9D2C-1B0A9F8E7D6C",
            "0f9e8d7c-6b5a-4f3e-9d2c-1b0a9f8e7d6c"
        ]);
        let (shown, adopted) = compared(declared_pipe(), observed.clone(), now.clone());
        assert_eq!(
            shown,
            [
                "None Respelled destination.columns[name=id].type: \"Decimal(18, 2)\" -> \"Decimal(18,2)\"",
                "None Respelled destination.columns[name=at].type: \"DateTime64(3, 'UTC')\" -> \"datetime64(3,'UTC')\"",
                "None Respelled source.kafka.reversePrivateEndpointIds: [\"0f9e8d7c-6b5a-4f3e-9d2c-1b0a9f8e7d6c\",\"1a2b3c4d-6b5a-4f3e-9d2c-1b0a9f8e7d6c\"] -> [\"1A2B3C4D-6B5A-4F3E-9D2C-1B0A9F8E7D6C\",\"0f9e8d7c-6b5a-4f3e-9d2c-1b0a9f8e7d6c\"]",
            ]
        );
        // The new forms are adopted where they stand (the observed order of the columns kept).
        let adopted = adopted.expect("the respellings adopted");
        assert_eq!(
            adopted["destination"]["columns"][0]["type"],
            "Decimal(18,2)"
        );
        assert_eq!(
            adopted["destination"]["columns"][1]["type"],
            "datetime64(3,'UTC')"
        );
        // Against the adopted form, the same answer is no difference at all.
        assert!(compared(declared_pipe(), adopted, now.clone()).0.is_empty());
        // A table's name in another letter case is a change, not a respelling.
        now["destination"]["table"] = json!("ORDERS");
        let (shown, _) = compared(declared_pipe(), observed, now);
        assert!(
            shown
                .iter()
                .any(|c| c.starts_with("Replace Server destination.table")),
            "{shown:?}"
        );
    }

    /// The changes of a legacy record (no observed form): the file against the answer.
    fn legacy(file: Value, server: Value) -> Vec<String> {
        diff(file.clone(), file, None, server)
    }

    #[test]
    fn a_changed_list_in_the_file_is_named_by_item() {
        let mut file = declared_pipe();
        file["destination"]["columns"][0]["type"] = json!("String");
        assert_eq!(
            diff(file, declared_pipe(), observed(), server_pipe()),
            [
                "Replace Declaration destination.columns[name=id].type: \"Decimal(18, 2)\" -> \"String\""
            ]
        );
    }

    #[test]
    fn a_member_null_on_both_sides_is_no_change() {
        let mut file = declared_pipe();
        file["settings"]["future_setting"] = Value::Null;
        assert!(diff(file, declared_pipe(), observed(), server_pipe()).is_empty());
    }

    #[test]
    fn a_file_that_adds_what_the_server_has_with_more_is_recorded() {
        // The server has both columns, each with a member of its own.
        let mut server = server_pipe();
        server["destination"]["columns"] = json!([
            {"name": "id", "type": "Decimal(18, 2)", "codec": "ZSTD"},
            {"name": "at", "type": "DateTime", "codec": "ZSTD"},
        ]);
        let mut file = declared_pipe();
        file["destination"]["columns"] = json!([
            {"name": "id", "type": "Decimal(18, 2)"},
            {"name": "at", "type": "DateTime"},
        ]);
        let mut recorded = declared_pipe();
        recorded["destination"]["columns"] = json!([{"name": "id", "type": "Decimal(18, 2)"}]);
        let changes = diff(file, recorded, observed(), server);
        assert_eq!(changes.len(), 1, "{changes:?}");
        assert!(
            changes[0].starts_with("Record Declaration destination.columns[name=at]: "),
            "{changes:?}"
        );
    }

    #[test]
    fn a_legacy_record_compares_neither_secrets_nor_what_the_server_leaves_out() {
        let mut file = declared_pipe();
        file["source"] =
            json!({"objectStorage": {"url": "https://b/x", "connectionString": "argon2id:AAAA"}});
        let mut server = server_pipe();
        server["source"] =
            json!({"objectStorage": {"url": "https://b/x", "connectionString": "AccountKey=k"}});
        server["scaling"]["replicas"] = Value::Null;
        let mut echoing = server.clone();
        echoing["source"]["kafka"] = Value::Null;
        echoing["destination"]["columns"][0]["type"] = json!("Decimal(18,2)");
        assert!(legacy(file, echoing).is_empty());
    }

    #[test]
    fn a_legacy_record_compares_lists_by_length() {
        let mut server = server_pipe();
        server["source"]["kafka"]["topics"] = json!("a, b");
        server["destination"]["columns"] = json!([]);
        assert_eq!(
            legacy(declared_pipe(), server),
            [
                "Replace Server destination.columns: [] -> [{\"name\":\"id\",\"type\":\"Decimal(18,2)\"}]"
            ]
        );
    }

    #[test]
    fn values_are_the_same_by_number_value_and_by_structure() {
        assert!(same_value(
            &json!([3, {"a": 0.5}]),
            &json!([3.0, {"a": 0.5}])
        ));
        assert!(same_value(&json!({"a": 1}), &json!({"a": 1.0})));
        assert!(!same_value(&json!({"a": 1}), &json!({"a": 1, "b": 2})));
        assert!(!same_value(
            &json!({"a": 1, "b": 2}),
            &json!({"a": 1, "c": 2})
        ));
        assert!(!same_value(&json!({"a": 1}), &json!({"a": 2})));
        assert!(!same_value(&json!([1, 2]), &json!([1])));
        assert!(!same_value(&json!([1, 2]), &json!([1, 3])));
    }

    #[test]
    fn the_server_covers_what_it_has_with_members_of_its_own() {
        assert!(covers(&json!({"a": 1}), &json!({"a": 1.0, "b": 2})));
        assert!(covers(&json!([{"a": 1}]), &json!([{"a": 1, "b": 2}])));
        assert!(
            covers(&json!({"a": 1}), &json!({"a": null})),
            "null: not shown"
        );
        assert!(covers(&json!({"a": 1}), &json!({})), "absent: not shown");
        assert!(!covers(&json!({"a": 1}), &json!({"a": 2})));
        assert!(!covers(&json!([1, 2]), &json!([1])));
        assert!(!covers(&json!([{"a": 1}]), &json!([{"a": 2}])));
    }

    #[test]
    fn a_fingerprint_is_shown_as_redacted_wherever_it_stands() {
        let mut file = declared_pipe();
        file["source"]["kafka"]["schemaRegistry"] = json!({"url": "argon2id:BBBB"});
        file["destination"]["columns"] =
            json!([{"name": "id", "type": "argon2id:CCCC"}, {"name": "x"}]);
        let mut recorded = declared_pipe();
        recorded["source"]["kafka"]["schemaRegistry"] = json!({"url": "argon2id:AAAA"});
        let shown = diff(file, recorded, observed(), server_pipe()).join("\n");
        assert!(!shown.contains("argon2id:"), "{shown}");
        assert!(
            shown.contains("source.kafka.schemaRegistry.url: \"[REDACTED]\" -> \"[REDACTED]\""),
            "{shown}"
        );
        assert!(
            shown.contains(
                "destination.columns[name=id].type: \"Decimal(18, 2)\" -> \"[REDACTED]\""
            ),
            "{shown}"
        );
    }
}
