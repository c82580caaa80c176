//! `cloudctl pipe export`: a pipe read from the server as its pipe file.

use api_mgmt::declared::export;
use api_mgmt::redact::Redactor;
use api_mgmt::schema::SchemaSet;
use serde_json::{Map, Value};

/// A pipe as its file, and what the file cannot say.
#[derive(Debug)]
pub(crate) struct ExportedFile {
    /// The file's content: the create request, with `{env: VARIABLE}` where a value is read from
    /// the environment.
    pub file: Value,
    /// The variables of the members the answer cannot give (a secret, a request-only string the
    /// request needs).
    pub variables: Vec<String>,
    /// The members whose text holds a credential (a signature in a URL, a password in its user
    /// part, a key in a connection string), by path, with the variable the file reads each from
    /// whole: the answer gives them, but cloudctl shows no secret, so the file cannot hold them.
    pub credentials: Vec<(String, String)>,
    /// The request-only members the API never returns.
    pub request_only: Vec<String>,
}

/// The pipe file of `pipe` (the server's answer as JSON): the create request that declares it, as
/// [`export`] makes it, with each member the answer cannot give (a secret, a request-only string
/// the request needs) as `{env: VARIABLE}`, and so each string that holds a credential: never a
/// redaction marker where a value goes.
pub(crate) fn exported_file(pipe: &Value) -> ExportedFile {
    let exported = export(pipe);
    let mut request = exported.request;
    let name = request["name"].as_str().unwrap_or("pipe").to_string();
    let mut variables = Vec::new();
    for path in &exported.missing {
        let variable = variable_name(&name, path);
        set(&mut request, path, serde_json::json!({ "env": variable }));
        variables.push(variable);
    }
    let mut credentials = Vec::new();
    by_reference(&mut request, &name, &mut String::new(), &mut credentials);
    ExportedFile {
        file: request,
        variables,
        credentials,
        request_only: exported.request_only,
    }
}

/// Replaces each string of `value` that holds a credential (one the redaction rule would change)
/// by `{env: VARIABLE}`, naming it in `found` with its path.
fn by_reference(
    value: &mut Value,
    pipe: &str,
    path: &mut String,
    found: &mut Vec<(String, String)>,
) {
    match value {
        Value::String(text) if Redactor::new().text(text) != text.as_str() => {
            let variable = variable_name(pipe, path);
            *value = serde_json::json!({ "env": variable });
            found.push((path.clone(), variable));
        }
        Value::Object(members) => {
            for (member, inner) in members.iter_mut() {
                let length = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(member);
                by_reference(inner, pipe, path, found);
                path.truncate(length);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                let length = path.len();
                path.push_str(&format!("[{i}]"));
                by_reference(item, pipe, path, found);
                path.truncate(length);
            }
        }
        _ => {}
    }
}

/// `ORDERS_KAFKA_PASSWORD` for `source.kafka.credentials.password` of the pipe `orders`: the pipe's
/// name and the member's path, without `source` and without an object that only pairs a name with
/// its secret (`credentials`, `accessKey`), in upper case with underscores.
fn variable_name(pipe: &str, path: &str) -> String {
    let mut shape = SchemaSet::management().schema("PipeCreateRequest");
    let mut words = vec![shouty(pipe)];
    let segments: Vec<&str> = path.split('.').collect();
    for (i, segment) in segments.iter().enumerate() {
        shape = shape.and_then(|s| s.member(segment));
        let last = i + 1 == segments.len();
        let pair = shape.is_some_and(|s| s.members().count() == 2);
        if *segment == "source" || (!last && pair) {
            continue;
        }
        words.push(shouty(segment));
    }
    words.join("_")
}

/// `connectionString` -> `CONNECTION_STRING`; `orders-eu 2` -> `ORDERS_EU_2`.
fn shouty(text: &str) -> String {
    let mut out = String::new();
    let mut previous_lower = false;
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            if c.is_ascii_uppercase() && previous_lower {
                out.push('_');
            }
            previous_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
            out.push(c.to_ascii_uppercase());
        } else {
            if !out.ends_with('_') && !out.is_empty() {
                out.push('_');
            }
            previous_lower = false;
        }
    }
    out.trim_end_matches('_').to_string()
}

