//! Domain types of the management API: services, pipes, private endpoints, the pipe builder and
//! waiters.
//!
//! What the server answers is decoded into types the user reads without unwrapping: a resource's
//! identity is always there (a response without it is a [`DecodeError`](crate::DecodeError) naming the
//! JSON path), lists are `Vec`s, and a member stays an `Option` only where the API really leaves it
//! out. [`Destination`], [`Scaling`] and [`PipeSettings`] serve both ways: read back from the server and
//! declared for a [`NewPipe`].

mod destination;
mod envelopes;
mod new_pipe;
pub mod operations;
mod pipe;
mod private_endpoint;
pub mod responses;
mod scaling;
mod service;
mod settings;
pub mod source;
mod wait;

pub use api_raw::management::types as raw_types;
pub use api_raw::support::{
    Compression, CpuMillicores, MemoryGb, MskAuthentication, PipeState,
    ReversePrivateEndpointStatus, ReversePrivateEndpointType, ServiceEndpointProtocol,
    ServiceState,
};
pub use destination::{Destination, DestinationColumn, TableDefinition, TableEngine};
pub use new_pipe::{
    KafkaSource, KinesisSource, NewPipe, NewPipeBuilder, ObjectStorageSource, PostgresSettingsSpec,
    PostgresSource, PostgresTableMapping, SchemaRegistry, Source,
};
pub use pipe::{FieldMapping, Pipe, SourceKind};
pub use private_endpoint::{PrivateEndpoint, ReversePrivateEndpoint};
pub use scaling::Scaling;
pub use service::{IpAccessListEntry, Service, ServiceCommand, ServiceEndpoint};
pub use settings::PipeSettings;
pub use source::PipeSource;
pub use wait::{
    And, Condition, Not, Or, ServiceWait, WaitError, WaitFor, WaitOptions, wait_for_pipe,
    wait_for_pipe_gone, wait_for_service,
};
