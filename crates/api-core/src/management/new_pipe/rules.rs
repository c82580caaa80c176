//! The rules of a pipe create request that the spec's schema cannot say (its `x-required-rules`, and
//! what the SDK refuses before sending), checked on the request's JSON. The schema's own rules (types,
//! bounds, patterns, required members) are checked by the spec's validator first; both run for every
//! request, whether it comes from the builder, from JSON or from a generated request.

use serde_json::{Map, Value};

use crate::error::Problems;

/// The source kinds, as the request names them.
pub(crate) const KINDS: [&str; 4] = ["kafka", "objectStorage", "kinesis", "postgres"];

/// Checks `request` (the create request's JSON) against every rule beyond the schema.
pub(crate) fn check(request: &Value, p: &mut Problems) {
    let source = request.get("source").and_then(Value::as_object);
    let kinds: Vec<&str> = KINDS
        .into_iter()
        .filter(|kind| {
            source
                .and_then(|s| s.get(*kind))
                .is_some_and(|v| !v.is_null())
        })
        .collect();
    match kinds.as_slice() {
        [] => p.add(
            "source",
            "required: choose a kafka, objectStorage, kinesis or postgres source",
        ),
        [_] => {}
        several => p.add(
            "source",
            format!(
                "exactly one source kind is allowed ({}), got {}",
                KINDS.join(", "),
                several.join(" and ")
            ),
        ),
    }
    if let Some(source) = source {
        for kind in &kinds {
            let at = format!("source.{kind}");
            let Some(member) = source.get(*kind).and_then(Value::as_object) else {
                continue;
            };
            match *kind {
                "kafka" => kafka(member, &at, p),
                "objectStorage" => object_storage(member, &at, p),
                "kinesis" => kinesis(member, &at, p),
                _ => postgres(member, &at, p),
            }
        }
    }
    let needs_table = kinds.len() == 1 && kinds[0] != "postgres";
    let columns = destination(request.get("destination"), needs_table, p);
    field_mappings(request.get("fieldMappings"), &columns, p);
}

/// Records a problem when the member `name` is present but blank; absent, when `required`.
fn non_blank(object: &Map<String, Value>, name: &str, at: &str, required: bool, p: &mut Problems) {
    match object.get(name) {
        Some(Value::String(text)) if text.trim().is_empty() => {
            p.add(format!("{at}.{name}"), "required; must not be empty");
        }
        None | Some(Value::Null) if required => {
            p.add(format!("{at}.{name}"), "required; must not be empty");
        }
        _ => {}
    }
}

/// A secret must not be empty (blank is allowed: a password may be spaces).
fn non_empty_secret(object: &Map<String, Value>, name: &str, at: &str, p: &mut Problems) {
    if object.get(name).and_then(Value::as_str) == Some("") {
        p.add(format!("{at}.{name}"), "required; must not be empty");
    }
}

/// `{username, password}` or `{accessKeyId, secretKey}` at `at`, when present.
fn key_pair(
    parent: &Map<String, Value>,
    member: &str,
    names: [&str; 2],
    at: &str,
    p: &mut Problems,
) {
    let Some(pair) = parent.get(member).and_then(Value::as_object) else {
        return;
    };
    let at = format!("{at}.{member}");
    non_blank(pair, names[0], &at, false, p);
    non_empty_secret(pair, names[1], &at, p);
}

fn kafka(kafka: &Map<String, Value>, at: &str, p: &mut Problems) {
    non_blank(kafka, "brokers", at, true, p);
    non_blank(kafka, "topics", at, true, p);
    if let Some(registry) = kafka.get("schemaRegistry").and_then(Value::as_object) {
        let registry_at = format!("{at}.schemaRegistry");
        non_blank(registry, "url", &registry_at, true, p);
        key_pair(
            registry,
            "credentials",
            ["username", "password"],
            &registry_at,
            p,
        );
    }
    key_pair(kafka, "credentials", ["username", "password"], at, p);
    // The pattern (checked by the schema) allows a month 13; the time must exist.
    let timestamp = kafka
        .get("offset")
        .and_then(|offset| offset.get("timestamp"))
        .and_then(Value::as_str);
    if let Some(text) = timestamp
        && api_raw::support::OffsetTimestamp::matches(text)
        && chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M").is_err()
    {
        p.add(
            format!("{at}.offset.timestamp"),
            "is not a time that exists (YYYY-MM-DDTHH:MM, UTC)",
        );
    }
}

