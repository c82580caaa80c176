//! A local emulator of the management and observability APIs: a real HTTP server (axum on tokio) that
//! behaves as `spec/` and the API decisions describe, so SDK tests, the README tour and users' own tests
//! run over real HTTP without a cloud account.
//!
//! ```no_run
//! # async fn run() -> Result<(), api_emulator::EmulatorError> {
//! use api_emulator::{Emulator, EmulatorOptions};
//!
//! let emulator = Emulator::start(EmulatorOptions::for_tests()).await?;
//! let (key_id, key_secret) = emulator.admin_key();
//! println!("management API at {} as {key_id}", emulator.base_url());
//! # let _ = key_secret;
//! # Ok(()) }
//! ```
//!
//! Both APIs share one listener: management paths begin with `/v1`, observability paths with
//! `/api/v2`, and the control endpoints (fault injection, request log, forced states) with `/_emulator`.
//!
//! As a test harness: [`Emulator::requests`] is what the code under test sent (operation, body with
//! secrets redacted, status, request id), [`Emulator::inject`] scripts answers with [`FaultRule`] and
//! [`Fault`] (statuses, hangups, requests applied before the fault answers), [`Emulator::pipes`] and
//! [`Emulator::services`] show the state with the SDK's typed ids, and
//! [`EmulatorOptions::deterministic`] makes ids, request ids and times reproducible for snapshots.
//!
//! Production's own answers: [`Recorder`] (`api-emulator record`) records a real deployment's
//! exchanges into a [`Cassette`], secrets redacted; [`Replay`] (`api-emulator replay`,
//! [`Emulator::replay`]) answers them again; [`check::check`] (`api-emulator cassette check`)
//! compares them with the spec and the SDK's decoding.
//!
//! It stays bounded and private: the request log keeps at most [`LOG_BUDGET`] bytes (oldest entries
//! first out) and no body over [`LOG_BODY_LIMIT`]; deleted pipes are purged once their deletion has
//! finished, read again or not; with a data directory, the directory and its database are private
//! to their owner; and `Debug` shows no key secret or token.

#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]
// Handlers return early with `Err(Response)`, axum's idiom; boxing every answer would only add noise.
#![allow(clippy::result_large_err)]

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

mod app;
pub mod cassette;
pub mod check;
mod clock;
mod connection;
mod control;
#[cfg(feature = "persistence")]
mod data_dir;
pub mod faults;
/// The spec's one validator (moved to `api_raw::support::schema`; kept here by its old name).
pub use api_raw::support::schema as json_schema;
mod log_buffer;
mod management;
mod observability;
mod operation;
mod overlay;
mod record;
mod replay;
mod request_log;
mod schema;
pub mod seed;
mod serving;
#[cfg(feature = "persistence")]
mod store;
#[cfg(not(feature = "persistence"))]
#[path = "store_disabled.rs"]
mod store;
mod store_write;
mod views;
mod wire;
mod world;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

pub use api_core::{OrganizationId, PipeId, ServiceId};
pub use api_raw::support::redact::REDACTED;
pub use api_raw::support::{PipeState, ServiceState};
pub use axum::http::Method;
pub use cassette::{Cassette, CassetteError, Exchange};
pub use clock::DETERMINISTIC_STEP;
pub use faults::{Fault, FaultRule, Then, Times};
pub use log_buffer::{ENTRY_OVERHEAD, LOG_BODY_LIMIT, LOG_BUDGET, LOG_MAX_ENTRIES};
pub use operation::{OperationId, UnknownOperation};
pub use record::{RecordOptions, Recorder};
pub use replay::{CassetteReport, ExchangeUse, NOT_RECORDED, Replay};
pub use request_log::{LogEntry, RequestLog};
pub use seed::{DEFAULT_SEED, Limits, Seed, Server, Timing};
pub use views::{PipeView, ServiceView};

