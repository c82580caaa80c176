//! A validator for the part of JSON Schema that `spec/` uses (OpenAPI 3.0 schema objects): `type` with
//! `nullable`, `$ref` into `components/schemas`, `properties`, `required`, `additionalProperties`,
//! `items`, `enum`, `oneOf`, the string, number and array bounds, `pattern`, and the `uuid` and
//! `date-time` formats.
//!
//! One validator for every place that checks a value against the spec: the SDK's pipe requests,
//! `cloudctl`'s pipe files, the emulator's request bodies and tests' own fixtures. The schemas are the
//! spec's own, generated into each API module as `SCHEMAS` by `cargo xtask codegen`:
//!
//! ```
//! use api_raw::support::schema::SchemaSet;
//!
//! let schemas = SchemaSet::management();
//! let body = serde_json::json!({"command": "reboot"});
//! let problems = schemas.violations("ServiceStateChangeRequest", &body);
//! assert_eq!(problems[0].path, "command");
//! ```
//!
//! Besides validation, [`SchemaSet::schema`] walks a schema's shape ([`Shape`]): which members a
//! request and a response have (a request member the response schema lacks is request-only), which
//! are secrets, and the value the server fills in for a member left out (`x-server-default`).
//!
//! [`SchemaSet::new`] refuses a spec that uses any other keyword, so a schema the validator would
//! silently not enforce cannot slip in. A general JSON Schema crate brought 35 crates (two regular
//! expression engines among them) into every build that uses the emulator; this subset needs none.

use std::collections::HashMap;

use serde_json::{Map, Value};

/// The extension naming a hand-written type; `Secret` marks a secret member.
const RAW_TYPE: &str = "x-api-raw-type";

/// The extension giving the value the server fills in for a member a create leaves out.
const SERVER_DEFAULT: &str = "x-server-default";

