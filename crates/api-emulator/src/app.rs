//! The shared state of a running emulator, its router, and the layer in front of every route
//! (request ids, fault injection, the request log).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::time::Duration;

use axum::body::Body;
use axum::extract::connect_info::ConnectInfo;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use api_raw::support::redact::{self, Redactor};

use crate::clock::Clock;
use crate::connection::Connection;
use crate::faults::{self, Cut, Decision, FaultRule};
use crate::log_buffer::{LOG_BODY_LIMIT, LogBuffer, body_not_kept};
use crate::operation::OperationId;
use crate::request_log::LogEntry;
use crate::schema::Schemas;
use crate::seed::Seed;
use crate::store::{Store, StoreError, Write};
use crate::world::World;

/// The request id of the request being served (also sent as `x-request-id`).
#[derive(Debug, Clone)]
pub struct RequestId(pub String);

/// Everything a running emulator shares between requests. `Debug` shows what it holds in numbers,
/// never the state itself (pipes and the log may hold secrets; rate limit windows are keyed by
/// token).
pub struct App {
    /// The seed (keys, tokens, alerts, dashboards, timing, limits).
    pub seed: Seed,
    /// Services and pipes.
    world: Mutex<World>,
    /// Persistence, with `--data-dir`.
    store: Option<Store>,
    /// Armed faults.
    pub faults: Mutex<Vec<FaultRule>>,
    /// The request log.
    log: Mutex<LogBuffer>,
    /// Rate limit windows by key: start (time since the emulator started) and count.
    windows: Mutex<HashMap<String, (Duration, u32)>>,
    /// Request validators.
    pub schemas: Schemas,
    /// The one redaction rule with the seed's own secrets (key secrets, their `Authorization`
    /// forms, tokens): everything the emulator shows about requests and state goes through it.
    pub redactor: Redactor,
    /// Time and generated ids.
    pub clock: Clock,
    /// The raw overlays of `getPipe` answers by pipe id (see `overlay`), in memory only.
    overlays: Mutex<HashMap<uuid::Uuid, Value>>,
}

/// Shared handle of the app.
pub type Shared = Arc<App>;

/// The result of a rate limit check.
pub enum Admission {
    /// Allowed: requests left in the window, seconds until it resets.
    Allowed { remaining: u32, reset_secs: u64 },
    /// Refused: seconds until the window resets.
    Refused { reset_secs: u64 },
}

impl App {
    /// Builds the app: the world (and a deterministic clock's position) comes from the store when
    /// it holds data, else from the seed; the request log keeps at most `log_budget` bytes.
    pub fn new(
        seed: Seed,
        store: Option<(Store, bool)>,
        clock: Clock,
        log_budget: usize,
    ) -> Result<Self, String> {
        let schemas = Schemas::load()?;
        let redactor = seed.redactor();
        let (world, store) = match store {
            Some((store, true)) => {
                if let Some(position) = store.clock().map_err(|e| e.to_string())? {
                    clock.resume(position)?;
                }
                (store.load().map_err(|e| e.to_string())?, Some(store))
            }
            Some((store, false)) => {
                let world = World::from_seed(&seed, clock.now());
                store.save_all(&world, &clock).map_err(|e| e.to_string())?;
                (world, Some(store))
            }
            None => (World::from_seed(&seed, clock.now()), None),
        };
        let faults = Mutex::new(seed.faults.clone());
        Ok(Self {
            seed,
            world: Mutex::new(world),
            store,
            faults,
            log: Mutex::new(LogBuffer::new(log_budget)),
            windows: Mutex::new(HashMap::new()),
            schemas,
            redactor,
            clock,
            overlays: Mutex::new(HashMap::new()),
        })
    }

