//! `api-emulator cassette check`: every recorded answer against the spec's response schemas and
//! the SDK's own decoding. A finding is where production says something the spec does not: a member
//! the schema does not list, a value outside a value set the spec knows, a number where the spec says
//! a string (or the reverse), a required member missing, or an answer the SDK cannot decode.

use std::fmt;

use serde_json::Value;

use crate::cassette::{Cassette, Exchange};
use crate::operation::OperationId;
use crate::schema::{MANAGEMENT_SPEC, OBSERVABILITY_SPEC};

/// What kind of finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FindingKind {
    /// A member the spec's schema does not list.
    UnknownMember,
    /// A value outside the spec's known value set.
    UnknownValue,
    /// A JSON type other than the spec's.
    WrongType,
    /// A member the spec requires, missing.
    MissingMember,
    /// A string that does not match the spec's pattern.
    PatternMismatch,
    /// An answer the SDK's decoding refuses.
    NotDecodable,
}

impl fmt::Display for FindingKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FindingKind::UnknownMember => "unknown member",
            FindingKind::UnknownValue => "unknown value",
            FindingKind::WrongType => "wrong type",
            FindingKind::MissingMember => "missing member",
            FindingKind::PatternMismatch => "pattern mismatch",
            FindingKind::NotDecodable => "not decodable",
        })
    }
}

/// One place where a recorded answer and the spec (or the SDK) disagree.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Finding {
    /// The exchange's place in the cassette, from 1.
    pub exchange: usize,
    /// Its operation.
    pub operation: &'static str,
    /// The JSON path in the answer's body.
    pub path: String,
    /// What kind.
    pub kind: FindingKind,
    /// What, in words.
    pub message: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "exchange {} ({}): `{}`: {}: {}",
            self.exchange, self.operation, self.path, self.kind, self.message
        )
    }
}

/// Every finding of `cassette`, in exchange order.
pub fn check(cassette: &Cassette) -> Vec<Finding> {
    let specs = [MANAGEMENT_SPEC, OBSERVABILITY_SPEC]
        .map(|text| serde_norway::from_str::<Value>(text).unwrap_or(Value::Null));
    let mut findings = Vec::new();
    for (index, exchange) in cassette.exchanges.iter().enumerate() {
        let (Some(operation), Some(body)) = (exchange.operation_id, &exchange.response_body) else {
            continue;
        };
        if !(200..300).contains(&exchange.status) {
            continue;
        }
        let spec = if operation.as_str().ends_with("Alert")
            || operation.as_str().ends_with("Dashboards")
        {
            &specs[1]
        } else {
            &specs[0]
        };
        let mut found = |path: String, kind: FindingKind, message: String| {
            findings.push(Finding {
                exchange: index + 1,
                operation: operation.as_str(),
                path,
                kind,
                message,
            });
        };
        match response_schema(spec, operation, exchange) {
            Some(schema) => Walk {
                spec,
                found: &mut found,
            }
            .value(body, schema, ""),
            None => found(
                ".".into(),
                FindingKind::WrongType,
                format!(
                    "the spec describes no JSON answer {} for it",
                    exchange.status
                ),
            ),
        }
        if let Err(message) = decodes(operation, body) {
            found(".".into(), FindingKind::NotDecodable, message);
        }
    }
    findings
}

/// The schema of the operation's answer with the exchange's status (or its 200).
fn response_schema<'s>(
    spec: &'s Value,
    operation: OperationId,
    exchange: &Exchange,
) -> Option<&'s Value> {
    let described = api_raw::support::operation(operation.as_str())?;
    let item = spec.get("paths")?.get(described.path)?;
    let responses = item
        .get(described.method.to_lowercase())?
        .get("responses")?;
    let response = responses
        .get(exchange.status.to_string())
        .or_else(|| responses.get("200"))?;
    let response = resolve(spec, response);
    resolve(spec, response.pointer("/content/application~1json/schema")?).into()
}

/// Follows a `$ref` within the spec.
fn resolve<'s>(spec: &'s Value, mut schema: &'s Value) -> &'s Value {
    for _ in 0..16 {
        match schema.get("$ref").and_then(Value::as_str) {
            Some(reference) => match spec.pointer(reference.trim_start_matches('#')) {
                Some(target) => schema = target,
                None => return schema,
            },
            None => return schema,
        }
    }
    schema
}