/// The extension saying how two answers' values of a schema compare ([`Comparison`]): `set`,
/// `case-insensitive`, or `{key: MEMBER}`.
const COMPARE: &str = "x-compare";

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
#[derive(Debug)]
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
    /// The schemas of `spec/management.yaml` (generated into `api_raw::management::SCHEMAS`), read
    /// once per process.
    #[cfg(feature = "management")]
    pub fn management() -> &'static Self {
        static SET: std::sync::OnceLock<SchemaSet> = std::sync::OnceLock::new();
        SET.get_or_init(|| Self::generated(crate::management::SCHEMAS))
    }

    /// The schemas of `spec/observability.yaml` (generated into `api_raw::observability::SCHEMAS`),
    /// read once per process.
    #[cfg(feature = "observability")]
    pub fn observability() -> &'static Self {
        static SET: std::sync::OnceLock<SchemaSet> = std::sync::OnceLock::new();
        SET.get_or_init(|| Self::generated(crate::observability::SCHEMAS))
    }

    #[cfg(any(feature = "management", feature = "observability"))]
    fn generated(json: &str) -> Self {
        let schemas: Value =
            serde_json::from_str(json).expect("the generated schemas are JSON (tested)");
        Self::new(&serde_json::json!({ "components": { "schemas": schemas } }))
            .expect("the spec uses only what the validator enforces (tested)")
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
                COMPARE if comparison_of(value).is_none() => {
                    return Err(format!(
                        "{at}: {COMPARE} is `set`, `case-insensitive` or {{key: MEMBER}}, not {value}"
                    ));
                }
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
                    let check = super::check_for_pattern(source).ok_or_else(|| {
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

    /// The schema `name`, to walk its shape.
    pub fn schema(&self, name: &str) -> Option<Shape<'_>> {
        Shape::of(self, self.schemas.get(name)?)
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
            let message = match super::describe_pattern(source) {
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

/// A schema resolved through its `$ref`s, to walk a value's shape: its members (declared, or open
/// to any name), its items, whether it is a secret, the value the server fills in when a create
/// leaves it out.
///
/// ```
/// use api_raw::support::schema::SchemaSet;
///
/// let schemas = SchemaSet::management();
/// let request = schemas.schema("PipeCreateRequest").expect("in the spec");
/// let response = schemas.schema("Pipe").expect("in the spec");
/// let kafka = |shape: api_raw::support::schema::Shape<'static>| shape.member("source")?.member("kafka");
/// // `credentials` is request-only: the request declares it, the response does not.
/// assert!(kafka(request).unwrap().declares("credentials"));
/// assert!(!kafka(response).unwrap().declares("credentials"));
/// let password = kafka(request).unwrap().member("credentials").unwrap().member("password").unwrap();
/// assert!(password.is_secret());
/// let replicas = request.member("scaling").unwrap().member("replicas").unwrap();
/// assert_eq!(replicas.server_default(), Some(&serde_json::json!(1)));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Shape<'a> {
    set: &'a SchemaSet,
    schema: &'a Map<String, Value>,
    secret: bool,
    default: Option<&'a Value>,
}

impl<'a> Shape<'a> {
    fn of(set: &'a SchemaSet, schema: &'a Value) -> Option<Self> {
        let mut current = schema.as_object()?;
        let mut secret = false;
        let mut default = None;
        // A chain of references is short; the bound keeps a cycle from looping.
        for _ in 0..32 {
            secret |= current.get(RAW_TYPE).and_then(Value::as_str) == Some("Secret");
            default = default.or_else(|| current.get(SERVER_DEFAULT));
            match current.get("$ref").and_then(Value::as_str) {
                Some(target) => current = set.resolve(target)?.as_object()?,
                None => {
                    return Some(Self {
                        set,
                        schema: current,
                        secret,
                        default,
                    });
                }
            }
        }
        None
    }

    /// The schema of member `name`: a declared one, else the schema of any other member when the
    /// object is open (`additionalProperties`); `None` when the object has no such member.
    pub fn member(&self, name: &str) -> Option<Shape<'a>> {
        let declared = self
            .schema
            .get("properties")
            .and_then(Value::as_object)
            .and_then(|p| p.get(name));
        match (declared, self.schema.get("additionalProperties")) {
            (Some(declared), _) => Self::of(self.set, declared),
            (None, Some(Value::Bool(true))) => Some(Self::any(self.set)),
            (None, Some(extra @ Value::Object(_))) => Self::of(self.set, extra),
            _ => None,
        }
    }

    /// Whether the object declares member `name` in its `properties`.
    pub fn declares(&self, name: &str) -> bool {
        self.schema
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|p| p.contains_key(name))
    }

    /// Whether the object requires member `name`.
    pub fn requires(&self, name: &str) -> bool {
        self.schema
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|required| required.iter().any(|r| r == name))
    }

    /// The declared members, in name order.
    pub fn members(&self) -> impl Iterator<Item = &'a str> + 'a {
        self.schema
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|p| p.keys().map(String::as_str))
    }

    /// Whether the object takes members it does not declare (`additionalProperties`).
    pub fn is_open(&self) -> bool {
        self.schema
            .get("additionalProperties")
            .is_some_and(|extra| extra != &Value::Bool(false))
    }

    /// The schema of an array's items.
    pub fn items(&self) -> Option<Shape<'a>> {
        Self::of(self.set, self.schema.get("items")?)
    }

    /// Whether the value is a secret (its schema is the spec's `Secret`).
    pub fn is_secret(&self) -> bool {
        self.secret
    }

    /// How two answers' values of this schema compare, for a plan that tells a server's own
    /// rewriting from a change: `x-compare` where the spec says, else
    /// [`CaseInsensitive`](Comparison::CaseInsensitive) for a value of a set (`enum`,
    /// `x-extensible-enum`) or a UUID, else [`Exact`](Comparison::Exact).
    pub fn comparison(&self) -> Comparison<'a> {
        if let Some(said) = self.schema.get(COMPARE).and_then(comparison_of) {
            return said;
        }
        let of_a_set =
            self.schema.contains_key("enum") || self.schema.contains_key("x-extensible-enum");
        let uuid = self.schema.get("format").and_then(Value::as_str) == Some("uuid");
        if of_a_set || uuid {
            Comparison::CaseInsensitive
        } else {
            Comparison::Exact
        }
    }

    /// The value the server fills in when a create leaves this member out (`x-server-default`).
    pub fn server_default(&self) -> Option<&'a Value> {
        self.default
    }

    /// Whether member `name` of this request schema is request-only: the request declares it and
    /// the `response` schema of the same object does not (whether or not the response takes
    /// members it does not declare).
    pub fn is_request_only(&self, name: &str, response: Option<&Shape<'_>>) -> bool {
        self.declares(name) && !response.is_some_and(|r| r.declares(name))
    }

    /// Turns `value`, a value of this request schema, into what the `response` schema holds of it,
    /// at any depth: request-only members go, and so does any member the response has no room for.
    pub fn drop_request_only(&self, response: &Shape<'_>, value: &mut Value) {
        match value {
            Value::Object(members) => members.retain(|name, member| {
                if self.is_request_only(name, Some(response)) {
                    return false;
                }
                match response.member(name) {
                    Some(answered) => {
                        let asked = self.member(name).unwrap_or_else(|| Self::any(self.set));
                        asked.drop_request_only(&answered, member);
                        true
                    }
                    None => false,
                }
            }),
            Value::Array(items) => {
                if let (Some(asked), Some(answered)) = (self.items(), response.items()) {
                    items
                        .iter_mut()
                        .for_each(|item| asked.drop_request_only(&answered, item));
                }
            }
            _ => {}
        }
    }

    /// Fills in every member of `value` that is absent and has an `x-server-default`, at any depth
    /// (an absent object whose members have defaults is created): what the server does to a create.
    pub fn fill_defaults(&self, value: &mut Value) {
        let Value::Object(members) = value else {
            return;
        };
        for name in self.members() {
            let Some(shape) = self.member(name) else {
                continue;
            };
            match (members.get_mut(name), shape.server_default()) {
                (None | Some(Value::Null), Some(default)) => {
                    members.insert(name.to_string(), default.clone());
                }
                (Some(member), _) => shape.fill_defaults(member),
                (None, None) if shape.has_defaults() => {
                    let mut created = Value::Object(Map::new());
                    shape.fill_defaults(&mut created);
                    members.insert(name.to_string(), created);
                }
                (None, None) => {}
            }
        }
    }

    /// Whether a member of this object (at any depth) has an `x-server-default`.
    fn has_defaults(&self) -> bool {
        self.members().any(|name| {
            self.member(name)
                .is_some_and(|shape| shape.server_default().is_some() || shape.has_defaults())
        })
    }

    /// The schema that allows anything (an open object's members).
    fn any(set: &'a SchemaSet) -> Self {
        static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
        Self {
            set,
            schema: EMPTY.get_or_init(Map::new),
            secret: false,
            default: None,
        }
    }
}

