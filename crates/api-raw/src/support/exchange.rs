//! What every request of a generated client carries, whoever built its `reqwest::Client`
//! ([`RequestDefaults`]: credentials, user agent, attempt timeout), and the status and headers of
//! the answer, kept for the runtime even when the body does not decode ([`from_response`], which
//! every generated operation decodes a success answer with).

use std::cell::RefCell;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use progenitor_client::{Error, ResponseValue};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde::de::DeserializeOwned;

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
    // Inside a `with_attempt` scope: the attempt's own headers (a `traceparent`), and its URL told
    // to the attempt's hook, before the request is sent.
    let hook = EXCHANGE
        .try_with(|slot| {
            let mut slot = slot.borrow_mut();
            for (name, value) in std::mem::take(&mut slot.headers) {
                if let Some(name) = name {
                    request.headers_mut().insert(name, value);
                }
            }
            slot.on_url.take()
        })
        .ok()
        .flatten();
    if let Some(hook) = hook {
        hook(request.url());
    }
    for (name, value) in defaults.headers.iter() {
        if !request.headers().contains_key(name) {
            request.headers_mut().insert(name.clone(), value.clone());
        }
    }
    // Without a timeout to add the request is left as it is: `timeout_mut` would give it an
    // extensions map of its own just to hold `None`.
    if let Some(timeout) = defaults.attempt_timeout
        && request.timeout().is_none()
    {
        *request.timeout_mut() = Some(timeout);
    }
}

#[derive(Default)]
struct Exchange {
    answer: Option<(u16, HeaderMap)>,
    /// Headers for this attempt's request only, taken by the pre hook.
    headers: HeaderMap,
    /// Told the request's URL by the pre hook.
    on_url: Option<UrlHook>,
}

/// What [`with_attempt`] tells the URL of its request to, once the request is built and before it
/// is sent (an attempt cut short while in flight has told it already).
pub type UrlHook = Box<dyn FnOnce(&reqwest::Url) + Send>;

tokio::task_local! {
    static EXCHANGE: RefCell<Exchange>;
}

/// Keeps the answer's status and headers when [`with_answer_headers`] is watching, and does
/// nothing otherwise. It copies the headers: the generated clients no longer call it as a post hook
/// since [`from_response`] moves them instead.
#[deprecated(
    since = "0.1.1",
    note = "the generated clients keep the answer through `from_response`; this hook is no longer needed"
)]
pub fn capture_answer(_defaults: &RequestDefaults, result: &reqwest::Result<reqwest::Response>) {
    if let Ok(response) = result {
        // Outside a `with_answer_headers` scope there is nowhere to keep them, which is fine.
        let _ = EXCHANGE.try_with(|slot| {
            slot.borrow_mut().answer =
                Some((response.status().as_u16(), response.headers().clone()));
        });
    }
}

/// Decodes a generated operation's success answer, as progenitor's `ResponseValue::from_response`
/// does, with the status and headers moved rather than copied: inside a [`with_answer_headers`]
/// scope they go to the scope (before the body is read, so a body that breaks off or does not
/// decode still leaves them) and the value carries an empty header map; elsewhere the value carries
/// them. `cargo xtask codegen` routes every generated operation's success decode here.
pub async fn from_response<T: DeserializeOwned, E>(
    mut response: reqwest::Response,
) -> Result<ResponseValue<T>, Error<E>> {
    let status = response.status();
    let mut headers = Some(std::mem::take(response.headers_mut()));
    let _ = EXCHANGE.try_with(|slot| {
        slot.borrow_mut().answer = headers.take().map(|headers| (status.as_u16(), headers));
    });
    let full = response.bytes().await.map_err(Error::ResponseBodyError)?;
    match decode_json(&full) {
        Ok(inner) => Ok(ResponseValue::new(
            inner,
            status,
            headers.unwrap_or_default(),
        )),
        Err(e) => Err(Error::InvalidResponsePayload(full, e)),
    }
}

/// Decodes a JSON body: its UTF-8 checked once, in one pass over the whole body, then read as text.
/// Reading the bytes directly checks each string and member name on its own, a call per string
/// (profiled: most of the decode's cost for a resource of short strings). A body that is not UTF-8
/// is read as bytes, for the same error as before.
///
/// A body that does not decode as it came is read again with every whole number written as a
/// float (`2.0`, `1e3`) taken as the integer it is ([`whole_number`](super::whole_number), the
/// rule of the SDK's own requests): a server may write an integer member so (a JavaScript server,
/// a value that went through a float), and JSON does not tell the two apart. Only that failure
/// pays for the second reading; when it does not help, the first error is the answer.
pub(crate) fn decode_json<T: DeserializeOwned>(body: &[u8]) -> serde_json::Result<T> {
    let first = match std::str::from_utf8(body) {
        Ok(text) => serde_json::from_str(text),
        Err(_) => serde_json::from_slice(body),
    };
    let Err(error) = first else {
        return first;
    };
    let Ok(mut value) = serde_json::from_slice::<serde_json::Value>(body) else {
        return Err(error);
    };
    if !whole_numbers_as_integers(&mut value) {
        return Err(error);
    }
    T::deserialize(value).map_err(|_| error)
}