/// How to run an emulator.
#[derive(Debug, Clone)]
pub struct EmulatorOptions {
    /// The address to listen on; port 0 picks a free port.
    pub listen: SocketAddr,
    /// The seed.
    pub seed: Seed,
    /// Where to keep state across restarts; in memory when `None`.
    pub data_dir: Option<PathBuf>,
    /// The seed of deterministic mode; the wall clock and random ids when `None`.
    pub deterministic: Option<u64>,
    /// The most bytes the request log keeps ([`LOG_BUDGET`] by default).
    pub log_budget: usize,
}

impl EmulatorOptions {
    /// The built-in seed on a free loopback port, in memory.
    pub fn new() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            seed: Seed::builtin(),
            data_dir: None,
            deterministic: None,
            log_budget: LOG_BUDGET,
        }
    }

    /// For tests: the built-in seed with instant transitions and no rate limits.
    pub fn for_tests() -> Self {
        Self::new().timing(Timing::INSTANT).rate_limits(false)
    }

    /// Listen on `address`.
    pub fn listen(mut self, address: SocketAddr) -> Self {
        self.listen = address;
        self
    }

    /// Use `seed`.
    pub fn seed(mut self, seed: Seed) -> Self {
        self.seed = seed;
        self
    }

    /// Keep state in `dir` (needs the default `persistence` feature; without it,
    /// [`Emulator::start`] says so). On Unix the directory is created 0700 and its database file
    /// 0600. An existing directory open to its group or others is made 0700 when it is empty or
    /// holds only the database, and refused otherwise; an existing database file open to them is
    /// made 0600.
    pub fn data_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.data_dir = Some(dir.into());
        self
    }

    /// Deterministic mode, for snapshot tests: every generated id and request id comes from `seed`,
    /// and time starts at 2026-01-01T00:00:00Z and moves [`DETERMINISTIC_STEP`] (one second) on each
    /// API request, whatever the wall clock does. The same requests in the same order then get
    /// byte-identical answers. State transitions and rate limit windows run on that clock too: with
    /// the default timing a service starts after two more requests.
    ///
    /// With a [`data_dir`](Self::data_dir), the clock's position is stored with every write and
    /// when the emulator stops, and a restart with the same seed continues from there: no id is
    /// drawn twice, and earlier pipes keep theirs. (After a crash, the request ids of reads
    /// answered since the last write can come again.)
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), api_emulator::EmulatorError> {
    /// use api_emulator::{Emulator, EmulatorOptions};
    /// let emulator = Emulator::start(EmulatorOptions::for_tests().deterministic(42)).await?;
    /// # Ok(()) }
    /// ```
    pub fn deterministic(mut self, seed: u64) -> Self {
        self.deterministic = Some(seed);
        self
    }

    /// Override the seed's timing.
    pub fn timing(mut self, timing: Timing) -> Self {
        self.seed.timing = timing;
        self
    }

    /// Refuse the service state command without a command with 400, as the production service
    /// may (the spec allows the read; clients must cope with a server that refuses it).
    pub fn require_state_command(mut self) -> Self {
        self.seed.server.state_read_without_command = false;
        self
    }

    /// Store and answer every created pipe in a production server's canonical forms (column types
    /// in ClickHouse's canonical text, certificates trimmed, topic lists without spaces, the
    /// compression and reverse private endpoint ids in upper case), or as sent (the default); see
    /// [`Server::canonical`].
    pub fn canonical(mut self, canonical: bool) -> Self {
        self.seed.server.canonical = canonical;
        self
    }

    /// Create a second pipe with the name of a live one on the same service, as a production
    /// server may, or refuse it with 409 CONFLICT (the default); see [`Server::duplicate_names`].
    pub fn duplicate_names(mut self, allowed: bool) -> Self {
        self.seed.server.duplicate_names = allowed;
        self
    }

    /// Acknowledge a delete before the pipe's teardown, as the production delete does: 404 at
    /// once, the name held (409 to a create of it) until the deletion finishes; see
    /// [`Server::delete_acknowledged_first`].
    pub fn delete_acknowledged_first(mut self, first: bool) -> Self {
        self.seed.server.delete_acknowledged_first = first;
        self
    }

    /// Override the seed's `[server]` table: where the server behaves as production may.
    ///
    /// ```
    /// use api_emulator::{EmulatorOptions, Server};
    /// let production = EmulatorOptions::for_tests().server(Server {
    ///     canonical: true,
    ///     duplicate_names: true,
    ///     ..Server::default()
    /// });
    /// assert!(production.seed.server.canonical);
    /// ```
    pub fn server(mut self, server: Server) -> Self {
        self.seed.server = server;
        self
    }

    /// Turn the rate limits on or off.
    pub fn rate_limits(mut self, enabled: bool) -> Self {
        self.seed.limits.enabled = enabled;
        self
    }

    /// Limits the management API to `max` requests per `window_secs` seconds per key, in fixed
    /// windows (the documented 10 per 10 s by default), and turns the limits on.
    pub fn management_rate_limit(mut self, max: u32, window_secs: u64) -> Self {
        self.seed.limits.enabled = true;
        self.seed.limits.management_max = max;
        self.seed.limits.management_window_secs = window_secs;
        self
    }

    /// Limits the observability API to `max` requests per `window_secs` seconds per token (the
    /// documented 100 per 60 s by default), and turns the limits on.
    pub fn observability_rate_limit(mut self, max: u32, window_secs: u64) -> Self {
        self.seed.limits.enabled = true;
        self.seed.limits.observability_max = max;
        self.seed.limits.observability_window_secs = window_secs;
        self
    }

    /// Override the seed's rate limits.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.seed.limits = limits;
        self
    }

    /// Keep at most `bytes` of request log (default [`LOG_BUDGET`]), counted as each entry's size
    /// serialized as JSON; the oldest entries are evicted first.
    pub fn log_budget(mut self, bytes: usize) -> Self {
        self.log_budget = bytes;
        self
    }
}