    /// Locks the world, first purging the deleted pipes whose deletion has finished (from the
    /// store too), so that they go without waiting to be read again. A panic elsewhere never
    /// poisons it for good: the data stays usable.
    pub fn world(&self) -> MutexGuard<'_, World> {
        let mut world = self
            .world
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let gone = world.gone_pipes(self.clock.now(), &self.seed.timing);
        if !gone.is_empty() {
            match self.persist(Write::RemovePipes(&gone)) {
                Ok(()) => {
                    let mut overlays = self.overlays();
                    for id in &gone {
                        world.remove_pipe(*id);
                        overlays.remove(id);
                    }
                }
                // They stay hidden (they are gone) and are purged on a later lock.
                Err(error) => tracing::warn!(%error, "deleted pipes could not be purged yet"),
            }
        }
        world
    }

    /// Writes through to the store (a no-op without one), with a deterministic clock's position.
    pub fn persist(&self, write: Write<'_>) -> Result<(), StoreError> {
        match &self.store {
            Some(store) => store.write(write, &self.clock),
            None => Ok(()),
        }
    }

    /// Counts one request of `key` against a fixed window of `max` requests per `window`.
    pub fn admit(&self, key: &str, max: u32, window: Duration) -> Admission {
        if !self.seed.limits.enabled {
            return Admission::Allowed {
                remaining: max,
                reset_secs: window.as_secs(),
            };
        }
        let now = self.clock.elapsed();
        let mut windows = self.windows.lock().unwrap_or_else(|p| p.into_inner());
        let entry = windows.entry(key.to_string()).or_insert((now, 0));
        if now.saturating_sub(entry.0) >= window {
            *entry = (now, 0);
        }
        let left = window.saturating_sub(now.saturating_sub(entry.0));
        let reset_secs = left
            .as_secs()
            .saturating_add(u64::from(left.subsec_nanos() > 0));
        if entry.1 >= max {
            return Admission::Refused { reset_secs };
        }
        entry.1 += 1;
        Admission::Allowed {
            remaining: max - entry.1,
            reset_secs,
        }
    }

    /// Locks the raw overlays of `getPipe` answers, by pipe id. Taken after the world when both
    /// are needed, never the other way round.
    pub fn overlays(&self) -> MutexGuard<'_, HashMap<uuid::Uuid, Value>> {
        self.overlays.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Locks the request log.
    pub fn log(&self) -> MutexGuard<'_, LogBuffer> {
        self.log.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn record(&self, entry: LogEntry) {
        self.log().push(entry);
    }
}

impl std::fmt::Debug for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("App")
            .field("seed", &self.seed)
            .field("services", &peek(&self.world, |w| w.services.len()))
            .field("pipes", &peek(&self.world, |w| w.pipes().count()))
            .field("store", &self.store)
            .field("faults", &peek(&self.faults, Vec::len))
            .field("log_entries", &peek(&self.log, LogBuffer::len))
            .field("log_bytes", &peek(&self.log, LogBuffer::bytes))
            .field("rate_limit_windows", &peek(&self.windows, HashMap::len))
            .field("raw_overlays", &peek(&self.overlays, HashMap::len))
            .field("clock", &self.clock)
            .finish_non_exhaustive()
    }
}

/// Reads what a mutex holds without waiting for it: `None` while another holder has it (so that
/// `Debug` never blocks, nor deadlocks when the formatting thread holds it).
fn peek<T, R>(mutex: &Mutex<T>, read: impl FnOnce(&T) -> R) -> Option<R> {
    match mutex.try_lock() {
        Ok(guard) => Some(read(&guard)),
        Err(TryLockError::Poisoned(poisoned)) => Some(read(&poisoned.into_inner())),
        Err(TryLockError::WouldBlock) => None,
    }
}

/// The largest request body read into the request log; larger ones are refused with 413 (the
/// management API's limit, which is also the only API that takes bodies).
const BODY_LIMIT: usize = crate::management::BODY_LIMIT;

