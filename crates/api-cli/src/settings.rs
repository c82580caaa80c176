//! Where settings come from, first found wins: a flag, then the environment, then a profile of the
//! TOML config file. The key secret and the token have no flag, so they never sit in a shell history.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use api_mgmt::{
    Secret, WaitOptions,
    rate_limit::RateLimit,
    services::{OrganizationId, ServiceId},
};
use serde::Deserialize;

use crate::cli::GlobalArgs;
use crate::exit::Failure;
use crate::pipe_file::Lookup;

/// A wait's first pause between two polls, unless `poll_interval` says otherwise.
const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(1);

/// The longest pause between two polls (unless the first is longer).
const MAX_POLL_INTERVAL: Duration = Duration::from_secs(5);

/// The user agent of every request.
const USER_AGENT: &str = concat!("cloudctl/", env!("CARGO_PKG_VERSION"));

/// One setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Key {
    /// The management API URL.
    ApiUrl,
    /// The management API key id.
    ApiKeyId,
    /// The management API key secret.
    ApiKeySecret,
    /// The organization id.
    OrganizationId,
    /// The service id.
    ServiceId,
    /// The observability API URL.
    ObservabilityUrl,
    /// The observability token.
    ObservabilityToken,
    /// The client-side rate limit, `MAX/WINDOW`.
    RateLimit,
    /// Where the rate limit's state lives: `host`, `process` or a `redis://` URL.
    RateLimitStore,
    /// How long a wait first pauses between two polls.
    PollInterval,
}

impl Key {
    /// Every setting, in the order `config show` lists them.
    pub const ALL: [Key; 10] = [
        Key::ApiUrl,
        Key::ApiKeyId,
        Key::ApiKeySecret,
        Key::OrganizationId,
        Key::ServiceId,
        Key::ObservabilityUrl,
        Key::ObservabilityToken,
        Key::RateLimit,
        Key::RateLimitStore,
        Key::PollInterval,
    ];

    /// The environment variable.
    pub fn env(self) -> &'static str {
        match self {
            Key::ApiUrl => "CLOUD_API_URL",
            Key::ApiKeyId => "CLOUD_API_KEY_ID",
            Key::ApiKeySecret => "CLOUD_API_KEY_SECRET",
            Key::OrganizationId => "CLOUD_ORGANIZATION_ID",
            Key::ServiceId => "CLOUD_SERVICE_ID",
            Key::ObservabilityUrl => "CLOUD_OBSERVABILITY_URL",
            Key::ObservabilityToken => "CLOUD_OBSERVABILITY_TOKEN",
            Key::RateLimit => api_mgmt::rate_limit::RATE_LIMIT_VAR,
            Key::RateLimitStore => api_mgmt::rate_limit::RATE_LIMIT_STORE_VAR,
            Key::PollInterval => "CLOUD_POLL_INTERVAL",
        }
    }

    /// The name in a profile of the config file (and in `config show -o json`).
    pub fn file_name(self) -> &'static str {
        match self {
            Key::ApiUrl => "api_url",
            Key::ApiKeyId => "api_key_id",
            Key::ApiKeySecret => "api_key_secret",
            Key::OrganizationId => "organization_id",
            Key::ServiceId => "service_id",
            Key::ObservabilityUrl => "observability_url",
            Key::ObservabilityToken => "observability_token",
            Key::RateLimit => "rate_limit",
            Key::RateLimitStore => "rate_limit_store",
            Key::PollInterval => "poll_interval",
        }
    }

    /// The flag, for settings that have one (secrets have none).
    pub fn flag(self) -> Option<&'static str> {
        match self {
            Key::ApiUrl => Some("--api-url"),
            Key::ApiKeyId => Some("--key-id"),
            Key::OrganizationId => Some("--organization"),
            Key::ServiceId => Some("--service"),
            Key::ObservabilityUrl => Some("--observability-url"),
            Key::ApiKeySecret
            | Key::ObservabilityToken
            | Key::RateLimit
            | Key::RateLimitStore
            | Key::PollInterval => None,
        }
    }

    /// Whether the value is a secret (never shown).
    pub fn is_secret(self) -> bool {
        matches!(self, Key::ApiKeySecret | Key::ObservabilityToken)
    }

    fn flag_value(self, args: &GlobalArgs) -> Option<&str> {
        match self {
            Key::ApiUrl => args.api_url.as_deref(),
            Key::ApiKeyId => args.key_id.as_deref(),
            Key::OrganizationId => args.organization.as_deref(),
            Key::ServiceId => args.service.as_deref(),
            Key::ObservabilityUrl => args.observability_url.as_deref(),
            Key::ApiKeySecret
            | Key::ObservabilityToken
            | Key::RateLimit
            | Key::RateLimitStore
            | Key::PollInterval => None,
        }
    }

    fn profile_value(self, profile: &Profile) -> Option<&str> {
        match self {
            Key::ApiUrl => profile.api_url.as_deref(),
            Key::ApiKeyId => profile.api_key_id.as_deref(),
            Key::ApiKeySecret => profile.api_key_secret.as_deref(),
            Key::OrganizationId => profile.organization_id.as_deref(),
            Key::ServiceId => profile.service_id.as_deref(),
            Key::ObservabilityUrl => profile.observability_url.as_deref(),
            Key::ObservabilityToken => profile.observability_token.as_deref(),
            Key::RateLimit => profile.rate_limit.as_deref(),
            Key::RateLimitStore => profile.rate_limit_store.as_deref(),
            Key::PollInterval => profile.poll_interval.as_deref(),
        }
    }
}

