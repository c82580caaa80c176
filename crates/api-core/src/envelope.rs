//! Unwrapping the member of a response envelope (`result` or `data`).

use crate::error::{DecodeError, Error};
use crate::operation::Operation;
use crate::response::Response;

/// Takes the member `member` out of an envelope with `take`, keeping the call's metadata; a missing
/// member is a [`DecodeError`] at that path.
pub fn required_member<E, T>(
    op: &'static Operation,
    member: &'static str,
    response: Response<E>,
    take: impl FnOnce(E) -> Option<T>,
) -> Result<Response<T>, Error> {
    response.try_map(|envelope| {
        take(envelope).ok_or_else(|| {
            Error::Decode(DecodeError {
                operation: op.id,
                path: member.into(),
                message: format!("the envelope has no `{member}`"),
            })
        })
    })
}
