//! Low-level clients generated from the OpenAPI documents in `spec/`.
//!
//! Everything under `generated/` is written by `cargo xtask codegen` and never edited by hand; the
//! hand-written types that the generator refers to (open enums, [`Secret`](support::Secret), CPU and
//! memory quantities, the patterned strings) live in [`support`].
//!
//! Each API is a module behind a cargo feature of the same name, so a crate that only uses one API does
//! not compile the other:
//! - `management` -> the module `management`: services, pipes, private endpoints (HTTP Basic auth).
//! - `observability` -> the module `observability`: alerts and dashboards (Bearer auth).
//!
//! Most users want the facades `api-mgmt` and `api-obs`; this crate is their foundation and an escape
//! hatch. Generated operations return `Error::UnexpectedResponse` for every non-2xx answer, with status,
//! headers and raw body intact; the facades decode error bodies.
//!
//! ```no_run
//! # #[cfg(feature = "management")]
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use api_raw::management::Client;
//! use api_raw::management::types::{ServiceStateChangeRequest, ServiceStateCommand};
//! use api_raw::support::RequestDefaults;
//!
//! // The facades fill in the credentials and the user agent; here they go by hand.
//! let mut headers = reqwest::header::HeaderMap::new();
//! headers.insert("authorization", "Basic a2V5LWlkOmtleS1zZWNyZXQ=".parse()?);
//! let client = Client::new("https://api.example.com", RequestDefaults::new().headers(headers));
//! let start = ServiceStateChangeRequest { command: Some(ServiceStateCommand::Start) };
//! let organization = "3f0c5e2a-8d41-4b7e-9a6c-1e2f3a4b5c6d".parse()?;
//! let service = "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d".parse()?;
//! let answer = client.update_service_state(&organization, &service, &start).await?;
//! println!("{:?}", answer.into_inner().result);
//! # Ok(()) }
//! ```

#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

pub mod support;

/// The OpenAPI documents the clients are generated from: copies of `spec/` that `cargo xtask
/// codegen` writes beside the generated code (and `--check` compares), so that the package holds
/// them.
pub mod spec {
    /// `spec/management.yaml`.
    #[cfg(feature = "management")]
    pub const MANAGEMENT: &str = include_str!("generated/management.yaml");

    /// `spec/observability.yaml`.
    #[cfg(feature = "observability")]
    pub const OBSERVABILITY: &str = include_str!("generated/observability.yaml");
}

/// The management API client (`spec/management.yaml`).
#[cfg(feature = "management")]
#[rustfmt::skip]
#[allow(missing_docs, unused_imports, unused_qualifications, clippy::all, clippy::pedantic)]
#[path = "generated/management.rs"]
pub mod management;

/// The observability API client (`spec/observability.yaml`).
#[cfg(feature = "observability")]
#[rustfmt::skip]
#[allow(missing_docs, unused_imports, unused_qualifications, clippy::all, clippy::pedantic)]
#[path = "generated/observability.rs"]
pub mod observability;
