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

mod check;
mod impact;
mod secrets;
mod shape;
#[cfg(test)]
mod tests;

pub use check::{Checks, Members, Rule, Violation};
pub use impact::{Condition, DataImpact};
pub use secrets::{for_each_secret, for_each_secret_value, is_secret, secret_text};
pub use shape::{Comparison, Shape};

/// The extension naming a hand-written type; `Secret` marks a secret member.
const RAW_TYPE: &str = "x-api-raw-type";

/// The extension giving the value the server fills in for a member a create leaves out.
const SERVER_DEFAULT: &str = "x-server-default";

/// The extension saying how two answers' values of a schema compare ([`Comparison`]): `set`,
/// `case-insensitive`, or `{key: MEMBER}`.
const COMPARE: &str = "x-compare";

/// The extension saying what deleting or replacing a pipe does to the data ([`DataImpact`]).
const DATA_IMPACT: &str = "x-data-impact";

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
                COMPARE if shape::comparison_of(value).is_none() => {
                    return Err(format!(
                        "{at}: {COMPARE} is `set`, `case-insensitive` or {{key: MEMBER}}, not {value}"
                    ));
                }
                DATA_IMPACT => {
                    impact::entries_of(value).map_err(|why| format!("{at}: {why}"))?;
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
}
