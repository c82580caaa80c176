//! Request validation against the request schemas of `spec/management.yaml` itself (as `cargo xtask
//! codegen` generated them into `api-raw`), so the emulator and the generated SDK read the same
//! contract.

use serde_json::Value;

use crate::json_schema::SchemaSet;

/// The spec's schemas, to validate request bodies.
pub struct Schemas {
    set: &'static SchemaSet,
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
    /// The schemas of the spec (generated into `api_raw::management::SCHEMAS` by `cargo xtask
    /// codegen`, which refuses one the validator would not wholly enforce), checked to hold the
    /// request bodies the emulator validates.
    pub fn load() -> Result<Self, String> {
        let set = SchemaSet::management();
        for body in [Body::PipeCreate, Body::ServiceState, Body::PrivateEndpoint] {
            if !set.contains(body.schema()) {
                return Err(format!(
                    "spec/management.yaml has no schema {}",
                    body.schema()
                ));
            }
        }
        Ok(Self { set })
    }

    /// Every way `value` breaks the schema of `body`, each as `path: message`; a message names the
    /// rule, never the value (a mistyped password must not come back in an answer).
    pub fn problems(&self, body: Body, value: &Value) -> Vec<String> {
        self.set
            .violations(body.schema(), value)
            .iter()
            .map(ToString::to_string)
            .collect()
    }
}

impl Body {
    fn schema(self) -> &'static str {
        match self {
            Body::PipeCreate => "PipeCreateRequest",
            Body::ServiceState => "ServiceStateChangeRequest",
            Body::PrivateEndpoint => "PrivateEndpointCreateRequest",
        }
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
            missing.iter().any(|p| p == "name: is required"),
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
}
