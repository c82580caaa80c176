//! What tests can read and change of the emulator's state directly, from Rust and over the control
//! endpoints: the services and pipes as they are now (secrets redacted), forced states.

use api_core::{OrganizationId, PipeId, ServiceId};
use api_raw::support::{PipeState, ServiceState};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

use crate::app::Shared;
use crate::store::Write;

/// A service as it is now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ServiceView {
    /// Its id.
    pub id: ServiceId,
    /// Its organization.
    pub organization_id: OrganizationId,
    /// Its name.
    pub name: String,
    /// Its state now.
    pub state: ServiceState,
    /// The registered private endpoint ids.
    pub private_endpoint_ids: Vec<String>,
    /// The Service as the API answers it now.
    pub service: Value,
}

/// A pipe as it is now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PipeView {
    /// Its id.
    pub id: PipeId,
    /// Its organization.
    pub organization_id: OrganizationId,
    /// Its service.
    pub service_id: ServiceId,
    /// Its name.
    pub name: String,
    /// Its state now.
    pub state: PipeState,
    /// Whether a delete was accepted (it is listed until its deletion finishes).
    pub deleted: bool,
    /// The Pipe as the API answers it now, with every secret value `"[REDACTED]"`.
    pub pipe: Value,
}

/// The services, ordered by organization and id.
pub fn services(app: &Shared) -> Vec<ServiceView> {
    let now = app.clock.now();
    let timing = app.seed.timing;
    let world = app.world();
    let mut views: Vec<ServiceView> = world
        .services
        .iter()
        .map(|(id, record)| {
            let current = record.current(now, &timing);
            let mut service = crate::wire::json(&current);
            app.redactor.json(&mut service);
            ServiceView {
                id: ServiceId::from(*id),
                organization_id: OrganizationId::from(record.organization),
                name: current.name.clone().unwrap_or_default(),
                state: record.state_at(now, &timing),
                private_endpoint_ids: record
                    .private_endpoints
                    .iter()
                    .filter_map(|e| e.id.clone())
                    .collect(),
                service,
            }
        })
        .collect();
    views.sort_by_key(|v| (v.organization_id, v.id));
    views
}

/// The pipes not yet gone, ordered by creation time and id.
pub fn pipes(app: &Shared) -> Vec<PipeView> {
    let now = app.clock.now();
    let timing = app.seed.timing;
    let world = app.world();
    let mut records: Vec<_> = world
        .pipes()
        .filter(|(_, record)| !record.is_gone(now, &timing))
        .collect();
    records.sort_by_key(|(id, record)| (record.created, **id));
    records
        .into_iter()
        .map(|(id, record)| {
            let current = record.current(now, &timing);
            let mut pipe = crate::wire::json(&current);
            app.redactor.json(&mut pipe);
            PipeView {
                id: PipeId::from(*id),
                organization_id: OrganizationId::from(record.organization),
                service_id: ServiceId::from(current.service_id.unwrap_or_default()),
                name: current.name.clone().unwrap_or_default(),
                state: record.state_at(now, &timing),
                deleted: record.deleted_at.is_some(),
                pipe,
            }
        })
        .collect()
}

/// Forces a pipe's state (`None`: back to its lifecycle); false when there is no such pipe.
pub fn force_pipe_state(app: &Shared, id: Uuid, state: Option<PipeState>) -> Result<bool, String> {
    let mut world = app.world();
    let Some(record) = world.pipe(&id) else {
        return Ok(false);
    };
    let mut snapshot = record.clone();
    snapshot.forced = state;
    app.persist(Write::Pipe(id, &snapshot))
        .map_err(|e| e.to_string())?;
    world.put_pipe(id, snapshot);
    Ok(true)
}

/// Puts a service in `state` now; false when there is no such service.
pub fn set_service_state(app: &Shared, id: Uuid, state: ServiceState) -> Result<bool, String> {
    let now = app.clock.now();
    let mut world = app.world();
    let Some(record) = world.services.get_mut(&id) else {
        return Ok(false);
    };
    let mut snapshot = record.clone();
    snapshot.set_state(state, now);
    app.persist(Write::Service(id, &snapshot))
        .map_err(|e| e.to_string())?;
    *record = snapshot;
    Ok(true)
}
