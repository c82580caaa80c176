//! What differs between a declared pipe, the declaration it was recorded with, and the pipe the server
//! answers: each member by its JSON path, with no false difference.
//!
//! The rules come from the spec (through `api_raw::support::schema`) and the SDK's one
//! normalisation, never from a copy of the pipe's shape written here:
//! - only members of the create request are compared: a pipe's `state`, `createdAt`, and anything
//!   else the server adds are never a difference;
//! - a member the declaration leaves out is never compared with the server (the server fills it),
//!   and leaving out a member whose recorded value was its `x-server-default` changes nothing;
//! - a request-only member (the request schema has it, the response schema does not) and a secret
//!   are compared with the recorded declaration only (a secret by its fingerprint);
//! - a member the server leaves out of its answer is compared with the recorded declaration only;
//! - numbers compare by value (`3` is `3.0`; quantities arrive as numbers through the generated
//!   types, so `"500m"` is `500`); settings the SDK does not know compare as they are.

use api_core::raw::support::redact::{REDACTED, Redactor};
use api_core::raw::support::schema::Shape;
use serde::Serialize;
use serde_json::Value;

use api_core::raw::support::schema::is_secret;

use super::fingerprint::SECRET_PREFIX;

/// One member that differs, by its JSON path (`scaling.replicas`, `destination.columns[1].type`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Change {
    /// The member's path in the create request.
    pub path: String,
    /// What there is now: the server's value (a change on the server), else the recorded
    /// declaration's; `None` when absent (the server's default). A secret is `"[REDACTED]"`.
    pub old: Option<Value>,
    /// What the declaration says; `None` when it leaves the member out. A secret is `"[REDACTED]"`.
    pub new: Option<Value>,
    /// Where the difference comes from.
    pub cause: Cause,
}

/// Where a difference comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum Cause {
    /// The declaration changed since it was applied.
    Declaration,
    /// The pipe on the server differs from the declaration (changed out of band).
    Server,
}

/// Every difference of the declared form `new` from the `recorded` one and from the server's pipe
/// (its JSON, as the generated type writes it). `request` and `response` are the spec's schemas of
/// the create request and of the pipe.
pub(crate) fn changes(
    new: &Value,
    recorded: Option<&Value>,
    server: Option<&Value>,
    request: Option<Shape<'_>>,
    response: Option<Shape<'_>>,
) -> Vec<Change> {
    let mut out = Vec::new();
    if let Some(recorded) = recorded {
        declared(
            &mut String::new(),
            Some(new),
            Some(recorded),
            request,
            None,
            &mut out,
        );
    }
    if let Some(server) = server {
        drifted(
            &mut String::new(),
            new,
            server,
            request,
            response,
            None,
            &mut out,
        );
    }
    // One change per path: the server's value is what there is now.
    let mut merged: Vec<Change> = Vec::new();
    for change in out {
        match merged.iter_mut().find(|c| c.path == change.path) {
            Some(existing) if change.cause == Cause::Server => existing.old = change.old,
            Some(_) => {}
            None => merged.push(change),
        }
    }
    merged
}

/// The declaration against the recorded one.
fn declared(
    path: &mut String,
    new: Option<&Value>,
    old: Option<&Value>,
    shape: Option<Shape<'_>>,
    name: Option<&str>,
    out: &mut Vec<Change>,
) {
    let secret = name.is_some_and(|n| is_secret(n, shape.as_ref()));
    // An object on one side only is compared member by member with an empty one, so that each
    // member's own rules (its server default) apply.
    let empty = Value::Object(serde_json::Map::new());
    let (new, old) = match (present(new), present(old)) {
        (Some(n @ Value::Object(_)), None) => (Some(n), Some(&empty)),
        (None, Some(o @ Value::Object(_))) => (Some(&empty), Some(o)),
        other => other,
    };
    match (new, old) {
        (Some(Value::Object(n)), Some(Value::Object(o))) if !secret => {
            let mut names: Vec<&String> = n.keys().chain(o.keys()).collect();
            names.sort();
            names.dedup();
            for member in names {
                let length = enter(path, member);
                let inner = shape.and_then(|s| s.member(member));
                declared(path, n.get(member), o.get(member), inner, Some(member), out);
                path.truncate(length);
            }
        }
        (Some(Value::Array(n)), Some(Value::Array(o))) if n.len() == o.len() && !secret => {
            let inner = shape.and_then(|s| s.items());
            for (i, (n, o)) in n.iter().zip(o).enumerate() {
                let length = path.len();
                path.push_str(&format!("[{i}]"));
                declared(path, Some(n), Some(o), inner, name, out);
                path.truncate(length);
            }
        }
        _ => {
            let default = shape.as_ref().and_then(Shape::server_default);
            let same = match (present(new), present(old)) {
                (Some(n), Some(o)) => same_value(n, o),
                (None, None) => true,
                // Declaring the value the server fills in anyway, or no longer declaring it.
                (Some(v), None) | (None, Some(v)) => default.is_some_and(|d| same_value(v, d)),
            };
            if !same {
                out.push(Change {
                    path: path.clone(),
                    old: present(old).map(|v| shown(v, secret)),
                    new: present(new).map(|v| shown(v, secret)),
                    cause: Cause::Declaration,
                });
            }
        }
    }
}

