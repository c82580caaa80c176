//! Control endpoints under `/_emulator`, for tests: fault injection, the request log, the services
//! and pipes as they are now, forced states, out-of-band edits and raw answer overlays. They need
//! `Authorization: Bearer <control token>`; `/_emulator/health` needs nothing.

use api_raw::support::{PipeState, ServiceState};
use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, patch, put};
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
        .route("/_emulator/services", get(list_services))
        .route("/_emulator/pipes", get(list_pipes))
        .route("/_emulator/pipes/{pipe_id}", patch(patch_pipe))
        .route("/_emulator/pipes/{pipe_id}/state", put(force_pipe_state))
        .route(
            "/_emulator/pipes/{pipe_id}/raw",
            put(set_raw_overlay).delete(clear_raw_overlay),
        )
        .route(
            "/_emulator/services/{service_id}/state",
            put(set_service_state),
        )
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
    let problem = rules.as_ref().ok().and_then(|rules| {
        rules.iter().enumerate().find_map(|(i, rule)| {
            let problem = rule.problem()?;
            Some(format!("rule {i}: {problem}"))
        })
    });
    if let Some(problem) = problem {
        return refuse(StatusCode::BAD_REQUEST, problem);
    }
    match rules {
        Ok(rules) => {
            let count = rules.len();
            app.faults
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .extend(rules);
            axum::Json(serde_json::json!({ "armed": count })).into_response()
        }
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
    let log: Vec<_> = app.log().entries().collect();
    axum::Json(log).into_response()
}

async fn clear_requests(State(app): State<Shared>, headers: HeaderMap) -> Response {
    if let Err(response) = authorized(&app, &headers) {
        return response;
    }
    app.log().clear();
    StatusCode::NO_CONTENT.into_response()
}

async fn list_services(State(app): State<Shared>, headers: HeaderMap) -> Response {
    if let Err(response) = authorized(&app, &headers) {
        return response;
    }
    axum::Json(crate::views::services(&app)).into_response()
}

async fn list_pipes(State(app): State<Shared>, headers: HeaderMap) -> Response {
    if let Err(response) = authorized(&app, &headers) {
        return response;
    }
    axum::Json(crate::views::pipes(&app)).into_response()
}

/// The pipe id of a control path, once the control token is checked.
fn authorized_pipe(
    app: &Shared,
    headers: &HeaderMap,
    pipe_id: &str,
) -> Result<uuid::Uuid, Response> {
    authorized(app, headers)?;
    uuid::Uuid::parse_str(pipe_id)
        .map_err(|_| refuse(StatusCode::BAD_REQUEST, "pipe id is not a UUID"))
}

/// The pipe id of a control path and its JSON body, once the control token is checked.
fn pipe_and_json(
    app: &Shared,
    headers: &HeaderMap,
    pipe_id: &str,
    body: &[u8],
) -> Result<(uuid::Uuid, Value), Response> {
    let id = authorized_pipe(app, headers, pipe_id)?;
    let value = serde_json::from_slice(body)
        .map_err(|e| refuse(StatusCode::BAD_REQUEST, format!("malformed JSON: {e}")))?;
    Ok((id, value))
}

/// The `state` member of a control body: a string, `null`, or absent (`None`).
fn state_member(body: &[u8]) -> Result<Option<String>, Response> {
    match serde_json::from_slice::<Value>(body) {
        Ok(value) => match value.get("state") {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(state)) => Ok(Some(state.clone())),
            Some(_) => Err(refuse(
                StatusCode::BAD_REQUEST,
                "state must be a string or null",
            )),
        },
        Err(e) => Err(refuse(
            StatusCode::BAD_REQUEST,
            format!("malformed JSON: {e}"),
        )),
    }
}

/// Forces a pipe into a state (`{"state": "Failed"}`), or back to its lifecycle (`{"state": null}`).
async fn force_pipe_state(
    State(app): State<Shared>,
    Path(pipe_id): Path<String>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    let id = match authorized_pipe(&app, &headers, &pipe_id) {
        Ok(id) => id,
        Err(response) => return response,
    };
    let state = match state_member(&body) {
        Ok(state) => state.as_deref().map(PipeState::from),
        Err(response) => return response,
    };
    match crate::views::force_pipe_state(&app, id, state) {
        Ok(true) => StatusCode::NO_CONTENT.into_response(),
        Ok(false) => refuse(StatusCode::NOT_FOUND, "no such pipe"),
        Err(e) => refuse(StatusCode::INTERNAL_SERVER_ERROR, e),
    }
}

/// Changes a stored pipe out of band, as a console edit would: a JSON merge patch (RFC 7396).
async fn patch_pipe(
    State(app): State<Shared>,
    Path(pipe_id): Path<String>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    let (id, patch) = match pipe_and_json(&app, &headers, &pipe_id, &body) {
        Ok(found) => found,
        Err(response) => return response,
    };
    match crate::views::patch_pipe(&app, id, &patch) {
        Ok(pipe) => axum::Json(pipe).into_response(),
        Err(crate::views::PatchError::NotFound) => refuse(StatusCode::NOT_FOUND, "no such pipe"),
        Err(crate::views::PatchError::Invalid(why)) => refuse(StatusCode::BAD_REQUEST, why),
        Err(crate::views::PatchError::Storage(why)) => {
            refuse(StatusCode::INTERNAL_SERVER_ERROR, why)
        }
    }
}

/// Sets the raw overlay of a pipe: a JSON object merged into its JSON in every later `getPipe`
/// answer (objects merged, anything else replaced), never stored; in memory only.
async fn set_raw_overlay(
    State(app): State<Shared>,
    Path(pipe_id): Path<String>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    let (id, overlay) = match pipe_and_json(&app, &headers, &pipe_id, &body) {
        Ok(found) => found,
        Err(response) => return response,
    };
    match crate::overlay::set(&app, id, overlay) {
        Ok(true) => StatusCode::NO_CONTENT.into_response(),
        Ok(false) => refuse(StatusCode::NOT_FOUND, "no such pipe"),
        Err(why) => refuse(StatusCode::BAD_REQUEST, why),
    }
}

/// Removes the raw overlay of a pipe (204 whether it had one or not).
async fn clear_raw_overlay(
    State(app): State<Shared>,
    Path(pipe_id): Path<String>,
    headers: HeaderMap,
) -> Response {
    match authorized_pipe(&app, &headers, &pipe_id) {
        Ok(id) => {
            crate::overlay::clear(&app, id);
            StatusCode::NO_CONTENT.into_response()
        }
        Err(response) => response,
    }
}

/// Puts a service in a state now (`{"state": "stopped"}`).
async fn set_service_state(
    State(app): State<Shared>,
    Path(service_id): Path<String>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    if let Err(response) = authorized(&app, &headers) {
        return response;
    }
    let Ok(id) = uuid::Uuid::parse_str(&service_id) else {
        return refuse(StatusCode::BAD_REQUEST, "service id is not a UUID");
    };
    let state = match state_member(&body) {
        Ok(Some(state)) => ServiceState::from(state.as_str()),
        Ok(None) => return refuse(StatusCode::BAD_REQUEST, "state is required"),
        Err(response) => return response,
    };
    match crate::views::set_service_state(&app, id, state) {
        Ok(true) => StatusCode::NO_CONTENT.into_response(),
        Ok(false) => refuse(StatusCode::NOT_FOUND, "no such service"),
        Err(e) => refuse(StatusCode::INTERNAL_SERVER_ERROR, e),
    }
}