impl Default for EmulatorOptions {
    fn default() -> Self {
        Self::new()
    }
}

/// The emulator could not start.
#[derive(Debug, thiserror::Error)]
#[error("emulator: {0}")]
pub struct EmulatorError(pub(crate) String);

/// A running emulator. Dropping it signals a graceful stop and returns at once; [`Emulator::shutdown`]
/// also waits until the server has finished, which is what to use before reopening the same
/// `data_dir` in the same process (the database is released when the server is done). `Debug`
/// shows no key secret, token or state: the seed's secrets are `"[REDACTED]"`, the state is counted.
#[derive(Debug)]
pub struct Emulator {
    base_url: String,
    address: SocketAddr,
    app: Arc<app::App>,
    serving: serving::Serving,
}

impl Emulator {
    /// Starts an emulator on a tokio runtime.
    pub async fn start(options: EmulatorOptions) -> Result<Self, EmulatorError> {
        let store = match &options.data_dir {
            Some(dir) => Some(store::Store::open(dir).map_err(|e| EmulatorError(e.to_string()))?),
            None => None,
        };
        let clock = match options.deterministic {
            Some(seed) => clock::Clock::deterministic(seed),
            None => clock::Clock::wall(),
        };
        let app = Arc::new(
            app::App::new(options.seed, store, clock, options.log_budget).map_err(EmulatorError)?,
        );
        let router = axum::Router::new()
            .merge(management::routes())
            .merge(observability::routes())
            .merge(control::routes())
            .fallback(not_found)
            .layer(axum::middleware::from_fn_with_state(
                app.clone(),
                app::front,
            ))
            .with_state(app.clone());
        let stopping = app.clone();
        let serving = serving::Serving::start(router, options.listen, async move {
            // The request ids drawn since the last write, for a restart on the same data directory.
            if let Err(error) = stopping.persist(store::Write::Clock) {
                tracing::error!(%error, "the deterministic clock's position could not be stored");
            }
        })
        .await?;
        Ok(Self {
            base_url: serving.base_url(),
            address: serving.address,
            app,
            serving,
        })
    }

