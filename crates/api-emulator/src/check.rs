//! `api-emulator cassette check`: every recorded answer against the spec's response schemas and
//! the SDK's own decoding. A finding is where production says something the spec does not: a member
//! the schema does not list, a value outside a value set the spec knows, a number where the spec says
//! a string (or the reverse), a required member missing, an answer the SDK cannot decode, or an
//! answer the spec does not describe (a status it does not list, text where it says JSON).

use std::fmt;

use serde_json::Value;

use api_raw::support::schema::{Checks, Members, Rule, SchemaSet};

use crate::cassette::Cassette;
use crate::operation::OperationId;

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
    /// A string that breaks the spec's format (a `uuid`, a `date-time`).
    WrongFormat,
    /// A number, length or item count outside the spec's bounds.
    OutOfBounds,
    /// An answer the SDK's decoding refuses.
    NotDecodable,
    /// An answer the spec does not describe: a status it does not list for the operation, or a body
    /// of another kind than it lists (text where it says JSON, or the reverse).
    UndocumentedAnswer,
    /// An answer whose body the recorder could not keep (too large, not text, compressed): it was
    /// not checked.
    BodyNotKept,
}

impl fmt::Display for FindingKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FindingKind::UnknownMember => "unknown member",
            FindingKind::UnknownValue => "unknown value",
            FindingKind::WrongType => "wrong type",
            FindingKind::MissingMember => "missing member",
            FindingKind::PatternMismatch => "pattern mismatch",
            FindingKind::WrongFormat => "wrong format",
            FindingKind::OutOfBounds => "out of bounds",
            FindingKind::NotDecodable => "not decodable",
            FindingKind::UndocumentedAnswer => "undocumented answer",
            FindingKind::BodyNotKept => "body not kept",
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

/// Every finding of `cassette`, in exchange order. Every answer is checked: a JSON body against the
/// schema the spec gives for its status (and, for a success, through the SDK's decoding), a text
/// body (a gateway's HTML page, a plain-text 429) against the content types the spec lists for its
/// status. A status the spec does not list for the operation is a finding; a hangup is not an
/// answer.
pub fn check(cassette: &Cassette) -> Vec<Finding> {
    let mut findings = Vec::new();
    for (index, exchange) in cassette.exchanges.iter().enumerate() {
        let Some(operation) = exchange.operation_id else {
            continue;
        };
        if exchange.is_hangup() {
            continue;
        }
        let Some(described) = api_raw::support::operation(operation.as_str()) else {
            continue;
        };
        let observability = crate::operation::is_observability_path(described.path);
        let schemas = if observability {
            SchemaSet::observability()
        } else {
            SchemaSet::management()
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
        let status = exchange.status;
        let Some(content) = documented_content(described, status) else {
            found(
                ".".into(),
                FindingKind::UndocumentedAnswer,
                format!("the spec lists no {status} answer for this operation"),
            );
            continue;
        };
        match &exchange.response_body {
            _ if exchange.response_unkept.is_some() => {
                let unkept = exchange.response_unkept.as_ref().map(ToString::to_string);
                found(
                    ".".into(),
                    FindingKind::BodyNotKept,
                    format!(
                        "the recorder could not keep the answer's body ({}): it was not checked",
                        unkept.unwrap_or_default()
                    ),
                );
            }
            Some(body) => {
                match content.get("application/json") {
                    Some(media) => {
                        if let Some(schema) = media.get("schema") {
                            for violation in schemas.check_schema(schema, body, AUDIT) {
                                found(
                                    at_or_root(&violation.path),
                                    kind_of(violation.rule),
                                    violation.message,
                                );
                            }
                        }
                    }
                    None => found(
                        ".".into(),
                        FindingKind::UndocumentedAnswer,
                        format!(
                            "a JSON {status} answer where the spec says {}",
                            media_types(content)
                        ),
                    ),
                }
                if (200..300).contains(&status)
                    && let Err(message) = decodes(operation, body)
                {
                    found(".".into(), FindingKind::NotDecodable, message);
                }
            }
            None => {
                let text_listed = content
                    .as_object()
                    .is_some_and(|types| types.keys().any(|t| t.starts_with("text/")));
                if !text_listed {
                    found(
                        ".".into(),
                        FindingKind::UndocumentedAnswer,
                        format!(
                            "a {status} answer that is not JSON where the spec says {}",
                            media_types(content)
                        ),
                    );
                }
            }
        }
        // The headers the spec documents for this answer, read as their schemas say.
        for (name, schema) in documented_headers(described, status) {
            let Some(text) = exchange.response_headers.get(&name.to_ascii_lowercase()) else {
                continue;
            };
            let value = header_value(text, schema);
            for violation in schemas.check_schema(schema, &value, AUDIT) {
                found(
                    format!("header {name}"),
                    kind_of(violation.rule),
                    violation.message,
                );
            }
        }
    }
    findings
}

/// How an answer is read: members the spec does not list, and values outside the value sets it
/// knows, are findings (the server is free to add them; the spec should learn them).
const AUDIT: Checks = Checks {
    members: Members::Declared,
    known_values: true,
};

/// The finding a broken rule of the spec's schema is.
fn kind_of(rule: Rule) -> FindingKind {
    match rule {
        Rule::Required => FindingKind::MissingMember,
        Rule::Member => FindingKind::UnknownMember,
        Rule::Enum | Rule::KnownValue => FindingKind::UnknownValue,
        Rule::Pattern => FindingKind::PatternMismatch,
        Rule::Format => FindingKind::WrongFormat,
        Rule::Bound => FindingKind::OutOfBounds,
        _ => FindingKind::WrongType,
    }
}

/// The answers the spec lists for each operation of both APIs (`RESPONSES`, generated by `cargo
/// xtask codegen`): operation id -> status -> `content` and `headers`.
fn documented() -> &'static Value {
    static ANSWERS: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    ANSWERS.get_or_init(|| {
        let mut all = serde_json::Map::new();
        for text in [
            api_raw::management::RESPONSES,
            api_raw::observability::RESPONSES,
        ] {
            // Generated from the spec by codegen, and parsed by a test: never malformed.
            if let Ok(Value::Object(operations)) = serde_json::from_str::<Value>(text) {
                all.extend(operations);
            }
        }
        Value::Object(all)
    })
}

