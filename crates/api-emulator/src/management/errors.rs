//! Management envelopes: `{status, requestId, result}` and `{status, error, requestId}`.

use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// The error code the management API uses for `status`.
pub fn code_for(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 => "BAD_REQUEST",
        401 => "UNAUTHORIZED",
        403 => "FORBIDDEN",
        404 => "NOT_FOUND",
        405 => "METHOD_NOT_ALLOWED",
        409 => "CONFLICT",
        413 => "PAYLOAD_TOO_LARGE",
        424 => "FAILED_DEPENDENCY",
        429 => "TOO_MANY_REQUESTS",
        _ => "INTERNAL_ERROR",
    }
}

fn with_request_id(mut response: Response, request_id: &str) -> Response {
    if let Ok(value) = HeaderValue::from_str(request_id) {
        response.headers_mut().insert("x-request-id", value);
    }
    response
}

/// A success envelope with `result`.
pub fn ok(request_id: &str, result: impl Serialize) -> Response {
    ok_as_is(request_id, crate::wire::json(result))
}

/// A success envelope with `result` exactly as given: no number rewritten (for a test's raw overlay,
/// whose `3.0` must reach the client as `3.0`).
pub fn ok_as_is(request_id: &str, result: serde_json::Value) -> Response {
    let body = serde_json::json!({
        "status": 200,
        "requestId": request_id,
        "result": result,
    });
    with_request_id(axum::Json(body).into_response(), request_id)
}

/// A success envelope without `result` (a delete).
pub fn ok_empty(request_id: &str) -> Response {
    let body = serde_json::json!({ "status": 200, "requestId": request_id });
    with_request_id(axum::Json(body).into_response(), request_id)
}

/// An error envelope: `error` is `<CODE>: <text>`.
pub fn error(request_id: &str, status: StatusCode, text: impl std::fmt::Display) -> Response {
    let body = serde_json::json!({
        "status": status.as_u16(),
        "error": format!("{}: {text}", code_for(status)),
        "requestId": request_id,
    });
    let mut response = axum::Json(body).into_response();
    *response.status_mut() = status;
    with_request_id(response, request_id)
}
