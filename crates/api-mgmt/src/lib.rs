//! The management API of the analytics cloud: services, data pipes and private endpoints.
//!
//! Resource handles in the style of `kube::Api`: a [`Client`] gives [`ServiceHandle`]s, which give
//! [`Pipes`] and [`PipeHandle`]s. Every operation returns a [`Response`] (the value, plus the status,
//! headers, request id and attempts of the call) or an [`Error`].
//!
//! | operation | call |
//! |---|---|
//! | start / stop a service | [`ServiceHandle::start`], [`ServiceHandle::stop`], [`ServiceHandle::start_and_wait`], [`ServiceHandle::stop_and_wait`] |
//! | read a service (the state endpoint without a command) | [`ServiceHandle::get`] |
//! | create a pipe | [`Pipes::create`], [`Pipes::create_and_wait`] with a [`NewPipe`] |
//! | read a pipe, its settings | [`PipeHandle::get`], [`PipeHandle::get_opt`], [`PipeHandle::settings`] |
//! | delete a pipe | [`PipeHandle::delete`], [`PipeHandle::delete_if_exists`], [`PipeHandle::wait_until_gone`] |
//! | wait for a pipe | [`PipeHandle::wait_until`], [`PipeHandle::wait_until_steady`], [`PipeHandle::wait_for`] with any [`Condition`] |
//! | list reverse private endpoints | [`ServiceHandle::reverse_private_endpoints`] |
//! | register a private endpoint | [`ServiceHandle::create_private_endpoint`] |
//!
//! What the calls return are domain values read without unwrapping: a [`Pipe`] has its `id`,
//! `name`, `state`, [`PipeSource`], [`Destination`], [`Scaling`] and [`PipeSettings`]; a [`Service`]
//! its `id`, `state` and endpoints. Every id, state and quantity prints as a person writes it
//! (`Running`, `kafka`, `500m`, `2 GB`). The generated client and its values are `Client::raw()`.
//!
//! ```no_run
//! # async fn run() -> Result<(), api_mgmt::Error> {
//! use api_mgmt::{Client, PipeSource, WaitOptions};
//!
//! let client = Client::from_env()?; // CLOUD_API_URL, CLOUD_API_KEY_ID, CLOUD_API_KEY_SECRET
//! let service = client.service("3f0c5e2a-8d41-4b7e-9a6c-1e2f3a4b5c6d".parse()?, "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d".parse()?);
//! service.start_and_wait(&WaitOptions::default()).await?;
//! for endpoint in service.reverse_private_endpoints().await?.iter() {
//!     println!("{} {}", endpoint.id, endpoint.status);
//! }
//! let pipe = service.pipe("0f9e8d7c-6b5a-4f3e-9d2c-1b0a9f8e7d6c".parse()?);
//! let read = pipe.get().await?;
//! if let PipeSource::Kafka(kafka) = &read.source {
//!     println!("{} reads {} from {}", read.name, kafka.topics, kafka.brokers);
//! }
//! let endpoint = service.create_private_endpoint("vpce-0123456789abcdef0", "CI runners").await?;
//! println!("registered {}", endpoint.id);
//! if pipe.delete_if_exists().await? {
//!     pipe.wait_until_gone(&WaitOptions::default()).await?;
//! }
//! # Ok(()) }
//! ```
//!
//! This crate compiles only the management half of the SDK; `api_mgmt::raw` is the generated client.

#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

mod client;
#[cfg(feature = "declared")]
pub mod declared;
mod pipes;
mod service;

pub use api_core::management::{
    And, Compression, Condition, CpuMillicores, Destination, DestinationColumn, FieldMapping,
    IpAccessListEntry, KafkaSource, KinesisSource, MemoryGb, MskAuthentication, NewPipe,
    NewPipeBuilder, Not, ObjectStorageSource, Or, Pipe, PipeSettings, PipeSource, PipeState,
    PostgresSettingsSpec, PostgresSource, PostgresTableMapping, PrivateEndpoint,
    ReversePrivateEndpoint, ReversePrivateEndpointStatus, ReversePrivateEndpointType, Scaling,
    SchemaRegistry, Service, ServiceCommand, ServiceEndpoint, ServiceEndpointProtocol,
    ServiceState, ServiceWait, Source, SourceKind, TableDefinition, TableEngine, WaitError,
    WaitFor, WaitOptions, operations, raw_types, source, wait_for_pipe, wait_for_pipe_gone,
    wait_for_service,
};
/// The spec's schemas and their one validator (what a request is checked against, what is
/// request-only, secret or filled in by the server).
pub use api_core::raw::support::schema;
/// The one redaction rule: which members hold secrets, and where a secret value stands in a text,
/// whatever its encoding (for a caller's own output).
pub use api_core::redact;
/// The HTTP client crate the SDK sends with, for [`ConfigBuilder::http_client`].
pub use api_core::reqwest;
pub use api_core::{
    ApiError, Config, ConfigBuilder, Credentials, DecodeError, Error, ErrorCode, IdError,
    Idempotency, MAX_ERROR_BODY, MAX_ERROR_MESSAGE, Operation, OrganizationId, PipeId, Problem,
    RateLimit, Response, ResponseMeta, RetryPolicy, ReversePrivateEndpointId, Secret, ServiceId,
    TransportError, TransportKind, ValidationError, env,
};
/// A `reqwest` client builder with the SDK's TLS backend, for [`ConfigBuilder::http_client`].
pub use api_core::{DEFAULT_CONNECT_TIMEOUT, http_client_builder};
pub use api_core::{
    FallbackTo, RATE_LIMIT_STORE_VAR, RATE_LIMIT_VAR, RateLimitStore, RateLimiter, RedisUrl,
    StoreChange, StoreFallback,
};
pub use client::Client;
pub use pipes::{PipeHandle, Pipes};
pub use service::ServiceHandle;

/// The generated management client and types (an escape hatch).
pub use api_core::raw::management as raw;
