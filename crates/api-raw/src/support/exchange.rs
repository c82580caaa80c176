//! What every request of a generated client carries, whoever built its `reqwest::Client`
//! ([`RequestDefaults`]: credentials, user agent, attempt timeout), and the status and headers of
//! the answer, kept for the runtime even when the generated code cannot decode the body (which
//! drops them).

use std::cell::RefCell;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

/// What the pre hook of a generated client adds to every request: headers it does not set itself
/// (credentials, user agent) and a timeout for the whole attempt. The same for a client built by
/// the SDK and for a caller's own `reqwest::Client`, so both behave alike.
///
/// ```no_run
/// use std::time::Duration;
/// use api_raw::support::RequestDefaults;
///
/// let defaults = RequestDefaults::new()
///     .header("user-agent", "my-tool/1.0")
///     .attempt_timeout(Duration::from_secs(30));
/// # #[cfg(feature = "management")]
/// let client = api_raw::management::Client::new_with_client(
///     "http://127.0.0.1:8080",
///     reqwest::Client::new(),
///     defaults,
/// );
/// ```
#[derive(Clone, Default)]
pub struct RequestDefaults {
    headers: Arc<HeaderMap>,
    attempt_timeout: Option<Duration>,
}

impl RequestDefaults {
    /// No headers and no attempt timeout.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a header to every request that does not set it; a name or value that is not valid in
    /// HTTP is ignored (use [`headers`](Self::headers) to add checked values).
    pub fn header(self, name: &str, value: &str) -> Self {
        match (HeaderName::try_from(name), HeaderValue::try_from(value)) {
            (Ok(name), Ok(value)) => {
                let mut headers = HeaderMap::new();
                headers.insert(name, value);
                self.headers(headers)
            }
            _ => self,
        }
    }

    /// Adds these headers to every request that does not set them (values marked sensitive stay so).
    pub fn headers(mut self, headers: HeaderMap) -> Self {
        let mut all = (*self.headers).clone();
        all.extend(headers);
        self.headers = Arc::new(all);
        self
    }

    /// Bounds each attempt (connect, send, read the whole answer); `None` leaves it to the client.
    pub fn attempt_timeout(mut self, timeout: impl Into<Option<Duration>>) -> Self {
        self.attempt_timeout = timeout.into();
        self
    }

    /// The attempt timeout, if any.
    pub fn attempt_timeout_value(&self) -> Option<Duration> {
        self.attempt_timeout
    }
}

impl fmt::Debug for RequestDefaults {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Header names only: the values hold credentials.
        f.debug_struct("RequestDefaults")
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("attempt_timeout", &self.attempt_timeout)
            .finish()
    }
}

/// The generated clients' pre hook: adds the defaults' headers that the request does not carry yet
/// and, unless the request has a timeout of its own, the attempt timeout.
pub fn prepare_request(defaults: &RequestDefaults, request: &mut reqwest::Request) {
    for (name, value) in defaults.headers.iter() {
        if !request.headers().contains_key(name) {
            request.headers_mut().insert(name.clone(), value.clone());
        }
    }
    if request.timeout().is_none() {
        *request.timeout_mut() = defaults.attempt_timeout;
    }
}

struct Exchange {
    answer: Option<(u16, HeaderMap)>,
}

tokio::task_local! {
    static EXCHANGE: RefCell<Exchange>;
}

/// The generated clients' post hook: keeps the answer's status and headers when
/// [`with_answer_headers`] is watching, and does nothing otherwise.
pub fn capture_answer(_defaults: &RequestDefaults, result: &reqwest::Result<reqwest::Response>) {
    if let Ok(response) = result {
        // Outside a `with_answer_headers` scope there is nowhere to keep them, which is fine.
        let _ = EXCHANGE.try_with(|slot| {
            slot.borrow_mut().answer =
                Some((response.status().as_u16(), response.headers().clone()));
        });
    }
}

/// What one exchange gave: the generated operation's result, and the status and headers of the answer
/// it received (`None` when no answer came).
pub type Exchanged<T> = Box<(T, Option<(u16, HeaderMap)>)>;

