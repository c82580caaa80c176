//! A validator for the part of JSON Schema that `spec/` uses (OpenAPI 3.0 schema objects): `type` with
//! `nullable`, `$ref` into `components/schemas`, `properties`, `required`, `additionalProperties`,
//! `items`, `enum`, `oneOf`, the string, number and array bounds, `pattern`, and the `uuid` and
//! `date-time` formats.
//!
//! The emulator checks request bodies with it; tests can check their own fixtures or fake answers
//! against the spec the same way:
//!
//! ```
//! use api_emulator::json_schema::SchemaSet;
//!
//! let schemas = SchemaSet::management();
//! let body = serde_json::json!({"command": "reboot"});
//! let problems = schemas.violations("ServiceStateChangeRequest", &body);
//! assert_eq!(problems[0].path, "command");
//! ```
//!
//! [`SchemaSet::new`] refuses a spec that uses any other keyword, so a schema the validator would
//! silently not enforce cannot slip in. A general JSON Schema crate brought 35 crates (two regular
//! expression engines among them) into every build that uses the emulator; this subset needs none.

use std::collections::HashMap;

use serde_json::{Map, Value};

/// The keywords the validator enforces.
const ENFORCED: &[&str] = &[
    "type",
    "nullable",
    "$ref",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "oneOf",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "pattern",
    "format",
];

/// Keywords that say nothing about validity (documentation and the code generator's hints).
const ANNOTATIONS: &[&str] = &[
    "description",
    "example",
    "title",
    "default",
    "readOnly",
    "writeOnly",
];

/// Formats that are only a hint to code generators (integer widths, a password field).
const HINT_FORMATS: &[&str] = &[
    "int32", "int64", "uint16", "uint32", "float", "double", "password",
];

/// The schemas of a spec's `components`, ready to validate values.
pub struct SchemaSet {
    schemas: Map<String, Value>,
    /// The hand-written check of each pattern (`api_raw::support::check_for_pattern`).
    patterns: HashMap<String, fn(&str) -> bool>,
}

/// One way a value breaks a schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Where, as `source.kafka.reversePrivateEndpointIds[0]` (`body` for the whole value).
    pub path: String,
    /// What rule was broken; never the value itself.
    pub message: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

impl SchemaSet {
    /// The schemas of `spec/management.yaml`, compiled into the emulator.
    pub fn management() -> Self {
        Self::of_embedded(crate::schema::MANAGEMENT_SPEC)
    }

    /// The schemas of `spec/observability.yaml`, compiled into the emulator.
    pub fn observability() -> Self {
        Self::of_embedded(crate::schema::OBSERVABILITY_SPEC)
    }

    fn of_embedded(text: &str) -> Self {
        let spec = serde_norway::from_str(text).expect("the embedded spec is YAML (tested)");
        Self::new(&spec).expect("the embedded spec uses only what the validator enforces (tested)")
    }

    /// Takes `components.schemas` of `spec`, checking that every keyword is one the validator enforces
    /// (or an annotation), every `$ref` resolves and every pattern is one the SDK checks by hand.
    pub fn new(spec: &Value) -> Result<Self, String> {
        let schemas = spec
            .pointer("/components/schemas")
            .and_then(Value::as_object)
            .cloned()
            .ok_or("the spec has no components.schemas")?;
        let mut set = Self {
            schemas,
            patterns: HashMap::new(),
        };
        let mut patterns = HashMap::new();
        for (name, schema) in &set.schemas {
            set.audit(schema, &format!("components.schemas.{name}"), &mut patterns)?;
        }
        set.patterns = patterns;
        Ok(set)
    }