/// Rewrites every whole number held as a float in `value` as an integer; whether any was.
fn whole_numbers_as_integers(value: &mut serde_json::Value) -> bool {
    use serde_json::Value;
    match value {
        Value::Number(number) if number.is_f64() => {
            match number.as_f64().and_then(super::whole_number) {
                Some(whole) => {
                    *value = Value::from(whole);
                    true
                }
                None => false,
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |any, item| whole_numbers_as_integers(item) | any),
        Value::Object(members) => members
            .values_mut()
            .fold(false, |any, member| whole_numbers_as_integers(member) | any),
        _ => false,
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
    let attempt = with_attempt(operation, HeaderMap::new(), None);
    async move {
        let attempt = attempt.await;
        let Attempt { output, answer, .. } = *attempt;
        Box::new((output, answer))
    }
}

/// What one attempt gave ([`with_attempt`]): the generated operation's result, and the status and
/// headers of the answer it received (`None` when no answer came).
#[derive(Debug)]
#[non_exhaustive]
pub struct Attempt<T> {
    /// The generated operation's result.
    pub output: T,
    /// The answer's status and headers.
    pub answer: Option<(u16, HeaderMap)>,
}

/// Runs one generated operation like [`with_answer_headers`], with `headers` added to its request
/// (replacing any of the same name: a `traceparent` for this attempt), and its URL told to
/// `on_url` before the request is sent. Boxed for the same reason.
pub fn with_attempt<F: Future + ?Sized>(
    operation: Pin<Box<F>>,
    headers: HeaderMap,
    on_url: Option<UrlHook>,
) -> impl Future<Output = Box<Attempt<F::Output>>> {
    let slot = Exchange {
        headers,
        on_url,
        ..Exchange::default()
    };
    EXCHANGE.scope(RefCell::new(slot), async move {
        let output = operation.await;
        let answer = EXCHANGE.with(|slot| slot.borrow_mut().answer.take());
        // Boxed too: the result is large (a decoded resource), and it leaves through the futures
        // above as a pointer, not as a copy at each level.
        Box::new(Attempt { output, answer })
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
        let none = http::Request::try_from(none).expect("a request");
        assert!(
            none.extensions().is_empty(),
            "no extensions map just to hold no timeout"
        );
    }

    fn answer(status: u16, body: &str) -> reqwest::Response {
        let response = http::Response::builder()
            .status(status)
            .header("x-request-id", "r-1")
            .body(body.as_bytes().to_vec())
            .expect("a response");
        reqwest::Response::from(response)
    }

    #[tokio::test]
    async fn a_decoded_answer_moves_its_headers_to_the_scope_or_keeps_them() {
        // Outside a scope the value carries them, as progenitor's decode does.
        let value = from_response::<serde_json::Value, ()>(answer(200, r#"{"a":1}"#))
            .await
            .expect("decodes");
        assert_eq!(value.headers()["x-request-id"], "r-1");
        assert_eq!(value.into_inner(), serde_json::json!({"a": 1}));

        // Inside, the scope has them and the value none.
        let exchanged = with_answer_headers(Box::pin(from_response::<serde_json::Value, ()>(
            answer(201, "[1]"),
        )))
        .await;
        let (value, kept) = *exchanged;
        let value = value.expect("decodes");
        assert!(value.headers().is_empty());
        assert_eq!(value.status().as_u16(), 201);
        let (status, headers) = kept.expect("the answer was kept");
        assert_eq!(
            (status, &headers["x-request-id"]),
            (201, &HeaderValue::from_static("r-1"))
        );

        let nothing = with_answer_headers(Box::pin(async { 1 })).await;
        assert!(nothing.1.is_none());
    }

    #[tokio::test]
    async fn an_attempt_adds_its_own_headers_and_tells_its_url_before_sending() {
        let defaults = RequestDefaults::new().header("traceparent", "00-default");
        let mut own = HeaderMap::new();
        own.insert("traceparent", HeaderValue::from_static("00-attempt"));
        let told = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
        let hook: UrlHook = {
            let told = std::sync::Arc::clone(&told);
            Box::new(move |url| told.lock().unwrap().push(url.to_string()))
        };
        let seen = with_attempt(
            Box::pin(async {
                let mut sent = request(&[]);
                prepare_request(&defaults, &mut sent);
                // A second request of the same operation gets the defaults only.
                let mut again = request(&[]);
                prepare_request(&defaults, &mut again);
                (sent, again)
            }),
            own,
            Some(hook),
        )
        .await;
        let (sent, again) = &seen.output;
        assert_eq!(sent.headers()["traceparent"], "00-attempt");
        assert_eq!(again.headers()["traceparent"], "00-default");
        assert_eq!(*told.lock().unwrap(), ["http://127.0.0.1:1/x"], "told once");
        assert!(seen.answer.is_none());

        // Told before the request goes: an attempt that never finishes has told it.
        let told = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
        let hook: UrlHook = {
            let told = std::sync::Arc::clone(&told);
            Box::new(move |url| told.lock().unwrap().push(url.to_string()))
        };
        let hanging = with_attempt(
            Box::pin(async {
                let mut sent = request(&[]);
                prepare_request(&RequestDefaults::new(), &mut sent);
                std::future::pending::<()>().await;
            }),
            HeaderMap::new(),
            Some(hook),
        );
        let cut = tokio::time::timeout(std::time::Duration::from_millis(20), hanging).await;
        assert!(cut.is_err());
        assert_eq!(*told.lock().unwrap(), ["http://127.0.0.1:1/x"]);

        let unasked = with_attempt(
            Box::pin(async {
                let mut sent = request(&[]);
                prepare_request(&RequestDefaults::new(), &mut sent);
                sent
            }),
            HeaderMap::new(),
            None,
        )
        .await;
        assert!(unasked.output.headers().is_empty());
    }

    #[test]
    fn a_body_decodes_as_text_or_as_bytes_alike() {
        // Escapes, non-ASCII text and numbers: the same value whichever way it is read.
        let body = r#"{"name":"caf\u00e9 ☕","n":[1,2.5,-3e2],"ok":true,"none":null}"#.as_bytes();
        let text: serde_json::Value = decode_json(body).expect("valid UTF-8");
        let bytes: serde_json::Value = serde_json::from_slice(body).expect("decodes");
        assert_eq!(text, bytes);
        assert_eq!(text["name"], "café ☕");

        // Not UTF-8: refused, with the error reading the bytes gives (line and column included).
        let broken = b"{\"name\":\"caf\xe9\"}";
        let error = decode_json::<serde_json::Value>(broken).expect_err("not UTF-8");
        let expected = serde_json::from_slice::<serde_json::Value>(broken).expect_err("not UTF-8");
        assert_eq!(error.to_string(), expected.to_string());
        // And a shape that does not fit is an error either way.
        assert!(decode_json::<Vec<u32>>(br#"{"a":1}"#).is_err());
    }

    #[test]
    fn a_whole_number_written_as_a_float_decodes_as_the_integer_it_is() {
        #[derive(serde::Deserialize, Debug, PartialEq)]
        struct Scaling {
            replicas: Option<std::num::NonZeroU64>,
            memory: f64,
            items: Vec<i64>,
        }
        let scaling: Scaling =
            decode_json(br#"{"replicas": 2.0, "memory": 0.5, "items": [1e2, -3.0, 4]}"#)
                .expect("whole numbers are integers however written");
        assert_eq!(scaling.replicas, std::num::NonZeroU64::new(2));
        assert_eq!(scaling.items, [100, -3, 4]);
        assert_eq!(scaling.memory, 0.5);
        // A fraction is no integer: the first error is kept, with its place in the text.
        let error = decode_json::<Scaling>(br#"{"replicas": 2.5, "memory": 1, "items": []}"#)
            .unwrap_err()
            .to_string();
        assert!(error.contains("line 1 column"), "{error}");
        // Beyond 2^53 a float is not exact as an integer: not taken for one.
        assert!(decode_json::<Vec<i64>>(b"[1e300]").is_err());
    }

    #[tokio::test]
    async fn an_undecodable_answer_still_leaves_its_status_and_headers() {
        let exchanged = with_answer_headers(Box::pin(from_response::<Vec<u32>, ()>(answer(
            200,
            "<html>bad gateway</html>",
        ))))
        .await;
        let (value, kept) = *exchanged;
        match value {
            Err(Error::InvalidResponsePayload(body, _)) => {
                assert_eq!(&body[..], b"<html>bad gateway</html>");
            }
            other => panic!("expected an invalid payload, got {other:?}"),
        }
        let (status, headers) = kept.expect("the answer was kept");
        assert_eq!(
            (status, &headers["x-request-id"]),
            (200, &HeaderValue::from_static("r-1"))
        );
    }

    #[tokio::test]
    #[allow(
        deprecated,
        reason = "the hook stays for callers that wired it themselves"
    )]
    async fn the_old_hook_still_keeps_the_answer_inside_a_scope() {
        let defaults = RequestDefaults::new();
        capture_answer(&defaults, &Ok(answer(503, "")));
        let exchanged = with_answer_headers(Box::pin(async {
            capture_answer(&defaults, &Ok(answer(503, "")));
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
    }
}