/// Where a setting's value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Origin {
    /// A command-line flag.
    Flag(&'static str),
    /// An environment variable.
    Env(&'static str),
    /// The profile of the config file.
    Profile,
    /// Nowhere.
    Unset,
}

/// A setting's value (kept as a [`Secret`], so no `Debug` shows it) and where it came from.
#[derive(Debug, Clone)]
pub(crate) struct Setting {
    /// Which setting.
    pub key: Key,
    /// The value, if any.
    pub value: Option<Secret>,
    /// Where it came from.
    pub origin: Origin,
}

impl Setting {
    /// The value for display: `[REDACTED]` for a secret, a store's URL without its user part
    /// (however its password is written).
    pub fn shown(&self) -> Option<String> {
        let value = self.value.as_ref()?;
        Some(if self.key.is_secret() {
            api_mgmt::redact::REDACTED.to_string()
        } else if self.key == Key::RateLimitStore {
            api_mgmt::redact::describe_url(value.expose())
        } else {
            value.expose().to_string()
        })
    }
}

/// A profile of the config file: the settings by their file names.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Profile {
    api_url: Option<String>,
    api_key_id: Option<String>,
    api_key_secret: Option<String>,
    organization_id: Option<String>,
    service_id: Option<String>,
    observability_url: Option<String>,
    observability_token: Option<String>,
    rate_limit: Option<String>,
    rate_limit_store: Option<String>,
    poll_interval: Option<String>,
}

/// The config file in use.
#[derive(Debug, Clone)]
pub(crate) struct ConfigFile {
    /// Its path (`None` when the platform has no config directory and none was given).
    pub path: Option<PathBuf>,
    /// Whether it exists.
    pub found: bool,
}

/// Every setting, resolved.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    /// The profile name.
    pub profile: String,
    /// The config file.
    pub file: ConfigFile,
    /// The settings, in [`Key::ALL`] order.
    pub values: Vec<Setting>,
    /// Whether requests are paced at the documented limits.
    pub paced: bool,
    /// Whether requests carry the trace context (`OTEL_PROPAGATORS` other than `none`).
    pub propagate: bool,
    /// Warnings for people (e.g. a config file others can read).
    pub warnings: Vec<String>,
}

