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
    let (value, meta) = take_member(op, member, response, take)?;
    Ok(Response::new(value, meta))
}

/// The member taken out of the envelope, with the call's metadata apart: a caller that turns the
/// member into something else boxes only the result (one allocation less per call, profiled).
fn take_member<E, T>(
    op: &'static Operation,
    member: &'static str,
    response: Response<E>,
    take: impl FnOnce(E) -> Option<T>,
) -> Result<(T, ResponseMeta), Error> {
    let (envelope, meta) = response.into_parts();
    match take(envelope) {
        Some(value) => Ok((value, meta)),
        None => Err(Error::Decode(
            DecodeError::new(op.id, member, format!("the envelope has no `{member}`"))
                .with_request_id(meta.request_id)
                .with_status(meta.status),
        )),
    }
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
    let (raw, meta) = take_member(op, member, response, take)?;
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