/// Runs one generated operation and returns its result with the status and headers of the answer it
/// received.
///
/// The operation comes boxed: a generated operation's future is large, and every future above it
/// would otherwise hold it whole and copy it at each move (profiled). Box it where it is created,
/// `with_answer_headers(Box::pin(client.get_pipe(..)))`, and only a pointer travels.
pub fn with_answer_headers<F: Future + ?Sized>(
    operation: Pin<Box<F>>,
) -> impl Future<Output = Exchanged<F::Output>> {
    EXCHANGE.scope(RefCell::new(Exchange { answer: None }), async move {
        let output = operation.await;
        let answer = EXCHANGE.with(|slot| slot.borrow_mut().answer.take());
        // Boxed too: the result is large (a decoded resource), and it leaves through the futures
        // above as a pointer, not as a copy at each level.
        Box::new((output, answer))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(headers: &[(&'static str, &str)]) -> reqwest::Request {
        let mut request = reqwest::Request::new(
            reqwest::Method::GET,
            "http://127.0.0.1:1/x".parse().expect("a URL"),
        );
        for (name, value) in headers {
            request
                .headers_mut()
                .insert(*name, HeaderValue::from_str(value).expect("a value"));
        }
        request
    }

    #[test]
    fn the_defaults_are_added_where_the_request_has_none() {
        let mut credentials = HeaderMap::new();
        let mut secret = HeaderValue::from_static("Basic abc");
        secret.set_sensitive(true);
        credentials.insert("authorization", secret);
        let defaults = RequestDefaults::new()
            .header("user-agent", "tool/1")
            .header("bad name", "x")
            .headers(credentials)
            .attempt_timeout(Duration::from_secs(7));
        assert_eq!(
            defaults.attempt_timeout_value(),
            Some(Duration::from_secs(7))
        );
        let shown = format!("{defaults:?}");
        assert!(
            shown.contains("user-agent") && shown.contains("7s") && !shown.contains("abc"),
            "{shown}"
        );

        let mut plain = request(&[]);
        prepare_request(&defaults, &mut plain);
        assert_eq!(plain.headers()["user-agent"], "tool/1");
        assert_eq!(plain.headers()["authorization"], "Basic abc");
        assert!(plain.headers()["authorization"].is_sensitive());
        assert_eq!(plain.timeout(), Some(&Duration::from_secs(7)));
        assert_eq!(plain.headers().len(), 2, "the bad header name was ignored");

        let mut own = request(&[("user-agent", "mine/2")]);
        *own.timeout_mut() = Some(Duration::from_secs(1));
        prepare_request(&defaults, &mut own);
        assert_eq!(
            own.headers()["user-agent"],
            "mine/2",
            "the request's own header wins"
        );
        assert_eq!(
            own.timeout(),
            Some(&Duration::from_secs(1)),
            "and its own timeout"
        );

        let mut none = request(&[]);
        prepare_request(&RequestDefaults::new(), &mut none);
        assert!(none.headers().is_empty() && none.timeout().is_none());
    }

    #[tokio::test]
    async fn the_answer_is_kept_only_inside_a_scope() {
        let defaults = RequestDefaults::new();
        let answer = || {
            let response = http::Response::builder()
                .status(503)
                .header("x-request-id", "r-1")
                .body(Vec::<u8>::new())
                .expect("a response");
            Ok(reqwest::Response::from(response))
        };
        // Outside a scope: nothing to keep, nothing fails.
        capture_answer(&defaults, &answer());
        let exchanged = with_answer_headers(Box::pin(async {
            capture_answer(&defaults, &answer());
            7
        }))
        .await;
        let (output, kept) = *exchanged;
        assert_eq!(output, 7);
        let (status, headers) = kept.expect("the answer was kept");
        assert_eq!(
            (status, &headers["x-request-id"]),
            (503, &HeaderValue::from_static("r-1"))
        );
        let nothing = with_answer_headers(Box::pin(async { 1 })).await;
        assert!(nothing.1.is_none());
    }
}