impl Settings {
    /// Resolves every setting: flags, then `env`, then the profile of the config file.
    pub fn resolve(args: &GlobalArgs, env: Lookup<'_>) -> Result<Self, Failure> {
        let path = match &args.config {
            Some(path) => Some(path.clone()),
            None => default_path(),
        };
        let explicit_profile = args.profile.is_some();
        let profile_name = args.profile.clone().unwrap_or_else(|| "default".into());
        let mut warnings = Vec::new();
        let (found, profiles) = match &path {
            Some(path) => match std::fs::read_to_string(path) {
                Ok(text) => {
                    let profiles = parse_file(&text, path)?;
                    if let Some(warning) = permission_warning(path, &profiles) {
                        warnings.push(warning);
                    }
                    (true, profiles)
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && args.config.is_none() => {
                    (false, BTreeMap::new())
                }
                Err(e) => {
                    return Err(Failure::usage(format!(
                        "cannot read the config file {}: {e}",
                        path.display()
                    )));
                }
            },
            None => (false, BTreeMap::new()),
        };
        let profile = match profiles.get(&profile_name) {
            Some(profile) => Some(profile),
            None if explicit_profile => {
                let known: Vec<&str> = profiles.keys().map(String::as_str).collect();
                let file = path
                    .as_deref()
                    .map_or_else(|| "no config file".to_string(), |p| p.display().to_string());
                return Err(Failure::usage(format!(
                    "no profile {profile_name:?} in {file} (profiles: {})",
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                )));
            }
            None => None,
        };
        let values = Key::ALL
            .iter()
            .map(|&key| resolve_one(key, args, env, profile))
            .collect();
        Ok(Self {
            profile: profile_name,
            file: ConfigFile { path, found },
            values,
            paced: !args.no_rate_limit,
            propagate: crate::telemetry::propagate(env),
            warnings,
        })
    }

    /// The setting `key`.
    pub fn get(&self, key: Key) -> &Setting {
        // `values` always holds every key, in order; the fallback is never taken.
        self.values
            .iter()
            .find(|s| s.key == key)
            .unwrap_or(&self.values[0])
    }

    /// The secret values in use (the key secret, the token, the password of the rate limit's
    /// store as written and decoded), to keep them out of every message.
    pub fn secrets(&self) -> Vec<String> {
        let mut secrets: Vec<String> = self
            .values
            .iter()
            .filter(|s| s.key.is_secret())
            .filter_map(|s| s.value.as_ref().map(|v| v.expose().to_string()))
            .collect();
        if let Some(store) = &self.get(Key::RateLimitStore).value
            && let Some(password) = api_mgmt::redact::url_password(store.expose())
        {
            secrets.push(password.to_string());
            secrets.push(api_mgmt::redact::percent_decoded(password));
        }
        secrets
    }

    /// The values of `keys`, or one error naming every missing one and where it may be given.
    fn require<const N: usize>(&self, keys: [Key; N]) -> Result<[&Secret; N], Failure> {
        let missing: Vec<String> = keys
            .iter()
            .filter(|&&key| self.get(key).value.is_none())
            .map(|&key| self.how_to_set(key))
            .collect();
        if !missing.is_empty() {
            return Err(
                Failure::usage(format!("missing settings: {}", missing.join("; ")))
                    .with_code("MISSING_SETTINGS")
                    .with_hint("`cloudctl config show` shows every setting and where it came from"),
            );
        }
        let mut values = Vec::with_capacity(N);
        for key in keys {
            if let Some(value) = &self.get(key).value {
                values.push(value);
            }
        }
        values
            .try_into()
            .map_err(|_| Failure::usage("missing settings"))
    }

    fn how_to_set(&self, key: Key) -> String {
        let file = match &self.file.path {
            Some(path) => format!(
                "{} in profile {:?} of {}",
                key.file_name(),
                self.profile,
                path.display()
            ),
            None => format!("{} in a --config file", key.file_name()),
        };
        match key.flag() {
            Some(flag) => format!("{flag}, {} or {file}", key.env()),
            None => format!("{} or {file}", key.env()),
        }
    }

    /// A management client for the configured service.
    pub fn service(&self) -> Result<api_mgmt::ServiceHandle, Failure> {
        let [url, key_id, key_secret, organization, service] = self.require([
            Key::ApiUrl,
            Key::ApiKeyId,
            Key::ApiKeySecret,
            Key::OrganizationId,
            Key::ServiceId,
        ])?;
        let organization: OrganizationId = self.parse(Key::OrganizationId, organization)?;
        let service: ServiceId = self.parse(Key::ServiceId, service)?;
        let builder = api_mgmt::Client::builder(url.expose())
            .credentials(api_mgmt::Credentials::basic(
                key_id.expose(),
                key_secret.clone(),
            ))
            .user_agent(USER_AGENT)
            .trace_propagation(self.propagate)
            .rate_limit(self.rate_limit(RateLimit::management())?);
        let client = builder
            .build()
            .map_err(|e| self.client_error(Key::ApiUrl, &e))?;
        Ok(client.service(organization, service))
    }

    /// An observability client.
    pub fn observability(&self) -> Result<api_obs::Client, Failure> {
        let [url, token] = self.require([Key::ObservabilityUrl, Key::ObservabilityToken])?;
        api_obs::Client::builder(url.expose())
            .credentials(api_obs::Credentials::bearer(token.clone()))
            .user_agent(USER_AGENT)
            .trace_propagation(self.propagate)
            .rate_limit(self.rate_limit(RateLimit::observability())?)
            .build()
            .map_err(|e| self.client_error(Key::ObservabilityUrl, &e))
    }

    /// The rate limit of this run: `documented` (the API's) or `rate_limit`, in `rate_limit_store`
    /// (the host store by default, so that every cloudctl of the user shares the key's limit);
    /// `None` with `--no-rate-limit`. A wait on it longer than a second is said on stderr.
    pub fn rate_limit(&self, documented: RateLimit) -> Result<Option<RateLimit>, Failure> {
        if !self.paced {
            return Ok(None);
        }
        let limit = match &self.get(Key::RateLimit).value {
            Some(text) => self.parse::<RateLimit>(Key::RateLimit, text)?,
            None => documented,
        };
        let store = match &self.get(Key::RateLimitStore).value {
            Some(text) => api_mgmt::rate_limit::RateLimitStore::parse(text.expose())
                .map_err(|e| self.setting_error(Key::RateLimitStore, &e.0))?,
            None => api_mgmt::rate_limit::RateLimitStore::host(),
        };
        let shared = !matches!(store, api_mgmt::rate_limit::RateLimitStore::Process);
        Ok(Some(
            limit
                .store(store)
                .on_wait(move |wait| crate::progress::waiting_on_the_limit(wait, shared))
                .on_fallback(crate::progress::store_changed),
        ))
    }

    /// How this run's waits poll: first after `poll_interval` (1 s by default), each pause half
    /// again as long as the one before, up to 5 s (or the interval, when it is longer), until
    /// `timeout`.
    pub fn wait_options(&self, timeout: Duration) -> Result<WaitOptions, Failure> {
        let first = match &self.get(Key::PollInterval).value {
            Some(text) => crate::duration::parse_poll_interval(text.expose())
                .map_err(|e| self.setting_error(Key::PollInterval, &e))?,
            None => DEFAULT_POLL_INTERVAL,
        };
        Ok(WaitOptions::default()
            .interval(first, first.max(MAX_POLL_INTERVAL))
            .timeout(timeout))
    }

    /// The rate limit and store `config show` reports for the management API.
    pub fn pacing(&self) -> String {
        match self.rate_limit(RateLimit::management()) {
            Ok(Some(limit)) => format!(
                "paced at {} per {:?} in the {} store",
                limit.max(),
                limit.window(),
                limit.store_kind().describe()
            ),
            Ok(None) => "not paced (--no-rate-limit)".into(),
            Err(failure) => format!("not usable: {}", failure.message),
        }
    }

    fn parse<T: FromStr<Err: fmt::Display>>(&self, key: Key, value: &Secret) -> Result<T, Failure> {
        value
            .expose()
            .parse()
            .map_err(|e: T::Err| self.setting_error(key, &e.to_string()))
    }

    fn setting_error(&self, key: Key, problem: &str) -> Failure {
        Failure::usage(format!(
            "{} (from {}): {problem}",
            key.file_name(),
            self.origin_text(key)
        ))
    }

    fn client_error(&self, key: Key, error: &api_mgmt::Error) -> Failure {
        Failure::usage(format!(
            "{error} ({} from {})",
            key.file_name(),
            self.origin_text(key)
        ))
        .with_code("CONFIG_ERROR")
    }

    /// Where a setting came from, in words: `env CLOUD_API_URL`, `flag --api-url`, `profile default`.
    pub fn origin_text(&self, key: Key) -> String {
        match &self.get(key).origin {
            Origin::Flag(flag) => format!("flag {flag}"),
            Origin::Env(name) => format!("env {name}"),
            Origin::Profile => match &self.file.path {
                Some(path) => format!("profile {} in {}", self.profile, path.display()),
                None => format!("profile {}", self.profile),
            },
            Origin::Unset => "not set".to_string(),
        }
    }
}

fn resolve_one(key: Key, args: &GlobalArgs, env: Lookup<'_>, profile: Option<&Profile>) -> Setting {
    let given = |value: &str| !value.trim().is_empty();
    if let (Some(flag), Some(value)) = (key.flag(), key.flag_value(args).filter(|v| given(v))) {
        return Setting {
            key,
            value: Some(Secret::new(value.trim())),
            origin: Origin::Flag(flag),
        };
    }
    if let Some(value) = env(key.env()).filter(|v| given(v)) {
        return Setting {
            key,
            value: Some(Secret::new(value.trim())),
            origin: Origin::Env(key.env()),
        };
    }
    if let Some(value) = profile
        .and_then(|p| key.profile_value(p))
        .filter(|v| given(v))
    {
        return Setting {
            key,
            value: Some(Secret::new(value.trim())),
            origin: Origin::Profile,
        };
    }
    Setting {
        key,
        value: None,
        origin: Origin::Unset,
    }
}

/// `<config dir>/cloudctl/config.toml` (`~/.config` on Linux, `Library/Application Support` on macOS,
/// `%APPDATA%` on Windows).
fn default_path() -> Option<PathBuf> {
    dirs::config_dir().map(|dir| dir.join("cloudctl").join("config.toml"))
}

/// Reads the profiles. The error names the line and the parser's message, never the line's text
/// (it may hold a secret).
fn parse_file(text: &str, path: &Path) -> Result<BTreeMap<String, Profile>, Failure> {
    toml::from_str::<BTreeMap<String, Profile>>(text).map_err(|e| {
        let line = e
            .span()
            .map(|span| text.get(..span.start).unwrap_or(text).matches('\n').count() + 1);
        let place = line.map_or_else(String::new, |line| format!(" line {line}:"));
        Failure::usage(format!(
            "the config file {}:{place} {}",
            path.display(),
            e.message().trim()
        ))
        .with_code("CONFIG_ERROR")
        .with_hint(
            "each profile is a table, e.g. [default], with api_url, api_key_id, api_key_secret, \
             organization_id, service_id, observability_url and observability_token",
        )
    })
}

/// A warning when a config file holding secrets can be read by other users.
#[cfg(unix)]
fn permission_warning(path: &Path, profiles: &BTreeMap<String, Profile>) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let holds_secrets = profiles
        .values()
        .any(|p| p.api_key_secret.is_some() || p.observability_token.is_some());
    let mode = std::fs::metadata(path).ok()?.permissions().mode();
    (holds_secrets && mode & 0o077 != 0).then(|| {
        format!(
            "warning: {} holds secrets and other users can read it; run `chmod 600 {}`",
            path.display(),
            path.display()
        )
    })
}

