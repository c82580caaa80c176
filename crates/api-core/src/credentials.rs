//! [`Credentials`]: how a client authenticates.

use std::fmt;

use api_raw::support::Secret;
use reqwest::header::HeaderValue;

use crate::error::ConfigError;

/// How a client authenticates. `Debug` never shows the key secret or the token.
#[derive(Clone)]
#[non_exhaustive]
pub enum Credentials {
    /// HTTP Basic with an API key id and key secret (the management API).
    Basic {
        /// The key id (not secret).
        key_id: String,
        /// The key secret.
        key_secret: Secret,
    },
    /// A bearer token (the observability API's personal API access key).
    Bearer(Secret),
}

impl Credentials {
    /// Basic credentials from a key id and a key secret.
    pub fn basic(key_id: impl Into<String>, key_secret: impl Into<Secret>) -> Self {
        Self::Basic {
            key_id: key_id.into(),
            key_secret: key_secret.into(),
        }
    }

    /// A bearer token.
    pub fn bearer(token: impl Into<Secret>) -> Self {
        Self::Bearer(token.into())
    }

    /// What a shared rate limit is keyed by besides the API URL: the key id, or `bearer` for a
    /// token (never the secret, nor anything derived from it).
    pub(crate) fn limit_key(&self) -> &str {
        match self {
            Self::Basic { key_id, .. } => key_id,
            Self::Bearer(_) => "bearer",
        }
    }

    /// Every form of the secret a server might echo: the token, or the key secret with its
    /// `id:secret` pair and that pair's base64 (the `Authorization` value), by the redaction
    /// module's one list ([`basic_forms`](api_raw::support::redact::basic_forms)).
    pub(crate) fn secrets(&self) -> Vec<String> {
        match self {
            Self::Basic { key_id, key_secret } => {
                api_raw::support::redact::basic_forms(key_id, key_secret.expose()).to_vec()
            }
            Self::Bearer(token) => vec![token.expose().to_string()],
        }
    }

    /// The `Authorization` header value, marked sensitive so that `http` never prints it.
    pub(crate) fn header_value(&self) -> Result<HeaderValue, ConfigError> {
        let text = match self {
            Self::Basic { key_id, key_secret } => {
                if key_id.is_empty() || key_id.contains(':') {
                    return Err(ConfigError(
                        "the API key id must be non-empty and contain no ':'".into(),
                    ));
                }
                let [_, encoded, _] =
                    api_raw::support::redact::basic_forms(key_id, key_secret.expose());
                format!("Basic {encoded}")
            }
            Self::Bearer(token) => format!("Bearer {}", token.expose()),
        };
        let mut value = HeaderValue::from_str(&text).map_err(|_| {
            ConfigError("the credentials contain characters not allowed in an HTTP header".into())
        })?;
        value.set_sensitive(true);
        Ok(value)
    }
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Basic { key_id, .. } => f
                .debug_struct("Basic")
                .field("key_id", key_id)
                .field("key_secret", &api_raw::support::redact::REDACTED)
                .finish(),
            Self::Bearer(_) => write!(f, "Bearer({})", api_raw::support::redact::REDACTED),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_hides_secrets_and_the_header_is_sensitive() {
        let basic = Credentials::basic("key-id-1", "very-secret");
        assert_eq!(
            format!("{basic:?}"),
            "Basic { key_id: \"key-id-1\", key_secret: \"[REDACTED]\" }"
        );
        let header = basic.header_value().unwrap();
        assert!(header.is_sensitive());
        assert_eq!(format!("{header:?}"), "Sensitive");
        assert_eq!(
            header.to_str().unwrap(),
            "Basic a2V5LWlkLTE6dmVyeS1zZWNyZXQ="
        );
        let bearer = Credentials::bearer("tok-123");
        assert_eq!(format!("{bearer:?}"), "Bearer([REDACTED])");
        assert_eq!(
            bearer.header_value().unwrap().to_str().unwrap(),
            "Bearer tok-123"
        );
    }

    #[test]
    fn every_form_of_the_secret_is_known_and_the_limit_key_is_never_it() {
        let basic = Credentials::basic("key-id-1", "very-secret");
        let forms = basic.secrets();
        for form in [
            "very-secret",
            "key-id-1:very-secret",
            "a2V5LWlkLTE6dmVyeS1zZWNyZXQ=",
        ] {
            assert!(forms.iter().any(|f| f == form), "{form}: {forms:?}");
        }
        assert_eq!(basic.limit_key(), "key-id-1");
        let bearer = Credentials::bearer("tok-123456");
        assert_eq!(bearer.secrets(), ["tok-123456"]);
        assert_eq!(bearer.limit_key(), "bearer");
    }

    #[test]
    fn bad_credentials_are_refused_without_echoing_them() {
        let err = Credentials::basic("a:b", "s").header_value().unwrap_err();
        assert!(err.to_string().contains("key id"));
        let err = Credentials::bearer("line\nbreak-secret")
            .header_value()
            .unwrap_err();
        assert!(!err.to_string().contains("break-secret"));
    }
}
