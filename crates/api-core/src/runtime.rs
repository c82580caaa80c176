//! [`Runtime`]: runs generated operations with rate limiting, retries, timeouts, tracing and error
//! decoding.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use api_raw::support::{Exchanged, with_answer_headers};
use progenitor_client::{Error as RawError, ResponseValue};
use reqwest::header::{HeaderMap, HeaderValue};
use tracing::Instrument;

use crate::config::{Config, Transport};
use crate::error::{
    ConfigError, DecodeError, Error, MAX_ERROR_READ, Result, TransportError, TransportKind,
};
use crate::error_body::{REQUEST_ID, api_error, header, server_wait};
use crate::operation::{Idempotency, Operation, ResponseBody};
use crate::response::{Response, ResponseMeta};
use crate::retry::RetryPolicy;

/// The HTTP client and policies behind a facade client. Cheap to clone: clones share the connection
/// pool and the rate limiter.
#[derive(Clone)]
pub struct Runtime {
    config: Arc<Config>,
    http: reqwest::Client,
    /// Credentials and user agent, added to each request when the client is the caller's.
    add_headers: Option<Arc<HeaderMap>>,
    /// Whether the HTTP client's own per-attempt timeout already ends a first attempt within the
    /// operation's limit (our client, attempt timeout <= operation timeout): then the operation's
    /// timer starts only when a retry does, and a call that succeeds at once sets no timer of its own.
    first_attempt_bounded: bool,
}

impl fmt::Debug for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Runtime")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// What went wrong in one attempt, and whether trying again is safe.
struct Failure {
    error: Error,
    retryable: bool,
    wait: Option<Duration>,
    /// Whether the attempt may have reached the server and taken effect.
    maybe_applied: bool,
}

