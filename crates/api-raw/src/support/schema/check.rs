//! Checking a value against a schema: every [`Violation`], by path, with the rule it breaks.

use serde_json::{Map, Value};

use super::SchemaSet;

/// One way a value breaks a schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Where, as `source.kafka.reversePrivateEndpointIds[0]` (`body` for the whole value).
    pub path: String,
    /// Which kind of rule was broken.
    pub rule: Rule,
    /// What rule was broken; never the value itself (but a number, which is never secret).
    pub message: String,
}

/// The kinds of rule a value can break.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Rule {
    /// A JSON type other than the schema's (`nullable` allows `null`).
    Type,
    /// A required member is missing.
    Required,
    /// A member the schema does not declare ([`Members::Declared`]), or one it forbids.
    Member,
    /// A value outside a closed set (`enum`).
    Enum,
    /// A value outside a set the spec knows but keeps open (`x-extensible-enum`), reported only
    /// when [`Checks::known_values`] asks.
    KnownValue,
    /// A number, length or item count outside its bounds.
    Bound,
    /// A string that breaks its pattern.
    Pattern,
    /// A string that breaks its format (`uuid`, `date-time`).
    Format,
    /// A value that matches no branch, or several, of a `oneOf`.
    Shape,
}

/// What a check reports besides the schema's own rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checks {
    /// How members the schema does not declare are taken.
    pub members: Members,
    /// Whether a value outside an open set the spec knows (`x-extensible-enum`) is reported
    /// ([`Rule::KnownValue`]); an open set takes it otherwise.
    pub known_values: bool,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// How strictly [`SchemaSet::check`] treats members a schema does not declare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Members {
    /// As JSON Schema does: a member no `properties` names is allowed unless `additionalProperties`
    /// is `false` (the emulator's request validation: the server ignores unknown members).
    Open,
    /// A member no `properties` names is a violation unless the schema has `additionalProperties`
    /// (a typo in a file written by hand).
    Declared,
}

impl SchemaSet {
    /// Every violation of the schema `name` by `value`, ordered by path (a path's own in rule order);
    /// members no schema declares are allowed ([`Members::Open`]).
    pub fn violations(&self, name: &str, value: &Value) -> Vec<Violation> {
        self.check(name, value, Members::Open)
    }

    /// Every violation of the schema `name` by `value`, ordered by path, with members undeclared as
    /// `members` says.
    pub fn check(&self, name: &str, value: &Value, members: Members) -> Vec<Violation> {
        let checks = Checks {
            members,
            known_values: false,
        };
        match self.schemas.get(name) {
            Some(schema) => self.check_schema(schema, value, checks),
            None => vec![Violation {
                path: "body".into(),
                rule: Rule::Type,
                message: format!("no schema named {name}"),
            }],
        }
    }

    /// Every violation of `schema` (a schema of this set's spec, such as
    /// `{"$ref": "#/components/schemas/PipeEnvelope"}` or `{"type": "integer"}`) by `value`,
    /// ordered by path, with `checks`: what `api-emulator cassette check` reads an answer with.
    pub fn check_schema(&self, schema: &Value, value: &Value, checks: Checks) -> Vec<Violation> {
        let mut out = Vec::new();
        self.check_value(schema, value, checks, &mut Vec::new(), &mut out);
        out.sort_by(|a, b| a.path.cmp(&b.path));
        out
    }

