//! Reverse private endpoints (listed) and private endpoints (registered).

use api_raw::management::types as mgmt;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;

use super::{Admitted, PrivateEndpointCreate, ValidJson, errors, storage_failed};
use crate::app::Shared;
use crate::store::Write;

/// Handles `listReversePrivateEndpoints`: all of them, in one answer.
pub async fn list_reverse(State(app): State<Shared>, admitted: Admitted) -> Response {
    let endpoints = app
        .world()
        .services
        .get(&admitted.service)
        .map(|s| s.reverse_private_endpoints.clone())
        .unwrap_or_default();
    errors::ok(&admitted.request_id, endpoints)
}

/// Handles `createPrivateEndpoint`: 409 when the id is already registered on the service.
pub async fn create(
    State(app): State<Shared>,
    admitted: Admitted,
    ValidJson(body, _): ValidJson<PrivateEndpointCreate>,
) -> Response {
    let rid = admitted.request_id.as_str();
    let endpoint = mgmt::PrivateEndpoint {
        id: body["id"].as_str().map(str::to_string),
        description: body["description"].as_str().map(str::to_string),
    };
    let mut world = app.world();
    let Some(record) = world.services.get_mut(&admitted.service) else {
        return errors::error(
            rid,
            StatusCode::NOT_FOUND,
            format!("service {} not found", admitted.service),
        );
    };
    if record.private_endpoints.iter().any(|e| e.id == endpoint.id) {
        let id = endpoint.id.unwrap_or_default();
        return errors::error(
            rid,
            StatusCode::CONFLICT,
            format!("private endpoint {id:?} is already registered"),
        );
    }
    let mut snapshot = record.clone();
    snapshot.private_endpoints.push(endpoint.clone());
    if let Err(e) = app.persist(Write::Service(admitted.service, &snapshot)) {
        return storage_failed(rid, e);
    }
    *record = snapshot;
    errors::ok(rid, endpoint)
}
