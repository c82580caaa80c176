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

/// A pipe as it is now: enough for a test to tell the pipes apart (several can share a name, with
/// `duplicate_names`) and to see which are being deleted.
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
    /// Whether a delete was accepted: its deletion is under way (it is listed until it finishes).
    pub deleted: bool,
    /// When the delete was accepted (`None` while the pipe is not being deleted).
    #[serde(default)]
    pub deleted_at: Option<chrono::DateTime<chrono::Utc>>,
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
                deleted_at: record.deleted_at,
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

/// Why an out-of-band change of a pipe was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatchError {
    /// No pipe has this id (or its deletion has finished).
    NotFound,
    /// The patch, or the pipe it would make, is not what the API can answer; the text says why.
    Invalid(String),
    /// The data directory could not take the change.
    Storage(String),
}

/// Changes a stored pipe as a console edit would, with a JSON merge patch (RFC 7396) on the pipe as
/// the API answers it: `{"scaling": {"replicas": 3}}` sets one member, `null` removes one. The
/// result must still be a `Pipe` by the spec's response schema; `id`, `serviceId` and `state` cannot
/// change this way (a state is forced with [`force_pipe_state`]). `updatedAt` becomes now. Answers
/// the pipe as it is now, secrets redacted.
pub fn patch_pipe(app: &Shared, id: Uuid, patch: &Value) -> Result<Value, PatchError> {
    let Value::Object(changes) = patch else {
        return Err(PatchError::Invalid(
            "a merge patch is a JSON object of the members to change".into(),
        ));
    };
    for fixed in ["id", "serviceId", "state", "createdAt"] {
        if changes.contains_key(fixed) {
            let hint = if fixed == "state" {
                "; force a state with PUT /_emulator/pipes/{pipeId}/state"
            } else {
                ""
            };
            return Err(PatchError::Invalid(format!(
                "{fixed} cannot be changed{hint}"
            )));
        }
    }
    let now = app.clock.now();
    let timing = app.seed.timing;
    let mut world = app.world();
    let Some(record) = world.pipe(&id).filter(|r| !r.is_gone(now, &timing)) else {
        return Err(PatchError::NotFound);
    };
    let mut edited = crate::wire::json(&record.pipe);
    merge_patch(&mut edited, patch);
    edited["updatedAt"] = Value::from(now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
    let violations = api_raw::support::schema::SchemaSet::management().violations("Pipe", &edited);
    if !violations.is_empty() {
        let shown: Vec<String> = violations.iter().map(ToString::to_string).collect();
        return Err(PatchError::Invalid(format!(
            "the patched pipe breaks the Pipe schema: {}",
            shown.join("; ")
        )));
    }
    let pipe = serde_json::from_value(edited)
        .map_err(|e| PatchError::Invalid(format!("the patched pipe cannot be stored: {e}")))?;
    let mut snapshot = record.clone();
    snapshot.pipe = pipe;
    app.persist(Write::Pipe(id, &snapshot))
        .map_err(|e| PatchError::Storage(e.to_string()))?;
    let mut shown = crate::wire::json(snapshot.current(now, &timing));
    app.redactor.json(&mut shown);
    world.put_pipe(id, snapshot);
    Ok(shown)
}

/// Applies a JSON merge patch (RFC 7396) to `target`.
fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(changes) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(serde_json::Map::new());
    }
    let Value::Object(members) = target else {
        return;
    };
    for (name, change) in changes {
        if change.is_null() {
            members.remove(name);
        } else {
            merge_patch(members.entry(name.clone()).or_insert(Value::Null), change);
        }
    }
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::merge_patch;

    #[test]
    fn merge_patches_follow_rfc_7396() {
        // The examples of RFC 7396, appendix A (a selection).
        for (target, patch, result) in [
            (json!({"a": "b"}), json!({"a": "c"}), json!({"a": "c"})),
            (
                json!({"a": "b"}),
                json!({"b": "c"}),
                json!({"a": "b", "b": "c"}),
            ),
            (json!({"a": "b"}), json!({"a": null}), json!({})),
            (
                json!({"a": {"b": "c"}}),
                json!({"a": {"b": "d", "c": null}}),
                json!({"a": {"b": "d"}}),
            ),
            (
                json!({"a": [{"b": "c"}]}),
                json!({"a": [1]}),
                json!({"a": [1]}),
            ),
            (
                json!({"a": "foo"}),
                json!({"a": {"b": "c"}}),
                json!({"a": {"b": "c"}}),
            ),
            (
                json!({"e": null}),
                json!({"a": 1}),
                json!({"e": null, "a": 1}),
            ),
        ] {
            let mut value = target.clone();
            merge_patch(&mut value, &patch);
            assert_eq!(value, result, "{target} + {patch}");
        }
    }
}
