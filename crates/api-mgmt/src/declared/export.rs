//! [`export`]: a pipe read from the server, as the create request that declares it.

use api_core::raw::support::same_number;
use api_core::raw::support::schema::{SchemaSet, Shape};
use serde_json::{Map, Value};

use api_core::raw::support::schema::is_secret;

/// A pipe as a declaration: the create request that makes it, and what the answer cannot tell.
#[derive(Debug, Clone, PartialEq)]
pub struct Exported {
    /// The create request: the members of the request schema the server answered, without the
    /// ones it filled with their `x-server-default`, without any secret.
    pub request: Value,
    /// The members the request needs that the answer cannot give, by JSON path: each secret the
    /// server answered (its value is left out), and each request-only string the request schema
    /// requires (a Postgres source's `credentials`). A file gives them from the environment.
    pub missing: Vec<String>,
    /// The request-only members the answer cannot tell (the API never returns them) that the
    /// request does not require, by JSON path: `source.kafka.credentials`, `destination.roles`, ...
    /// The pipe may have been created with them.
    pub request_only: Vec<String>,
}

/// The create request that declares `pipe` (the server's answer as JSON, as the generated `Pipe`
/// type writes it). What the server adds (`id`, `state`, times) is left out, and so is every member
/// equal to its `x-server-default`, so that a declaration made from it leaves those to the server.
///
/// ```
/// use api_mgmt::declared::export;
///
/// let exported = export(&serde_json::json!({
///     "id": "0f9e8d7c-6b5a-4f3e-9d2c-1b0a9f8e7d6c", "state": "Running", "name": "backfill",
///     "source": {"objectStorage": {"url": "https://bucket/*.csv", "connectionString": "AccountKey=..."}},
///     "destination": {"database": "d", "table": "t", "managedTable": true, "columns": [{"name": "c", "type": "String"}]},
///     "scaling": {"replicas": 1, "replicaCpuMillicores": 500},
/// }));
/// assert_eq!(exported.request["scaling"], serde_json::Value::Null, "all defaults: left out");
/// assert_eq!(exported.request["source"]["objectStorage"].get("connectionString"), None);
/// assert_eq!(exported.missing, ["source.objectStorage.connectionString"]);
/// ```
pub fn export(pipe: &Value) -> Exported {
    let schemas = SchemaSet::management();
    let mut found = Found::default();
    let request = match schemas.schema("PipeCreateRequest") {
        Some(shape) => keep(
            pipe,
            shape,
            schemas.schema("Pipe"),
            &mut String::new(),
            &mut found,
        )
        .unwrap_or_else(|| Value::Object(Map::new())),
        None => Value::Object(Map::new()),
    };
    Exported {
        request,
        missing: found.missing,
        request_only: found.request_only,
    }
}

/// What an export finds the answer cannot give.
#[derive(Default)]
struct Found {
    missing: Vec<String>,
    request_only: Vec<String>,
}

/// What of `value` the request schema `shape` has; `None` when nothing is left.
fn keep(
    value: &Value,
    shape: Shape<'_>,
    response: Option<Shape<'_>>,
    path: &mut String,
    found: &mut Found,
) -> Option<Value> {
    match value {
        Value::Object(members) => {
            let mut kept = Map::new();
            for (name, member) in members {
                let Some(inner) = shape.member(name) else {
                    continue;
                };
                let length = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(name);
                let default = inner.server_default();
                if member.is_null()
                    || default == Some(member)
                    || default.is_some_and(|d| same_number(member, d))
                {
                    // Absent, or what the server fills in anyway.
                } else if is_secret(name, Some(&inner)) {
                    found.missing.push(path.clone());
                } else if let Some(value) = keep(
                    member,
                    inner,
                    response.and_then(|r| r.member(name)),
                    path,
                    found,
                ) {
                    kept.insert(name.clone(), value);
                }
                path.truncate(length);
            }
            required_request_only(&mut kept, shape, path, &mut found.missing);
            for name in shape.members() {
                if shape.is_request_only(name, response.as_ref()) && !kept.contains_key(name) {
                    found.request_only.push(if path.is_empty() {
                        name.to_string()
                    } else {
                        format!("{path}.{name}")
                    });
                }
            }
            (!kept.is_empty()).then_some(Value::Object(kept))
        }
        Value::Array(items) => {
            let (inner, answered) = (shape.items(), response.and_then(|r| r.items()));
            let kept: Vec<Value> = items
                .iter()
                .enumerate()
                .filter_map(|(i, item)| {
                    let length = path.len();
                    path.push_str(&format!("[{i}]"));
                    let kept = match inner {
                        Some(inner) => keep(item, inner, answered, path, found),
                        None => Some(item.clone()),
                    };
                    path.truncate(length);
                    kept
                })
                .collect();
            (!kept.is_empty()).then_some(Value::Array(kept))
        }
        other => Some(other.clone()),
    }
}

/// The members the request schema requires that no answer has (request-only): their strings, at
/// any depth, are missing.
fn required_request_only(
    kept: &mut Map<String, Value>,
    shape: Shape<'_>,
    path: &str,
    missing: &mut Vec<String>,
) {
    for name in shape.members() {
        if !shape.requires(name) || kept.contains_key(name) {
            continue;
        }
        let Some(inner) = shape.member(name) else {
            continue;
        };
        let at = if path.is_empty() {
            name.to_string()
        } else {
            format!("{path}.{name}")
        };
        if inner.members().next().is_some() {
            let mut created = Map::new();
            required_request_only(&mut created, inner, &at, missing);
            kept.insert(name.to_string(), Value::Object(created));
        } else {
            missing.push(at);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn server_members_and_defaults_go_and_request_only_requirements_are_named() {
        let exported = export(&json!({
            "id": "0f9e8d7c-6b5a-4f3e-9d2c-1b0a9f8e7d6c", "serviceId": "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d",
            "state": "Snapshot", "createdAt": "2026-01-01T00:00:00Z", "name": "crm",
            "source": {"postgres": {"host": "db", "port": 5432, "database": "crm",
                                    "tableMappings": [{"sourceSchemaName": "public", "sourceTable": "t", "targetTable": "t"}]}},
            "destination": {"database": "crm"},
            "fieldMappings": [],
            "scaling": {"replicas": 2, "concurrency": 1, "replicaCpuMillicores": 500, "replicaMemoryGb": 2.0},
            "settings": {"streaming_max_insert_wait_ms": 5000, "db_max_threads": 8, "future_setting": "x"},
        }));
        assert_eq!(
            exported.request,
            json!({
                "name": "crm",
                "source": {"postgres": {"host": "db", "port": 5432, "database": "crm",
                                        "tableMappings": [{"sourceSchemaName": "public", "sourceTable": "t", "targetTable": "t"}],
                                        "credentials": {}}},
                "destination": {"database": "crm"},
                "scaling": {"replicas": 2},
                "settings": {"db_max_threads": 8, "future_setting": "x"},
            })
        );
        assert_eq!(
            exported.missing,
            [
                "source.postgres.credentials.password",
                "source.postgres.credentials.username"
            ]
        );
        assert_eq!(
            exported.request_only,
            ["destination.roles", "source.validateSamples"]
        );
    }
}
