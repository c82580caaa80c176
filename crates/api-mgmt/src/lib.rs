//! Management facade: services, data pipes and private endpoints.
//!
//! Depends on the management half of the SDK only; the observability API is not compiled.

pub use api_core::raw::management as raw;
pub use api_core::raw::support::{PipeState, Secret, ServiceState};