/// The layer in front of the API routes: clock, request id, request log, faults.
pub async fn front(State(app): State<Shared>, request: Request, next: Next) -> Response {
    let path = request.uri().path().to_string();
    if path.starts_with("/_emulator") {
        return next.run(request).await;
    }
    app.clock.tick();
    let at = app.clock.now();
    let method = request.method().to_string();
    let operation = OperationId::of_request(&method, &path);
    let management = crate::operation::is_management_path(&path);
    let request_id = app.clock.new_id().to_string();
    let connection = request
        .extensions()
        .get::<ConnectInfo<Connection>>()
        .map(|info| info.0.clone());
    let raw_headers = request.headers().clone();
    let (mut request, body) = match read_body(request).await {
        Ok(read) => read,
        Err((status, text)) => {
            let redactor = &app.redactor;
            let (path, headers) = (
                redactor.text(&path).into_owned(),
                logged_headers(redactor, &raw_headers),
            );
            let response = refusal(management, &request_id, status, &text);
            app.record(LogEntry {
                at,
                method,
                path,
                operation_id: operation,
                headers,
                body: Some(Value::String(text)),
                status: response.status().as_u16(),
                request_id: request_id.clone(),
                faulted: false,
            });
            return with_request_id(response, &request_id);
        }
    };
    // The secret values of this request (by member name) are hidden wherever else they appear in
    // its entry: the path, a header, another member.
    let (path_shown, headers, body) = {
        let mut redactor = app.redactor.clone();
        if let Some(body) = &body {
            redactor.add_json_secrets(body);
        }
        let body = body.map(|mut body| {
            redactor.json(&mut body);
            body
        });
        (
            redactor.text(&path).into_owned(),
            logged_headers(&redactor, &raw_headers),
            body,
        )
    };
    request
        .extensions_mut()
        .insert(RequestId(request_id.clone()));

    let action = {
        let mut rules = app.faults.lock().unwrap_or_else(|p| p.into_inner());
        faults::next_action(&mut rules, &method, &path, operation)
    };
    let faulted = action.is_some();
    let decision = action.map(|a| a.decide(management, &request_id));
    let (response, cut) = match decision {
        Some(Decision::Answer {
            delay,
            response,
            cut,
            apply,
        }) => {
            if apply {
                // The request takes effect; what it would have answered is thrown away. The delay
                // comes after: an answer slow to come for a request already applied (a gateway
                // timing out on a create that happened).
                let _ = next.run(request).await;
            }
            tokio::time::sleep(delay).await;
            (response, cut)
        }
        Some(Decision::Serve {
            delay,
            truncate,
            headers,
            apply,
        }) => {
            let response = if apply {
                // Takes effect at once; the answer is slow to come.
                let response = next.run(request).await;
                tokio::time::sleep(delay).await;
                response
            } else {
                tokio::time::sleep(delay).await;
                next.run(request).await
            };
            let response = faults::with_headers(response, &headers);
            if truncate {
                (faults::truncate(response).await, Cut::AfterHeaders)
            } else {
                (response, Cut::No)
            }
        }
        None => (next.run(request).await, Cut::No),
    };
    let status = match cut {
        Cut::No => response.status().as_u16(),
        Cut::AfterHeaders | Cut::BeforeAnything => 0,
    };
    app.record(LogEntry {
        at,
        method,
        path: path_shown,
        operation_id: operation,
        headers,
        body,
        status,
        request_id: request_id.clone(),
        faulted,
    });
    if cut == Cut::BeforeAnything {
        match connection {
            Some(connection) => connection.hang_up(),
            None => tracing::warn!("a hangup fault on a connection that cannot be hung up"),
        }
    }
    with_request_id(response, &request_id)
}

fn with_request_id(mut response: Response, request_id: &str) -> Response {
    if !response.headers().contains_key("x-request-id")
        && let Ok(value) = HeaderValue::from_str(request_id)
    {
        response.headers_mut().insert("x-request-id", value);
    }
    response
}

/// The headers as the log shows them: a header with a secret name (`Authorization`, cookies, API
/// keys, tokens) redacted, the others through the one redaction rule, values that are not text
/// described.
fn logged_headers(redactor: &Redactor, headers: &HeaderMap) -> BTreeMap<String, String> {
    headers
        .iter()
        .map(|(name, value)| {
            let name = name.as_str().to_string();
            let shown = if redact::is_secret_member(&name) {
                redact::REDACTED.to_string()
            } else {
                value
                    .to_str()
                    .map(|text| redactor.text(text).into_owned())
                    .unwrap_or_else(|_| format!("<{} bytes, not text>", value.len()))
            };
            (name, shown)
        })
        .collect()
}

/// Reads the body (up to the limit) for the log and puts it back for the handler; the logged form
/// is redacted by the caller. A body declared larger than the limit is not read: the route answers
/// 413 itself (or 405 first).
async fn read_body(request: Request) -> Result<(Request, Option<Value>), (StatusCode, String)> {
    let declared = request
        .headers()
        .get("content-length")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if let Some(length) = declared.filter(|n| *n > BODY_LIMIT as u64) {
        let described = Value::String(format!("<{length} bytes, over the limit>"));
        return Ok((request, Some(described)));
    }
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, BODY_LIMIT).await.map_err(|e| {
        let over_limit = std::error::Error::source(&e)
            .is_some_and(|source| source.is::<http_body_util::LengthLimitError>());
        if over_limit {
            (
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("the request body is larger than {BODY_LIMIT} bytes"),
            )
        } else {
            (
                StatusCode::BAD_REQUEST,
                "the request body could not be read".to_string(),
            )
        }
    })?;
    let logged = if bytes.is_empty() {
        None
    } else if bytes.len() > LOG_BODY_LIMIT {
        Some(body_not_kept(bytes.len()))
    } else {
        Some(match serde_json::from_slice::<Value>(&bytes) {
            Ok(value) => value,
            Err(_) => Value::String(format!("<{} bytes, not JSON>", bytes.len())),
        })
    };
    Ok((Request::from_parts(parts, Body::from(bytes)), logged))
}