/// A walk of one answer against its schema.
struct Walk<'s, 'f> {
    spec: &'s Value,
    found: &'f mut dyn FnMut(String, FindingKind, String),
}

impl Walk<'_, '_> {
    fn value(&mut self, value: &Value, schema: &Value, at: &str) {
        let schema = resolve(self.spec, schema);
        if value.is_null() {
            return;
        }
        if let Some(branches) = schema.get("oneOf").and_then(Value::as_array) {
            let fitting = branches
                .iter()
                .map(|branch| resolve(self.spec, branch))
                .find(|branch| type_fits(value, branch));
            match fitting {
                Some(branch) => self.value(value, branch, at),
                None => self.wrong_type(value, "one of the allowed shapes", at),
            }
            return;
        }
        match schema.get("type").and_then(Value::as_str) {
            Some("object") | None if value.is_object() => self.object(value, schema, at),
            Some("array") => match value.as_array() {
                Some(items) => {
                    let item_schema = schema.get("items").unwrap_or(&Value::Null);
                    for (i, item) in items.iter().enumerate() {
                        self.value(item, item_schema, &format!("{at}[{i}]"));
                    }
                }
                None => self.wrong_type(value, "an array", at),
            },
            Some("string") => match value.as_str() {
                Some(text) => self.string(text, schema, at),
                None => self.wrong_type(value, "a string", at),
            },
            Some("integer") if !api_raw::support::is_integer(value) => {
                self.wrong_type(value, "an integer", at)
            }
            Some("number") if !value.is_number() => self.wrong_type(value, "a number", at),
            Some("boolean") if !value.is_boolean() => self.wrong_type(value, "true or false", at),
            Some("object") => self.wrong_type(value, "an object", at),
            _ => {}
        }
    }

    fn object(&mut self, value: &Value, schema: &Value, at: &str) {
        let Some(members) = value.as_object() else {
            return;
        };
        let properties = schema.get("properties").and_then(Value::as_object);
        let open = schema
            .get("additionalProperties")
            .is_some_and(|extra| extra != &Value::Bool(false));
        for required in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(name) = required
                .as_str()
                .filter(|name| !members.contains_key(*name))
            {
                (self.found)(
                    join(at, name),
                    FindingKind::MissingMember,
                    "required by the spec".into(),
                );
            }
        }
        for (name, member) in members {
            match properties.and_then(|p| p.get(name)) {
                Some(property) => self.value(member, property, &join(at, name)),
                None if open || properties.is_none() => {}
                None => (self.found)(
                    join(at, name),
                    FindingKind::UnknownMember,
                    "a member the spec does not list".into(),
                ),
            }
        }
    }

    fn string(&mut self, text: &str, schema: &Value, at: &str) {
        let known = schema
            .get("x-extensible-enum")
            .or_else(|| schema.get("enum"))
            .and_then(Value::as_array);
        if let Some(known) = known
            && !known.iter().any(|v| v.as_str() == Some(text))
        {
            let list: Vec<&str> = known.iter().filter_map(Value::as_str).collect();
            (self.found)(
                at_or_root(at),
                FindingKind::UnknownValue,
                format!(
                    "{text:?} is not among the values the spec knows ({})",
                    list.join(", ")
                ),
            );
        }
        if let Some(pattern) = schema.get("pattern").and_then(Value::as_str)
            && let Some(check) = api_raw::support::check_for_pattern(pattern)
            && !check(text)
        {
            (self.found)(
                at_or_root(at),
                FindingKind::PatternMismatch,
                format!("{text:?} does not match {pattern}"),
            );
        }
    }

    fn wrong_type(&mut self, value: &Value, expected: &str, at: &str) {
        let got = match value {
            Value::Bool(_) => "true or false",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
            Value::Null => "null",
        };
        (self.found)(
            at_or_root(at),
            FindingKind::WrongType,
            format!("{got} ({value}) where the spec says {expected}"),
        );
    }
}