/// How two answers' values of one schema compare ([`Shape::comparison`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Comparison<'a> {
    /// As written; an array item by item.
    Exact,
    /// An array whose order and repeats mean nothing (`x-compare: set`).
    Set,
    /// An array of objects, each named by this member: two arrays are paired item by item by it,
    /// whatever their order (`x-compare: {key: MEMBER}`).
    Keyed(&'a str),
    /// A string whose ASCII letter case the server may rewrite: a value of a set, a UUID, or
    /// `x-compare: case-insensitive` (a type keyword).
    CaseInsensitive,
}

/// The comparison an `x-compare` value names; `None` for a value of no known form.
fn comparison_of(value: &Value) -> Option<Comparison<'_>> {
    match value {
        Value::String(text) if text == "set" => Some(Comparison::Set),
        Value::String(text) if text == "case-insensitive" => Some(Comparison::CaseInsensitive),
        Value::Object(map) if map.len() == 1 => map
            .get("key")
            .and_then(Value::as_str)
            .map(Comparison::Keyed),
        _ => None,
    }
}

/// Whether the member `name`, of schema `shape` where the spec has one, holds a secret: the spec
/// types it as `Secret`, or the redaction rule calls it secret by its name (a setting the spec does
/// not list, such as `kafka_sasl_password`). The one answer for the SDK's redaction of requests, its
/// fingerprints, its plans and its exports.
pub fn is_secret(name: &str, shape: Option<&Shape<'_>>) -> bool {
    shape.is_some_and(Shape::is_secret) || super::redact::is_secret_member(name)
}

