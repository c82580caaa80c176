//! [`Service`]: a service as the state command answers it, with its [`ServiceEndpoint`]s.

use std::fmt;

use api_raw::management::types as raw;
use api_raw::support::{MemoryGb, ServiceEndpointProtocol, ServiceState};
use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::decode::{Invalid, Path, fit, gigabytes, required, whole};
use crate::ids::ServiceId;

/// The command of the service state endpoint. `Display` writes the wire form (`start`, `stop`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ServiceCommand {
    /// Start a stopped service.
    Start,
    /// Stop a running service.
    Stop,
}

impl ServiceCommand {
    /// The state the command leads to: `running` for start, `stopped` for stop.
    pub fn target(self) -> ServiceState {
        match self {
            ServiceCommand::Start => ServiceState::Running,
            ServiceCommand::Stop => ServiceState::Stopped,
        }
    }

    /// The state the command moves a service out of: `stopped` for start, `running` for stop. A
    /// service read in it after the command has not taken the command.
    pub fn starts_from(self) -> ServiceState {
        match self {
            ServiceCommand::Start => ServiceState::Stopped,
            ServiceCommand::Stop => ServiceState::Running,
        }
    }

    /// The command that leads to `state`, if one does.
    pub fn leading_to(state: &ServiceState) -> Option<Self> {
        [ServiceCommand::Start, ServiceCommand::Stop]
            .into_iter()
            .find(|command| &command.target() == state)
    }
}

impl fmt::Display for ServiceCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ServiceCommand::Start => "start",
            ServiceCommand::Stop => "stop",
        })
    }
}

impl ServiceCommand {
    /// The command as the generated client sends it.
    pub fn to_raw(self) -> raw::ServiceStateCommand {
        match self {
            ServiceCommand::Start => raw::ServiceStateCommand::Start,
            ServiceCommand::Stop => raw::ServiceStateCommand::Stop,
        }
    }
}

/// A service, as the state command answers it.
///
/// Its [`id`](Self::id) is always there. [`state`](Self::state) is an `Option` because the API
/// describes it as optional (the production service sends it); everything about encryption, BYOC and
/// private endpoints is absent or empty where it does not apply to the service.
///
/// Deserializes from the API's JSON (the envelope's `result` / `data`) through the same decoding as a
/// call, and serializes to the same shape with secrets as `"[REDACTED]"`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Service {
    /// The service id.
    pub id: ServiceId,
    /// The name; empty when the server omitted it.
    pub name: String,
    /// The state, when the server reports it.
    pub state: Option<ServiceState>,
    /// Version of the database engine, when reported.
    pub db_version: Option<String>,
    /// The endpoints clients connect to.
    pub endpoints: Vec<ServiceEndpoint>,
    /// Lower bound of the total memory, when autoscaling is configured.
    pub min_total_memory_gb: Option<MemoryGb>,
    /// Upper bound of the total memory, when autoscaling is configured.
    pub max_total_memory_gb: Option<MemoryGb>,
    /// Lower bound of the memory per replica, when autoscaling is configured.
    pub min_replica_memory_gb: Option<MemoryGb>,
    /// Upper bound of the memory per replica, when autoscaling is configured.
    pub max_replica_memory_gb: Option<MemoryGb>,
    /// Number of replicas, when reported.
    pub num_replicas: Option<u32>,
    /// Whether the service scales to zero when idle, when reported.
    pub idle_scaling: Option<bool>,
    /// Minutes of inactivity before it idles, when idle scaling is on.
    #[serde(serialize_with = "api_raw::support::serialize_optional_number")]
    pub idle_timeout_minutes: Option<f64>,
    /// Addresses allowed to connect.
    pub ip_access_list: Vec<IpAccessListEntry>,
    /// When the service was created, when reported.
    pub created_at: Option<DateTime<Utc>>,
    /// Customer-managed encryption key, when one is used.
    pub encryption_key: Option<String>,
    /// Role assumed for the encryption key, when one is used.
    pub encryption_assumed_role_identifier: Option<String>,
    /// Role of the service, when one is set.
    pub iam_role: Option<String>,
    /// Private endpoints attached to the service.
    pub private_endpoint_ids: Vec<String>,
    /// Private endpoints registered in the organization that could be attached.
    pub available_private_endpoint_ids: Vec<String>,
    /// Warehouse the service belongs to, when reported.
    pub data_warehouse_id: Option<String>,
    /// Whether it is the primary service of its warehouse, when reported.
    pub is_primary: Option<bool>,
    /// Whether it is read-only, when reported.
    pub is_readonly: Option<bool>,
    /// BYOC deployment, when the service runs in one.
    pub byoc_id: Option<String>,
    /// Whether transparent data encryption is on, when reported.
    pub has_transparent_data_encryption: Option<bool>,
    /// Key of transparent data encryption, when it is on.
    pub transparent_data_encryption_key_id: Option<String>,
    /// Role of the encryption, when one is used.
    pub encryption_role_id: Option<String>,
}

