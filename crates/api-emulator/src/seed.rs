//! Seed data: organizations, API keys, services, observability tokens, alerts, dashboards, timing,
//! rate limits and faults, from a TOML or JSON file or the built-in default (`default_seed.toml`).

use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

use api_raw::management::types as mgmt;
use api_raw::observability::types as obs;
use api_raw::support::redact::Redactor;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::faults::FaultRule;

/// The built-in seed, documented in the guide's chapter on testing.
pub const DEFAULT_SEED: &str = include_str!("../default_seed.toml");

/// Everything the emulator starts from.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Seed {
    /// The control endpoints.
    #[serde(default)]
    pub control: Control,
    /// How long the state machines take.
    #[serde(default)]
    pub timing: Timing,
    /// The rate limits.
    #[serde(default)]
    pub limits: Limits,
    /// Where the server behaves as production may, rather than as leniently as the spec allows.
    #[serde(default)]
    pub server: Server,
    /// Organizations.
    #[serde(default)]
    pub organizations: Vec<Organization>,
    /// Management API keys.
    #[serde(default)]
    pub api_keys: Vec<ApiKey>,
    /// Services, with their reverse private endpoints.
    #[serde(default)]
    pub services: Vec<ServiceSeed>,
    /// Observability bearer tokens.
    #[serde(default)]
    pub observability_tokens: Vec<ObservabilityToken>,
    /// Alerts (API field names).
    #[serde(default)]
    pub alerts: Vec<obs::Alert>,
    /// Dashboards (API field names).
    #[serde(default)]
    pub dashboards: Vec<obs::Dashboard>,
    /// Faults armed at start.
    #[serde(default)]
    pub faults: Vec<FaultRule>,
}

/// The control endpoints under `/_emulator`.
#[derive(Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Control {
    /// Their bearer token.
    pub token: String,
}

impl std::fmt::Debug for Control {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Control")
            .field("token", &crate::REDACTED)
            .finish()
    }
}

impl Default for Control {
    fn default() -> Self {
        Self {
            token: "emulator-control-token".into(),
        }
    }
}

/// Durations of the state machines, in milliseconds.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct Timing {
    /// Service starting/stopping.
    pub service_transition_ms: u64,
    /// Pipe Provisioning.
    pub pipe_provisioning_ms: u64,
    /// Each Postgres phase (Setup, Snapshot), and a one-shot load before Completed.
    pub pipe_phase_ms: u64,
    /// How long a deleted pipe still answers GET.
    pub pipe_delete_ms: u64,
}

impl Default for Timing {
    fn default() -> Self {
        Self {
            service_transition_ms: 2000,
            pipe_provisioning_ms: 2000,
            pipe_phase_ms: 2000,
            pipe_delete_ms: 2000,
        }
    }
}

impl Timing {
    /// Every transition immediate (for fast tests).
    pub const INSTANT: Timing = Timing {
        service_transition_ms: 0,
        pipe_provisioning_ms: 0,
        pipe_phase_ms: 0,
        pipe_delete_ms: 0,
    };

    /// The longest transition, one day.
    pub const MAX_MS: u64 = 86_400_000;

    /// A duration in milliseconds, clamped to [`Timing::MAX_MS`] so that sums of them never overflow.
    pub(crate) fn ms(value: u64) -> chrono::Duration {
        chrono::Duration::milliseconds(value.min(Self::MAX_MS) as i64)
    }
}

