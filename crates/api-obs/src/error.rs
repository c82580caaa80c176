//! What can go wrong, beside [`Error`](crate::Error) itself: the API's answer ([`ApiError`], its
//! [`ErrorCode`] and [`Problem`]s), the transport, a body that did not decode, a request refused
//! before it was sent ([`ValidationError`]), an id that did not parse.

pub use api_core::{
    ApiError, DecodeError, ErrorCode, IdError, MAX_ERROR_BODY, MAX_ERROR_MESSAGE, Problem,
    TransportError, TransportKind, ValidationError,
};