/// Sets the member at `path` (`a.b.c`, objects only) to `value`, making the objects on the way.
fn set(root: &mut Value, path: &str, value: Value) {
    let mut at = root;
    let segments: Vec<&str> = path.split('.').collect();
    for (i, segment) in segments.iter().enumerate() {
        if !at.is_object() {
            *at = Value::Object(Map::new());
        }
        let Value::Object(members) = at else {
            return;
        };
        if i + 1 == segments.len() {
            members.insert((*segment).to_string(), value);
            return;
        }
        at = members
            .entry((*segment).to_string())
            .or_insert_with(|| Value::Object(Map::new()));
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_string_that_holds_a_credential_is_read_from_the_environment_whole() {
        let exported = exported_file(&json!({
            "name": "backfill",
            "source": {"objectStorage": {
                "url": "https://acct.blob.core.windows.net/c/*.csv?sv=2024-05-04&sig=c2lnbmF0dXJl&se=2030",
                "queueUrl": "https://queue.example/q"}},
            "destination": {"database": "d", "table": "t", "managedTable": true, "columns": [{"name": "c", "type": "String"}]},
            "settings": {"kafka_sasl_jaas_config": "PlainLoginModule required username=\"u\" password=\"pw-1234\";"},
        }));
        let file = super::super::yaml::to_yaml(&exported.file);
        assert!(
            !file.contains("[REDACTED]") && !file.contains("c2lnbmF0dXJl"),
            "{file}"
        );
        assert!(
            file.contains("url: {env: BACKFILL_OBJECT_STORAGE_URL}"),
            "{file}"
        );
        assert!(file.contains("queueUrl: https://queue.example/q"), "{file}");
        assert_eq!(
            exported.credentials,
            [
                (
                    "settings.kafka_sasl_jaas_config".to_string(),
                    "BACKFILL_SETTINGS_KAFKA_SASL_JAAS_CONFIG".to_string()
                ),
                (
                    "source.objectStorage.url".to_string(),
                    "BACKFILL_OBJECT_STORAGE_URL".to_string()
                ),
            ]
        );
    }

    #[test]
    fn variables_are_named_for_the_pipe_and_member() {
        assert_eq!(
            variable_name("orders", "source.kafka.credentials.password"),
            "ORDERS_KAFKA_PASSWORD"
        );
        assert_eq!(
            variable_name("orders", "source.kafka.schemaRegistry.credentials.password"),
            "ORDERS_KAFKA_SCHEMA_REGISTRY_PASSWORD"
        );
        assert_eq!(
            variable_name("raw-events", "source.objectStorage.connectionString"),
            "RAW_EVENTS_OBJECT_STORAGE_CONNECTION_STRING"
        );
        assert_eq!(
            variable_name("clicks", "source.kinesis.accessKey.secretKey"),
            "CLICKS_KINESIS_SECRET_KEY"
        );
        assert_eq!(
            variable_name("crm", "source.postgres.credentials.username"),
            "CRM_POSTGRES_USERNAME"
        );
    }

    #[test]
    fn an_exported_file_has_no_secret_and_no_server_member() {
        let ExportedFile {
            file: request,
            variables,
            request_only,
            ..
        } = exported_file(&json!({
            "id": "0f9e8d7c-6b5a-4f3e-9d2c-1b0a9f8e7d6c", "state": "Running", "name": "raw events",
            "source": {"objectStorage": {"url": "https://bucket/*.csv", "connectionString": "AccountKey=c2VjcmV0"}},
            "destination": {"database": "d", "table": "t", "managedTable": true, "columns": [{"name": "c", "type": "String"}]},
            "fieldMappings": [{"sourceField": "c", "destinationField": "c"}],
            "scaling": {"replicas": 1, "concurrency": 1, "replicaCpuMillicores": 500, "replicaMemoryGb": 2},
            "settings": {"object_storage_concurrency": 4, "db_max_threads": 8},
        }));
        let file = super::super::yaml::to_yaml(&request);
        assert!(
            !file.contains("c2VjcmV0") && !file.contains("Running") && !file.contains("0f9e8d7c"),
            "{file}"
        );
        assert!(
            file.contains("connectionString: {env: RAW_EVENTS_OBJECT_STORAGE_CONNECTION_STRING}"),
            "{file}"
        );
        assert!(!file.contains("scaling"), "defaults are left out: {file}");
        assert!(file.contains("db_max_threads: 8"), "{file}");
        assert_eq!(variables, ["RAW_EVENTS_OBJECT_STORAGE_CONNECTION_STRING"]);
        assert_eq!(
            request_only,
            [
                "destination.roles",
                "source.objectStorage.accessKey",
                "source.validateSamples"
            ]
        );
    }
}