/// No warning where permissions are not Unix modes.
#[cfg(not(unix))]
fn permission_warning(_path: &Path, _profiles: &BTreeMap<String, Profile>) -> Option<String> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn args(extra: &[&str]) -> GlobalArgs {
        let mut argv = vec!["cloudctl"];
        argv.extend_from_slice(extra);
        argv.extend_from_slice(&["config", "show"]);
        crate::cli::Cli::parse_from(argv).global
    }

    fn file(text: &str) -> tempfile::NamedTempFile {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut file, text.as_bytes()).unwrap();
        file
    }

    #[test]
    fn flags_win_over_the_environment_which_wins_over_the_profile() {
        let config = file(
            "[default]\napi_url = \"https://profile.example\"\napi_key_id = \"profile-key\"\napi_key_secret = \"profile-secret\"\nservice_id = \"a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d\"\n",
        );
        let path = config.path().to_str().unwrap();
        let env = |name: &str| match name {
            "CLOUD_API_URL" => Some("https://env.example".to_string()),
            "CLOUD_API_KEY_ID" => Some("env-key".to_string()),
            "CLOUD_ORGANIZATION_ID" => Some("  ".to_string()),
            _ => None,
        };
        let settings = Settings::resolve(
            &args(&["--config", path, "--api-url", "https://flag.example"]),
            &env,
        )
        .unwrap();
        let value = |key| {
            settings
                .get(key)
                .value
                .as_ref()
                .map(|v| v.expose().to_string())
        };
        assert_eq!(value(Key::ApiUrl).as_deref(), Some("https://flag.example"));
        assert_eq!(settings.get(Key::ApiUrl).origin, Origin::Flag("--api-url"));
        assert_eq!(value(Key::ApiKeyId).as_deref(), Some("env-key"));
        assert_eq!(
            settings.get(Key::ApiKeyId).origin,
            Origin::Env("CLOUD_API_KEY_ID")
        );
        assert_eq!(value(Key::ApiKeySecret).as_deref(), Some("profile-secret"));
        assert_eq!(settings.get(Key::ApiKeySecret).origin, Origin::Profile);
        assert_eq!(
            settings.get(Key::OrganizationId).origin,
            Origin::Unset,
            "blank is unset"
        );
        assert_eq!(
            settings.get(Key::ApiKeySecret).shown().as_deref(),
            Some("[REDACTED]")
        );
        assert!(!format!("{settings:?}").contains("profile-secret"));
        assert_eq!(settings.secrets(), ["profile-secret"]);

        let missing = settings.service().unwrap_err();
        assert!(
            missing.message.contains(
                "--organization, CLOUD_ORGANIZATION_ID or organization_id in profile \"default\""
            ),
            "{}",
            missing.message
        );
        assert!(
            !missing.message.contains("CLOUD_SERVICE_ID"),
            "{}",
            missing.message
        );
    }

    #[test]
    fn named_profiles_and_bad_files_are_reported() {
        let config = file(
            "[default]\napi_url = \"https://a.example\"\n[staging]\napi_url = \"https://staging.example\"\n",
        );
        let path = config.path().to_str().unwrap();
        let none = |_: &str| None;
        let staging =
            Settings::resolve(&args(&["--config", path, "--profile", "staging"]), &none).unwrap();
        assert_eq!(
            staging.get(Key::ApiUrl).value.as_ref().unwrap().expose(),
            "https://staging.example"
        );
        let err =
            Settings::resolve(&args(&["--config", path, "--profile", "prod"]), &none).unwrap_err();
        assert!(
            err.message.contains("no profile \"prod\"") && err.message.contains("default, staging"),
            "{}",
            err.message
        );

        let bad = file("[default]\napi_key_secret = \"s3cr3t-in-file\nother = 1\n");
        let err = Settings::resolve(&args(&["--config", bad.path().to_str().unwrap()]), &none)
            .unwrap_err();
        assert!(err.message.contains("line 2"), "{}", err.message);
        assert!(!err.message.contains("s3cr3t-in-file"), "{}", err.message);

        let unknown = file("[default]\napi_secret = \"x\"\n");
        let err = Settings::resolve(
            &args(&["--config", unknown.path().to_str().unwrap()]),
            &none,
        )
        .unwrap_err();
        assert!(err.message.contains("api_secret"), "{}", err.message);

        let err = Settings::resolve(&args(&["--config", "/nonexistent/cloudctl.toml"]), &none)
            .unwrap_err();
        assert!(
            err.message.contains("cannot read the config file"),
            "{}",
            err.message
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_config_file_others_can_read_is_warned_about() {
        use std::os::unix::fs::PermissionsExt;
        let config = file("[default]\napi_key_secret = \"x\"\n");
        std::fs::set_permissions(config.path(), std::fs::Permissions::from_mode(0o644)).unwrap();
        let none = |_: &str| None;
        let settings =
            Settings::resolve(&args(&["--config", config.path().to_str().unwrap()]), &none)
                .unwrap();
        assert_eq!(settings.warnings.len(), 1);
        std::fs::set_permissions(config.path(), std::fs::Permissions::from_mode(0o600)).unwrap();
        let settings =
            Settings::resolve(&args(&["--config", config.path().to_str().unwrap()]), &none)
                .unwrap();
        assert!(settings.warnings.is_empty());
    }

    #[test]
    fn waits_poll_after_a_second_or_the_poll_interval() {
        let empty = file("");
        let config = empty.path().to_str().unwrap();
        let timeout = Duration::from_secs(60);
        let none = |_: &str| None;
        let default = Settings::resolve(&args(&["--config", config]), &none)
            .unwrap()
            .wait_options(timeout)
            .unwrap();
        assert_eq!(
            (
                default.initial_interval,
                default.max_interval,
                default.timeout
            ),
            (Duration::from_secs(1), Duration::from_secs(5), timeout)
        );
        let quick = |name: &str| (name == "CLOUD_POLL_INTERVAL").then(|| "50ms".to_string());
        let options = Settings::resolve(&args(&["--config", config]), &quick)
            .unwrap()
            .wait_options(timeout)
            .unwrap();
        assert_eq!(
            (options.initial_interval, options.max_interval),
            (Duration::from_millis(50), Duration::from_secs(5))
        );
        let profile = file("[default]\npoll_interval = \"30s\"\n");
        let slow = Settings::resolve(
            &args(&["--config", profile.path().to_str().unwrap()]),
            &none,
        )
        .unwrap()
        .wait_options(timeout)
        .unwrap();
        assert_eq!(
            (slow.initial_interval, slow.max_interval),
            (Duration::from_secs(30), Duration::from_secs(30)),
            "a first pause longer than 5 s is every pause"
        );
        for wrong in ["5ms", "10m", "soon"] {
            let env = |name: &str| (name == "CLOUD_POLL_INTERVAL").then(|| wrong.to_string());
            let err = Settings::resolve(&args(&["--config", config]), &env)
                .unwrap()
                .wait_options(timeout)
                .unwrap_err();
            assert!(
                err.message
                    .contains("poll_interval (from env CLOUD_POLL_INTERVAL): invalid"),
                "{wrong}: {}",
                err.message
            );
        }
    }

    #[test]
    fn clients_are_paced_by_default() {
        let env = |name: &str| match name {
            "CLOUD_API_URL" => Some("http://127.0.0.1:9".to_string()),
            "CLOUD_API_KEY_ID" => Some("id".to_string()),
            "CLOUD_API_KEY_SECRET" => Some("secret".to_string()),
            "CLOUD_ORGANIZATION_ID" => Some("3f0c5e2a-8d41-4b7e-9a6c-1e2f3a4b5c6d".to_string()),
            "CLOUD_SERVICE_ID" => Some("a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d".to_string()),
            _ => None,
        };
        let empty = file("");
        let config = empty.path().to_str().unwrap();
        let paced = Settings::resolve(&args(&["--config", config]), &env)
            .unwrap()
            .service()
            .unwrap();
        assert!(
            format!("{paced:?}").contains("RateLimit(10 per 10s, host)"),
            "{paced:?}"
        );
        let custom = |name: &str| match name {
            "CLOUD_RATE_LIMIT" => Some("20/2s".to_string()),
            "CLOUD_RATE_LIMIT_STORE" => Some("process".to_string()),
            other => env(other),
        };
        let chosen = Settings::resolve(&args(&["--config", config]), &custom)
            .unwrap()
            .service()
            .unwrap();
        assert!(
            format!("{chosen:?}").contains("RateLimit(20 per 2s)"),
            "{chosen:?}"
        );
        let wrong = |name: &str| match name {
            "CLOUD_RATE_LIMIT_STORE" => Some("memcached".to_string()),
            other => env(other),
        };
        let err = Settings::resolve(&args(&["--config", config]), &wrong)
            .unwrap()
            .service()
            .unwrap_err();
        assert!(
            err.message
                .contains("rate_limit_store (from env CLOUD_RATE_LIMIT_STORE)"),
            "{}",
            err.message
        );
        let unpaced = Settings::resolve(&args(&["--config", config, "--no-rate-limit"]), &env)
            .unwrap()
            .service()
            .unwrap();
        assert!(
            format!("{unpaced:?}").contains("rate_limit: None"),
            "{unpaced:?}"
        );
        let bad_id = |name: &str| match name {
            "CLOUD_SERVICE_ID" => Some("not-a-uuid".to_string()),
            other => env(other),
        };
        let err = Settings::resolve(&args(&["--config", config]), &bad_id)
            .unwrap()
            .service()
            .unwrap_err();
        assert!(
            err.message
                .contains("service_id (from env CLOUD_SERVICE_ID)"),
            "{}",
            err.message
        );
    }
}