/// The spec's answer for the operation with `status`: its `content` and `headers`.
fn documented_answer(
    described: &api_raw::support::Operation,
    status: u16,
) -> Option<&'static Value> {
    documented().get(described.id)?.get(status.to_string())
}

/// The headers the spec documents for the operation's answer with `status`, with their schemas.
fn documented_headers(
    described: &api_raw::support::Operation,
    status: u16,
) -> impl Iterator<Item = (&'static str, &'static Value)> {
    documented_answer(described, status)
        .and_then(|answer| answer.get("headers"))
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(name, schema)| (name.as_str(), schema))
}

/// A header's text as the JSON value its schema reads: a number where it says a number (a header
/// that does not parse as one stays text, and is then the wrong type).
fn header_value(text: &str, schema: &Value) -> Value {
    let numeric = matches!(
        schema.get("type").and_then(Value::as_str),
        Some("integer" | "number")
    );
    if numeric && let Ok(number) = text.trim().parse::<serde_json::Number>() {
        return Value::Number(number);
    }
    Value::String(text.to_string())
}

/// The `content` the spec lists for the operation's answer with `status` (empty for an answer
/// without a body); `None` when it lists no such answer.
fn documented_content(
    described: &api_raw::support::Operation,
    status: u16,
) -> Option<&'static Value> {
    documented_answer(described, status)?.get("content")
}

/// The media types of a `content` object, for a message: `text/html`, `application/json`.
fn media_types(content: &Value) -> String {
    let types: Vec<&str> = content
        .as_object()
        .map(|types| types.keys().map(String::as_str).collect())
        .unwrap_or_default();
    if types.is_empty() {
        "no body".into()
    } else {
        types.join(" or ")
    }
}

