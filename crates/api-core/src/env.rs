//! Configuration from environment variables.
//!
//! | variable | API | meaning |
//! |---|---|---|
//! | `CLOUD_API_URL` | management | base URL, e.g. `https://api.example.com` |
//! | `CLOUD_API_KEY_ID` | management | API key id |
//! | `CLOUD_API_KEY_SECRET` | management | API key secret |
//! | `CLOUD_OBSERVABILITY_URL` | observability | base URL |
//! | `CLOUD_OBSERVABILITY_TOKEN` | observability | personal API access key (bearer token) |
//! | `CLOUD_RATE_LIMIT` | both | a client-side rate limit, `MAX/WINDOW` (`20/2s`) |
//! | `CLOUD_RATE_LIMIT_STORE` | both | where it lives: `process`, `host` or a `redis://` URL |
//!
//! The API has no public default host, so the URL variables are required. Either rate limit
//! variable turns the client-side limit on (the other one defaulting to the API's documented limit
//! and to `process`).

use crate::config::{ConfigBuilder, FromConfig};
use crate::credentials::Credentials;
use crate::error::ConfigError;
use crate::rate_limit::RateLimit;

/// Base URL of the management API.
pub const MANAGEMENT_URL: &str = "CLOUD_API_URL";
/// API key id of the management API.
pub const MANAGEMENT_KEY_ID: &str = "CLOUD_API_KEY_ID";
/// API key secret of the management API.
pub const MANAGEMENT_KEY_SECRET: &str = "CLOUD_API_KEY_SECRET";
/// Base URL of the observability API.
pub const OBSERVABILITY_URL: &str = "CLOUD_OBSERVABILITY_URL";
/// Bearer token of the observability API.
pub const OBSERVABILITY_TOKEN: &str = "CLOUD_OBSERVABILITY_TOKEN";

fn required(lookup: &dyn Fn(&str) -> Option<String>, name: &str) -> Result<String, ConfigError> {
    match lookup(name) {
        Some(value) if !value.trim().is_empty() => Ok(value),
        _ => Err(ConfigError(format!(
            "the environment variable {name} is not set"
        ))),
    }
}

fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

impl<T: FromConfig> ConfigBuilder<T> {
    /// A management builder from `CLOUD_API_URL`, `CLOUD_API_KEY_ID` and `CLOUD_API_KEY_SECRET`.
    pub fn management_from_env() -> Result<Self, ConfigError> {
        Self::management_from_lookup(&process_env)
    }

    /// Like [`management_from_env`](Self::management_from_env), reading variables through `lookup`.
    pub fn management_from_lookup(
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        let url = required(lookup, MANAGEMENT_URL)?;
        let key_id = required(lookup, MANAGEMENT_KEY_ID)?;
        let key_secret = required(lookup, MANAGEMENT_KEY_SECRET)?;
        let builder = Self::new(url).credentials(Credentials::basic(key_id, key_secret));
        Ok(builder.rate_limit(RateLimit::from_lookup(RateLimit::management(), lookup)?))
    }

    /// An observability builder from `CLOUD_OBSERVABILITY_URL` and `CLOUD_OBSERVABILITY_TOKEN`.
    pub fn observability_from_env() -> Result<Self, ConfigError> {
        Self::observability_from_lookup(&process_env)
    }

    /// Like [`observability_from_env`](Self::observability_from_env), reading variables through `lookup`.
    pub fn observability_from_lookup(
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        let url = required(lookup, OBSERVABILITY_URL)?;
        let token = required(lookup, OBSERVABILITY_TOKEN)?;
        let builder = Self::new(url).credentials(Credentials::bearer(token));
        Ok(builder.rate_limit(RateLimit::from_lookup(RateLimit::observability(), lookup)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn management_variables_are_read_and_a_missing_one_is_named() {
        let vars = HashMap::from([
            (MANAGEMENT_URL, "https://api.example.com"),
            (MANAGEMENT_KEY_ID, "key-1"),
            (MANAGEMENT_KEY_SECRET, "env-secret"),
        ]);
        let lookup = |name: &str| vars.get(name).map(|v| v.to_string());
        let config = ConfigBuilder::<crate::Config>::management_from_lookup(&lookup)
            .unwrap()
            .build()
            .unwrap();
        assert_eq!(config.base_url(), "https://api.example.com");
        assert!(!format!("{config:?}").contains("env-secret"));

        let partial =
            |name: &str| (name == MANAGEMENT_URL).then(|| "https://a.example".to_string());
        let err = ConfigBuilder::<crate::Config>::management_from_lookup(&partial).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid client configuration: the environment variable CLOUD_API_KEY_ID is not set"
        );
    }

    #[test]
    fn observability_variables_are_read() {
        let lookup = |name: &str| match name {
            OBSERVABILITY_URL => Some("https://obs.example.com/".to_string()),
            OBSERVABILITY_TOKEN => Some("0d8f3a4e-1c2b-4d5e-8f60-718293a4b5c6".to_string()),
            _ => None,
        };
        let config = ConfigBuilder::<crate::Config>::observability_from_lookup(&lookup)
            .unwrap()
            .build()
            .unwrap();
        assert_eq!(config.base_url(), "https://obs.example.com");
        let missing =
            ConfigBuilder::<crate::Config>::observability_from_lookup(&|_| None).unwrap_err();
        assert!(missing.to_string().contains(OBSERVABILITY_URL));
    }
}
