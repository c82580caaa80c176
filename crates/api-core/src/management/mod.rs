//! Domain types of the management API: services, pipes, private endpoints, the pipe builder and waiters.

mod envelopes;
mod new_pipe;
pub mod operations;
mod pipe;
mod private_endpoint;
mod service;
mod wait;

pub use api_raw::management::types as raw_types;
pub use api_raw::support::{
    Compression, CpuMillicores, MemoryGb, MskAuthentication, PipeState,
    ReversePrivateEndpointStatus, ReversePrivateEndpointType, ServiceEndpointProtocol,
    ServiceState,
};
pub use new_pipe::{
    Destination, KafkaSource, KinesisSource, NewPipe, NewPipeBuilder, ObjectStorageSource,
    PipeSettingsSpec, PostgresSettingsSpec, PostgresSource, PostgresTableMapping, Scaling,
    SchemaRegistry, Source,
};
pub use pipe::{Pipe, PipeSettings, SourceKind};
pub use private_endpoint::{PrivateEndpoint, ReversePrivateEndpoint};
pub use service::{Service, ServiceCommand};
pub use wait::{PipeTarget, WaitError, WaitOptions, wait_for_pipe, wait_for_service};
