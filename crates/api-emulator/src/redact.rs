//! Secret values out of what the emulator shows about requests and state: the request log and the
//! `/_emulator/services` and `/_emulator/pipes` views.
//!
//! A member is secret when the spec types it as `Secret` (passwords, secret keys, connection
//! strings), or when its name says so (`password`, `secret`, `token`, `connectionString`, `apiKey`,
//! `privateKey`), which also covers members of source kinds the spec does not know.

use std::collections::BTreeSet;

use serde_json::Value;

/// What replaces a secret value.
pub const REDACTED: &str = "[REDACTED]";

/// The names of the members the spec types as `Secret`.
#[derive(Debug, Clone, Default)]
pub struct SecretNames(BTreeSet<String>);

impl SecretNames {
    /// Reads them from the management spec (as JSON).
    pub fn from_spec(spec: &Value) -> Self {
        let mut names = BTreeSet::new();
        if let Some(schemas) = spec
            .pointer("/components/schemas")
            .and_then(Value::as_object)
        {
            for schema in schemas.values() {
                collect(schema, &mut names);
            }
        }
        Self(names)
    }

    /// Whether a member of this name holds a secret.
    pub fn is_secret(&self, name: &str) -> bool {
        if self.0.contains(name) {
            return true;
        }
        let lower = name.to_ascii_lowercase();
        [
            "password",
            "secret",
            "token",
            "connectionstring",
            "apikey",
            "privatekey",
        ]
        .iter()
        .any(|word| lower.contains(word))
    }

    /// Replaces every secret member's value in `value` (at any depth) by `"[REDACTED]"`; a value
    /// under a secret name is replaced whole, whatever its type.
    pub fn redact(&self, value: &mut Value) {
        match value {
            Value::Object(members) => {
                for (name, member) in members.iter_mut() {
                    if member.is_null() {
                        continue;
                    }
                    if self.is_secret(name) {
                        *member = Value::String(REDACTED.into());
                    } else {
                        self.redact(member);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|item| self.redact(item)),
            _ => {}
        }
    }
}

fn collect(schema: &Value, names: &mut BTreeSet<String>) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (name, property) in properties {
        let is_secret = property.get("$ref").and_then(Value::as_str)
            == Some("#/components/schemas/Secret")
            || property.get("format").and_then(Value::as_str) == Some("password");
        if is_secret {
            names.insert(name.clone());
        }
        collect(property, names);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> SecretNames {
        let spec: Value = serde_norway::from_str(crate::schema::MANAGEMENT_SPEC).unwrap();
        SecretNames::from_spec(&spec)
    }

    #[test]
    fn the_spec_secret_members_are_found() {
        let names = names();
        for name in ["password", "secretKey", "connectionString"] {
            assert!(names.0.contains(name), "{name} missing from {:?}", names.0);
        }
        assert!(!names.is_secret("username") && !names.is_secret("accessKeyId"));
    }

    #[test]
    fn secrets_are_replaced_at_any_depth_and_nothing_else_is() {
        let mut body = serde_json::json!({
            "name": "orders",
            "source": {
                "kafka": {"brokers": "b:9092", "credentials": {"username": "u", "password": "hunter2"}},
                "postgres": {"connectionString": "postgres://u:pw@h/db"},
                "futureKind": {"apiToken": "tok", "nested": [{"secretKey": "k"}]}
            },
            "settings": {"password_policy": null}
        });
        names().redact(&mut body);
        let text = body.to_string();
        for secret in ["hunter2", "postgres://", "\"tok\"", "\"k\""] {
            assert!(!text.contains(secret), "{secret} leaked: {text}");
        }
        assert_eq!(body["source"]["kafka"]["brokers"], "b:9092");
        assert_eq!(body["source"]["kafka"]["credentials"]["password"], REDACTED);
        assert_eq!(body["source"]["kafka"]["credentials"]["username"], "u");
        assert_eq!(body["source"]["postgres"]["connectionString"], REDACTED);
        assert_eq!(
            body["source"]["futureKind"]["nested"][0]["secretKey"],
            REDACTED
        );
        assert!(
            body["settings"]["password_policy"].is_null(),
            "null stays null"
        );
    }
}
