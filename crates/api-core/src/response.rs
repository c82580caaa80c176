//! [`Response`]: a successful result with the metadata of the call.

use std::ops::Deref;

use reqwest::header::HeaderMap;

/// Metadata of a successful call.
#[derive(Debug, Clone)]
pub struct ResponseMeta {
    /// The HTTP status.
    pub status: u16,
    /// The response headers (never request headers, so no credentials).
    pub headers: HeaderMap,
    /// The server's request id (`x-request-id` header, else the envelope's `requestId`).
    pub request_id: Option<String>,
    /// Attempts made, retries included.
    pub attempts: u32,
}

/// A successful result with the metadata of the call. Dereferences to the value.
///
/// ```
/// # fn show(pipe: api_core::Response<String>) {
/// let request_id = pipe.meta().request_id.clone();
/// let value: String = pipe.into_inner();
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Response<T> {
    /// Boxed: a decoded resource is large, and a response passes up through several futures, each of
    /// which would copy it whole (profiled); a pointer costs one allocation instead.
    value: Box<T>,
    meta: ResponseMeta,
}

impl<T> Response<T> {
    /// A value with its metadata.
    pub fn new(value: T, meta: ResponseMeta) -> Self {
        Self {
            value: Box::new(value),
            meta,
        }
    }

    /// The metadata of the call.
    pub fn meta(&self) -> &ResponseMeta {
        &self.meta
    }

    /// The value, without the metadata.
    pub fn into_inner(self) -> T {
        *self.value
    }

    /// The value and the metadata.
    pub fn into_parts(self) -> (T, ResponseMeta) {
        (*self.value, self.meta)
    }

    /// Transforms the value, keeping the metadata.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Response<U> {
        Response::new(f(*self.value), self.meta)
    }

    /// Transforms the value with a fallible function, keeping the metadata.
    pub fn try_map<U, E>(self, f: impl FnOnce(T) -> Result<U, E>) -> Result<Response<U>, E> {
        Ok(Response::new(f(*self.value)?, self.meta))
    }
}

impl<T> Deref for Response<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.value
    }
}