/// Whether `value`'s JSON type is the branch's.
fn type_fits(value: &Value, branch: &Value) -> bool {
    match branch.get("type").and_then(Value::as_str) {
        Some("string") => value.is_string(),
        Some("number") => value.is_number(),
        Some("integer") => value.as_f64().is_some_and(|n| n.fract() == 0.0),
        Some("boolean") => value.is_boolean(),
        Some("array") => value.is_array(),
        Some("object") | None => value.is_object(),
        Some(_) => false,
    }
}

fn join(at: &str, name: &str) -> String {
    if at.is_empty() {
        name.to_string()
    } else {
        format!("{at}.{name}")
    }
}

fn at_or_root(at: &str) -> String {
    if at.is_empty() {
        ".".into()
    } else {
        at.to_string()
    }
}

/// Whether the SDK decodes the answer's resource into its domain value (the same rules as a call).
fn decodes(operation: OperationId, body: &Value) -> Result<(), String> {
    use api_core::management::{
        Pipe, PipeSettings, PrivateEndpoint, ReversePrivateEndpoint, Service,
    };
    use api_core::observability::{Alert, Dashboard};
    fn member<T: serde::de::DeserializeOwned>(body: &Value, name: &str) -> Result<(), String> {
        match body.get(name) {
            Some(value) => serde_json::from_value::<T>(value.clone())
                .map(|_| ())
                .map_err(|e| format!("the SDK cannot decode `{name}`: {e}")),
            None => Err(format!("the answer has no `{name}`")),
        }
    }
    match operation {
        OperationId::CreatePipe | OperationId::GetPipe => member::<Pipe>(body, "result"),
        OperationId::UpdateServiceState => member::<Service>(body, "result"),
        OperationId::GetPipeSettings => member::<PipeSettings>(body, "result"),
        OperationId::ListReversePrivateEndpoints => {
            member::<Vec<ReversePrivateEndpoint>>(body, "result")
        }
        OperationId::CreatePrivateEndpoint => member::<PrivateEndpoint>(body, "result"),
        OperationId::GetAlert => member::<Alert>(body, "data"),
        OperationId::ListDashboards => member::<Vec<Dashboard>>(body, "data"),
        OperationId::DeletePipe => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::cassette::{CASSETTE_VERSION, Header};

    fn dashboards(body: Value) -> Cassette {
        Cassette {
            header: Header {
                cassette: CASSETTE_VERSION,
                recorded_at: chrono::Utc::now(),
                tool: "test".into(),
            },
            exchanges: vec![Exchange {
                operation_id: Some(OperationId::ListDashboards),
                method: "GET".into(),
                path: "/api/v2/dashboards".into(),
                query: None,
                request_body: None,
                request_text: None,
                status: 200,
                response_headers: Default::default(),
                response_body: Some(body),
                response_text: None,
            }],
        }
    }

    fn tile(x: Value) -> Value {
        json!({"data": [{"id": "66a1f0c2d4e5f60718293a42", "name": "d", "tiles": [
            {"id": "66a1f0c2d4e5f60718293a41", "name": "t", "x": x, "y": 0, "w": 6, "h": 3}
        ]}]})
    }

    #[test]
    fn an_integer_is_a_whole_number_however_written() {
        assert_eq!(check(&dashboards(tile(json!(2)))), []);
        // The spec's schema takes 2.0 as an integer; the SDK's generated i64 does not (a finding
        // of its own kind).
        let findings = check(&dashboards(tile(json!(2.0))));
        let kinds: Vec<FindingKind> = findings.iter().map(|f| f.kind).collect();
        assert_eq!(kinds, [FindingKind::NotDecodable], "{findings:?}");
        for other in [json!(2.5), json!("2")] {
            let findings = check(&dashboards(tile(other.clone())));
            let wrong: Vec<&Finding> = findings
                .iter()
                .filter(|f| f.kind == FindingKind::WrongType)
                .collect();
            assert_eq!(wrong.len(), 1, "{other}: {findings:?}");
            assert_eq!(wrong[0].path, "data[0].tiles[0].x");
            assert_eq!(wrong[0].operation, "listDashboards");
        }
    }
}
