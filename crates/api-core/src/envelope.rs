//! Unwrapping the member of a response envelope (`result` or `data`) and decoding it into a domain
//! value.

#[cfg(any(feature = "management", feature = "observability"))]
use crate::decode::{Invalid, Path};
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
    let request_id = response.meta().request_id.clone();
    response.try_map(|envelope| {
        take(envelope).ok_or_else(|| {
            Error::Decode(
                DecodeError::new(op.id, member, format!("the envelope has no `{member}`"))
                    .with_request_id(request_id),
            )
        })
    })
}

/// Takes the member `member` out of an envelope and decodes it, keeping the call's metadata.
#[cfg(any(feature = "management", feature = "observability"))]
pub(crate) fn decode_member<E, R, T>(
    op: &'static Operation,
    member: &'static str,
    response: Response<E>,
    take: impl FnOnce(E) -> Option<R>,
    decode: impl FnOnce(R, Path<'_>) -> Result<T, Invalid>,
) -> Result<Response<T>, Error> {
    let request_id = response.meta().request_id.clone();
    required_member(op, member, response, take)?.try_map(|raw| {
        decode(raw, Path::Root(member))
            .map_err(|e| Error::Decode(e.at(op.id).with_request_id(request_id)))
    })
}

/// Decodes every item of a list member (`result[i]`, `data[i]`); an absent list is empty.
#[cfg(any(feature = "management", feature = "observability"))]
pub(crate) fn decode_list<R, T>(
    items: Vec<R>,
    at: Path<'_>,
    decode: impl Fn(R, Path<'_>) -> Result<T, Invalid>,
) -> Result<Vec<T>, Invalid> {
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| decode(item, at.index(i)))
        .collect()
}
