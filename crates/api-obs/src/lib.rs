//! The observability API of the analytics cloud: alerts and dashboards.
//!
//! | operation | call |
//! |---|---|
//! | read an alert | [`Client::alert`] then [`AlertHandle::get`] |
//! | list dashboards | [`Client::dashboards`] then [`Dashboards::list`] |
//!
//! What the calls return are domain values read without unwrapping: an [`Alert`] has its `id`,
//! `name`, `state` and [`AlertChannel`]; a [`Dashboard`] its `id`, `name`, [`Tile`]s and their
//! [`Series`]. The generated client and its values are `Client::raw()`.
//!
//! ```no_run
//! # async fn run() -> Result<(), api_obs::Error> {
//! let client = api_obs::Client::from_env()?; // CLOUD_OBSERVABILITY_URL, CLOUD_OBSERVABILITY_TOKEN
//! let alert = client.alert("66a1f0c2d4e5f60718293a4b".parse()?).get().await?;
//! println!("request {:?}: {} is {}", alert.meta().request_id, alert.name, alert.state_name());
//! let dashboards = client.dashboards().list().await?;
//! for tile in dashboards.iter().flat_map(|d| &d.tiles) {
//!     println!("{}: {} series", tile.name, tile.series.len());
//! }
//! # Ok(()) }
//! ```
//!
//! This crate compiles only the observability half of the SDK; `api_obs::raw` is the generated client.

#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

mod client;

pub use api_core::observability::{
    Alert, AlertChannel, AlertChannelType, AlertInterval, AlertSource, AlertState,
    AlertThresholdType, Dashboard, MetricDataType, Series, SeriesAggFn, SeriesDataSource,
    SeriesType, Tile, WhereLanguage, operations, raw_types,
};
/// The one redaction rule: which members hold secrets, and where a secret value stands in a text,
/// whatever its encoding (for a caller's own output).
pub use api_core::redact;
/// The HTTP client crate the SDK sends with, for [`ConfigBuilder::http_client`].
pub use api_core::reqwest;
pub use api_core::{
    AlertId, ApiError, Config, ConfigBuilder, Credentials, DashboardId, DecodeError, Error,
    ErrorCode, IdError, Idempotency, Operation, RateLimit, Response, ResponseMeta, RetryPolicy,
    Secret, TransportError, TransportKind, env,
};
/// A `reqwest` client builder with the SDK's TLS backend, for [`ConfigBuilder::http_client`].
pub use api_core::{DEFAULT_CONNECT_TIMEOUT, http_client_builder};
pub use api_core::{
    FallbackTo, RATE_LIMIT_STORE_VAR, RATE_LIMIT_VAR, RateLimitStore, RateLimiter, RedisUrl,
    StoreChange, StoreFallback,
};
pub use client::{AlertHandle, Client, Dashboards};

/// The generated observability client and types (an escape hatch).
pub use api_core::raw::observability as raw;
