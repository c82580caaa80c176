//! [`Response`]: a successful result with the metadata of the call.

use std::fmt;
use std::ops::Deref;

use api_raw::support::redact;
use reqwest::header::HeaderMap;

/// Metadata of a successful call. `Debug` shows the value of a header that can carry a credential
/// (a secret name by the one redaction rule: `set-cookie`, `cookie`, `authorization`,
/// `proxy-authorization`, `x-api-key`, any `*token*`, ...) or is marked sensitive as `[REDACTED]`,
/// and every other value with URI passwords removed. Challenges (`www-authenticate`) carry no
/// credential and are shown.
#[derive(Clone)]
pub struct ResponseMeta {
    /// The HTTP status.
    pub status: u16,
    /// The response headers.
    pub headers: HeaderMap,
    /// The server's request id (`x-request-id` header, else the envelope's `requestId`).
    pub request_id: Option<String>,
    /// Attempts made, retries included.
    pub attempts: u32,
}

impl fmt::Debug for ResponseMeta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResponseMeta")
            .field("status", &self.status)
            .field("headers", &Headers(&self.headers))
            .field("request_id", &self.request_id)
            .field("attempts", &self.attempts)
            .finish()
    }
}

/// Headers as `Debug` shows them: credentials redacted.
struct Headers<'a>(&'a HeaderMap);

impl fmt::Debug for Headers<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut map = f.debug_map();
        let redactor = redact::Redactor::new();
        for (name, value) in self.0 {
            if value.is_sensitive() || redact::is_secret_member(name.as_str()) {
                map.entry(name, &format_args!("{}", redact::REDACTED));
            } else {
                match value.to_str() {
                    Ok(text) => map.entry(name, &redactor.text(text)),
                    Err(_) => map.entry(name, value),
                };
            }
        }
        map.finish()
    }
}

/// A successful result with the metadata of the call. Dereferences to the value. Its `Debug` shows
/// no credential (see [`ResponseMeta`]).
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

#[cfg(test)]
mod tests {
    use reqwest::header::{HeaderName, HeaderValue};

    use super::*;

    #[test]
    fn debug_shows_no_credential_header() {
        let mut headers = HeaderMap::new();
        let mut add = |name: &'static str, value: &str| {
            headers.append(
                HeaderName::from_static(name),
                HeaderValue::from_str(value).unwrap(),
            );
        };
        add("set-cookie", "session=c00k1e-s3cret; HttpOnly");
        add("set-cookie", "other=c00k1e-tw0");
        add("cookie", "session=c00k1e-echo");
        add("authorization", "Basic a2V5OnMzY3JldA==");
        add("proxy-authorization", "Bearer pr0xy-t0ken");
        add("x-api-key", "k3y-s3cret");
        add("x-request-id", "91021324-3546-4f70-8182-930415263748");
        add("www-authenticate", "Bearer realm=\"api\"");
        let mut marked = HeaderValue::from_static("m4rked-s3cret");
        marked.set_sensitive(true);
        headers.insert("x-custom", marked);
        let meta = ResponseMeta {
            status: 200,
            headers,
            request_id: None,
            attempts: 1,
        };
        let response = Response::new("value", meta.clone());
        for shown in [
            format!("{meta:?}"),
            format!("{response:?}"),
            format!("{response:#?}"),
        ] {
            for secret in ["c00k1e", "a2V5", "pr0xy", "k3y-s3cret", "m4rked"] {
                assert!(!shown.contains(secret), "{secret} in {shown}");
            }
            assert!(shown.contains("\"set-cookie\": [REDACTED]"), "{shown}");
            assert!(
                shown.contains("91021324-3546-4f70-8182-930415263748"),
                "{shown}"
            );
            assert!(shown.contains("realm"), "a challenge is shown: {shown}");
        }
        assert!(format!("{response:?}").contains("\"value\""));
    }
}