/// Calls `visit` with the path and the value of every secret scalar of `value` (a value of the
/// schema `shape`): each scalar under a member [`is_secret`] says is one, at any depth below it (a
/// number or a boolean written where a password goes is a secret too, and so is every scalar of an
/// array or object under a secret name; `null` is nothing).
pub fn for_each_secret(
    value: &mut Value,
    shape: Option<Shape<'_>>,
    visit: &mut dyn FnMut(&str, &mut Value),
) {
    for_each_secret_value(value, shape, &|_| false, &mut |path, secret| {
        each_scalar(secret, &mut path.to_string(), visit);
    });
}

/// Calls `visit` with the path and the whole value of every secret of `value` (a value of the
/// schema `shape`): each member [`is_secret`] names, whatever it holds (a scalar, or an array or an
/// object as a whole; `null` is nothing), and each other string for which `holds_secret` is true
/// (a recorded state asks the redaction rule, which finds a password in a URI's userinfo or a
/// signature in a query).
pub fn for_each_secret_value(
    value: &mut Value,
    shape: Option<Shape<'_>>,
    holds_secret: &dyn Fn(&str) -> bool,
    visit: &mut dyn FnMut(&str, &mut Value),
) {
    walk_secrets(value, shape, holds_secret, &mut String::new(), visit);
}

fn walk_secrets(
    value: &mut Value,
    shape: Option<Shape<'_>>,
    holds_secret: &dyn Fn(&str) -> bool,
    path: &mut String,
    visit: &mut dyn FnMut(&str, &mut Value),
) {
    match value {
        Value::Object(members) => {
            for (name, member) in members.iter_mut() {
                let inner = shape.and_then(|s| s.member(name));
                let length = enter_member(path, name);
                if !member.is_null() && is_secret(name, inner.as_ref()) {
                    visit(path, member);
                } else {
                    walk_secrets(member, inner, holds_secret, path, visit);
                }
                path.truncate(length);
            }
        }
        Value::Array(items) => {
            let inner = shape.and_then(|s| s.items());
            for (i, item) in items.iter_mut().enumerate() {
                let length = enter_item(path, i);
                walk_secrets(item, inner, holds_secret, path, visit);
                path.truncate(length);
            }
        }
        Value::String(text) if holds_secret(text) => visit(path, value),
        _ => {}
    }
}

/// Calls `visit` with the path and the value of every scalar of `value` (`null` is nothing).
fn each_scalar(value: &mut Value, path: &mut String, visit: &mut dyn FnMut(&str, &mut Value)) {
    match value {
        Value::Null => {}
        Value::Object(members) => {
            for (name, member) in members.iter_mut() {
                let length = enter_member(path, name);
                each_scalar(member, path, visit);
                path.truncate(length);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                let length = enter_item(path, i);
                each_scalar(item, path, visit);
                path.truncate(length);
            }
        }
        scalar => visit(path, scalar),
    }
}

/// Appends `.name` (or `name` at the top) to `path`; answers the length to cut back to.
fn enter_member(path: &mut String, name: &str) -> usize {
    let length = path.len();
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(name);
    length
}

/// Appends `[i]` to `path`; answers the length to cut back to.
fn enter_item(path: &mut String, i: usize) -> usize {
    let length = path.len();
    path.push_str(&format!("[{i}]"));
    length
}