/// An answer the emulator gives itself, in the error shape of the API of the path.
pub(crate) fn refusal(
    management: bool,
    request_id: &str,
    status: StatusCode,
    text: &str,
) -> Response {
    if management {
        crate::management::errors::error(request_id, status, text)
    } else {
        (status, axum::Json(serde_json::json!({ "message": text }))).into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seed::Timing;
    use crate::world::{PipeRecord, SourceKind};

    /// An app whose deleted pipes take two (deterministic) seconds to go.
    fn app(store: Option<(Store, bool)>) -> App {
        let mut seed = Seed::builtin();
        seed.timing = Timing {
            pipe_delete_ms: 2000,
            ..Timing::INSTANT
        };
        App::new(seed, store, Clock::deterministic(1), 1024).unwrap()
    }

    /// Adds a pipe deleted now, stored and in the world.
    fn delete_a_pipe(app: &App) -> uuid::Uuid {
        let id = app.clock.new_id();
        let mut record = PipeRecord {
            organization: uuid::Uuid::nil(),
            pipe: Default::default(),
            kind: SourceKind::Kafka,
            one_shot: false,
            created: app.clock.now(),
            forced: None,
            deleted_at: Some(app.clock.now()),
            validate_samples: None,
        };
        record.pipe.id = Some(id);
        app.persist(Write::Pipe(id, &record)).unwrap();
        app.world().put_pipe(id, record);
        id
    }

    #[test]
    fn a_deleted_pipe_is_purged_on_the_first_lock_after_its_deletion_finished() {
        let app = app(None);
        let id = delete_a_pipe(&app);
        app.clock.tick();
        assert!(app.world().pipe(&id).is_some(), "one second in: deleting");
        app.clock.tick();
        assert!(app.world().pipe(&id).is_none(), "two seconds in: purged");
    }

    #[test]
    fn a_purged_pipe_takes_its_raw_overlay_with_it() {
        let app = Arc::new(app(None));
        let id = delete_a_pipe(&app);
        assert_eq!(
            crate::overlay::set(&app, id, serde_json::json!({"name": 1})),
            Ok(true)
        );
        app.clock.tick();
        app.clock.tick();
        drop(app.world());
        assert!(app.overlays().is_empty());
        assert_eq!(
            crate::overlay::set(&app, id, serde_json::json!({})),
            Ok(false),
            "no overlay for a pipe that is gone"
        );
    }

    #[cfg(feature = "persistence")]
    #[test]
    fn a_purged_pipe_is_removed_from_the_store_too() {
        let dir = tempfile::tempdir().unwrap();
        let app = app(Some(Store::open(dir.path()).unwrap()));
        let id = delete_a_pipe(&app);
        let stored = |app: &App| {
            app.store
                .as_ref()
                .unwrap()
                .load()
                .unwrap()
                .pipe(&id)
                .is_some()
        };
        app.clock.tick();
        drop(app.world());
        assert!(stored(&app), "one second in: still stored");
        app.clock.tick();
        drop(app.world());
        assert!(!stored(&app), "two seconds in: gone from the store");
    }

    #[test]
    fn debug_shows_no_secret_of_the_seed_nor_the_state() {
        let app = App::new(Seed::builtin(), None, Clock::wall(), 1024).unwrap();
        let _ = app.admit(
            "obs:0d8f3a4e-1c2b-4d5e-8f60-718293a4b5c6",
            10,
            Duration::from_secs(1),
        );
        let shown = format!("{app:?}");
        assert!(
            shown.contains(redact::REDACTED) && shown.contains("rate_limit_windows: Some(1)"),
            "{shown}"
        );
        for secret in [
            "emulator-admin-secret",
            "emulator-control-token",
            "0d8f3a4e-1c2b",
        ] {
            assert!(!shown.contains(secret), "{secret} leaked: {shown}");
        }
    }
}
