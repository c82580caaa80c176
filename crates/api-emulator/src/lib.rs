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

// Handlers return early with `Err(Response)`, axum's idiom; boxing every answer would only add noise.
#![allow(clippy::result_large_err)]

mod app;
mod control;
pub mod faults;
mod management;
mod observability;
mod schema;
pub mod seed;
mod store;
mod wire;
mod world;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub use app::LogEntry;
pub use faults::{FaultAction, FaultRule};
pub use seed::{DEFAULT_SEED, Limits, Seed, Timing};

/// How to run an emulator.
#[derive(Debug, Clone)]
pub struct EmulatorOptions {
    /// The address to listen on; port 0 picks a free port.
    pub listen: SocketAddr,
    /// The seed.
    pub seed: Seed,
    /// Where to keep state across restarts; in memory when `None`.
    pub data_dir: Option<PathBuf>,
}

impl EmulatorOptions {
    /// The built-in seed on a free loopback port, in memory.
    pub fn new() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            seed: Seed::builtin(),
            data_dir: None,
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

    /// Keep state in `dir`.
    pub fn data_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.data_dir = Some(dir.into());
        self
    }

    /// Override the seed's timing.
    pub fn timing(mut self, timing: Timing) -> Self {
        self.seed.timing = timing;
        self
    }

    /// Turn the rate limits on or off.
    pub fn rate_limits(mut self, enabled: bool) -> Self {
        self.seed.limits.enabled = enabled;
        self
    }

    /// Override the seed's rate limits.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.seed.limits = limits;
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
pub struct EmulatorError(String);

/// A running emulator. Dropping it signals a graceful stop and returns at once; [`Emulator::shutdown`]
/// also waits until the server has finished, which is what to use before reopening the same
/// `data_dir` in the same process (the database is released when the server is done).
#[derive(Debug)]
pub struct Emulator {
    base_url: String,
    address: SocketAddr,
    app: Arc<app::App>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl Emulator {
    /// Starts an emulator on a tokio runtime.
    pub async fn start(options: EmulatorOptions) -> Result<Self, EmulatorError> {
        let store = match &options.data_dir {
            Some(dir) => Some(store::Store::open(dir).map_err(|e| EmulatorError(e.to_string()))?),
            None => None,
        };
        let app = Arc::new(app::App::new(options.seed, store).map_err(EmulatorError)?);
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
        let listener = tokio::net::TcpListener::bind(options.listen)
            .await
            .map_err(|e| EmulatorError(format!("cannot listen on {}: {e}", options.listen)))?;
        let address = listener
            .local_addr()
            .map_err(|e| EmulatorError(e.to_string()))?;
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let serve = axum::serve(listener, router).with_graceful_shutdown(async {
                let _ = stopped.await;
            });
            if let Err(e) = serve.await {
                tracing::error!(error = %e, "the emulator stopped");
            }
        });
        Ok(Self {
            base_url: format!("http://{address}"),
            address,
            app,
            stop: Some(stop),
            task: Some(task),
        })
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
    pub fn organization_id(&self) -> uuid::Uuid {
        self.app
            .seed
            .api_keys
            .iter()
            .find(|k| k.role == seed::Role::Admin)
            .map(|k| k.organization)
            .unwrap_or_default()
    }

    /// The first service of that organization in a given state (`running`, `stopped`, ...).
    pub fn service_id(&self, state: &str) -> Option<uuid::Uuid> {
        let organization = self.organization_id();
        self.app
            .seed
            .services
            .iter()
            .find(|s| {
                s.organization == organization
                    && s.service
                        .state
                        .as_ref()
                        .is_some_and(|st| st.as_str() == state)
            })
            .and_then(|s| s.service.id)
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

    /// Arms a fault rule (as `POST /_emulator/faults` does).
    pub fn inject(&self, rule: FaultRule) {
        self.app
            .faults
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(rule);
    }

    /// The requests served so far (as `GET /_emulator/requests` shows).
    pub fn requests(&self) -> Vec<LogEntry> {
        self.app
            .log
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .cloned()
            .collect()
    }

    /// Stops accepting connections and waits for the server to finish.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

async fn not_found(
    request_id: Option<axum::Extension<app::RequestId>>,
    uri: axum::http::Uri,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let text = format!("no route for {}", uri.path());
    if uri.path().starts_with("/v1/") {
        let request_id = request_id.map(|id| id.0.0).unwrap_or_default();
        let body = serde_json::json!({ "status": 404, "error": format!("NOT_FOUND: {text}"), "requestId": request_id });
        (axum::http::StatusCode::NOT_FOUND, axum::Json(body)).into_response()
    } else {
        (
            axum::http::StatusCode::NOT_FOUND,
            axum::Json(serde_json::json!({ "message": text })),
        )
            .into_response()
    }
}
