//! The management API: services, pipes, private endpoints.

pub mod canonical;
pub mod errors;
mod pipes;
mod private_endpoints;
mod services;

use std::collections::HashMap;
use std::marker::PhantomData;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Path, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::Response;
use axum::routing::{get, patch, post};
use base64::Engine;
use serde_json::Value;
use uuid::Uuid;

use crate::app::{Admission, RequestId, Shared};
use crate::schema::Body;
use crate::seed::{ApiKey, Role};

/// The management routes.
pub fn routes() -> Router<Shared> {
    let service = "/v1/organizations/{organization_id}/services/{service_id}";
    Router::new()
        .route(&format!("{service}/state"), patch(services::update_state))
        .route(&format!("{service}/pipes"), post(pipes::create))
        .route(
            &format!("{service}/pipes/{{pipe_id}}"),
            get(pipes::get).delete(pipes::delete),
        )
        .route(
            &format!("{service}/pipes/{{pipe_id}}/settings"),
            get(pipes::settings),
        )
        .route(
            &format!("{service}/pipesReversePrivateEndpoints"),
            get(private_endpoints::list_reverse),
        )
        .route(
            &format!("{service}/privateEndpoint"),
            post(private_endpoints::create),
        )
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum::extract::DefaultBodyLimit::max(BODY_LIMIT))
}

/// The largest request body the management API takes: 2 MiB; a larger one is answered with 413.
pub const BODY_LIMIT: usize = 2 * 1024 * 1024;

/// A known path with a method it does not take: 405 with the management error envelope.
async fn method_not_allowed(
    method: axum::http::Method,
    request_id: Option<axum::Extension<RequestId>>,
) -> axum::response::Response {
    let request_id = request_id.map(|r| r.0.0).unwrap_or_default();
    errors::error(
        &request_id,
        StatusCode::METHOD_NOT_ALLOWED,
        format!("this path does not take {method}"),
    )
}

/// Whether an operation reads or writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// GET.
    Read,
    /// PATCH, POST, DELETE: refused to a developer (read-only) key.
    Write,
}

/// A request that passed authentication, the rate limit and the organization and service checks.
/// As an extractor it runs [`admit`] with the path's ids; GET reads, every other method writes.
pub struct Admitted {
    /// The request id.
    pub request_id: String,
    /// The organization of the path.
    pub organization: Uuid,
    /// The service of the path.
    pub service: Uuid,
    /// The `pipeId` path segment, on pipe routes (not parsed yet).
    pub pipe_id: Option<String>,
}

impl FromRequestParts<Shared> for Admitted {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, app: &Shared) -> Result<Self, Response> {
        let request_id = parts
            .extensions
            .get::<RequestId>()
            .cloned()
            .unwrap_or_else(|| RequestId(Uuid::new_v4().to_string()));
        let Path(params) = Path::<HashMap<String, String>>::from_request_parts(parts, app)
            .await
            .map_err(|e| errors::error(&request_id.0, StatusCode::BAD_REQUEST, e.body_text()))?;
        let param = |name: &str| params.get(name).map(String::as_str).unwrap_or_default();
        let access = if parts.method == Method::GET {
            Access::Read
        } else {
            Access::Write
        };
        let mut admitted = admit(
            app,
            &request_id,
            &parts.headers,
            param("organization_id"),
            param("service_id"),
            access,
        )?;
        admitted.pipe_id = params.get("pipe_id").cloned();
        Ok(admitted)
    }
}

/// Checks, in order: credentials (401), rate limit (429), path ids (400), organization of the key
/// (403), role (403), service (404).
pub fn admit(
    app: &Shared,
    request_id: &RequestId,
    headers: &HeaderMap,
    organization: &str,
    service: &str,
    access: Access,
) -> Result<Admitted, Response> {
    let rid = request_id.0.as_str();
    let key = authenticate(app, headers).ok_or_else(|| {
        errors::error(
            rid,
            StatusCode::UNAUTHORIZED,
            "missing or invalid API key; use HTTP Basic with key id and key secret",
        )
    })?;
    let limits = app.seed.limits;
    if let Admission::Refused { reset_secs } = app.admit(
        &format!("mgmt:{}", key.id),
        limits.management_max,
        limits.management_window(),
    ) {
        let mut response = errors::error(
            rid,
            StatusCode::TOO_MANY_REQUESTS,
            format!(
                "more than {} requests in {} seconds with this key",
                limits.management_max, limits.management_window_secs
            ),
        );
        response
            .headers_mut()
            .insert("x-ratelimit-reset", HeaderValue::from(reset_secs));
        return Err(response);
    }
    let organization = parse_uuid(rid, "organizationId", organization)?;
    let service = parse_uuid(rid, "serviceId", service)?;
    if key.organization != organization {
        return Err(errors::error(
            rid,
            StatusCode::FORBIDDEN,
            "the API key belongs to another organization",
        ));
    }
    if access == Access::Write && key.role == Role::Developer {
        return Err(errors::error(
            rid,
            StatusCode::FORBIDDEN,
            "the API key is read-only (developer role)",
        ));
    }
    let belongs = app
        .world()
        .services
        .get(&service)
        .is_some_and(|s| s.organization == organization);
    if !belongs {
        return Err(errors::error(
            rid,
            StatusCode::NOT_FOUND,
            format!("service {service} not found"),
        ));
    }
    Ok(Admitted {
        request_id: rid.to_string(),
        organization,
        service,
        pipe_id: None,
    })
}

