//! [`Operation`]: what the runtime needs to know about an API operation.

use serde::de::DeserializeOwned;

/// Whether an operation may be repeated without changing the outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Idempotency {
    /// GET, DELETE and the service state PATCH: retried on 429, 5xx gateway errors and transport errors.
    Idempotent,
    /// A create (POST): retried only when the request provably did not reach the server (429, or a
    /// connection that could not be made).
    NotIdempotent,
}

/// Static description of one API operation, used for retries, tracing and errors.
#[derive(Debug, Clone, Copy)]
pub struct Operation {
    /// The `operationId` of the spec, e.g. `getPipe`.
    pub id: &'static str,
    /// The HTTP method.
    pub method: &'static str,
    /// The path template of the spec.
    pub path: &'static str,
    /// Whether it may be retried after it may have reached the server.
    pub idempotency: Idempotency,
}

/// A success body type: it can say which request id the body carries and whether an empty body is
/// acceptable in its place.
pub trait ResponseBody: DeserializeOwned {
    /// The request id inside the body (the management envelope's `requestId`), if any.
    fn request_id(&self) -> Option<String> {
        None
    }

    /// The value to use when a success answer has an empty body; `None` makes that a decode error.
    fn empty() -> Option<Self> {
        None
    }
}
