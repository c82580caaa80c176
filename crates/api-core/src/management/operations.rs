//! The management operations, as the runtime sees them: generated from `spec/management.yaml` with
//! their ids, methods, path templates and idempotency (`x-idempotent`).

pub use api_raw::management::operations::*;
