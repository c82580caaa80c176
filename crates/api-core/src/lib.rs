//! Shared runtime and domain types of the SDK.
//!
//! Each API is behind a cargo feature (`management`, `observability`) that it forwards to `api-raw`, so
//! a facade compiles only the API it serves.

/// The generated low-level clients, for what the SDK does not wrap yet.
pub use api_raw as raw;