/// Where the emulator's server behaves as production may, rather than as leniently as the spec
/// allows.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct Server {
    /// Whether the service state command without a command answers the service (the spec allows
    /// it; `true` by default), or is refused with 400 `command must be start or stop`, as the
    /// production service may.
    pub state_read_without_command: bool,
    /// Whether a created pipe is stored, and so answered, in a production server's canonical forms
    /// rather than as sent (`false` by default; `--canonical`): column types in ClickHouse's
    /// canonical text (`Decimal(18, 2)` for `decimal(18,2)`), every `caCertificate` without its
    /// trailing whitespace, Kafka topics without spaces (`a,b` for `a, b`), the object storage
    /// compression in upper case, reverse private endpoint ids as upper-case UUIDs. The same way
    /// every time; `PATCH /_emulator/pipes/{id}` (a console edit) is stored as written.
    pub canonical: bool,
    /// Whether a second pipe with the name of a live one is created on the same service, as a
    /// production server may (`false` by default: 409 CONFLICT; `--duplicate-names`).
    pub duplicate_names: bool,
    /// Whether a delete is acknowledged before the pipe's teardown, as the production delete is
    /// (`false` by default; `--delete-acknowledged-first`): the pipe answers 404 at once, and
    /// holds its name until its deletion finishes (`pipe_delete_ms`), so a create of that name
    /// meanwhile gets 409 CONFLICT (unless `duplicate_names`). By default a deleted pipe answers
    /// (`Stopping`) until its deletion finishes, and its name is free at once.
    pub delete_acknowledged_first: bool,
}

impl Default for Server {
    fn default() -> Self {
        Self {
            state_read_without_command: true,
            canonical: false,
            duplicate_names: false,
            delete_acknowledged_first: false,
        }
    }
}

/// Rate limits per key (management) and per token (observability), in fixed windows.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Whether limits apply at all.
    pub enabled: bool,
    /// Management requests per window.
    pub management_max: u32,
    /// Management window, seconds.
    pub management_window_secs: u64,
    /// Observability requests per window.
    pub observability_max: u32,
    /// Observability window, seconds.
    pub observability_window_secs: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            enabled: true,
            management_max: 10,
            management_window_secs: 10,
            observability_max: 100,
            observability_window_secs: 60,
        }
    }
}

impl Limits {
    /// `MAX/WINDOW` (`20/2s`, the form `CLOUD_RATE_LIMIT` takes, read by the SDK's parser) as a
    /// count and a window of whole seconds, as the emulator counts them.
    pub fn parse(text: &str) -> Result<(u32, u64), String> {
        let limit: api_core::RateLimit = text.parse().map_err(|e: api_core::ConfigError| e.0)?;
        let window = limit.window();
        if window.subsec_nanos() != 0 {
            return Err(format!(
                "the emulator counts rate limit windows in whole seconds, not {window:?}"
            ));
        }
        Ok((limit.max(), window.as_secs()))
    }

    /// The management window.
    pub fn management_window(&self) -> Duration {
        Duration::from_secs(self.management_window_secs.max(1))
    }

    /// The observability window.
    pub fn observability_window(&self) -> Duration {
        Duration::from_secs(self.observability_window_secs.max(1))
    }
}

/// An organization.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Organization {
    /// Its id.
    pub id: Uuid,
    /// Its name.
    pub name: String,
}

/// A role of an API key.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Read and write.
    Admin,
    /// Read only.
    Developer,
}

/// A management API key. `Debug` hides the secret.
#[derive(Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ApiKey {
    /// The key id (Basic user).
    pub id: String,
    /// The key secret (Basic password).
    pub secret: String,
    /// The organization it belongs to.
    pub organization: Uuid,
    /// Its role.
    pub role: Role,
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiKey")
            .field("id", &self.id)
            .field("secret", &crate::REDACTED)
            .field("organization", &self.organization)
            .field("role", &self.role)
            .finish()
    }
}

/// A service: the API's Service fields plus its organization and reverse private endpoints.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct ServiceSeed {
    /// The organization it belongs to.
    pub organization: Uuid,
    /// Its reverse private endpoints (API field names; `serviceId` is filled in).
    #[serde(default)]
    pub reverse_private_endpoints: Vec<mgmt::ReversePrivateEndpoint>,
    /// The Service fields (`id` and `state` are required).
    #[serde(flatten)]
    pub service: mgmt::Service,
}

/// An observability bearer token. `Debug` hides it.
#[derive(Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ObservabilityToken {
    /// The token.
    pub token: String,
    /// The teams whose alerts it may read; empty for all.
    #[serde(default)]
    pub teams: Vec<String>,
}

impl std::fmt::Debug for ObservabilityToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObservabilityToken")
            .field("token", &crate::REDACTED)
            .field("teams", &self.teams)
            .finish()
    }
}

