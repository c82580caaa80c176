//! [`ReversePrivateEndpoint`]s of a service and registered [`PrivateEndpoint`]s.

use api_raw::management::types as raw;
use api_raw::support::{
    MskAuthentication, ReversePrivateEndpointStatus, ReversePrivateEndpointType,
};
use serde::Serialize;

use crate::decode::{Invalid, Path, required};
use crate::ids::{ReversePrivateEndpointId, ServiceId};

/// A reverse private endpoint of a service: how pipes reach sources in the customer's network.
///
/// Its identity ([`id`](Self::id), [`service_id`](Self::service_id)) is always there. The members
/// that describe the endpoint depend on its [`kind`](Self::kind) (a VPC endpoint service has a service
/// name, an MSK endpoint a cluster ARN and authentication), so they are `Option`s.
///
/// Deserializes from the API's JSON (the envelope's `result` / `data`) through the same decoding as a
/// call, and serializes to the same shape with secrets as `"[REDACTED]"`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ReversePrivateEndpoint {
    /// The endpoint id.
    pub id: ReversePrivateEndpointId,
    /// The service it belongs to.
    pub service_id: ServiceId,
    /// What it is for; empty when none was given.
    pub description: String,
    /// The kind of endpoint (`type`), when reported.
    #[serde(rename = "type")]
    pub kind: Option<ReversePrivateEndpointType>,
    /// The status; [`ReversePrivateEndpointStatus::Unknown`] when the server omitted it.
    pub status: ReversePrivateEndpointStatus,
    /// VPC endpoint service name (VPC endpoint services).
    pub vpc_endpoint_service_name: Option<String>,
    /// VPC resource configuration (VPC resources).
    pub vpc_resource_configuration_id: Option<String>,
    /// Resource share ARN (VPC resources).
    pub vpc_resource_share_arn: Option<String>,
    /// Cluster ARN (MSK).
    pub msk_cluster_arn: Option<String>,
    /// Authentication (MSK).
    pub msk_authentication: Option<MskAuthentication>,
    /// Id of the endpoint on the cloud provider's side, once created.
    pub endpoint_id: Option<String>,
    /// DNS names.
    pub dns_names: Vec<String>,
    /// Private DNS names.
    pub private_dns_names: Vec<String>,
}

impl ReversePrivateEndpoint {
    pub(crate) fn decode(e: raw::ReversePrivateEndpoint, at: Path<'_>) -> Result<Self, Invalid> {
        Ok(Self {
            id: required(e.id, at.field("id"))?.into(),
            service_id: required(e.service_id, at.field("serviceId"))?.into(),
            description: e.description.unwrap_or_default(),
            kind: e.type_,
            status: e.status.unwrap_or(ReversePrivateEndpointStatus::Unknown),
            vpc_endpoint_service_name: e.vpc_endpoint_service_name,
            vpc_resource_configuration_id: e.vpc_resource_configuration_id,
            vpc_resource_share_arn: e.vpc_resource_share_arn,
            msk_cluster_arn: e.msk_cluster_arn,
            msk_authentication: e.msk_authentication,
            endpoint_id: e.endpoint_id,
            dns_names: e.dns_names.unwrap_or_default(),
            private_dns_names: e.private_dns_names.unwrap_or_default(),
        })
    }
}

/// A private endpoint registered on a service.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct PrivateEndpoint {
    /// The cloud provider's endpoint id, e.g. `vpce-0123456789abcdef0`.
    pub id: String,
    /// What it is for; empty when none was given.
    pub description: String,
}

impl PrivateEndpoint {
    pub(crate) fn decode(raw: raw::PrivateEndpoint, at: Path<'_>) -> Result<Self, Invalid> {
        let id = required(raw.id, at.field("id"))?;
        if id.trim().is_empty() {
            return Err(at.field("id").error("must not be empty"));
        }
        Ok(Self {
            id,
            description: raw.description.unwrap_or_default(),
        })
    }
}

crate::decode::deserialize_from_wire!(
    ReversePrivateEndpoint,
    raw::ReversePrivateEndpoint,
    |value, at| ReversePrivateEndpoint::decode(value, at)
);
crate::decode::deserialize_from_wire!(PrivateEndpoint, raw::PrivateEndpoint, |value, at| {
    PrivateEndpoint::decode(value, at)
});