/// An endpoint of a service. `Display` writes `protocol://host:port`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ServiceEndpoint {
    /// The protocol, when reported.
    pub protocol: Option<ServiceEndpointProtocol>,
    /// Host name; empty when the server omitted it.
    pub host: String,
    /// Port, when reported.
    pub port: Option<u16>,
    /// User name to connect with, when reported.
    pub username: Option<String>,
}

impl fmt::Display for ServiceEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(protocol) = &self.protocol {
            write!(f, "{protocol}://")?;
        }
        f.write_str(&self.host)?;
        if let Some(port) = self.port {
            write!(f, ":{port}")?;
        }
        Ok(())
    }
}

/// An entry of a service's IP access list.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct IpAccessListEntry {
    /// Address or CIDR range; empty when the server omitted it.
    pub source: String,
    /// What the entry is for, when given.
    pub description: Option<String>,
}

impl Service {
    /// The state as text, `unknown` when the server did not report one (for messages).
    pub fn state_name(&self) -> &str {
        self.state.as_ref().map_or("unknown", ServiceState::as_str)
    }

    pub(crate) fn decode(s: raw::Service, at: Path<'_>) -> Result<Self, Invalid> {
        let endpoints_at = at.field("endpoints");
        let endpoints = s
            .endpoints
            .unwrap_or_default()
            .into_iter()
            .enumerate()
            .map(|(i, e)| {
                Ok(ServiceEndpoint {
                    protocol: e.protocol,
                    host: e.host.unwrap_or_default(),
                    port: fit(e.port, endpoints_at.index(i).field("port"))?,
                    username: e.username,
                })
            })
            .collect::<Result<_, Invalid>>()?;
        Ok(Self {
            id: required(s.id, at.field("id"))?.into(),
            name: s.name.unwrap_or_default(),
            state: s.state,
            db_version: s.db_version,
            endpoints,
            min_total_memory_gb: gigabytes(s.min_total_memory_gb, at.field("minTotalMemoryGb"))?,
            max_total_memory_gb: gigabytes(s.max_total_memory_gb, at.field("maxTotalMemoryGb"))?,
            min_replica_memory_gb: gigabytes(
                s.min_replica_memory_gb,
                at.field("minReplicaMemoryGb"),
            )?,
            max_replica_memory_gb: gigabytes(
                s.max_replica_memory_gb,
                at.field("maxReplicaMemoryGb"),
            )?,
            num_replicas: whole(s.num_replicas, at.field("numReplicas"))?,
            idle_scaling: s.idle_scaling,
            idle_timeout_minutes: s.idle_timeout_minutes,
            ip_access_list: s
                .ip_access_list
                .unwrap_or_default()
                .into_iter()
                .map(|e| IpAccessListEntry {
                    source: e.source.unwrap_or_default(),
                    description: e.description,
                })
                .collect(),
            created_at: s.created_at,
            encryption_key: s.encryption_key,
            encryption_assumed_role_identifier: s.encryption_assumed_role_identifier,
            iam_role: s.iam_role,
            private_endpoint_ids: s.private_endpoint_ids.unwrap_or_default(),
            available_private_endpoint_ids: s.available_private_endpoint_ids.unwrap_or_default(),
            data_warehouse_id: s.data_warehouse_id,
            is_primary: s.is_primary,
            is_readonly: s.is_readonly,
            byoc_id: s.byoc_id,
            has_transparent_data_encryption: s.has_transparent_data_encryption,
            transparent_data_encryption_key_id: s.transparent_data_encryption_key_id,
            encryption_role_id: s.encryption_role_id,
        })
    }
}

crate::decode::deserialize_from_wire!(Service, raw::Service, |value, at| Service::decode(
    value, at
));