    /// Whether the spec has a schema `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.schemas.contains_key(name)
    }

    /// Every violation of the schema `name` by `value`, ordered by path (a path's own in rule order).
    pub fn violations(&self, name: &str, value: &Value) -> Vec<Violation> {
        let mut out = Vec::new();
        if let Some(schema) = self.schemas.get(name) {
            self.check(schema, value, &mut Vec::new(), &mut out);
        } else {
            out.push(Violation {
                path: "body".into(),
                message: format!("no schema named {name}"),
            });
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        out
    }

    fn audit(
        &self,
        schema: &Value,
        at: &str,
        patterns: &mut HashMap<String, fn(&str) -> bool>,
    ) -> Result<(), String> {
        let Value::Object(schema) = schema else {
            return match schema {
                Value::Bool(_) => Ok(()),
                _ => Err(format!("{at}: a schema must be an object")),
            };
        };
        for (keyword, value) in schema {
            let known = ENFORCED.contains(&keyword.as_str())
                || ANNOTATIONS.contains(&keyword.as_str())
                || keyword.starts_with("x-");
            if !known {
                return Err(format!(
                    "{at}: the emulator does not enforce the keyword {keyword:?}; teach json_schema.rs"
                ));
            }
            match keyword.as_str() {
                "$ref" => {
                    let target = value.as_str().unwrap_or_default();
                    if self.resolve(target).is_none() {
                        return Err(format!("{at}: $ref {target:?} does not resolve"));
                    }
                }
                "type" => {
                    let ty = value.as_str().unwrap_or_default();
                    if !matches!(
                        ty,
                        "object" | "array" | "string" | "integer" | "number" | "boolean"
                    ) {
                        return Err(format!("{at}: unknown type {value}"));
                    }
                }
                "format" => {
                    let format = value.as_str().unwrap_or_default();
                    if !matches!(format, "uuid" | "date-time") && !HINT_FORMATS.contains(&format) {
                        return Err(format!("{at}: unknown format {value}"));
                    }
                }
                "pattern" => {
                    // The SDK's own check of the pattern: one rule for the SDK and the emulator, and
                    // no regular expression engine to build.
                    let source = value.as_str().unwrap_or_default();
                    let check = api_raw::support::check_for_pattern(source).ok_or_else(|| {
                        format!("{at}: pattern {source:?} has no check in api-raw (only the specs' patterns do)")
                    })?;
                    patterns.insert(source.to_string(), check);
                }
                "properties" => {
                    for (name, property) in value.as_object().into_iter().flatten() {
                        self.audit(property, &format!("{at}.{name}"), patterns)?;
                    }
                }
                "items" | "additionalProperties" => {
                    self.audit(value, &format!("{at}.{keyword}"), patterns)?
                }
                "oneOf" => {
                    for (i, branch) in value.as_array().into_iter().flatten().enumerate() {
                        self.audit(branch, &format!("{at}.oneOf[{i}]"), patterns)?;
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn resolve(&self, reference: &str) -> Option<&Value> {
        self.schemas
            .get(reference.strip_prefix("#/components/schemas/")?)
    }

    fn check(
        &self,
        schema: &Value,
        value: &Value,
        at: &mut Vec<Segment>,
        out: &mut Vec<Violation>,
    ) {
        let Value::Object(schema) = schema else {
            if schema == &Value::Bool(false) {
                out.push(violation(at, "no value is allowed here".into()));
            }
            return;
        };
        if let Some(target) = schema.get("$ref").and_then(Value::as_str)
            && let Some(target) = self.resolve(target)
        {
            self.check(target, value, at, out);
        }
        if let Some(Value::String(ty)) = schema.get("type") {
            if value.is_null() && schema.get("nullable") == Some(&Value::Bool(true)) {
                return;
            }
            if !has_type(value, ty) {
                out.push(violation(
                    at,
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
                format!("must be one of {}", shown.join(", ")),
            ));
        }
        if let Some(Value::Array(branches)) = schema.get("oneOf") {
            let matching = branches
                .iter()
                .filter(|branch| {
                    let mut scratch = Vec::new();
                    self.check(branch, value, &mut at.clone(), &mut scratch);
                    scratch.is_empty()
                })
                .count();
            match matching {
                1 => {}
                0 => out.push(violation(at, "matches none of the allowed shapes".into())),
                _ => out.push(violation(
                    at,
                    "matches more than one of the allowed shapes".into(),
                )),
            }
        }
        match value {
            Value::String(text) => self.check_string(schema, text, at, out),
            Value::Number(number) => {
                let number = number.as_f64().unwrap_or(f64::NAN);
                if let Some(min) = schema.get("minimum").and_then(Value::as_f64)
                    && number < min
                {
                    out.push(violation(at, format!("must be at least {min}")));
                }
                if let Some(max) = schema.get("maximum").and_then(Value::as_f64)
                    && number > max
                {
                    out.push(violation(at, format!("must be at most {max}")));
                }
            }
            Value::Array(items) => {
                if let Some(min) = schema.get("minItems").and_then(Value::as_u64)
                    && (items.len() as u64) < min
                {
                    out.push(violation(
                        at,
                        format!("must hold at least {min} {}", plural(min, "item")),
                    ));
                }
                if let Some(max) = schema.get("maxItems").and_then(Value::as_u64)
                    && items.len() as u64 > max
                {
                    out.push(violation(
                        at,
                        format!("must hold at most {max} {}", plural(max, "item")),
                    ));
                }
                if let Some(item_schema) = schema.get("items") {
                    for (i, item) in items.iter().enumerate() {
                        at.push(Segment::Index(i));
                        self.check(item_schema, item, at, out);
                        at.pop();
                    }
                }
            }
            Value::Object(members) => self.check_object(schema, members, at, out),
            Value::Null | Value::Bool(_) => {}
        }
    }

    fn check_string(
        &self,
        schema: &Map<String, Value>,
        text: &str,
        at: &[Segment],
        out: &mut Vec<Violation>,
    ) {
        let length = text.chars().count() as u64;
        if let Some(min) = schema.get("minLength").and_then(Value::as_u64)
            && length < min
        {
            out.push(violation(
                at,
                format!("must be at least {min} {} long", plural(min, "character")),
            ));
        }
        if let Some(max) = schema.get("maxLength").and_then(Value::as_u64)
            && length > max
        {
            out.push(violation(
                at,
                format!("must be at most {max} {} long", plural(max, "character")),
            ));
        }
        if let Some(Value::String(source)) = schema.get("pattern")
            && let Some(check) = self.patterns.get(source)
            && !check(text)
        {
            out.push(violation(
                at,
                format!("does not match the pattern {source}"),
            ));
        }
        match schema.get("format").and_then(Value::as_str) {
            Some("uuid") if !is_uuid(text) => out.push(violation(
                at,
                "is not a UUID (8-4-4-4-12 hexadecimal digits)".into(),
            )),
            Some("date-time") if chrono::DateTime::parse_from_rfc3339(text).is_err() => {
                out.push(violation(
                    at,
                    "is not an RFC 3339 date-time (2026-03-01T12:00:00Z)".into(),
                ))
            }
            _ => {}
        }
    }

    fn check_object(
        &self,
        schema: &Map<String, Value>,
        members: &Map<String, Value>,
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
            if !members.contains_key(name) {
                at.push(Segment::Member(name.to_string()));
                out.push(violation(at, "is required".into()));
                at.pop();
            }
        }
        let properties = schema.get("properties").and_then(Value::as_object);
        for (name, member) in members {
            let declared = properties.and_then(|p| p.get(name));
            let member_schema = match (declared, schema.get("additionalProperties")) {
                (Some(declared), _) => declared,
                (None, Some(extra)) => extra,
                (None, None) => continue,
            };
            at.push(Segment::Member(name.clone()));
            if member_schema == &Value::Bool(false) {
                out.push(violation(at, "is not a member of this object".into()));
            } else {
                self.check(member_schema, member, at, out);
            }
            at.pop();
        }
    }
}

/// One step of a path into a value.
#[derive(Debug, Clone)]
enum Segment {
    Member(String),
    Index(usize),
}

fn violation(at: &[Segment], message: String) -> Violation {
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
    Violation { path, message }
}

fn has_type(value: &Value, ty: &str) -> bool {
    match ty {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "number" => value.is_number(),
        "integer" => api_raw::support::is_integer(value),
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
fn is_uuid(text: &str) -> bool {
    text.len() == 36
        && text.bytes().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => b == b'-',
            _ => b.is_ascii_hexdigit(),
        })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn set(schemas: Value) -> SchemaSet {
        SchemaSet::new(&json!({ "components": { "schemas": schemas } })).unwrap()
    }

    fn messages(set: &SchemaSet, name: &str, value: Value) -> Vec<String> {
        set.violations(name, &value)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn types_nullable_and_whole_numbers() {
        let set = set(json!({
            "T": {"type": "object", "properties": {
                "n": {"type": "integer", "nullable": true},
                "s": {"type": "string"},
                "b": {"type": "boolean"},
                "f": {"type": "number"},
            }}
        }));
        assert!(messages(&set, "T", json!({"n": 3.0, "s": "x", "b": true, "f": 0.5})).is_empty());
        assert!(messages(&set, "T", json!({"n": null})).is_empty());
        assert_eq!(
            messages(
                &set,
                "T",
                json!({"n": 0.5, "s": null, "b": "yes", "f": "1"})
            ),
            [
                "b: expected a boolean, found a string",
                "f: expected a number, found a string",
                "n: expected an integer, found a number",
                "s: expected a string, found null",
            ]
        );
        assert_eq!(
            messages(&set, "T", json!([])),
            ["body: expected an object, found an array"]
        );
    }

    #[test]
    fn references_required_and_unknown_members() {
        let set = set(json!({
            "Outer": {"type": "object", "required": ["inner", "name"], "properties": {
                "inner": {"$ref": "#/components/schemas/Inner"},
                "name": {"type": "string", "minLength": 1, "maxLength": 3},
            }},
            "Inner": {"type": "object", "additionalProperties": false, "properties": {
                "ids": {"type": "array", "minItems": 1, "items": {"type": "string", "format": "uuid"}},
            }},
            "Open": {"type": "object", "additionalProperties": {}, "properties": {"a": {"type": "integer"}}},
        }));
        assert_eq!(
            messages(&set, "Outer", json!({})),
            ["inner: is required", "name: is required"]
        );
        assert_eq!(
            messages(
                &set,
                "Outer",
                json!({"name": "long", "inner": {"ids": ["a1b2c3d4-0000-4000-8000-00000000000g"], "extra": 1}})
            ),
            [
                "inner.extra: is not a member of this object",
                "inner.ids[0]: is not a UUID (8-4-4-4-12 hexadecimal digits)",
                "name: must be at most 3 characters long",
            ]
        );
        assert_eq!(
            messages(&set, "Outer", json!({"name": "", "inner": {"ids": []}})),
            [
                "inner.ids: must hold at least 1 item",
                "name: must be at least 1 character long",
            ]
        );
        assert!(messages(&set, "Open", json!({"a": 1, "anything": {"x": [1]}})).is_empty());
    }

    #[test]
    fn bounds_enums_patterns_formats_and_one_of() {
        let set = set(json!({
            "T": {"type": "object", "properties": {
                "replicas": {"type": "integer", "minimum": 1, "maximum": 20},
                "command": {"type": "string", "enum": ["start", "stop"]},
                "arn": {"type": "string", "pattern": "^arn:[^:]+:[^:]*:[^:]*:[^:]*:.+$"},
                "at": {"type": "string", "format": "date-time"},
                "cpu": {"oneOf": [{"type": "number"}, {"type": "string", "pattern": "^[0-9]+(\\.[0-9]+)?m?$"}]},
                "hint": {"type": "integer", "format": "int64"},
            }}
        }));
        assert!(
            messages(
                &set,
                "T",
                json!({"replicas": 20, "command": "stop", "arn": "arn:aws:iam::1:role/x", "at": "2026-03-01T12:00:00Z", "cpu": "500m", "hint": 7})
            )
            .is_empty()
        );
        assert_eq!(
            messages(
                &set,
                "T",
                json!({"replicas": 50, "command": "reboot", "arn": "nope", "at": "2026-03-01", "cpu": "lots"})
            ),
            [
                "arn: does not match the pattern ^arn:[^:]+:[^:]*:[^:]*:[^:]*:.+$",
                "at: is not an RFC 3339 date-time (2026-03-01T12:00:00Z)",
                "command: must be one of \"start\", \"stop\"",
                "cpu: matches none of the allowed shapes",
                "replicas: must be at most 20",
            ]
        );
        assert_eq!(
            messages(&set, "T", json!({"replicas": 0})),
            ["replicas: must be at least 1"]
        );
    }

    #[test]
    fn a_spec_the_validator_would_not_enforce_is_refused() {
        for (schemas, expected) in [
            (
                json!({"T": {"type": "string", "multipleOf": 2}}),
                "does not enforce the keyword \"multipleOf\"",
            ),
            (
                json!({"T": {"$ref": "#/components/schemas/Missing"}}),
                "does not resolve",
            ),
            (
                json!({"T": {"type": "string", "pattern": "^[a-z]+$"}}),
                "has no check in api-raw",
            ),
            (
                json!({"T": {"type": "string", "format": "email"}}),
                "unknown format",
            ),
            (
                json!({"T": {"type": "object", "properties": {"a": {"allOf": []}}}}),
                "components.schemas.T.a",
            ),
        ] {
            let error = SchemaSet::new(&json!({ "components": { "schemas": schemas } }))
                .err()
                .unwrap_or_default();
            assert!(error.contains(expected), "{expected:?} not in {error:?}");
        }
    }

    #[test]
    fn both_embedded_specs_are_wholly_enforced() {
        for set in [SchemaSet::management(), SchemaSet::observability()] {
            assert!(set.schemas.len() > 5);
        }
    }

    #[test]
    fn uuids_are_hyphenated_hex() {
        assert!(is_uuid("0d8f3a4e-1c2b-4d5e-8f60-718293a4b5c6"));
        assert!(is_uuid("0D8F3A4E-1C2B-4D5E-8F60-718293A4B5C6"));
        for bad in [
            "0d8f3a4e1c2b4d5e8f60718293a4b5c6",
            "{0d8f3a4e-1c2b-4d5e-8f60-718293a4b5c6}",
            "0d8f3a4e-1c2b-4d5e-8f60-718293a4b5c",
            "0d8f3a4e-1c2b-4d5e-8f60_718293a4b5c6",
            "",
        ] {
            assert!(!is_uuid(bad), "{bad}");
        }
    }
}
