//! Control endpoints under `/_emulator`, for tests: fault injection, the request log, forced pipe
//! states. They need `Authorization: Bearer <control token>`; `/_emulator/health` needs nothing.

use api_raw::support::PipeState;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, put};
use serde_json::Value;

use crate::app::Shared;
use crate::faults::FaultRule;

/// The control routes.
pub fn routes() -> Router<Shared> {
    Router::new()
        .route("/_emulator/health", get(|| async { "ok" }))
        .route(
            "/_emulator/faults",
            get(list_faults).post(add_faults).delete(clear_faults),
        )
        .route(
            "/_emulator/requests",
            get(list_requests).delete(clear_requests),
        )
        .route("/_emulator/pipes/{pipe_id}/state", put(force_pipe_state))
}

fn refuse(status: StatusCode, text: impl Into<String>) -> Response {
    (
        status,
        axum::Json(serde_json::json!({ "message": text.into() })),
    )
        .into_response()
}

fn authorized(app: &Shared, headers: &HeaderMap) -> Result<(), Response> {
    let expected = format!("Bearer {}", app.seed.control.token);
    match headers.get("authorization").and_then(|v| v.to_str().ok()) {
        Some(value) if value == expected => Ok(()),
        _ => Err(refuse(
            StatusCode::UNAUTHORIZED,
            "the control endpoints need the control token",
        )),
    }
}

async fn list_faults(State(app): State<Shared>, headers: HeaderMap) -> Response {
    if let Err(response) = authorized(&app, &headers) {
        return response;
    }
    let rules = app.faults.lock().unwrap_or_else(|p| p.into_inner()).clone();
    axum::Json(rules).into_response()
}

/// Accepts one rule or a list of rules.
async fn add_faults(
    State(app): State<Shared>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    if let Err(response) = authorized(&app, &headers) {
        return response;
    }
    let value: Value = match serde_json::from_slice(&body) {
        Ok(value) => value,
        Err(e) => return refuse(StatusCode::BAD_REQUEST, format!("malformed JSON: {e}")),
    };
    let rules: Result<Vec<FaultRule>, _> = match value {
        Value::Array(_) => serde_json::from_value(value),
        other => serde_json::from_value(other).map(|rule| vec![rule]),
    };
    match rules {
        Ok(rules) if rules.iter().all(|r| !r.actions.is_empty()) => {
            let count = rules.len();
            app.faults
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .extend(rules);
            axum::Json(serde_json::json!({ "armed": count })).into_response()
        }
        Ok(_) => refuse(StatusCode::BAD_REQUEST, "a rule needs at least one action"),
        Err(e) => refuse(StatusCode::BAD_REQUEST, format!("invalid fault rule: {e}")),
    }
}

async fn clear_faults(State(app): State<Shared>, headers: HeaderMap) -> Response {
    if let Err(response) = authorized(&app, &headers) {
        return response;
    }
    app.faults.lock().unwrap_or_else(|p| p.into_inner()).clear();
    StatusCode::NO_CONTENT.into_response()
}

async fn list_requests(State(app): State<Shared>, headers: HeaderMap) -> Response {
    if let Err(response) = authorized(&app, &headers) {
        return response;
    }
    let log: Vec<_> = app
        .log
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .cloned()
        .collect();
    axum::Json(log).into_response()
}

async fn clear_requests(State(app): State<Shared>, headers: HeaderMap) -> Response {
    if let Err(response) = authorized(&app, &headers) {
        return response;
    }
    app.log.lock().unwrap_or_else(|p| p.into_inner()).clear();
    StatusCode::NO_CONTENT.into_response()
}

/// Forces a pipe into a state (`{"state": "Failed"}`), or back to its lifecycle (`{"state": null}`).
async fn force_pipe_state(
    State(app): State<Shared>,
    Path(pipe_id): Path<String>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    if let Err(response) = authorized(&app, &headers) {
        return response;
    }
    let Ok(id) = uuid::Uuid::parse_str(&pipe_id) else {
        return refuse(StatusCode::BAD_REQUEST, "pipe id is not a UUID");
    };
    let state: Option<PipeState> = match serde_json::from_slice::<Value>(&body) {
        Ok(value) => value
            .get("state")
            .and_then(Value::as_str)
            .map(PipeState::from),
        Err(e) => return refuse(StatusCode::BAD_REQUEST, format!("malformed JSON: {e}")),
    };
    let mut world = app.world();
    let Some(record) = world.pipes.get_mut(&id) else {
        return refuse(StatusCode::NOT_FOUND, "no such pipe");
    };
    let mut snapshot = record.clone();
    snapshot.forced = state;
    match app.persist(|store| store.save_pipe(id, &snapshot)) {
        Ok(()) => {
            *record = snapshot;
            StatusCode::NO_CONTENT.into_response()
        }
        Err(e) => refuse(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}
