//! The shared state of a running emulator, its router, and the layer in front of every route
//! (request ids, fault injection, the request log).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::Response;
use serde::Serialize;

use crate::faults::{self, Decision, FaultRule};
use crate::schema::Schemas;
use crate::seed::Seed;
use crate::store::{Store, StoreError};
use crate::world::World;

/// The request id of the request being served (also sent as `x-request-id`).
#[derive(Debug, Clone)]
pub struct RequestId(pub String);

/// One line of the request log.
#[derive(Debug, Clone, Serialize)]
pub struct LogEntry {
    /// The method.
    pub method: String,
    /// The path.
    pub path: String,
    /// The status answered (0 when the connection was dropped on purpose).
    pub status: u16,
}

/// The most requests the log keeps.
const LOG_LIMIT: usize = 10_000;

/// Everything a running emulator shares between requests.
#[derive(Debug)]
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
    pub log: Mutex<VecDeque<LogEntry>>,
    /// Rate limit windows by key.
    windows: Mutex<HashMap<String, (Instant, u32)>>,
    /// Request validators.
    pub schemas: Schemas,
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
    /// Builds the app: the world comes from the store when it holds data, else from the seed.
    pub fn new(seed: Seed, store: Option<(Store, bool)>) -> Result<Self, String> {
        let schemas = Schemas::load()?;
        let now = chrono::Utc::now();
        let (world, store) = match store {
            Some((store, true)) => (store.load().map_err(|e| e.to_string())?, Some(store)),
            Some((store, false)) => {
                let world = World::from_seed(&seed, now);
                store.save_all(&world).map_err(|e| e.to_string())?;
                (world, Some(store))
            }
            None => (World::from_seed(&seed, now), None),
        };
        let faults = Mutex::new(seed.faults.clone());
        Ok(Self {
            seed,
            world: Mutex::new(world),
            store,
            faults,
            log: Mutex::new(VecDeque::new()),
            windows: Mutex::new(HashMap::new()),
            schemas,
        })
    }

    /// Locks the world. A panic elsewhere never poisons it for good: the data stays usable.
    pub fn world(&self) -> MutexGuard<'_, World> {
        self.world
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Writes through to the store (a no-op without one).
    pub fn persist(
        &self,
        write: impl FnOnce(&Store) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        match &self.store {
            Some(store) => write(store),
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
        let now = Instant::now();
        let mut windows = self.windows.lock().unwrap_or_else(|p| p.into_inner());
        let entry = windows.entry(key.to_string()).or_insert((now, 0));
        if now.duration_since(entry.0) >= window {
            *entry = (now, 0);
        }
        let left = window.saturating_sub(now.duration_since(entry.0));
        let reset_secs = left.as_secs() + u64::from(left.subsec_nanos() > 0);
        if entry.1 >= max {
            return Admission::Refused { reset_secs };
        }
        entry.1 += 1;
        Admission::Allowed {
            remaining: max - entry.1,
            reset_secs,
        }
    }

    fn record(&self, entry: LogEntry) {
        let mut log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        if log.len() == LOG_LIMIT {
            log.pop_front();
        }
        log.push_back(entry);
    }
}

/// The layer in front of the API routes: request id, faults, request log.
pub async fn front(State(app): State<Shared>, mut request: Request, next: Next) -> Response {
    let path = request.uri().path().to_string();
    if path.starts_with("/_emulator") {
        return next.run(request).await;
    }
    let method = request.method().to_string();
    let request_id = uuid::Uuid::new_v4().to_string();
    request
        .extensions_mut()
        .insert(RequestId(request_id.clone()));

    let action = {
        let mut rules = app.faults.lock().unwrap_or_else(|p| p.into_inner());
        faults::next_action(&mut rules, &method, &path)
    };
    let decision = action.map(|a| a.decide(path.starts_with("/v1/"), &request_id));
    let (mut response, dropped) = match decision {
        Some(Decision::Answer {
            delay,
            response,
            dropped,
        }) => {
            tokio::time::sleep(delay).await;
            (response, dropped)
        }
        Some(Decision::Serve {
            delay,
            truncate,
            headers,
        }) => {
            tokio::time::sleep(delay).await;
            let mut response = next.run(request).await;
            for (name, value) in &headers {
                if let (Ok(name), Ok(value)) = (
                    axum::http::HeaderName::from_bytes(name.as_bytes()),
                    HeaderValue::from_str(value),
                ) {
                    response.headers_mut().insert(name, value);
                }
            }
            if truncate {
                (faults::truncate(response).await, true)
            } else {
                (response, false)
            }
        }
        None => (next.run(request).await, false),
    };
    if !response.headers().contains_key("x-request-id")
        && let Ok(value) = HeaderValue::from_str(&request_id)
    {
        response.headers_mut().insert("x-request-id", value);
    }
    let status = if dropped {
        0
    } else {
        response.status().as_u16()
    };
    app.record(LogEntry {
        method,
        path,
        status,
    });
    response
}