fn authenticate<'a>(app: &'a Shared, headers: &HeaderMap) -> Option<&'a ApiKey> {
    let value = headers.get("authorization")?.to_str().ok()?;
    let (scheme, encoded) = value.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()?;
    let decoded = String::from_utf8(decoded).ok()?;
    let (id, secret) = decoded.split_once(':')?;
    app.seed
        .api_keys
        .iter()
        .find(|k| k.id == id && k.secret == secret)
}

/// Parses a path id, answering 400 naming the parameter.
pub fn parse_uuid(request_id: &str, name: &str, value: &str) -> Result<Uuid, Response> {
    Uuid::parse_str(value).map_err(|_| {
        errors::error(
            request_id,
            StatusCode::BAD_REQUEST,
            format!("{name}: {value:?} is not a UUID"),
        )
    })
}

/// Which request schema of the spec a body must follow.
pub trait RequestSchema {
    /// The schema.
    const BODY: Body;
}

/// The body of `createPipe`.
pub struct PipeCreate;
/// The body of `updateServiceState`.
pub struct ServiceStateChange;
/// The body of `createPrivateEndpoint`.
pub struct PrivateEndpointCreate;

impl RequestSchema for PipeCreate {
    const BODY: Body = Body::PipeCreate;
}
impl RequestSchema for ServiceStateChange {
    const BODY: Body = Body::ServiceState;
}
impl RequestSchema for PrivateEndpointCreate {
    const BODY: Body = Body::PrivateEndpoint;
}

/// A JSON body that passed the content-type check, parsing and the spec's request schema `S`; a
/// body that did not is answered with 400 naming the field.
pub struct ValidJson<S>(pub Value, PhantomData<S>);

impl<S: RequestSchema> FromRequest<Shared> for ValidJson<S> {
    type Rejection = Response;

    async fn from_request(request: Request, app: &Shared) -> Result<Self, Response> {
        let request_id = request
            .extensions()
            .get::<RequestId>()
            .map(|id| id.0.clone())
            .unwrap_or_default();
        let headers = request.headers().clone();
        let bytes = Bytes::from_request(request, app).await.map_err(|e| {
            if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
                let limit = format!("the request body is larger than {BODY_LIMIT} bytes");
                errors::error(&request_id, StatusCode::PAYLOAD_TOO_LARGE, limit)
            } else {
                errors::error(&request_id, StatusCode::BAD_REQUEST, e.body_text())
            }
        })?;
        json_body(app, &request_id, &headers, &bytes, S::BODY)
            .map(|value| ValidJson(value, PhantomData))
    }
}

/// Reads a JSON body: checks the content type, parses, and validates it against the spec.
fn json_body(
    app: &Shared,
    request_id: &str,
    headers: &HeaderMap,
    bytes: &[u8],
    body: Body,
) -> Result<Value, Response> {
    let content_type = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let media = content_type.split(';').next().unwrap_or_default().trim();
    if !media.eq_ignore_ascii_case("application/json") {
        let shown = if content_type.is_empty() {
            "none"
        } else {
            content_type
        };
        return Err(errors::error(
            request_id,
            StatusCode::BAD_REQUEST,
            format!("Content-Type must be application/json, got {shown}"),
        ));
    }
    let value: Value = serde_json::from_slice(bytes).map_err(|e| {
        errors::error(
            request_id,
            StatusCode::BAD_REQUEST,
            format!("malformed JSON: {e}"),
        )
    })?;
    let problems = app.schemas.problems(body, &value);
    if !problems.is_empty() {
        return Err(errors::error(
            request_id,
            StatusCode::BAD_REQUEST,
            problems.join("; "),
        ));
    }
    Ok(value)
}

/// A 500 for a failed write to the store.
pub fn storage_failed(request_id: &str, error: impl std::fmt::Display) -> Response {
    tracing::error!(%error, "write to the store failed");
    errors::error(
        request_id,
        StatusCode::INTERNAL_SERVER_ERROR,
        "the write could not be stored",
    )
}