fn object_storage(storage: &Map<String, Value>, at: &str, p: &mut Problems) {
    let present = |name: &str| {
        storage
            .get(name)
            .and_then(Value::as_str)
            .is_some_and(|t| !t.trim().is_empty())
    };
    let has_location =
        present("url") || (present("connectionString") && present("azureContainerName"));
    if !has_location {
        p.add(
            format!("{at}.url"),
            "required: a URL, or a connection string with a container name",
        );
    }
    key_pair(storage, "accessKey", ["accessKeyId", "secretKey"], at, p);
}

fn kinesis(kinesis: &Map<String, Value>, at: &str, p: &mut Problems) {
    non_blank(kinesis, "streamName", at, true, p);
    non_blank(kinesis, "region", at, true, p);
    if let Some(seconds) = kinesis.get("timestamp").and_then(Value::as_i64)
        && seconds < 0
    {
        p.add(
            format!("{at}.timestamp"),
            format!("must be seconds since the Unix epoch, got {seconds}"),
        );
    }
    key_pair(kinesis, "accessKey", ["accessKeyId", "secretKey"], at, p);
}

fn postgres(postgres: &Map<String, Value>, at: &str, p: &mut Problems) {
    non_blank(postgres, "host", at, false, p);
    non_blank(postgres, "database", at, false, p);
    key_pair(postgres, "credentials", ["username", "password"], at, p);
    let tables = postgres.get("tableMappings").and_then(Value::as_array);
    for (i, mapping) in tables.into_iter().flatten().enumerate() {
        let Some(mapping) = mapping.as_object() else {
            continue;
        };
        let mapping_at = format!("{at}.tableMappings[{i}]");
        for name in ["sourceSchemaName", "sourceTable", "targetTable"] {
            non_blank(mapping, name, &mapping_at, true, p);
        }
        let custom = mapping.get("useCustomSortingKey").and_then(Value::as_bool);
        let keys = mapping
            .get("sortingKeys")
            .and_then(Value::as_array)
            .is_some_and(|keys| !keys.is_empty());
        match (custom, keys) {
            (Some(true), false) => p.add(
                format!("{mapping_at}.useCustomSortingKey"),
                "true needs sortingKeys",
            ),
            (Some(false), true) => p.add(
                format!("{mapping_at}.sortingKeys"),
                "used only with useCustomSortingKey: true",
            ),
            _ => {}
        }
    }
}

/// Checks the destination; answers its column names.
fn destination<'a>(
    destination: Option<&'a Value>,
    needs_table: bool,
    p: &mut Problems,
) -> Vec<&'a str> {
    let Some(destination) = destination.and_then(Value::as_object) else {
        // An absent destination is the schema's problem (required).
        return Vec::new();
    };
    non_blank(destination, "database", "destination", true, p);
    let columns = destination
        .get("columns")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    if needs_table {
        let table = destination
            .get("table")
            .and_then(Value::as_str)
            .is_some_and(|t| !t.trim().is_empty());
        if !table {
            p.add("destination.table", "required for this source kind");
        }
        if destination.get("managedTable").is_none_or(Value::is_null) {
            p.add("destination.managedTable", "required for this source kind");
        }
        if columns.is_empty() {
            p.add(
                "destination.columns",
                "at least one column is required for this source kind",
            );
        }
    }
    let mut names = Vec::new();
    for (i, column) in columns.iter().enumerate() {
        let Some(column) = column.as_object() else {
            continue;
        };
        let at = format!("destination.columns[{i}]");
        non_blank(column, "name", &at, true, p);
        non_blank(column, "type", &at, true, p);
        if let Some(name) = column.get("name").and_then(Value::as_str) {
            names.push(name);
        }
    }
    names
}

/// Every destination column must be mapped, and every mapping must name a destination column.
fn field_mappings(mappings: Option<&Value>, columns: &[&str], p: &mut Problems) {
    let mappings = mappings
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut mapped = Vec::new();
    for (i, mapping) in mappings.iter().enumerate() {
        let Some(mapping) = mapping.as_object() else {
            continue;
        };
        let at = format!("fieldMappings[{i}]");
        non_blank(mapping, "sourceField", &at, true, p);
        let destination = mapping.get("destinationField").and_then(Value::as_str);
        match destination {
            Some(field) if !columns.is_empty() && !columns.contains(&field) => p.add(
                format!("{at}.destinationField"),
                format!("{field:?} is not a destination column"),
            ),
            Some(field) => mapped.push(field),
            None => p.add(
                format!("{at}.destinationField"),
                "required; must not be empty",
            ),
        }
    }
    let unmapped: Vec<&str> = columns
        .iter()
        .copied()
        .filter(|column| !mapped.contains(column))
        .collect();
    if !unmapped.is_empty() {
        p.add(
            "fieldMappings",
            format!(
                "every destination column must be mapped; not mapped: {}",
                unmapped.join(", ")
            ),
        );
    }
}