    fn check_value(
        &self,
        schema: &Value,
        value: &Value,
        checks: Checks,
        at: &mut Vec<Segment>,
        out: &mut Vec<Violation>,
    ) {
        let Value::Object(schema) = schema else {
            if schema == &Value::Bool(false) {
                out.push(violation(
                    at,
                    Rule::Member,
                    "no value is allowed here".into(),
                ));
            }
            return;
        };
        if let Some(target) = schema.get("$ref").and_then(Value::as_str)
            && let Some(target) = self.resolve(target)
        {
            // OpenAPI 3.0: the members beside a `$ref` are ignored.
            self.check_value(target, value, checks, at, out);
            return;
        }
        if let Some(Value::String(ty)) = schema.get("type") {
            if value.is_null() && schema.get("nullable") == Some(&Value::Bool(true)) {
                return;
            }
            if !has_type(value, ty) {
                out.push(violation(
                    at,
                    Rule::Type,
                    format!("expected {}, found {}", article(ty), kind(value)),
                ));
                return;
            }
        }
        if let Some(Value::Array(allowed)) = schema.get("enum")
            && !allowed.contains(value)
        {
            let shown: Vec<String> = allowed.iter().map(Value::to_string).collect();
            out.push(violation(
                at,
                Rule::Enum,
                format!("must be one of {}", shown.join(", ")),
            ));
        }
        if let Some(Value::Array(branches)) = schema.get("oneOf") {
            let here = violation(at, Rule::Shape, String::new()).path;
            let outcomes: Vec<Vec<Violation>> = branches
                .iter()
                .map(|branch| {
                    let mut scratch = Vec::new();
                    self.check_value(branch, value, checks, &mut at.clone(), &mut scratch);
                    scratch
                })
                .collect();
            let matching = outcomes.iter().filter(|found| found.is_empty()).count();
            // The branches of the value's own type: when just one fails, its reasons say more than
            // "no shape" (a string that breaks the string branch's pattern).
            let mut typed = outcomes
                .into_iter()
                .filter(|found| !found.iter().any(|v| v.rule == Rule::Type && v.path == here));
            match matching {
                1 => {}
                0 => match (typed.next(), typed.next()) {
                    (Some(reasons), None) => out.extend(reasons),
                    _ => out.push(violation(
                        at,
                        Rule::Shape,
                        "matches none of the allowed shapes".into(),
                    )),
                },
                _ => out.push(violation(
                    at,
                    Rule::Shape,
                    "matches more than one of the allowed shapes".into(),
                )),
            }
        }
        match value {
            Value::String(text) => self.check_string(schema, text, checks, at, out),
            Value::Number(number) => {
                let shown = number.to_string();
                let number = number.as_f64().unwrap_or(f64::NAN);
                let min = schema.get("minimum").and_then(Value::as_f64);
                let max = schema.get("maximum").and_then(Value::as_f64);
                // A number is never secret, so the message shows it.
                let message = match (min, max) {
                    (Some(min), Some(max)) if number < min || number > max => {
                        Some(format!("must be between {min} and {max}, got {shown}"))
                    }
                    (Some(min), None) if number < min => {
                        Some(format!("must be at least {min}, got {shown}"))
                    }
                    (None, Some(max)) if number > max => {
                        Some(format!("must be at most {max}, got {shown}"))
                    }
                    _ => None,
                };
                if let Some(message) = message {
                    out.push(violation(at, Rule::Bound, message));
                }
            }
            Value::Array(items) => {
                if let Some(min) = schema.get("minItems").and_then(Value::as_u64)
                    && (items.len() as u64) < min
                {
                    out.push(violation(
                        at,
                        Rule::Bound,
                        format!("must hold at least {min} {}", plural(min, "item")),
                    ));
                }
                if let Some(max) = schema.get("maxItems").and_then(Value::as_u64)
                    && items.len() as u64 > max
                {
                    out.push(violation(
                        at,
                        Rule::Bound,
                        format!("must hold at most {max} {}", plural(max, "item")),
                    ));
                }
                if let Some(item_schema) = schema.get("items") {
                    for (i, item) in items.iter().enumerate() {
                        at.push(Segment::Index(i));
                        self.check_value(item_schema, item, checks, at, out);
                        at.pop();
                    }
                }
            }
            Value::Object(object) => self.check_object(schema, object, checks, at, out),
            Value::Null | Value::Bool(_) => {}
        }
    }

