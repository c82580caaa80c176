//! Reading an OpenAPI document and checking what the generator relies on.
//!
//! progenitor panics or emits broken code on some inputs (an unresolved `$ref`, a JSON body without a
//! schema, a version other than 3.0.x). These checks run first so that a broken spec is reported as a
//! list of readable problems, each with its location in the document.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result, bail};
use openapiv3::{OpenAPI, Operation, ReferenceOr, StatusCode};

/// The extension that names a hand-written `api-raw` type to use instead of a generated one.
pub const RAW_TYPE_EXTENSION: &str = "x-api-raw-type";

/// The extension on every operation that says whether repeating it changes nothing (`true`).
pub const IDEMPOTENT_EXTENSION: &str = "x-idempotent";

/// The extension on every operation that is not idempotent: how to find out whether a call whose
/// outcome is unknown was applied.
pub const RECONCILE_EXTENSION: &str = "x-reconcile";

/// Reads and parses one OpenAPI document (YAML).
pub fn load(path: &Path) -> Result<OpenAPI> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the spec {}", path.display()))?;
    parse(&text).with_context(|| format!("{} is not a valid OpenAPI document", path.display()))
}

/// Parses an OpenAPI document from YAML text and checks it with [`lint`].
pub fn parse(text: &str) -> Result<OpenAPI> {
    let spec: OpenAPI = serde_norway::from_str(text).map_err(|e| anyhow::anyhow!("{e}"))?;
    let problems = lint(&spec);
    if !problems.is_empty() {
        bail!(
            "{} problem(s):\n  - {}",
            problems.len(),
            problems.join("\n  - ")
        );
    }
    Ok(spec)
}

/// Every operation of the document with its path and lower-case method, in document order.
pub fn operations(spec: &OpenAPI) -> Vec<(&str, &'static str, &Operation)> {
    let mut out = Vec::new();
    for (path, item) in &spec.paths.paths {
        if let ReferenceOr::Item(item) = item {
            for (method, op) in item.iter() {
                out.push((path.as_str(), method_name(method), op));
            }
        }
    }
    out
}

fn method_name(method: &str) -> &'static str {
    match method {
        "get" => "GET",
        "put" => "PUT",
        "post" => "POST",
        "delete" => "DELETE",
        "options" => "OPTIONS",
        "head" => "HEAD",
        "patch" => "PATCH",
        "trace" => "TRACE",
        _ => "UNKNOWN",
    }
}

/// Returns every problem found, each naming where it is; empty when the document is usable.
pub fn lint(spec: &OpenAPI) -> Vec<String> {
    let mut problems = Vec::new();
    if !spec.openapi.trim().starts_with("3.0.") {
        problems.push(format!(
            "openapi: version {:?} is not supported; the generator reads OpenAPI 3.0.x only",
            spec.openapi
        ));
    }

    let doc = serde_json::to_value(spec).unwrap_or_default();
    let mut refs = Vec::new();
    collect_refs(&doc, "#", &mut refs);
    for (at, target) in refs {
        if !target.starts_with("#/") {
            problems.push(format!(
                "{at}: external reference {target:?} is not supported"
            ));
        } else if doc.pointer(&target[1..]).is_none() {
            problems.push(format!("{at}: reference {target:?} does not resolve"));
        }
    }

    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    for (path, item) in &spec.paths.paths {
        if let ReferenceOr::Reference { reference } = item {
            problems.push(format!(
                "paths.{path}: a path item may not be a reference ({reference})"
            ));
        }
    }
    for (path, method, op) in operations(spec) {
        let at = format!("paths.{path}.{}", method.to_lowercase());
        match &op.operation_id {
            None => problems.push(format!("{at}: operationId is missing")),
            Some(id) if id.trim().is_empty() => {
                problems.push(format!("{at}: operationId is empty"))
            }
            Some(id) => {
                if let Some(first) = seen.insert(id.clone(), at.clone()) {
                    problems.push(format!(
                        "{at}: operationId {id:?} is already used by {first}"
                    ));
                }
            }
        }
        match op.extensions.get(IDEMPOTENT_EXTENSION) {
            Some(serde_json::Value::Bool(true)) => {}
            Some(serde_json::Value::Bool(false)) => {
                let reconcile = op.extensions.get(RECONCILE_EXTENSION);
                if reconcile
                    .and_then(|v| v.as_str())
                    .is_none_or(|text| text.trim().is_empty())
                {
                    problems.push(format!(
                        "{at}: an operation with {IDEMPOTENT_EXTENSION}: false needs {RECONCILE_EXTENSION}, the text that says how to find out whether it was applied"
                    ));
                }
            }
            Some(other) => problems.push(format!(
                "{at}.{IDEMPOTENT_EXTENSION}: {other} is not true or false"
            )),
            None => problems.push(format!(
                "{at}: {IDEMPOTENT_EXTENSION} is missing (true when repeating the operation changes nothing)"
            )),
        }
        let has_success = op.responses.responses.keys().any(is_success);
        if !has_success {
            problems.push(format!("{at}: no 2xx response is described"));
        }
        for (status, response) in &op.responses.responses {
            if let ReferenceOr::Item(response) = response {
                for (media, content) in &response.content {
                    if media.starts_with("application/json") && content.schema.is_none() {
                        problems.push(format!(
                            "{at}.responses.{status}.content.{media}: a JSON body needs a schema"
                        ));
                    }
                }
            }
        }
    }

    if let Some(components) = &spec.components {
        for (name, schema) in &components.schemas {
            let ReferenceOr::Item(schema) = schema else {
                continue;
            };
            if let Some(value) = schema.schema_data.extensions.get(RAW_TYPE_EXTENSION) {
                match value.as_str() {
                    Some(ty) if is_rust_ident(ty) => {}
                    _ => problems.push(format!(
                        "components.schemas.{name}.{RAW_TYPE_EXTENSION}: {value} is not a Rust type name"
                    )),
                }
            }
        }
    }
    problems
}