/// A seed that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("seed {origin}: {message}")]
pub struct SeedError {
    origin: String,
    message: String,
}

/// A parser's message as it may be shown: it can quote the line it stopped at (a `secret = "..."`
/// line of a seed file), so it goes through the one redaction rule.
fn shown(error: &impl std::fmt::Display) -> String {
    Redactor::new().text(&error.to_string()).into_owned()
}

impl Seed {
    /// The one redaction rule with this seed's secrets: every key secret and its `Authorization`
    /// form, every observability token and the control token.
    pub fn redactor(&self) -> Redactor {
        let mut redactor = Redactor::new();
        for key in &self.api_keys {
            for form in api_raw::support::redact::basic_forms(&key.id, &key.secret) {
                redactor.add(&form);
            }
        }
        for token in &self.observability_tokens {
            redactor.add(&token.token);
        }
        redactor.add(&self.control.token);
        redactor
    }

    /// The built-in seed.
    pub fn builtin() -> Self {
        Self::parse_toml(DEFAULT_SEED, "built-in")
            .unwrap_or_else(|e| unreachable!("the built-in seed is checked by tests: {e}"))
    }

    /// Reads a seed file: `.toml`, or `.json`.
    pub fn from_path(path: &Path) -> Result<Self, SeedError> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| SeedError {
            origin: origin.clone(),
            message: e.to_string(),
        })?;
        match path.extension().and_then(|e| e.to_str()) {
            Some("json") => {
                let seed: Seed = serde_json::from_str(&text).map_err(|e| SeedError {
                    origin: origin.clone(),
                    message: shown(&e),
                })?;
                seed.checked(&origin)
            }
            _ => Self::parse_toml(&text, &origin),
        }
    }

    /// Parses a TOML seed.
    pub fn parse_toml(text: &str, origin: &str) -> Result<Self, SeedError> {
        let seed: Seed = toml::from_str(text).map_err(|e| SeedError {
            origin: origin.to_string(),
            message: shown(&e),
        })?;
        seed.checked(origin)
    }

    fn checked(self, origin: &str) -> Result<Self, SeedError> {
        let fail = |message: String| SeedError {
            origin: origin.to_string(),
            message,
        };
        let organizations: HashSet<Uuid> = self.organizations.iter().map(|o| o.id).collect();
        for key in &self.api_keys {
            if !organizations.contains(&key.organization) {
                return Err(fail(format!(
                    "api key {:?} belongs to unknown organization {}",
                    key.id, key.organization
                )));
            }
        }
        let mut ids = HashSet::new();
        for (i, service) in self.services.iter().enumerate() {
            let id = service
                .service
                .id
                .ok_or_else(|| fail(format!("services[{i}] has no id")))?;
            if service.service.state.is_none() {
                return Err(fail(format!("service {id} has no state")));
            }
            if !organizations.contains(&service.organization) {
                return Err(fail(format!(
                    "service {id} belongs to unknown organization {}",
                    service.organization
                )));
            }
            if !ids.insert(id) {
                return Err(fail(format!("service {id} appears twice")));
            }
        }
        for (i, rule) in self.faults.iter().enumerate() {
            if let Some(problem) = rule.problem() {
                return Err(fail(format!("faults[{i}]: {problem}")));
            }
        }
        for (name, value) in [
            ("service_transition_ms", self.timing.service_transition_ms),
            ("pipe_provisioning_ms", self.timing.pipe_provisioning_ms),
            ("pipe_phase_ms", self.timing.pipe_phase_ms),
            ("pipe_delete_ms", self.timing.pipe_delete_ms),
        ] {
            if value > Timing::MAX_MS {
                return Err(fail(format!(
                    "timing.{name} is {value}; at most {} (a day)",
                    Timing::MAX_MS
                )));
            }
        }
        for alert in &self.alerts {
            let id = alert.id.as_deref().unwrap_or_default();
            if id.len() != 24 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(fail(format!(
                    "alert id {id:?} is not 24 hexadecimal digits"
                )));
            }
        }
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_seed_parses_and_is_consistent() {
        let seed = Seed::builtin();
        assert_eq!(seed.api_keys.len(), 3);
        assert_eq!(seed.services.len(), 3);
        assert_eq!(seed.services[0].reverse_private_endpoints.len(), 2);
        assert_eq!(seed.alerts.len(), 2);
        assert_eq!(seed.dashboards[0].tiles.as_ref().map(Vec::len), Some(2));
        assert!(seed.limits.enabled);
        let shown = format!("{seed:?}");
        for secret in [
            "emulator-admin-secret",
            "emulator-control-token",
            "0d8f3a4e-1c2b-4d5e-8f60-718293a4b5c6",
        ] {
            assert!(!shown.contains(secret), "{secret} leaked into Debug");
        }
    }

    #[test]
    fn a_bad_seed_says_what_is_wrong() {
        let err = Seed::parse_toml("[[servces]]\nid = 1", "test.toml").unwrap_err();
        assert!(err.to_string().contains("unknown field `servces`"), "{err}");
        let orphan = "[[api_keys]]\nid = \"k\"\nsecret = \"s\"\norganization = \"3f0c5e2a-8d41-4b7e-9a6c-1e2f3a4b5c6d\"\nrole = \"admin\"";
        let err = Seed::parse_toml(orphan, "test.toml").unwrap_err();
        assert!(err.to_string().contains("unknown organization"), "{err}");
        let empty_rule = "[[faults]]\npath = \"/api/v2/dashboards\"\nactions = []";
        let err = Seed::parse_toml(empty_rule, "test.toml").unwrap_err();
        assert!(
            err.to_string()
                .contains("faults[0]: a rule needs at least one action"),
            "{err}"
        );
        let err =
            Seed::parse_toml("[timing]\npipe_phase_ms = 999999999999", "test.toml").unwrap_err();
        assert!(err.to_string().contains("timing.pipe_phase_ms"), "{err}");
        let err = Seed::parse_toml("[server]\ncanonicl = true", "test.toml").unwrap_err();
        assert!(
            err.to_string().contains("unknown field `canonicl`"),
            "{err}"
        );
    }

    #[test]
    fn the_server_table_says_how_production_answers() {
        let builtin = Seed::builtin().server;
        assert_eq!(builtin, Server::default());
        assert!(
            builtin.state_read_without_command
                && !builtin.canonical
                && !builtin.duplicate_names
                && !builtin.delete_acknowledged_first
        );
        let seed = Seed::parse_toml(
            "[server]\ncanonical = true\nduplicate_names = true\ndelete_acknowledged_first = true",
            "test.toml",
        )
        .unwrap();
        assert_eq!(
            seed.server,
            Server {
                state_read_without_command: true,
                canonical: true,
                duplicate_names: true,
                delete_acknowledged_first: true,
            }
        );
        let json: Seed = serde_json::from_str(r#"{"server": {"duplicate_names": true}}"#).unwrap();
        assert!(json.server.duplicate_names && !json.server.canonical);
    }
}

#[cfg(test)]
mod file_tests {
    use super::*;

    #[test]
    fn seeds_load_from_toml_and_json_files() {
        let dir = tempfile::tempdir().unwrap();
        let toml_path = dir.path().join("seed.toml");
        std::fs::write(&toml_path, DEFAULT_SEED).unwrap();
        let from_toml = Seed::from_path(&toml_path).unwrap();
        let json_path = dir.path().join("seed.json");
        std::fs::write(
            &json_path,
            serde_json::to_string_pretty(&from_toml).unwrap(),
        )
        .unwrap();
        let from_json = Seed::from_path(&json_path).unwrap();
        assert_eq!(from_json.api_keys.len(), from_toml.api_keys.len());
        assert_eq!(from_json.services.len(), from_toml.services.len());
        assert_eq!(from_json.timing, from_toml.timing);
        let missing = Seed::from_path(&dir.path().join("nope.toml")).unwrap_err();
        assert!(missing.to_string().contains("nope.toml"), "{missing}");
    }
}
