//! The observability operations, as the runtime sees them: generated from
//! `spec/observability.yaml` with their ids, methods, path templates and idempotency.

pub use api_raw::observability::operations::*;
