//! Reverse private endpoints and private endpoints.

use std::ops::Deref;

use api_raw::management::types as raw;
use api_raw::support::{ReversePrivateEndpointStatus, ReversePrivateEndpointType};

use crate::ids::ReversePrivateEndpointId;

/// A registered private endpoint (`id`, `description`).
pub type PrivateEndpoint = raw::PrivateEndpoint;

/// A reverse private endpoint of a service. Typed accessors for the common fields; the rest through
/// `Deref` to the generated type.
#[derive(Debug, Clone)]
pub struct ReversePrivateEndpoint(raw::ReversePrivateEndpoint);

impl ReversePrivateEndpoint {
    /// The endpoint id.
    pub fn id(&self) -> Option<ReversePrivateEndpointId> {
        self.0.id.map(ReversePrivateEndpointId::from_uuid)
    }

    /// The status; [`ReversePrivateEndpointStatus::Unknown`] when the server omitted it.
    pub fn status(&self) -> ReversePrivateEndpointStatus {
        self.0
            .status
            .clone()
            .unwrap_or(ReversePrivateEndpointStatus::Unknown)
    }

    /// The kind of endpoint, when reported.
    pub fn kind(&self) -> Option<ReversePrivateEndpointType> {
        self.0.type_.clone()
    }

    /// The generated type.
    pub fn as_raw(&self) -> &raw::ReversePrivateEndpoint {
        &self.0
    }
}

impl From<raw::ReversePrivateEndpoint> for ReversePrivateEndpoint {
    fn from(endpoint: raw::ReversePrivateEndpoint) -> Self {
        Self(endpoint)
    }
}

impl Deref for ReversePrivateEndpoint {
    type Target = raw::ReversePrivateEndpoint;

    fn deref(&self) -> &raw::ReversePrivateEndpoint {
        &self.0
    }
}
