//! Shared runtime and domain types of the SDK, on top of the generated `api-raw` clients.
//!
//! - [`Config`] / [`ConfigBuilder`]: base URL, [`Credentials`], timeouts, [`RetryPolicy`], [`RateLimit`],
//!   user agent, `from_env` constructors (see [`env`](mod@env) for the variables).
//! - [`Runtime`]: runs a generated operation with the rate limiter, safe retries, timeouts, a `tracing`
//!   span and error decoding, and returns a [`Response`] with the call's metadata.
//! - [`Error`]: the one error type; [`ApiError`] carries status, code, message, request id and raw body.
//! - Typed ids ([`OrganizationId`], [`ServiceId`], [`PipeId`], and with `observability` `AlertId`
//!   and `DashboardId`).
//! - `management` and `observability`: domain types of each API (decoded from the generated types,
//!   read without unwrapping), behind the cargo features of the same names (forwarded to `api-raw`),
//!   so a facade compiles only the API it serves.

#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

mod config;
mod connection;
mod credentials;
#[cfg(any(feature = "management", feature = "observability"))]
mod decode;
pub mod env;
mod envelope;
mod error;
mod error_body;
mod error_code;
mod facade;
mod ids;
mod learned;
pub mod loopback;
mod metrics;
mod operation;
pub mod outcome;
pub mod private_file;
mod rate_limit;
mod response;
mod retry;
mod runtime;
pub mod spans;
mod tls;

#[cfg(feature = "management")]
pub mod management;
#[cfg(feature = "observability")]
pub mod observability;

/// The generated low-level clients, for what the SDK does not wrap.
pub use api_raw as raw;
pub use api_raw::support::Secret;
/// The one redaction rule: secret member names and secret values in any encoding.
pub use api_raw::support::redact;
pub use config::{Config, ConfigBuilder, FromConfig};
pub use connection::{Connection, GeneratedClient};
pub use credentials::Credentials;
pub use envelope::required_member;
pub use error::{
    ApiError, ConfigError, DecodeError, Error, MAX_ERROR_BODY, MAX_ERROR_MESSAGE, MAX_ERROR_READ,
    Problem, Problems, Result, TransportError, TransportKind, ValidationError,
};
pub use error_body::REQUEST_ID_HEADER;
pub use error_code::{ErrorCode, UnknownCode};
#[cfg(feature = "observability")]
pub use ids::{AlertId, DashboardId};
pub use ids::{IdError, OrganizationId, PipeId, ReversePrivateEndpointId, ServiceId};
pub use learned::Learned;
#[cfg(feature = "metrics")]
pub use metrics::{ATTEMPT_BUCKETS, CALL_BUCKETS};
pub use operation::{Idempotency, Operation, ResponseBody};
pub use rate_limit::{
    ABOVE_WINDOWS, BLOCK_WINDOWS, DECREASE, FallbackObserver, FallbackTo, MAX_BOOKED, MAX_BURST,
    MAX_QUEUE, MAX_SHARED_BLOCK, MAX_SLOWDOWN, RATE_LIMIT_STORE_VAR, RATE_LIMIT_VAR,
    RECOVERY_WINDOWS, REPORTED_WAIT, RateLimit, RateLimitStore, RateLimiter, RedisUrl, StoreChange,
    StoreFallback, WaitObserver,
};
/// The HTTP client crate the SDK sends with, for [`ConfigBuilder::http_client`].
pub use reqwest;
pub use response::{Response, ResponseMeta};
pub use retry::RetryPolicy;
pub use runtime::Runtime;
pub use tls::{DEFAULT_CONNECT_TIMEOUT, http_client_builder};
/// UUIDs, as used by the typed ids.
pub use uuid::Uuid;