/// The declaration against the server's pipe: only members both schemas have, only where the
/// declaration has them and the server shows them.
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

    fn diff(new: Value, recorded: Value, server: Value) -> Vec<String> {
        let schemas = SchemaSet::management();
        changes(
            &new,
            Some(&recorded),
            Some(&server),
            schemas.schema("PipeCreateRequest"),
            schemas.schema("Pipe"),
        )
        .into_iter()
        .map(|c| {
            let show =
                |v: &Option<Value>| v.as_ref().map_or("(absent)".to_string(), Value::to_string);
            format!(
                "{:?} {}: {} -> {}",
                c.cause,
                c.path,
                show(&c.old),
                show(&c.new)
            )
        })
        .collect()
    }

    fn declared_pipe() -> Value {
        json!({
            "name": "orders",
            "source": {"kafka": {"brokers": "b:9092", "topics": "orders",
                                 "credentials": {"username": "reader", "password": "argon2id:AAAA"}},
                       "validateSamples": true},
            "destination": {"database": "d", "table": "t", "managedTable": true, "roles": ["w"],
                            "columns": [{"name": "id", "type": "UInt64"}]},
            "fieldMappings": [{"sourceField": "id", "destinationField": "id"}],
            "scaling": {"replicas": 2, "replicaMemoryGb": 0.5},
            "settings": {"kafka_max_poll_records": 500},
        })
    }

    fn server_pipe() -> Value {
        json!({
            "id": "0f9e8d7c-6b5a-4f3e-9d2c-1b0a9f8e7d6c", "state": "Snapshot", "createdAt": "2026-01-01T00:00:00Z",
            "name": "orders",
            "source": {"kafka": {"brokers": "b:9092", "topics": "orders", "consumerGroup": "filled-in"}},
            "destination": {"database": "d", "table": "t", "managedTable": true,
                            "columns": [{"name": "id", "type": "UInt64", "extra": 1}]},
            "fieldMappings": [{"sourceField": "id", "destinationField": "id"}],
            "scaling": {"replicas": 2.0, "replicaMemoryGb": 0.50, "concurrency": 1, "replicaCpuMillicores": 500},
            "settings": {"kafka_max_poll_records": 500, "db_max_threads": 0},
        })
    }

    #[test]
    fn state_server_filled_members_request_only_members_and_number_forms_are_no_difference() {
        assert!(diff(declared_pipe(), declared_pipe(), server_pipe()).is_empty());
    }

    #[test]
    fn a_change_on_the_server_names_the_member_and_both_values() {
        let mut server = server_pipe();
        server["scaling"]["replicas"] = json!(3);
        server["source"]["kafka"]["topics"] = json!("orders,returns");
        server["settings"]["kafka_max_poll_records"] = json!(100);
        assert_eq!(
            diff(declared_pipe(), declared_pipe(), server),
            [
                "Server scaling.replicas: 3 -> 2",
                "Server settings.kafka_max_poll_records: 100 -> 500",
                "Server source.kafka.topics: \"orders,returns\" -> \"orders\"",
            ]
        );
    }

    #[test]
    fn a_changed_declaration_names_request_only_members_and_redacts_secrets() {
        let mut new = declared_pipe();
        new["source"]["kafka"]["credentials"]["password"] = json!("argon2id:BBBB");
        new["source"]["validateSamples"] = json!(false);
        new["destination"]["roles"] = json!(["w", "r"]);
        new["scaling"]["replicas"] = json!(4);
        assert_eq!(
            diff(new, declared_pipe(), server_pipe()),
            [
                "Declaration destination.roles: [\"w\"] -> [\"w\",\"r\"]",
                "Declaration scaling.replicas: 2 -> 4",
                "Declaration source.kafka.credentials.password: \"[REDACTED]\" -> \"[REDACTED]\"",
                "Declaration source.validateSamples: true -> false",
            ]
        );
    }

    #[test]
    fn leaving_out_a_member_at_its_server_default_changes_nothing_and_others_do() {
        let mut recorded = declared_pipe();
        recorded["scaling"]["concurrency"] = json!(1);
        recorded["source"]["kafka"]["consumerGroup"] = json!("filled-in");
        assert_eq!(
            diff(declared_pipe(), recorded.clone(), server_pipe()),
            ["Declaration source.kafka.consumerGroup: \"filled-in\" -> (absent)"]
        );
        let mut new = declared_pipe();
        new["settings"] = json!({"kafka_max_poll_records": 500, "db_max_threads": 0});
        new.as_object_mut().unwrap().remove("scaling");
        assert_eq!(
            diff(new, declared_pipe(), server_pipe()),
            [
                "Declaration scaling.replicaMemoryGb: 0.5 -> (absent)",
                "Declaration scaling.replicas: 2 -> (absent)",
            ],
            "a whole object left out is compared member by member; a declared default is no change"
        );
    }

    #[test]
    fn a_member_the_server_leaves_out_is_compared_with_the_record_only() {
        let mut server = server_pipe();
        server["destination"]
            .as_object_mut()
            .unwrap()
            .remove("table");
        server["scaling"]["replicas"] = Value::Null;
        assert!(diff(declared_pipe(), declared_pipe(), server).is_empty());
    }

    #[test]
    fn lists_compare_by_item_and_by_length() {
        let mut server = server_pipe();
        server["destination"]["columns"][0]["type"] = json!("String");
        assert_eq!(
            diff(declared_pipe(), declared_pipe(), server.clone()),
            ["Server destination.columns[0].type: \"String\" -> \"UInt64\""]
        );
        server["destination"]["columns"] = json!([]);
        assert_eq!(
            diff(declared_pipe(), declared_pipe(), server),
            ["Server destination.columns: [] -> [{\"name\":\"id\",\"type\":\"UInt64\"}]"]
        );
    }
}