    fn check_string(
        &self,
        schema: &Map<String, Value>,
        text: &str,
        checks: Checks,
        at: &[Segment],
        out: &mut Vec<Violation>,
    ) {
        if checks.known_values
            && let Some(Value::Array(known)) = schema.get("x-extensible-enum")
            && !known.iter().any(|v| v.as_str() == Some(text))
        {
            let list: Vec<&str> = known.iter().filter_map(Value::as_str).collect();
            // A value of an open set is data, not a secret: the message names it.
            out.push(violation(
                at,
                Rule::KnownValue,
                format!(
                    "{text:?} is not among the values the spec knows ({})",
                    list.join(", ")
                ),
            ));
        }
        let length = text.chars().count() as u64;
        if let Some(min) = schema.get("minLength").and_then(Value::as_u64)
            && length < min
        {
            out.push(violation(
                at,
                Rule::Bound,
                format!("must be at least {min} {} long", plural(min, "character")),
            ));
        }
        if let Some(max) = schema.get("maxLength").and_then(Value::as_u64)
            && length > max
        {
            out.push(violation(
                at,
                Rule::Bound,
                format!("must be at most {max} {} long", plural(max, "character")),
            ));
        }
        if let Some(Value::String(source)) = schema.get("pattern")
            && let Some(check) = self.patterns.get(source)
            && !check(text)
        {
            let message = match crate::support::describe_pattern(source) {
                Some(described) => format!("must be {described}"),
                None => format!("does not match the pattern {source}"),
            };
            out.push(violation(at, Rule::Pattern, message));
        }
        match schema.get("format").and_then(Value::as_str) {
            Some("uuid") if !is_uuid(text) => out.push(violation(
                at,
                Rule::Format,
                "is not a UUID (8-4-4-4-12 hexadecimal digits)".into(),
            )),
            Some("date-time") if chrono::DateTime::parse_from_rfc3339(text).is_err() => {
                out.push(violation(
                    at,
                    Rule::Format,
                    "is not an RFC 3339 date-time (2026-03-01T12:00:00Z)".into(),
                ))
            }
            _ => {}
        }
    }

    fn check_object(
        &self,
        schema: &Map<String, Value>,
        object: &Map<String, Value>,
        checks: Checks,
        at: &mut Vec<Segment>,
        out: &mut Vec<Violation>,
    ) {
        for name in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            if !object.contains_key(name) {
                at.push(Segment::Member(name.to_string()));
                out.push(violation(at, Rule::Required, "is required".into()));
                at.pop();
            }
        }
        let properties = schema.get("properties").and_then(Value::as_object);
        for (name, member) in object {
            let declared = properties.and_then(|p| p.get(name));
            let member_schema = match (declared, schema.get("additionalProperties")) {
                (Some(declared), _) => declared,
                (None, Some(extra)) => extra,
                // Only an object schema can say which members it has (`{}` takes anything).
                (None, None) if checks.members == Members::Open || !declares_members(schema) => {
                    continue;
                }
                (None, None) => {
                    at.push(Segment::Member(name.clone()));
                    let known: Vec<&str> = properties
                        .into_iter()
                        .flatten()
                        .map(|(k, _)| k.as_str())
                        .collect();
                    out.push(violation(
                        at,
                        Rule::Member,
                        format!("unknown member; expected one of: {}", known.join(", ")),
                    ));
                    at.pop();
                    continue;
                }
            };
            at.push(Segment::Member(name.clone()));
            if member_schema == &Value::Bool(false) {
                out.push(violation(
                    at,
                    Rule::Member,
                    "is not a member of this object".into(),
                ));
            } else {
                self.check_value(member_schema, member, checks, at, out);
            }
            at.pop();
        }
    }
}

fn violation(at: &[Segment], rule: Rule, message: String) -> Violation {
    let mut path = String::new();
    for segment in at {
        match segment {
            Segment::Member(name) => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(name);
            }
            Segment::Index(i) => path.push_str(&format!("[{i}]")),
        }
    }
    if path.is_empty() {
        path.push_str("body");
    }
    Violation {
        path,
        rule,
        message,
    }
}

/// Whether a schema names the members of its objects.
fn declares_members(schema: &Map<String, Value>) -> bool {
    schema.contains_key("properties")
        || schema.get("type").and_then(Value::as_str) == Some("object")
}

fn has_type(value: &Value, ty: &str) -> bool {
    match ty {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "number" => value.is_number(),
        "integer" => crate::support::is_integer(value),
        _ => false,
    }
}

fn article(ty: &str) -> String {
    match ty {
        "object" | "array" | "integer" => format!("an {ty}"),
        _ => format!("a {ty}"),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn plural(n: u64, word: &str) -> String {
    if n == 1 {
        word.to_string()
    } else {
        format!("{word}s")
    }
}

/// The hyphenated form JSON Schema's `uuid` format means (RFC 4122 section 3).
pub(super) fn is_uuid(text: &str) -> bool {
    text.len() == 36
        && text.bytes().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => b == b'-',
            _ => b.is_ascii_hexdigit(),
        })
}

/// One step of a path into a value.
#[derive(Debug, Clone)]
enum Segment {
    Member(String),
    Index(usize),
}
