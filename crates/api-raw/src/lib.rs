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

pub mod support;

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