    /// A server that answers the exchanges of the cassette at `path` (recorded with
    /// `api-emulator record`) instead of emulating: see [`Replay`].
    pub async fn replay(path: &std::path::Path) -> Result<Replay, EmulatorError> {
        Replay::from_file(path).await
    }

    /// The base URL of both APIs (no trailing `/`).
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The address it listens on.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// The seed it runs with.
    pub fn seed(&self) -> &Seed {
        &self.app.seed
    }

    /// The first admin API key of the seed: `(key id, key secret)`.
    pub fn admin_key(&self) -> (&str, &str) {
        self.key_with_role(seed::Role::Admin)
    }

    /// The first developer (read-only) API key of the seed.
    pub fn developer_key(&self) -> (&str, &str) {
        self.key_with_role(seed::Role::Developer)
    }

    fn key_with_role(&self, role: seed::Role) -> (&str, &str) {
        self.app
            .seed
            .api_keys
            .iter()
            .find(|k| k.role == role)
            .map(|k| (k.id.as_str(), k.secret.as_str()))
            .unwrap_or_default()
    }

    /// The organization of the first admin key.
    pub fn organization_id(&self) -> OrganizationId {
        self.app
            .seed
            .api_keys
            .iter()
            .find(|k| k.role == seed::Role::Admin)
            .map(|k| OrganizationId::from(k.organization))
            .unwrap_or_else(|| OrganizationId::from(uuid::Uuid::nil()))
    }

    /// The first service of that organization that the seed puts in `state` (`"running"`,
    /// `"stopped"`, or a [`ServiceState`]), whatever its state now.
    pub fn service_id(&self, state: impl Into<ServiceState>) -> Option<ServiceId> {
        let state = state.into();
        let organization = *self.organization_id().as_uuid();
        self.app
            .seed
            .services
            .iter()
            .find(|s| s.organization == organization && s.service.state.as_ref() == Some(&state))
            .and_then(|s| s.service.id)
            .map(ServiceId::from)
    }

    /// The services as they are now, with their organizations (as `GET /_emulator/services` shows).
    pub fn services(&self) -> Vec<ServiceView> {
        views::services(&self.app)
    }

    /// The pipes as they are now, deleted ones until they are gone (as `GET /_emulator/pipes`
    /// shows), secrets redacted.
    pub fn pipes(&self) -> Vec<PipeView> {
        views::pipes(&self.app)
    }

    /// Forces a pipe into `state` until forced again; `None` gives it back to its lifecycle (as
    /// `PUT /_emulator/pipes/{id}/state` does). False when there is no such pipe.
    pub fn force_pipe_state(
        &self,
        pipe: PipeId,
        state: Option<PipeState>,
    ) -> Result<bool, EmulatorError> {
        views::force_pipe_state(&self.app, *pipe.as_uuid(), state).map_err(EmulatorError)
    }

    /// Changes a stored pipe out of band, as a console edit would: a JSON merge patch (RFC 7396) on
    /// the pipe as the API answers it (as `PATCH /_emulator/pipes/{id}` does). The result must still
    /// be a `Pipe` by the spec; answers the pipe as it is now, secrets redacted.
    ///
    /// ```no_run
    /// # async fn run(emulator: api_emulator::Emulator, id: api_emulator::PipeId) -> Result<(), api_emulator::EmulatorError> {
    /// let pipe = emulator.patch_pipe(id, &serde_json::json!({"scaling": {"replicas": 3}}))?;
    /// assert_eq!(pipe["scaling"]["replicas"], 3);
    /// # Ok(()) }
    /// ```
    pub fn patch_pipe(
        &self,
        pipe: PipeId,
        patch: &serde_json::Value,
    ) -> Result<serde_json::Value, EmulatorError> {
        views::patch_pipe(&self.app, *pipe.as_uuid(), patch).map_err(|e| {
            EmulatorError(match e {
                views::PatchError::NotFound => format!("no pipe {pipe}"),
                views::PatchError::Invalid(why) | views::PatchError::Storage(why) => why,
            })
        })
    }

