//! A service as the API answers it, beside [`Service`](crate::Service) and
//! [`ServiceHandle`](crate::ServiceHandle): its ids, state, commands and endpoints, and its
//! private endpoints (registered and reverse).

pub use api_core::management::{
    IpAccessListEntry, PrivateEndpoint, ReversePrivateEndpoint, ReversePrivateEndpointStatus,
    ReversePrivateEndpointType, ServiceCommand, ServiceEndpoint, ServiceEndpointProtocol,
    ServiceState,
};
pub use api_core::{OrganizationId, ReversePrivateEndpointId, ServiceId};
