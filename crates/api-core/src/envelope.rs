//! Unwrapping the member of a response envelope (`result` or `data`) and decoding it into a domain
//! value.

#[cfg(any(feature = "management", feature = "observability"))]
use crate::decode::{Invalid, Path};
use crate::error::{DecodeError, Error};
use crate::operation::Operation;
use crate::response::{Response, ResponseMeta};

/// Takes the member `member` out of an envelope with `take`, keeping the call's metadata; a missing
/// member is a [`DecodeError`] at that path.
pub fn required_member<E, T>(
    op: &'static Operation,
    member: &'static str,
    response: Response<E>,
    take: impl FnOnce(E) -> Option<T>,
) -> Result<Response<T>, Error> {
    let (envelope, meta) = response.into_parts();
    match take(envelope) {
        Some(value) => Ok(Response::new(value, meta)),
        None => Err(missing(op, member, meta)),
    }
}

/// The error of an envelope without its member.
fn missing(op: &'static Operation, member: &'static str, meta: ResponseMeta) -> Error {
    Error::Decode(
        DecodeError::new(op.id, member, format!("the envelope has no `{member}`"))
            .with_request_id(meta.request_id)
            .with_status(meta.status),
    )
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
    // Taken apart once: the member goes straight into the decoded value's response, without a
    // response of its own in between (one allocation less per call, profiled).
    let (envelope, meta) = response.into_parts();
    let Some(raw) = take(envelope) else {
        return Err(missing(op, member, meta));
    };
    match decode(raw, Path::Root(member)) {
        Ok(value) => Ok(Response::new(value, meta)),
        Err(e) => Err(Error::Decode(
            e.at(op.id)
                .with_request_id(meta.request_id)
                .with_status(meta.status),
        )),
    }
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
