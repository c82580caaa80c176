//! The management API of the analytics cloud: services, data pipes and private endpoints.
//!
//! Resource handles in the style of `kube::Api`: a [`Client`] gives [`ServiceHandle`]s, which give
//! [`Pipes`](pipes::Pipes) and [`PipeHandle`](pipes::PipeHandle)s. Every operation returns a
//! [`Response`] (the value, plus the status, headers, request id and attempts of the call) or an
//! [`Error`].
//!
//! | operation | call |
//! |---|---|
//! | start / stop a service | [`ServiceHandle::start`], [`ServiceHandle::stop`], [`ServiceHandle::start_and_wait`], [`ServiceHandle::stop_and_wait`] |
//! | read a service (the state endpoint without a command) | [`ServiceHandle::get`] |
//! | create a pipe | [`Pipes::create`](pipes::Pipes::create), [`Pipes::create_and_wait`](pipes::Pipes::create_and_wait) with a [`NewPipe`] |
//! | read a pipe, its settings | [`PipeHandle::get`](pipes::PipeHandle::get), [`get_opt`](pipes::PipeHandle::get_opt), [`settings`](pipes::PipeHandle::settings) |
//! | delete a pipe | [`PipeHandle::delete`](pipes::PipeHandle::delete), [`delete_if_exists`](pipes::PipeHandle::delete_if_exists), [`wait_until_gone`](pipes::PipeHandle::wait_until_gone) |
//! | wait for a pipe | [`PipeHandle::wait_until`](pipes::PipeHandle::wait_until), [`wait_until_steady`](pipes::PipeHandle::wait_until_steady), [`wait_for`](pipes::PipeHandle::wait_for) with any [`Condition`](wait::Condition) |
//! | list reverse private endpoints | [`ServiceHandle::reverse_private_endpoints`] |
//! | register a private endpoint | [`ServiceHandle::create_private_endpoint`] |
//!
//! What the calls return are domain values read without unwrapping: a [`Pipe`] has its `id`,
//! `name`, `state`, [`PipeSource`], [`Destination`](pipes::Destination),
//! [`Scaling`](pipes::Scaling) and [`PipeSettings`](pipes::PipeSettings); a [`Service`] its `id`,
//! `state` and endpoints. Every id, state and quantity prints as a person writes it (`Running`,
//! `kafka`, `500m`, `2 GB`). The generated client and its values are `Client::raw()`.
//!
//! The root holds what a first program names; the rest is in a module per chapter of the guide,
//! each name in one place:
//!
//! | module | what it holds |
//! |---|---|
//! | [`client`] | the config builder, retries, the HTTP client, environment variables, operations |
//! | [`services`] | a service's ids, state, endpoints and private endpoints |
//! | [`pipes`] | the pipes' handles, what a pipe is made of, the sources of a new pipe; [`pipes::source`] as read back |
//! | [`wait`] | wait targets and conditions |
//! | [`error`] | the parts of an [`Error`] |
//! | [`rate_limit`] | the key's shared rate limit |
//! | `declared` | declared pipes: plan and apply (feature `declared`) |
//! | [`schema`], [`redact`], [`raw`] | the spec's schemas, the redaction rule, the generated client |
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

mod handles;

pub mod client;
#[cfg(feature = "declared")]
pub mod declared;
pub mod error;
pub mod pipes;
pub mod rate_limit;
pub mod services;
pub mod wait;

pub use api_core::management::{NewPipe, Pipe, PipeSource, Service, WaitOptions};
pub use api_core::{Config, Credentials, Error, Response, Secret};
pub use handles::{Client, ServiceHandle};

/// The generated management client and types (an escape hatch): `raw::types`, and
/// `raw::operations`, each operation as the spec describes it.
pub use api_core::raw::management as raw;
/// The spec's schemas and their one validator (what a request is checked against, what is
/// request-only, secret or filled in by the server).
pub use api_core::raw::support::schema;
/// The one redaction rule: which members hold secrets, and where a secret value stands in a text,
/// whatever its encoding (for a caller's own output).
pub use api_core::redact;