impl Runtime {
    /// Builds the HTTP client (the TLS backend of the crate features, timeouts, user agent, sensitive
    /// `Authorization` header, extra roots, proxy), or takes the caller's.
    pub fn new(config: Config) -> Result<Self, ConfigError> {
        let mut headers = HeaderMap::new();
        headers.insert(
            reqwest::header::AUTHORIZATION,
            config.credentials.header_value()?,
        );
        let user_agent = HeaderValue::from_str(&config.user_agent)
            .map_err(|_| ConfigError(format!("invalid user agent {:?}", config.user_agent)))?;
        headers.insert(reqwest::header::USER_AGENT, user_agent);
        if config.base_url.starts_with("https:")
            && !matches!(config.transport, Transport::Caller(_))
        {
            crate::config::require_tls("an https base URL")?;
        }
        let (http, add_headers) = match &config.transport {
            Transport::Caller(client) => (client.clone(), Some(Arc::new(headers))),
            transport => {
                let mut builder = crate::tls::http_client_builder()
                    .default_headers(headers)
                    .connect_timeout(config.connect_timeout)
                    .timeout(config.attempt_timeout);
                if let Transport::Configured {
                    root_certificates,
                    proxy,
                } = transport
                {
                    builder = crate::tls::with_roots(builder, root_certificates);
                    if let Some(proxy) = proxy {
                        builder = builder.proxy(proxy.0.clone());
                    }
                }
                let http = builder
                    .build()
                    .map_err(|e| ConfigError(format!("cannot build the HTTP client: {e}")))?;
                (http, None)
            }
        };
        let first_attempt_bounded =
            add_headers.is_none() && config.attempt_timeout <= config.operation_timeout;
        Ok(Self {
            config: Arc::new(config),
            http,
            add_headers,
            first_attempt_bounded,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The HTTP client, already carrying the credentials and user agent.
    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// A runtime that shares this one's connections and rate limiter but retries by `policy`.
    pub fn with_retry(&self, policy: RetryPolicy) -> Self {
        let mut config = (*self.config).clone();
        config.retry = policy;
        Self {
            config: Arc::new(config),
            http: self.http.clone(),
            add_headers: self.add_headers.clone(),
            first_attempt_bounded: self.first_attempt_bounded,
        }
    }

    /// Runs one operation: `send` performs one attempt with the generated client.
    ///
    /// Each call gets a `tracing` span `api.call` with the operation id, method, path template, attempt,
    /// status, request id and duration; never a header value or a body.
    pub async fn execute<T, F, Fut>(&self, op: &'static Operation, send: F) -> Result<Response<T>>
    where
        T: ResponseBody,
        F: FnMut() -> Fut,
        Fut: Future<Output = std::result::Result<ResponseValue<T>, RawError<()>>>,
    {
        self.execute_redacting(op, &[], send).await
    }

    /// Runs one operation like [`execute`](Self::execute), removing `secrets` (the values the request
    /// carries, such as a pipe's passwords) from any error body before it is read, cut or logged.
    pub async fn execute_redacting<T, F, Fut>(
        &self,
        op: &'static Operation,
        secrets: &[&str],
        send: F,
    ) -> Result<Response<T>>
    where
        T: ResponseBody,
        F: FnMut() -> Fut,
        Fut: Future<Output = std::result::Result<ResponseValue<T>, RawError<()>>>,
    {
        let span = tracing::info_span!(
            "api.call",
            operation = op.id,
            method = op.method,
            path = op.path,
            attempt = tracing::field::Empty,
            status = tracing::field::Empty,
            request_id = tracing::field::Empty,
            duration_ms = tracing::field::Empty,
        );
        // The first permit of the client-side limiter is taken before the operation's clock starts:
        // queueing behind other calls is not this call being slow, and a long batch must not time out.
        if let Some(limiter) = &self.config.rate_limit {
            Box::pin(limiter.acquire()).instrument(span.clone()).await;
        }
        let started = Instant::now();
        let call = Call::default();
        let limit = self.config.operation_timeout;
        let deadline = tokio::time::Instant::now() + limit;
        let run = self
            .attempts(op, send, started, deadline, &call, secrets, &span)
            .instrument(span.clone());
        let result = if self.first_attempt_bounded {
            // The attempts keep to the deadline themselves from the second one on.
            run.await
        } else {
            match tokio::time::timeout_at(deadline, run).await {
                Ok(result) => result,
                Err(_) => Err(self.timed_out(op, &call, started)),
            }
        };
        span.record("duration_ms", started.elapsed().as_millis() as u64);
        result
    }

    /// The operation's time is up: what the attempts got to, and whether a create may have landed.
    fn timed_out(&self, op: &'static Operation, call: &Call, started: Instant) -> Error {
        Error::Timeout {
            operation: op.id,
            attempts: call.attempts.load(Ordering::Relaxed),
            elapsed: started.elapsed(),
            limit: self.config.operation_timeout,
            last_error: call
                .last_error
                .lock()
                .ok()
                .and_then(|mut e| e.take())
                .map(Box::new),
            outcome_unknown: op.idempotency == Idempotency::NotIdempotent
                && call.in_flight.load(Ordering::Relaxed),
        }
    }

    #[allow(
        clippy::too_many_arguments,
        reason = "one call's state, passed once per call"
    )]
    async fn attempts<T, F, Fut>(
        &self,
        op: &'static Operation,
        mut send: F,
        started: Instant,
        deadline: tokio::time::Instant,
        call: &Call,
        secrets: &[&str],
        span: &tracing::Span,
    ) -> Result<Response<T>>
    where
        T: ResponseBody,
        F: FnMut() -> Fut,
        Fut: Future<Output = std::result::Result<ResponseValue<T>, RawError<()>>>,
    {
        let policy = &self.config.retry;
        let mut earlier_maybe_applied = false;
        loop {
            let attempt = call.attempts.fetch_add(1, Ordering::Relaxed) + 1;
            span.record("attempt", attempt);
            let exchanged = if attempt > 1 && self.first_attempt_bounded {
                // A retry under the operation's deadline (the whole call is not under a timer).
                let retry = self.attempt(Box::pin(send()), true, &call.in_flight);
                match tokio::time::timeout_at(deadline, Box::pin(retry)).await {
                    Ok(exchange) => exchange,
                    Err(_) => return Err(self.timed_out(op, call, started)),
                }
            } else {
                self.attempt(Box::pin(send()), attempt > 1, &call.in_flight)
                    .await
            };
            // A success returns at once. The exchange is taken apart in a plain function: a decoded
            // value moved out of its box here would get room in this state machine, which every
            // future above holds and copies whole (profiled).
            let (raw, answer) = match settle(exchanged, attempt, span) {
                Ok(response) => {
                    call.in_flight.store(false, Ordering::Relaxed);
                    return Ok(response);
                }
                Err(failed) => *failed,
            };
            // Boxed: the error path's futures stay out of the success path's state machine.
            let classify = Box::pin(self.classify(op, raw, answer, attempt, secrets, span));
            let outcome = if attempt > 1 && self.first_attempt_bounded {
                // Reading a retry's error body is under the deadline too.
                match tokio::time::timeout_at(deadline, classify).await {
                    Ok(outcome) => outcome,
                    Err(_) => return Err(self.timed_out(op, call, started)),
                }
            } else {
                classify.await
            };
            call.in_flight.store(false, Ordering::Relaxed);
            let mut failure = match outcome {
                Ok(response) => return Ok(response),
                Err(failure) => failure,
            };
            if let Error::Api(error) = &mut failure.error {
                error.follows_unknown_outcome = earlier_maybe_applied;
            }
            earlier_maybe_applied |= failure.maybe_applied;
            if !failure.retryable || attempt >= policy.max_attempts {
                return Err(failure.error);
            }
            let delay = match failure.wait {
                Some(wait) => policy.server_wait(wait),
                None => policy.backoff(attempt),
            };
            let spent = started.elapsed().saturating_add(delay);
            if spent > policy.max_elapsed || spent > self.config.operation_timeout {
                tracing::debug!(
                    attempt,
                    delay_ms = delay.as_millis() as u64,
                    "not retrying: the wait would exceed the time budget"
                );
                return Err(failure.error);
            }
            // The error's text is already free of the request's and the client's secrets.
            tracing::debug!(attempt, delay_ms = delay.as_millis() as u64, error = %failure.error, "retrying");
            if let Ok(mut last) = call.last_error.lock() {
                *last = Some(failure.error);
            }
            Box::pin(tokio::time::sleep(delay)).await;
        }
    }

    /// One exchange: waits for the client-side rate limit first on a retry (the first attempt took its
    /// permit before the clock started), marks the call in flight, then sends with the headers to add.
    async fn attempt<T, Fut>(
        &self,
        send: Pin<Box<Fut>>,
        retry: bool,
        in_flight: &AtomicBool,
    ) -> Exchanged<std::result::Result<ResponseValue<T>, RawError<()>>>
    where
        Fut: Future<Output = std::result::Result<ResponseValue<T>, RawError<()>>>,
    {
        if retry && let Some(limit) = &self.config.rate_limit {
            Box::pin(limit.acquire()).await;
        }
        in_flight.store(true, Ordering::Relaxed);
        with_answer_headers(self.add_headers.clone(), send).await
    }

    /// Sorts a failed attempt; an unexpected 2xx or a tolerated empty body still ends as a success.
    async fn classify<T: ResponseBody>(
        &self,
        op: &'static Operation,
        raw: RawError<()>,
        answer: Option<(u16, HeaderMap)>,
        attempt: u32,
        secrets: &[&str],
        span: &tracing::Span,
    ) -> std::result::Result<Response<T>, Failure> {
        let idempotent = op.idempotency == Idempotency::Idempotent;
        // A failure after the request may have reached the server leaves a create's outcome unknown.
        let transport = |kind, source| {
            let maybe_applied = kind != TransportKind::Connect;
            Failure {
                error: Error::Transport(TransportError {
                    operation: op.id,
                    attempt,
                    kind,
                    source,
                    outcome_unknown: maybe_applied && !idempotent,
                }),
                retryable: !maybe_applied || idempotent,
                wait: None,
                maybe_applied,
            }
        };
        let final_failure = |error| Failure {
            error,
            retryable: false,
            wait: None,
            maybe_applied: false,
        };
        match raw {
            RawError::UnexpectedResponse(response) => {
                let status = response.status().as_u16();
                span.record("status", status);
                let headers = response.headers().clone();
                let success_status = (200..300).contains(&status);
                // A success body is read whole; an error body only up to a bound.
                let body = if success_status {
                    response.text().await
                } else {
                    read_bounded(response, MAX_ERROR_READ).await
                };
                let body = match body {
                    Ok(body) => body,
                    Err(e) => return Err(transport(TransportKind::Body, e)),
                };
                if success_status {
                    return decode_success(op, status, headers, &body, attempt, span)
                        .map_err(final_failure);
                }
                let mut error = self.api_error(op, status, &headers, &body, attempt, secrets);
                if let Some(id) = &error.request_id {
                    span.record("request_id", id.as_str());
                }
                let gateway = matches!(status, 502..=504);
                error.outcome_unknown = gateway && !idempotent;
                let retryable = status == 429 || (idempotent && gateway);
                let wait = if retryable {
                    server_wait(status, &headers)
                } else {
                    None
                };
                Err(Failure {
                    error: error.into(),
                    retryable,
                    wait,
                    maybe_applied: gateway,
                })
            }
            RawError::CommunicationError(e) => {
                let kind = if e.is_connect() {
                    TransportKind::Connect
                } else if e.is_timeout() {
                    TransportKind::Timeout
                } else {
                    TransportKind::Request
                };
                Err(transport(kind, e))
            }
            RawError::ResponseBodyError(e) => {
                let kind = if e.is_timeout() {
                    TransportKind::Timeout
                } else {
                    TransportKind::Body
                };
                Err(transport(kind, e))
            }
            RawError::InvalidUpgrade(e) => Err(final_failure(Error::Transport(TransportError {
                operation: op.id,
                attempt,
                kind: TransportKind::Request,
                source: e,
                outcome_unknown: false,
            }))),
            RawError::InvalidResponsePayload(bytes, _) => {
                // The generated code dropped the answer's status and headers; the post hook kept them.
                let (status, headers) = answer.unwrap_or((200, HeaderMap::new()));
                let body = String::from_utf8_lossy(&bytes);
                decode_success(op, status, headers, &body, attempt, span).map_err(final_failure)
            }
            RawError::ErrorResponse(value) => {
                let status = value.status().as_u16();
                let error = self.api_error(op, status, value.headers(), "", attempt, secrets);
                Err(final_failure(error.into()))
            }
            RawError::InvalidRequest(message) | RawError::Custom(message) => {
                Err(final_failure(Error::Config(ConfigError(format!(
                    "{}: cannot build the request: {message}",
                    op.id
                )))))
            }
        }
    }
}

impl Runtime {
    /// The error for an error answer, with the client's secret and the request's `secrets` removed.
    /// Only error answers pay for gathering them.
    fn api_error(
        &self,
        op: &'static Operation,
        status: u16,
        headers: &HeaderMap,
        body: &str,
        attempt: u32,
        secrets: &[&str],
    ) -> crate::error::ApiError {
        let mut all = Vec::with_capacity(secrets.len() + 1);
        all.push(self.config.credentials.secret());
        all.extend_from_slice(secrets);
        api_error(op.id, status, headers, body, attempt, &all)
    }
}

/// What the attempts of one call share with the clock that may cut them short.
#[derive(Default)]
struct Call {
    attempts: AtomicU32,
    /// Whether an attempt is between sending and its classified answer.
    in_flight: AtomicBool,
    /// The error of the last attempt that failed and was to be retried.
    last_error: Mutex<Option<Error>>,
}

/// Reads at most `limit` bytes of a body; the rest is never read.
async fn read_bounded(
    mut response: reqwest::Response,
    limit: usize,
) -> std::result::Result<String, reqwest::Error> {
    let mut bytes = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        let room = limit.saturating_sub(bytes.len());
        bytes.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if bytes.len() >= limit {
            break;
        }
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn request_id_of<T: ResponseBody>(headers: &HeaderMap, value: &T) -> Option<String> {
    header(headers, &REQUEST_ID).or_else(|| value.request_id())
}

/// A successful exchange as the caller's response, or the generated error and the answer's status
/// and headers for [`Runtime::classify`].
#[allow(
    clippy::type_complexity,
    clippy::boxed_local,
    reason = "the exchange's own parts, boxed so that only a pointer passes through the caller's future"
)]
fn settle<T: ResponseBody>(
    exchanged: Exchanged<std::result::Result<ResponseValue<T>, RawError<()>>>,
    attempt: u32,
    span: &tracing::Span,
) -> std::result::Result<Response<T>, Box<(RawError<()>, Option<(u16, HeaderMap)>)>> {
    let (sent, answer) = *exchanged;
    match sent {
        Ok(value) => Ok(success(value, answer, attempt, span)),
        Err(raw) => Err(Box::new((raw, answer))),
    }
}

fn success<T: ResponseBody>(
    value: ResponseValue<T>,
    answer: Option<(u16, HeaderMap)>,
    attempt: u32,
    span: &tracing::Span,
) -> Response<T> {
    let status = value.status().as_u16();
    // The post hook kept a copy of the headers already: take it rather than clone them again.
    let headers = match answer {
        Some((_, headers)) => headers,
        None => value.headers().clone(),
    };
    let value = value.into_inner();
    finish(value, status, headers, attempt, span)
}

fn finish<T: ResponseBody>(
    value: T,
    status: u16,
    headers: HeaderMap,
    attempt: u32,
    span: &tracing::Span,
) -> Response<T> {
    let request_id = request_id_of(&headers, &value);
    span.record("status", status);
    if let Some(id) = &request_id {
        span.record("request_id", id.as_str());
    }
    Response::new(
        value,
        ResponseMeta {
            status,
            headers,
            request_id,
            attempts: attempt,
        },
    )
}

/// Decodes a success body, naming the JSON path of the first field that does not fit.
fn decode_success<T: ResponseBody>(
    op: &'static Operation,
    status: u16,
    headers: HeaderMap,
    body: &str,
    attempt: u32,
    span: &tracing::Span,
) -> Result<Response<T>> {
    let request_id = || header(&headers, &REQUEST_ID);
    if body.trim().is_empty() {
        return match T::empty() {
            Some(value) => Ok(finish(value, status, headers, attempt, span)),
            None => Err(Error::Decode(
                DecodeError::new(op.id, ".", "the answer has an empty body")
                    .with_request_id(request_id()),
            )),
        };
    }
    let mut deserializer = serde_json::Deserializer::from_str(body);
    match serde_path_to_error::deserialize::<_, T>(&mut deserializer) {
        Ok(value) => Ok(finish(value, status, headers, attempt, span)),
        Err(e) => Err(Error::Decode(
            DecodeError::new(op.id, e.path().to_string(), e.into_inner().to_string())
                .with_request_id(request_id()),
        )),
    }
}
