//! The observability API: one alert by id, and the dashboards. Errors are `{"message"}` JSON, except
//! 401 and 429, which are plain text. Every authenticated answer carries the `RateLimit-*` headers.

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::app::{Admission, Shared};
use crate::seed::ObservabilityToken;

/// The observability routes.
pub fn routes() -> Router<Shared> {
    Router::new()
        .route("/api/v2/alerts/{id}", get(get_alert))
        .route("/api/v2/dashboards", get(list_dashboards))
        .method_not_allowed_fallback(|method: axum::http::Method| async move {
            message(
                StatusCode::METHOD_NOT_ALLOWED,
                &format!("This path does not take {method}"),
            )
        })
}

fn message(status: StatusCode, text: &str) -> Response {
    (status, axum::Json(serde_json::json!({ "message": text }))).into_response()
}

fn plain(status: StatusCode, text: &'static str) -> Response {
    (status, [("content-type", "text/plain")], text).into_response()
}

/// The `RateLimit-*` headers of an answer.
struct RateHeaders {
    limit: u32,
    remaining: u32,
    reset_secs: u64,
}

impl RateHeaders {
    fn apply(&self, mut response: Response) -> Response {
        let headers = response.headers_mut();
        headers.insert("ratelimit-limit", HeaderValue::from(self.limit));
        headers.insert("ratelimit-remaining", HeaderValue::from(self.remaining));
        headers.insert("ratelimit-reset", HeaderValue::from(self.reset_secs));
        response
    }
}

/// Authenticates and counts the request; on success returns the token and the rate limit headers.
fn enter<'a>(
    app: &'a Shared,
    headers: &HeaderMap,
) -> Result<(&'a ObservabilityToken, RateHeaders), Response> {
    let token = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .and_then(|(_, token)| {
            app.seed
                .observability_tokens
                .iter()
                .find(|t| t.token == token.trim())
        })
        .ok_or_else(|| plain(StatusCode::UNAUTHORIZED, "Unauthorized"))?;
    let limits = app.seed.limits;
    let limit = limits.observability_max;
    match app.admit(
        &format!("obs:{}", token.token),
        limit,
        limits.observability_window(),
    ) {
        Admission::Allowed {
            remaining,
            reset_secs,
        } => Ok((
            token,
            RateHeaders {
                limit,
                remaining,
                reset_secs,
            },
        )),
        Admission::Refused { reset_secs } => {
            let mut response = plain(StatusCode::TOO_MANY_REQUESTS, "Too Many Requests");
            response
                .headers_mut()
                .insert("retry-after", HeaderValue::from(reset_secs.max(1)));
            Err(RateHeaders {
                limit,
                remaining: 0,
                reset_secs,
            }
            .apply(response))
        }
    }
}

async fn get_alert(
    State(app): State<Shared>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    let (token, limits) = match enter(&app, &headers) {
        Ok(entered) => entered,
        Err(response) => return response,
    };
    let well_formed = api_raw::support::AlertId::matches(&id);
    let response = if !well_formed {
        message(
            StatusCode::BAD_REQUEST,
            "Invalid alert id: expected 24 hexadecimal digits",
        )
    } else {
        match app
            .seed
            .alerts
            .iter()
            .find(|a| a.id.as_deref() == Some(id.as_str()))
        {
            None => message(StatusCode::NOT_FOUND, "Alert not found"),
            Some(alert)
                if !token.teams.is_empty()
                    && !alert.team.as_ref().is_some_and(|t| token.teams.contains(t)) =>
            {
                message(StatusCode::FORBIDDEN, "This token may not read this alert")
            }
            Some(alert) => {
                axum::Json(serde_json::json!({ "data": crate::wire::json(alert) })).into_response()
            }
        }
    };
    limits.apply(response)
}

async fn list_dashboards(State(app): State<Shared>, headers: HeaderMap) -> Response {
    match enter(&app, &headers) {
        Ok((_, limits)) => limits.apply(
            axum::Json(serde_json::json!({ "data": crate::wire::json(&app.seed.dashboards) }))
                .into_response(),
        ),
        Err(response) => response,
    }
}
