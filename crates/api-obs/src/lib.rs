//! The observability API of the analytics cloud: alerts and dashboards.
//!
//! | operation | call |
//! |---|---|
//! | read an alert | [`Client::alert`] then [`AlertHandle::get`](alerts::AlertHandle::get) |
//! | list dashboards | [`Client::dashboards`] then [`Dashboards::list`](dashboards::Dashboards::list) |
//!
//! What the calls return are domain values read without unwrapping: an [`Alert`] has its `id`,
//! `name`, `state` and [`AlertChannel`](alerts::AlertChannel); a [`Dashboard`] its `id`, `name`,
//! [`Tile`](dashboards::Tile)s and their [`Series`](dashboards::Series). The generated client and
//! its values are `Client::raw()`.
//!
//! The root holds what a first program names; the rest is in modules, each name in one place:
//! [`alerts`], [`dashboards`], [`client`] (the config builder, retries, the HTTP client,
//! environment variables, operations), [`error`] (the parts of an [`Error`]), [`rate_limit`] (the
//! key's shared rate limit), [`redact`] and [`raw`] (the generated client).
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

mod handles;

pub mod alerts;
pub mod client;
pub mod dashboards;
pub mod error;
pub mod rate_limit;

pub use api_core::observability::{Alert, Dashboard};
pub use api_core::{Config, Credentials, Error, Response, Secret};
pub use handles::Client;

/// The generated observability client and types (an escape hatch): `raw::types`, and
/// `raw::operations`, each operation as the spec describes it.
pub use api_core::raw::observability as raw;
/// The one redaction rule: which members hold secrets, and where a secret value stands in a text,
/// whatever its encoding (for a caller's own output).
pub use api_core::redact;