/// The text of a secret scalar: a string as it is, a number or a boolean as JSON writes it.
pub fn secret_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// One step of a path into a value.
#[derive(Debug, Clone)]
enum Segment {
    Member(String),
    Index(usize),
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
        "integer" => super::is_integer(value),
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
                "arn: must be an ARN (arn:<partition>:<service>:<region>:<account>:<resource>)",
                "at: is not an RFC 3339 date-time (2026-03-01T12:00:00Z)",
                "command: must be one of \"start\", \"stop\"",
                "cpu: must be a CPU quantity (500m, or cores: 1, 0.25)",
                "replicas: must be between 1 and 20, got 50",
            ]
        );
        // A value of neither branch's type matches no shape.
        assert_eq!(
            messages(&set, "T", json!({"cpu": true})),
            ["cpu: matches none of the allowed shapes"]
        );
        assert_eq!(
            messages(&set, "T", json!({"replicas": 0})),
            ["replicas: must be between 1 and 20, got 0"]
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
            (
                json!({"T": {"type": "array", "x-compare": "sorted"}}),
                "x-compare is `set`, `case-insensitive` or {key: MEMBER}",
            ),
        ] {
            let error = SchemaSet::new(&json!({ "components": { "schemas": schemas } }))
                .err()
                .unwrap_or_default();
            assert!(error.contains(expected), "{expected:?} not in {error:?}");
        }
    }

    #[test]
    fn each_member_compares_as_the_spec_says() {
        let schemas = SchemaSet::management();
        let request = schemas.schema("PipeCreateRequest").unwrap();
        let destination = request.member("destination").unwrap();
        let columns = destination.member("columns").unwrap();
        assert_eq!(columns.comparison(), Comparison::Keyed("name"));
        let column_type = columns.items().unwrap().member("type").unwrap();
        assert_eq!(column_type.comparison(), Comparison::CaseInsensitive);
        assert_eq!(
            destination.member("table").unwrap().comparison(),
            Comparison::Exact
        );
        assert_eq!(
            request.member("fieldMappings").unwrap().comparison(),
            Comparison::Keyed("sourceField")
        );
        let kafka = request.member("source").unwrap().member("kafka").unwrap();
        let endpoints = kafka.member("reversePrivateEndpointIds").unwrap();
        assert_eq!(endpoints.comparison(), Comparison::Set);
        assert_eq!(
            endpoints.items().unwrap().comparison(),
            Comparison::CaseInsensitive,
            "a UUID"
        );
        let storage = request
            .member("source")
            .unwrap()
            .member("objectStorage")
            .unwrap();
        assert_eq!(
            storage.member("compression").unwrap().comparison(),
            Comparison::CaseInsensitive,
            "a value of a set"
        );
    }

    #[test]
    fn both_embedded_specs_are_wholly_enforced() {
        for set in [SchemaSet::management(), SchemaSet::observability()] {
            assert!(set.schemas.len() > 5);
        }
    }

    #[test]
    fn declared_members_only_reports_unknown_members_where_the_schema_is_closed() {
        let set = set(json!({
            "T": {"type": "object", "properties": {
                "a": {"type": "integer", "minimum": 0.5},
                "open": {"type": "object", "additionalProperties": {}, "properties": {"x": {"type": "integer", "maximum": 3}}},
            }}
        }));
        let value = json!({"a": 0, "b": 1, "open": {"x": 4, "y": [1]}});
        let strict: Vec<String> = set
            .check("T", &value, Members::Declared)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            strict,
            [
                "a: must be at least 0.5, got 0",
                "b: unknown member; expected one of: a, open",
                "open.x: must be at most 3, got 4",
            ]
        );
        assert_eq!(messages(&set, "T", value).len(), 2, "open by default");
    }

    #[test]
    fn shapes_follow_references_and_know_secrets_and_defaults() {
        let set = set(json!({
            "Secret": {"type": "string", "x-api-raw-type": "Secret"},
            "Req": {"type": "object", "properties": {
                "password": {"$ref": "#/components/schemas/Secret"},
                "n": {"type": "integer", "x-server-default": 4},
                "list": {"type": "array", "items": {"$ref": "#/components/schemas/Item"}},
                "open": {"type": "object", "additionalProperties": {}},
            }},
            "Item": {"type": "object", "properties": {"name": {"type": "string"}}},
        }));
        let shape = set.schema("Req").unwrap();
        assert!(shape.member("password").unwrap().is_secret());
        assert!(!shape.member("n").unwrap().is_secret());
        assert_eq!(shape.member("n").unwrap().server_default(), Some(&json!(4)));
        assert_eq!(shape.member("password").unwrap().server_default(), None);
        let item = shape.member("list").unwrap().items().unwrap();
        assert!(item.declares("name") && !item.declares("other") && !item.is_open());
        assert!(item.member("other").is_none());
        let open = shape.member("open").unwrap();
        assert!(open.is_open() && open.member("anything").is_some());
        assert_eq!(
            shape.members().collect::<Vec<_>>(),
            ["list", "n", "open", "password"]
        );
        assert!(set.schema("Missing").is_none());

        let responses = super::tests::set(json!({
            "Res": {"type": "object", "additionalProperties": {}, "properties": {
                "list": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
                "open": {"type": "object", "additionalProperties": {}},
            }},
        }));
        let response = responses.schema("Res").unwrap();
        assert!(shape.is_request_only("password", Some(&response)));
        assert!(!shape.is_request_only("list", Some(&response)));
        assert!(!shape.is_request_only("undeclared", Some(&response)));
        let mut value = json!({"password": "p", "n": 1, "list": [{"name": "a", "x": 2}], "open": {"k": 1}, "later": true});
        shape.drop_request_only(&response, &mut value);
        assert_eq!(
            value,
            json!({"list": [{"name": "a"}], "open": {"k": 1}, "later": true}),
            "request-only members go even where the response is open"
        );
    }

    #[test]
    fn server_defaults_fill_what_a_create_leaves_out() {
        let set = set(json!({
            "Req": {"type": "object", "properties": {
                "scaling": {"$ref": "#/components/schemas/Scaling"},
                "name": {"type": "string"},
            }},
            "Scaling": {"type": "object", "properties": {
                "replicas": {"type": "integer", "x-server-default": 1},
                "cpu": {"type": "integer", "x-server-default": 500},
                "other": {"type": "integer"},
            }},
        }));
        let shape = set.schema("Req").unwrap();
        let mut empty = json!({"name": "p"});
        shape.fill_defaults(&mut empty);
        assert_eq!(
            empty,
            json!({"name": "p", "scaling": {"replicas": 1, "cpu": 500}})
        );
        let mut given = json!({"scaling": {"replicas": 3, "cpu": null}});
        shape.fill_defaults(&mut given);
        assert_eq!(given, json!({"scaling": {"replicas": 3, "cpu": 500}}));
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

    #[test]
    fn every_scalar_under_a_secret_name_is_a_secret_and_whole_values_are_visited() {
        let value = json!({
            "name": "p",
            "credentials": {"username": "u", "password": "p4ss"},
            "settings": {"kafka_sasl_password": ["first", "second"],
                         "ssl_keystore_secret": {"key": "k3y", "none": null},
                         "sasl_jaas": "x password=\"in-text\""},
        });
        let mut scalars = Vec::new();
        for_each_secret(&mut value.clone(), None, &mut |path, v| {
            scalars.push(format!("{path}={}", secret_text(v)));
        });
        assert_eq!(
            scalars,
            [
                "credentials.password=p4ss",
                "settings.kafka_sasl_password[0]=first",
                "settings.kafka_sasl_password[1]=second",
                "settings.ssl_keystore_secret.key=k3y",
            ]
        );
        let mut whole = Vec::new();
        let holds = |text: &str| text.contains("password=");
        for_each_secret_value(&mut value.clone(), None, &holds, &mut |path, v| {
            whole.push(format!("{path}={v}"));
        });
        assert_eq!(
            whole,
            [
                "credentials.password=\"p4ss\"",
                "settings.kafka_sasl_password=[\"first\",\"second\"]",
                "settings.sasl_jaas=\"x password=\\\"in-text\\\"\"",
                "settings.ssl_keystore_secret={\"key\":\"k3y\",\"none\":null}",
            ]
        );
    }
}
