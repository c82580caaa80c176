//! [`Operation`] (generated from the spec for every operation, with its idempotency) and
//! [`ResponseBody`], what the runtime needs of a success body.

use serde::de::DeserializeOwned;

pub use api_raw::support::{Idempotency, Operation};

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