/// Whether a response status is a success (2xx).
pub fn is_success(status: &StatusCode) -> bool {
    match status {
        StatusCode::Code(code) => (200..300).contains(code),
        StatusCode::Range(range) => *range == 2,
    }
}

fn is_rust_ident(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn collect_refs(value: &serde_json::Value, at: &str, out: &mut Vec<(String, String)>) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, child) in map {
                if key == "$ref" {
                    if let Some(target) = child.as_str() {
                        out.push((at.to_string(), target.to_string()));
                    }
                } else {
                    collect_refs(child, &format!("{at}/{key}"), out);
                }
            }
        }
        serde_json::Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                collect_refs(child, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = r##"
openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /a:
    get:
      operationId: getA
      x-idempotent: true
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {$ref: "#/components/schemas/A"}
components:
  schemas:
    A: {type: object, properties: {x: {type: string}}}
"##;

    #[test]
    fn a_valid_document_parses() {
        let spec = parse(MINIMAL).unwrap();
        assert_eq!(operations(&spec).len(), 1);
    }

    #[test]
    fn an_unresolved_reference_is_named() {
        let broken = MINIMAL.replace("schemas/A\"}", "schemas/Missing\"}");
        let err = format!("{:#}", parse(&broken).unwrap_err());
        assert!(
            err.contains("\"#/components/schemas/Missing\" does not resolve"),
            "{err}"
        );
        assert!(err.contains("/paths//a/get/responses/200"), "{err}");
    }

    #[test]
    fn duplicate_and_missing_operation_ids_are_named() {
        let doubled = MINIMAL.replace(
            "paths:\n",
            "paths:\n  /b:\n    get:\n      operationId: getA\n      x-idempotent: true\n      responses: {\"200\": {description: ok}}\n  /c:\n    get:\n      x-idempotent: true\n      responses: {\"200\": {description: ok}}\n",
        );
        let err = format!("{:#}", parse(&doubled).unwrap_err());
        assert!(
            err.contains("operationId \"getA\" is already used by"),
            "{err}"
        );
        assert!(
            err.contains("paths./c.get: operationId is missing"),
            "{err}"
        );
    }

    #[test]
    fn an_unsupported_version_is_named() {
        let err = format!(
            "{:#}",
            parse(&MINIMAL.replace("3.0.3", "3.1.0")).unwrap_err()
        );
        assert!(err.contains("OpenAPI 3.0.x only"), "{err}");
    }

    #[test]
    fn yaml_errors_carry_a_location() {
        let err = format!("{:#}", parse("openapi: 3.0.3\ninfo: [").unwrap_err());
        assert!(err.contains("line"), "{err}");
    }

    #[test]
    fn every_operation_says_whether_it_is_idempotent() {
        let missing = MINIMAL.replace("      x-idempotent: true\n", "");
        let err = format!("{:#}", parse(&missing).unwrap_err());
        assert!(
            err.contains("paths./a.get: x-idempotent is missing"),
            "{err}"
        );
        let not_bool = MINIMAL.replace("x-idempotent: true", "x-idempotent: sometimes");
        let err = format!("{:#}", parse(&not_bool).unwrap_err());
        assert!(
            err.contains("x-idempotent: \"sometimes\" is not true or false"),
            "{err}"
        );
        let create = MINIMAL.replace("x-idempotent: true", "x-idempotent: false");
        let err = format!("{:#}", parse(&create).unwrap_err());
        assert!(err.contains("needs x-reconcile"), "{err}");
        let reconciled = MINIMAL.replace(
            "x-idempotent: true",
            "x-idempotent: false\n      x-reconcile: look it up",
        );
        assert!(parse(&reconciled).is_ok());
    }

    #[test]
    fn a_bad_raw_type_name_is_named() {
        let bad = MINIMAL.replace(
            "A: {type: object,",
            "A: {x-api-raw-type: \"not a type\", type: object,",
        );
        let err = format!("{:#}", parse(&bad).unwrap_err());
        assert!(err.contains("components.schemas.A.x-api-raw-type"), "{err}");
    }
}