    /// Merges `overlay` (a JSON object) into the pipe's JSON in every later `getPipe` answer, for
    /// tests of answers a client cannot decode (as `PUT /_emulator/pipes/{id}/raw` does): objects
    /// are merged member by member, any other value (`null` included) replaces what is there, e.g.
    /// `{"scaling": {"replicas": 3.0}}` or `{"scaling": {"replicas": "three"}}`. The stored pipe
    /// does not change, nor do the create answer, `Emulator::pipes` and the settings; a second
    /// overlay replaces the first. Kept in memory only, never in the data directory. False when
    /// there is no such pipe; an error when `overlay` is not an object.
    ///
    /// ```no_run
    /// # async fn run(emulator: api_emulator::Emulator, id: api_emulator::PipeId) -> Result<(), api_emulator::EmulatorError> {
    /// emulator.set_raw_overlay(id, serde_json::json!({"scaling": {"replicas": 3.0}}))?;
    /// # Ok(()) }
    /// ```
    pub fn set_raw_overlay(
        &self,
        pipe: PipeId,
        overlay: serde_json::Value,
    ) -> Result<bool, EmulatorError> {
        overlay::set(&self.app, *pipe.as_uuid(), overlay).map_err(EmulatorError)
    }

    /// Removes the overlay of [`Emulator::set_raw_overlay`] (as `DELETE /_emulator/pipes/{id}/raw`
    /// does): `getPipe` answers the stored pipe again. False when the pipe had none.
    pub fn clear_raw_overlay(&self, pipe: PipeId) -> bool {
        overlay::clear(&self.app, *pipe.as_uuid())
    }

    /// Puts a service in `state` now (a transitional state such as `stopping` then finishes after
    /// the seed's timing, as `PUT /_emulator/services/{id}/state` does). False when there is no such
    /// service.
    pub fn set_service_state(
        &self,
        service: ServiceId,
        state: ServiceState,
    ) -> Result<bool, EmulatorError> {
        views::set_service_state(&self.app, *service.as_uuid(), state).map_err(EmulatorError)
    }

    /// The first observability token of the seed.
    pub fn observability_token(&self) -> &str {
        self.app
            .seed
            .observability_tokens
            .first()
            .map(|t| t.token.as_str())
            .unwrap_or_default()
    }

    /// The token of the control endpoints.
    pub fn control_token(&self) -> &str {
        &self.app.seed.control.token
    }

    /// Arms a fault rule (as `POST /_emulator/faults` does); a rule that cannot work (no path and no
    /// operation, no action, a status outside 100-599) is refused with the reason.
    pub fn inject(&self, rule: FaultRule) -> Result<(), EmulatorError> {
        if let Some(problem) = rule.problem() {
            return Err(EmulatorError(format!("fault rule: {problem}")));
        }
        self.app
            .faults
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(rule);
        Ok(())
    }

    /// Disarms every fault rule.
    pub fn clear_faults(&self) {
        self.app
            .faults
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }

    /// The requests received so far on the API paths, oldest first (as `GET /_emulator/requests`
    /// shows): operation, redacted body and headers, status and request id of each; the newest
    /// that fit in the log's budget ([`LOG_BUDGET`] bytes unless the options say otherwise).
    pub fn requests(&self) -> RequestLog {
        RequestLog::new(self.app.log().entries().collect())
    }

    /// Empties the request log.
    pub fn clear_requests(&self) {
        self.app.log().clear();
    }

    /// Stops accepting connections and waits for the server to finish.
    pub async fn shutdown(self) {
        self.serving.shutdown().await;
    }
}

async fn not_found(
    request_id: Option<axum::Extension<app::RequestId>>,
    uri: axum::http::Uri,
) -> axum::response::Response {
    let request_id = request_id.map(|id| id.0.0).unwrap_or_default();
    app::refusal(
        operation::is_management_path(uri.path()),
        &request_id,
        axum::http::StatusCode::NOT_FOUND,
        &format!("no route for {}", uri.path()),
    )
}
