//! Request validation against the request schemas of `spec/management.yaml` itself, so the emulator
//! and the generated SDK read the same contract.

use serde_json::Value;

use crate::redact::SecretNames;

/// The management spec, compiled into the emulator.
pub const MANAGEMENT_SPEC: &str = include_str!("../../../spec/management.yaml");

/// The observability spec (its operations name the requests in the log).
#[cfg(test)]
pub const OBSERVABILITY_SPEC: &str = include_str!("../../../spec/observability.yaml");

/// Validators of the request bodies.
pub struct Schemas {
    pipe_create: jsonschema::Validator,
    service_state: jsonschema::Validator,
    private_endpoint: jsonschema::Validator,
    secret_names: SecretNames,
}

impl std::fmt::Debug for Schemas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Schemas")
    }
}

/// Which request body.
#[derive(Debug, Clone, Copy)]
pub enum Body {
    /// `PipeCreateRequest`.
    PipeCreate,
    /// `ServiceStateChangeRequest`.
    ServiceState,
    /// `PrivateEndpointCreateRequest`.
    PrivateEndpoint,
}

impl Schemas {
    /// Compiles the request schemas of the spec.
    pub fn load() -> Result<Self, String> {
        let spec: Value = serde_norway::from_str(MANAGEMENT_SPEC)
            .map_err(|e| format!("spec/management.yaml: {e}"))?;
        let compile = |name: &str| -> Result<jsonschema::Validator, String> {
            let mut root = serde_json::json!({ "$ref": format!("#/components/schemas/{name}") });
            root["components"] = spec["components"].clone();
            nullable_to_type_arrays(&mut root);
            jsonschema::options()
                .with_draft(jsonschema::Draft::Draft202012)
                .should_validate_formats(true)
                .build(&root)
                .map_err(|e| format!("schema {name}: {e}"))
        };
        Ok(Self {
            pipe_create: compile("PipeCreateRequest")?,
            service_state: compile("ServiceStateChangeRequest")?,
            private_endpoint: compile("PrivateEndpointCreateRequest")?,
            secret_names: SecretNames::from_spec(&spec),
        })
    }

    /// The names of the members the spec types as `Secret`.
    pub fn secret_names(&self) -> SecretNames {
        self.secret_names.clone()
    }

    /// Every way `value` breaks the schema of `body`, each as `path: message`.
    pub fn problems(&self, body: Body, value: &Value) -> Vec<String> {
        let validator = match body {
            Body::PipeCreate => &self.pipe_create,
            Body::ServiceState => &self.service_state,
            Body::PrivateEndpoint => &self.private_endpoint,
        };
        validator
            .iter_errors(value)
            .map(|error| {
                // Name the rule, never the value: a mistyped password must not come back in an answer.
                let shown = serde_json::to_string(error.instance().as_ref()).unwrap_or_default();
                let message = error.to_string().replacen(&shown, "the value", 1);
                format!(
                    "{}: {message}",
                    field_path(&error.instance_path().to_string())
                )
            })
            .collect()
    }
}

/// OpenAPI 3.0 says `nullable: true`; JSON Schema says `type: [X, "null"]`.
fn nullable_to_type_arrays(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if map.get("nullable") == Some(&Value::Bool(true))
                && let Some(Value::String(ty)) = map.get("type").cloned()
            {
                map.insert("type".into(), serde_json::json!([ty, "null"]));
            }
            map.values_mut().for_each(nullable_to_type_arrays);
        }
        Value::Array(items) => items.iter_mut().for_each(nullable_to_type_arrays),
        _ => {}
    }
}

/// `/source/kafka/reversePrivateEndpointIds/0` -> `source.kafka.reversePrivateEndpointIds[0]`.
pub fn field_path(pointer: &str) -> String {
    let mut out = String::new();
    for segment in pointer.split('/').filter(|s| !s.is_empty()) {
        let segment = segment.replace("~1", "/").replace("~0", "~");
        if segment.bytes().all(|b| b.is_ascii_digit()) {
            out.push_str(&format!("[{segment}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&segment);
        }
    }
    if out.is_empty() {
        "body".to_string()
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spec_request_schemas_compile_and_name_fields() {
        let schemas = Schemas::load().unwrap();
        let ok = serde_json::json!({"name": "p", "source": {"kafka": {"brokers": "b:9092"}}, "destination": {"database": "d"}});
        assert!(
            schemas.problems(Body::PipeCreate, &ok).is_empty(),
            "{:?}",
            schemas.problems(Body::PipeCreate, &ok)
        );
        let bad = serde_json::json!({
            "name": "",
            "source": {"kafka": {"iamRole": "nope", "reversePrivateEndpointIds": ["x"], "offset": {"timestamp": "2026-03-01"}}},
            "destination": {"database": "d"},
            "scaling": {"replicas": 50},
            "settings": {"db_max_threads": 65}
        });
        let problems = schemas.problems(Body::PipeCreate, &bad).join("\n");
        for path in [
            "name:",
            "source.kafka.iamRole:",
            "source.kafka.reversePrivateEndpointIds[0]:",
            "source.kafka.offset.timestamp:",
            "scaling.replicas:",
            "settings.db_max_threads:",
        ] {
            assert!(problems.contains(path), "{path} missing from {problems}");
        }
        let secret = serde_json::json!({"name": "p", "source": {"kafka": {"credentials": {"username": "u", "password": 123456789}}}, "destination": {"database": "d"}});
        let problems = schemas.problems(Body::PipeCreate, &secret).join("\n");
        assert!(
            problems.contains("source.kafka.credentials.password:"),
            "{problems}"
        );
        assert!(
            !problems.contains("123456789"),
            "the value is not echoed: {problems}"
        );
        let missing = schemas.problems(Body::PipeCreate, &serde_json::json!({}));
        assert!(
            missing
                .iter()
                .any(|p| p.contains("\"name\" is a required property")),
            "{missing:?}"
        );
        assert!(
            schemas
                .problems(
                    Body::ServiceState,
                    &serde_json::json!({"command": "reboot"})
                )
                .len()
                == 1
        );
        let nulls = serde_json::json!({"name": "p", "source": {}, "destination": {"database": "d", "tableDefinition": {"partitionBy": null}}});
        assert!(
            schemas.problems(Body::PipeCreate, &nulls).is_empty(),
            "nullable fields accept null"
        );
    }

    #[test]
    fn pointers_become_field_paths() {
        assert_eq!(
            field_path("/source/kafka/reversePrivateEndpointIds/0"),
            "source.kafka.reversePrivateEndpointIds[0]"
        );
        assert_eq!(field_path(""), "body");
    }
}