/// The validator's path of the whole body (`body`) is `.` here.
fn at_or_root(at: &str) -> String {
    match at {
        "" | "body" => ".".into(),
        other => other.to_string(),
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
    use crate::cassette::{CASSETTE_VERSION, Exchange, Header};

    fn cassette(exchanges: Vec<Exchange>) -> Cassette {
        Cassette {
            header: Header {
                cassette: CASSETTE_VERSION,
                recorded_at: chrono::Utc::now(),
                tool: "test".into(),
            },
            exchanges,
        }
    }

    /// An answer of `operation` (its method and a path of it) with `status` and a JSON or text body.
    fn answer(operation: OperationId, status: u16, body: Result<Value, &str>) -> Exchange {
        let described = api_raw::support::operation(operation.as_str()).unwrap();
        let (response_body, response_text) = match body {
            Ok(json) => (Some(json), None),
            Err(text) => (None, Some(text.to_string())),
        };
        Exchange {
            operation_id: Some(operation),
            method: described.method.into(),
            path: described.path.into(),
            query: None,
            request_body: None,
            request_text: None,
            request_unkept: None,
            status,
            response_headers: Default::default(),
            response_body,
            response_text,
            response_unkept: None,
        }
    }

    fn dashboards(body: Value) -> Cassette {
        cassette(vec![answer(OperationId::ListDashboards, 200, Ok(body))])
    }

    fn tile(x: Value) -> Value {
        json!({"data": [{"id": "66a1f0c2d4e5f60718293a42", "name": "d", "tiles": [
            {"id": "66a1f0c2d4e5f60718293a41", "name": "t", "x": x, "y": 0, "w": 6, "h": 3}
        ]}]})
    }

    /// The generated answers are the spec's: every operation's statuses, media types and header
    /// names, read from the YAML itself.
    #[test]
    fn the_generated_answers_are_the_specs() {
        let mut operations = 0;
        for text in [api_raw::spec::MANAGEMENT, api_raw::spec::OBSERVABILITY] {
            let spec: Value = serde_norway::from_str(text).unwrap();
            let follow = |mut value: Value| {
                while let Some(reference) = value.get("$ref").and_then(Value::as_str) {
                    value = spec
                        .pointer(reference.trim_start_matches('#'))
                        .unwrap()
                        .clone();
                }
                value
            };
            for item in spec["paths"].as_object().unwrap().values() {
                for operation in item.as_object().unwrap().values() {
                    let Some(id) = operation["operationId"].as_str() else {
                        continue;
                    };
                    operations += 1;
                    let generated = &documented()[id];
                    let responses = operation["responses"].as_object().unwrap();
                    let statuses: Vec<&String> = responses.keys().collect();
                    let ours: Vec<&String> = generated.as_object().unwrap().keys().collect();
                    assert_eq!(statuses, ours, "{id}");
                    for (status, response) in responses {
                        let response = follow(response.clone());
                        let keys = |value: Option<&Value>| -> Vec<String> {
                            value
                                .and_then(Value::as_object)
                                .map(|map| map.keys().cloned().collect())
                                .unwrap_or_default()
                        };
                        let answer = &generated[status];
                        assert_eq!(
                            keys(response.get("content")),
                            keys(answer.get("content")),
                            "{id} {status}"
                        );
                        assert_eq!(
                            keys(response.get("headers")),
                            keys(answer.get("headers")),
                            "{id} {status}"
                        );
                        if let Some(schema) = response.pointer("/content/application~1json/schema")
                        {
                            assert_eq!(
                                schema["$ref"],
                                answer["content"]["application/json"]["schema"]["$ref"],
                                "{id} {status}"
                            );
                        }
                    }
                }
            }
        }
        assert_eq!(operations, OperationId::ALL.len(), "every operation");
    }

    /// Each rule the schema check reports is told as its own kind of finding. (No answer of
    /// today's spec has a required member; an answer that lacks one a spec adds is "missing".)
    #[test]
    fn each_broken_rule_is_its_own_kind_of_finding() {
        let schema = json!({"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string"},
            "size": {"type": "integer", "minimum": 1},
        }});
        let kinds = |body: Value| -> Vec<FindingKind> {
            SchemaSet::management()
                .check_schema(&schema, &body, AUDIT)
                .into_iter()
                .map(|violation| kind_of(violation.rule))
                .collect()
        };
        assert_eq!(kinds(json!({"name": "n", "size": 1})), []);
        assert_eq!(kinds(json!({"size": 1})), [FindingKind::MissingMember]);
        assert_eq!(kinds(json!({"name": 1})), [FindingKind::WrongType]);
        assert_eq!(
            kinds(json!({"name": "n", "size": 0})),
            [FindingKind::OutOfBounds]
        );
        assert_eq!(
            kinds(json!({"name": "n", "other": 1})),
            [FindingKind::UnknownMember]
        );
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

    #[test]
    fn every_answer_is_checked_against_what_the_spec_lists_for_its_status() {
        let error = |extra: Option<(&str, &str)>| {
            let mut body =
                json!({"status": 404, "error": "NOT_FOUND: no such pipe", "requestId": "r"});
            if let Some((name, value)) = extra {
                body[name] = json!(value);
            }
            body
        };
        let exchanges = vec![
            answer(OperationId::CreatePipe, 404, Ok(error(None))),
            answer(OperationId::CreatePipe, 404, Ok(error(Some(("hint", "x"))))),
            answer(
                OperationId::CreatePipe,
                504,
                Err("<html>gateway timeout</html>"),
            ),
            answer(OperationId::CreatePipe, 500, Err("<html>oops</html>")),
            answer(OperationId::CreatePipe, 418, Ok(error(None))),
            answer(OperationId::ListDashboards, 429, Err("too many requests")),
            answer(OperationId::GetAlert, 200, Err("<html>sign in</html>")),
            answer(OperationId::GetPipe, 0, Err("")),
        ];
        let findings = check(&cassette(exchanges));
        let seen: Vec<(usize, &str, FindingKind)> = findings
            .iter()
            .map(|f| (f.exchange, f.path.as_str(), f.kind))
            .collect();
        assert_eq!(
            seen,
            [
                (2, "hint", FindingKind::UnknownMember),
                (4, ".", FindingKind::UndocumentedAnswer),
                (5, ".", FindingKind::UndocumentedAnswer),
                (7, ".", FindingKind::UndocumentedAnswer),
            ],
            "{findings:#?}"
        );
        let said: Vec<String> = findings.iter().map(ToString::to_string).collect();
        assert_eq!(
            said[1],
            "exchange 4 (createPipe): `.`: undocumented answer: a 500 answer that is not JSON where \
             the spec says application/json"
        );
        assert_eq!(
            said[2],
            "exchange 5 (createPipe): `.`: undocumented answer: the spec lists no 418 answer for \
             this operation"
        );
    }

    #[test]
    fn formats_nullable_members_and_documented_headers_are_checked_as_the_emulator_checks() {
        let pipe = |id: &str| {
            json!({"status": 200, "requestId": "r", "result": {
                "id": id, "serviceId": "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d", "name": "p",
                "state": "Running", "createdAt": null, "scaling": {"replicas": null}}})
        };
        let throttled = |reset: &str| {
            let mut exchange = answer(
                OperationId::CreatePipe,
                429,
                Ok(
                    json!({"status": 429, "error": "TOO_MANY_REQUESTS: slow down", "requestId": "r"}),
                ),
            );
            exchange
                .response_headers
                .insert("x-ratelimit-reset".into(), reset.into());
            exchange
        };
        let findings = check(&cassette(vec![
            answer(
                OperationId::GetPipe,
                200,
                Ok(pipe("0f9e8d7c-6b5a-4f3e-9d2c-1b0a9f8e7d6c")),
            ),
            answer(OperationId::GetPipe, 200, Ok(pipe("not-a-uuid"))),
            throttled("3"),
            throttled("soon"),
        ]));
        let seen: Vec<(usize, &str, FindingKind)> = findings
            .iter()
            .map(|f| (f.exchange, f.path.as_str(), f.kind))
            .collect();
        assert_eq!(
            seen,
            [
                (2, "result.id", FindingKind::WrongFormat),
                (2, ".", FindingKind::NotDecodable),
                (4, "header X-RateLimit-Reset", FindingKind::WrongType),
            ],
            "{findings:#?}"
        );
    }
}
