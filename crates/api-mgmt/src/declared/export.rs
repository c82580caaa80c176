//! [`export`]: a pipe read from the server, as the create request that declares it.

use api_core::raw::support::schema::{SchemaSet, Shape};
use serde_json::{Map, Value};

use super::fingerprint::is_secret;

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
    let mut missing = Vec::new();
    let request = match schemas.schema("PipeCreateRequest") {
        Some(shape) => keep(pipe, shape, &mut String::new(), &mut missing)
            .unwrap_or_else(|| Value::Object(Map::new())),
        None => Value::Object(Map::new()),
    };
    Exported { request, missing }
}

/// What of `value` the request schema `shape` has; `None` when nothing is left.
fn keep(
    value: &Value,
    shape: Shape<'_>,
    path: &mut String,
    missing: &mut Vec<String>,
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
                if member.is_null()
                    || inner.server_default() == Some(member)
                    || same_number(member, inner.server_default())
                {
                    // Absent, or what the server fills in anyway.
                } else if is_secret(name, Some(&inner)) {
                    missing.push(path.clone());
                } else if let Some(value) = keep(member, inner, path, missing) {
                    kept.insert(name.clone(), value);
                }
                path.truncate(length);
            }
            required_request_only(&mut kept, shape, path, missing);
            (!kept.is_empty()).then_some(Value::Object(kept))
        }
        Value::Array(items) => {
            let inner = shape.items();
            let kept: Vec<Value> = items
                .iter()
                .enumerate()
                .filter_map(|(i, item)| {
                    let length = path.len();
                    path.push_str(&format!("[{i}]"));
                    let kept = match inner {
                        Some(inner) => keep(item, inner, path, missing),
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

/// Whether `value` is the number `default` (`2` and `2.0`).
fn same_number(value: &Value, default: Option<&Value>) -> bool {
    match (value.as_f64(), default.and_then(Value::as_f64)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
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
    }
}
