//! [`Secret`]: a string that never shows itself.

use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A secret value: a password, a secret key or a connection string.
///
/// It travels on the wire as a plain JSON string, but its `Debug` output is `Secret([REDACTED])`, it has
/// no `Display`, and its memory is zeroed on drop (it wraps [`secrecy::SecretString`]). Read it with
/// [`Secret::expose`] only where the value itself is needed.
///
/// ```
/// use api_raw::support::Secret;
///
/// let password = Secret::new("hunter2");
/// assert_eq!(format!("{password:?}"), "Secret([REDACTED])");
/// assert_eq!(password.expose(), "hunter2");
/// ```
#[derive(Clone)]
pub struct Secret(SecretString);

impl Secret {
    /// Wraps a secret value.
    pub fn new(value: impl Into<String>) -> Self {
        Self(SecretString::from(value.into()))
    }

    /// The secret value itself. Never log or print it.
    pub fn expose(&self) -> &str {
        self.0.expose_secret()
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret([REDACTED])")
    }
}

impl PartialEq for Secret {
    /// Compares the values, so that types holding a secret can be compared in tests.
    fn eq(&self, other: &Self) -> bool {
        self.expose() == other.expose()
    }
}

impl Eq for Secret {}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Self::new(value)
    }
}

impl From<&str> for Secret {
    fn from(value: &str) -> Self {
        Self::new(value)
    }
}

impl Serialize for Secret {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.expose())
    }
}

impl<'de> Deserialize<'de> for Secret {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Self::new)
    }
}

#[cfg(test)]
mod tests {
    use super::Secret;

    #[test]
    fn debug_hides_the_value_and_the_wire_keeps_it() {
        let secret = Secret::new("s3cr3t-value");
        assert!(!format!("{secret:?}").contains("s3cr3t"));
        assert!(!format!("{:?}", Some(secret.clone())).contains("s3cr3t"));
        assert_eq!(serde_json::to_string(&secret).unwrap(), "\"s3cr3t-value\"");
        let back: Secret = serde_json::from_str("\"s3cr3t-value\"").unwrap();
        assert_eq!(back.expose(), "s3cr3t-value");
    }
}
