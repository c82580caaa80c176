//! Observability facade: alerts and dashboards.
//!
//! Depends on the observability half of the SDK only; the management API is not compiled.

pub use api_core::raw::observability as raw;
pub use api_core::raw::support::{AlertState, SeriesAggFn};
