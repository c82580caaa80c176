//! [`Runtime`]: runs generated operations with rate limiting, retries, timeouts, tracing and error
//! decoding.

use std::borrow::Cow;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use api_raw::support::redact::Redactor;
use api_raw::support::{Attempt, RequestDefaults, UrlHook, with_attempt};
use progenitor_client::{Error as RawError, ResponseValue};
use reqwest::header::{HeaderMap, HeaderValue};
use tracing::Instrument;

use crate::config::{Config, Transport, limit};
use crate::error::{
    ConfigError, DecodeError, Error, MAX_ERROR_READ, Result, TransportError, TransportKind,
};
use crate::error_body::{REQUEST_ID, api_error, header, server_wait};
use crate::metrics::{Metrics, final_status};
use crate::operation::{Operation, ResponseBody};
use crate::outcome::Ending;
use crate::rate_limit::{Booked, Limiter};
use crate::response::{Response, ResponseMeta};
use crate::retry::RetryPolicy;
use crate::spans::{self, millis};

/// The HTTP client and policies behind a facade client. Cheap to clone: clones share the connection
/// pool and the rate limiter.
///
/// One transport path: whoever built the `reqwest::Client` (the runtime, or the caller with
/// [`http_client`](crate::ConfigBuilder::http_client)), every request gets its credentials, user
/// agent and attempt timeout from the generated client's pre hook ([`RequestDefaults`]), and every
/// call the same retries, rate limit and operation timeout.
#[derive(Clone)]
pub struct Runtime {
    config: Arc<Config>,
    http: reqwest::Client,
    /// Credentials, user agent and attempt timeout: added to every request by the pre hook.
    defaults: RequestDefaults,
    /// The client's own secrets (the key secret or token, and the `Authorization` value), removed
    /// from every error it shows.
    redactor: Arc<Redactor>,
    /// The client-side rate limit, bound to this API URL and key (its store's state for them).
    limiter: Option<Limiter>,
    /// What every call records (OpenTelemetry instruments with the `metrics` feature, else nothing).
    metrics: Metrics,
    /// Whether the attempt timeout already ends a first attempt within the operation's limit: then
    /// the operation's timer starts only when a retry does, and a call that succeeds at once sets no
    /// timer of its own.
    first_attempt_bounded: bool,
    /// What the client learned about its server, shared by its clones.
    learned: Arc<crate::Learned>,
    /// The host and port of the API's URL, for the attempt spans.
    server: Option<(Arc<str>, u16)>,
    /// Asked right before each attempt is sent ([`with_send_check`](Self::with_send_check)).
    send_check: Option<SendCheck>,
}

/// What a runtime asks right before each attempt is sent: see
/// [`Runtime::with_send_check`]. `Err` holds why the call may not go.
type SendCheck = Arc<dyn Fn(&Operation) -> std::result::Result<(), String> + Send + Sync>;

impl fmt::Debug for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Runtime")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// What went wrong in one attempt, and how it ended for the outcome rule.
struct Failure {
    error: Error,
    ending: Ending,
    /// The wait the server asked for, if any.
    wait: Option<Duration>,
}

impl Runtime {
    /// Builds the HTTP client (the TLS backend of the crate features, connect timeout, extra roots,
    /// proxy), or takes the caller's, and the defaults every request carries (credentials marked
    /// sensitive, user agent, attempt timeout).
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
        let attempt = limit(config.attempt_timeout);
        // A client of the SDK's own bounds each attempt itself (reqwest's client-wide timeout, which
        // a request's own timeout still overrides); a caller's client gets the bound on each
        // request from the pre hook. The same bound either way, but the client-wide one costs a
        // request no extensions map of its own (three allocations a call, profiled).
        let (http, request_timeout) = match &config.transport {
            Transport::Caller(client) => (client.clone(), attempt),
            transport => {
                let mut builder = crate::tls::http_client_builder();
                if let Some(attempt) = attempt {
                    builder = builder.timeout(attempt);
                }
                if let Some(connect) = limit(config.connect_timeout) {
                    builder = builder.connect_timeout(connect);
                }
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
        let defaults = RequestDefaults::new()
            .headers(headers)
            .attempt_timeout(request_timeout);
        let mut redactor = Redactor::new();
        for secret in config.credentials.secrets() {
            redactor.add(&secret);
        }
        let first_attempt_bounded =
            attempt.is_some_and(|attempt| attempt <= config.operation_timeout);
        let limiter = config
            .rate_limit
            .as_ref()
            .map(|limit| Limiter::new(limit, &config.base_url, config.credentials.limit_key()));
        #[cfg(feature = "metrics")]
        let metrics = Metrics::new(
            &config
                .meter
                .clone()
                .unwrap_or_else(|| opentelemetry::global::meter("api-core")),
            &config.base_url,
        );
        #[cfg(not(feature = "metrics"))]
        let metrics = Metrics;
        let server = reqwest::Url::parse(&config.base_url)
            .ok()
            .and_then(|url| Some((Arc::from(url.host_str()?), url.port_or_known_default()?)));
        Ok(Self {
            config: Arc::new(config),
            http,
            defaults,
            redactor: Arc::new(redactor),
            limiter,
            metrics,
            first_attempt_bounded,
            learned: Arc::default(),
            server,
            send_check: None,
        })
    }

    /// The client's rate limiter (shared by its clones), when it has a rate limit: pace work of
    /// one's own through the same limit as the SDK's calls.
    pub fn rate_limiter(&self) -> Option<crate::RateLimiter> {
        self.limiter.clone().map(crate::RateLimiter::new)
    }

    /// What the client has learned about its server (shared by its clones).
    pub fn learned(&self) -> &crate::Learned {
        &self.learned
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The HTTP client and the defaults each request gets, for wiring a generated client.
    pub(crate) fn transport(&self) -> (&reqwest::Client, &RequestDefaults) {
        (&self.http, &self.defaults)
    }

    /// A runtime that shares this one's connections and rate limiter but retries by `policy`.
    pub fn with_retry(&self, policy: RetryPolicy) -> Self {
        let mut config = (*self.config).clone();
        config.retry = policy;
        Self {
            config: Arc::new(config),
            ..self.clone()
        }
    }

    /// A runtime that shares this one's connections, rate limiter and what it learned, and asks
    /// `check` right before each attempt is sent: after the rate limit's wait and any backoff, so
    /// a condition that can lapse while a call waits (a lease, a leadership) still holds when the
    /// request leaves. A refusal sends nothing more: the call ends with [`Error::Withheld`], or,
    /// when an earlier attempt was sent, with that attempt's error (its outcome as it was). A check
    /// this runtime already has is asked first.
    pub fn with_send_check(
        &self,
        check: impl Fn(&Operation) -> std::result::Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        let check: SendCheck = match &self.send_check {
            None => Arc::new(check),
            Some(earlier) => {
                let earlier = Arc::clone(earlier);
                Arc::new(move |op: &Operation| {
                    earlier(op)?;
                    check(op)
                })
            }
        };
        Self {
            send_check: Some(check),
            ..self.clone()
        }
    }

    /// Runs one operation: `send` performs one attempt with the generated client.
    ///
    /// Each call gets a `tracing` span `api.call`, each attempt an `api.attempt` under it, and each
    /// rate-limit wait and backoff a span of its own, named and filled as OpenTelemetry's HTTP
    /// conventions say (see [`spans`](crate::spans)); never a header value or a body.
    pub async fn execute<T, F, Fut>(&self, op: &'static Operation, send: F) -> Result<Response<T>>
    where
        T: ResponseBody,
        F: FnMut() -> Fut,
        Fut: Future<Output = std::result::Result<ResponseValue<T>, RawError<()>>>,
    {
        self.execute_redacting(op, &[], send).await
    }

    /// Runs one operation like [`execute`](Self::execute), removing `secrets` (the values the request
    /// carries, such as a pipe's passwords), in any encoding, from every error before it is read, cut
    /// or logged.
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
        let span = spans::call(op);
        // Ends as `cancelled` when the caller drops the call before it ends.
        let mut call_end = spans::SpanEnd::new(span.clone(), None);
        let call = Call::default();
        // The first permit of the client-side limiter is taken before the operation's clock starts:
        // queueing behind other calls is not this call being slow, and a long batch must not time out.
        if let Some(limiter) = &self.limiter {
            let (waited, slot) = span.in_scope(|| self.limit_wait(limiter)).await;
            call.sent_on(slot);
            self.metrics.limiter_wait(op, waited);
        }
        let started = Instant::now();
        // A limit too long to be a point in time (`Duration::MAX`) means no limit.
        let deadline = tokio::time::Instant::now().checked_add(self.config.operation_timeout);
        let run = self
            .attempts(op, send, started, deadline, &call, secrets, &span)
            .instrument(span.clone());
        let result = match deadline {
            // The attempts keep to the deadline themselves from the second one on.
            Some(_) if self.first_attempt_bounded => run.await,
            Some(deadline) => match tokio::time::timeout_at(deadline, run).await {
                Ok(result) => result,
                Err(_) => Err(self.timed_out(op, &call, started)),
            },
            None => run.await,
        };
        let elapsed = started.elapsed();
        let status = final_status(&result, |response| response.meta().status);
        call_end.finish(status, spans::call_error(result.as_ref().err()));
        self.metrics.call(
            op,
            status,
            result.as_ref().err(),
            call.attempts.load(Ordering::Relaxed),
            elapsed,
        );
        result
    }

    /// Waits for a slot of the client-side rate limit, in a span of its own (a child of the current
    /// span) that says the store that answered and whether a block held the slot back.
    /// Returns the wait and the slot the request goes on.
    fn limit_wait<'a>(
        &'a self,
        limiter: &'a Limiter,
    ) -> impl Future<Output = (Duration, Booked)> + 'a {
        let span = spans::rate_limit();
        let recorded = span.clone();
        let wait = async move {
            let (waited, slot) = Box::pin(limiter.acquire_traced(&recorded)).await;
            recorded.record("cloud_api.rate_limit.wait_ms", millis(waited));
            (waited, slot)
        };
        wait.instrument(span)
    }

    /// The operation's time is up: what the attempts got to, and whether the call may have landed.
    fn timed_out(&self, op: &'static Operation, call: &Call, started: Instant) -> Error {
        let ending = if call.in_flight.load(Ordering::Relaxed) {
            Ending::Lost
        } else {
            Ending::NotSent
        };
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
            outcome_unknown: ending.leaves_outcome_unknown(op.idempotency),
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
        deadline: Option<tokio::time::Instant>,
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
            span.record("cloud_api.attempts", attempt);
            // From the second attempt on, when the whole call is not under a timer, each step is
            // under the operation's deadline.
            let retry_deadline = deadline.filter(|_| attempt > 1 && self.first_attempt_bounded);
            let attempted = match retry_deadline {
                Some(deadline) => {
                    let retry = self.attempt(
                        op,
                        Box::pin(send()),
                        attempt,
                        call,
                        Some(deadline),
                        (span, secrets),
                    );
                    match tokio::time::timeout_at(deadline, Box::pin(retry)).await {
                        Ok(exchange) => exchange,
                        Err(_) => return Err(self.timed_out(op, call, started)),
                    }
                }
                None => {
                    self.attempt(
                        op,
                        Box::pin(send()),
                        attempt,
                        call,
                        deadline,
                        (span, secrets),
                    )
                    .await
                }
            };
            let (exchanged, sent, mut attempt_span) = match attempted {
                Ok(attempted) => attempted,
                Err(reason) => {
                    call.attempts.fetch_sub(1, Ordering::Relaxed);
                    span.record("cloud_api.attempts", attempt - 1);
                    return Err(withheld(op, call, reason));
                }
            };
            // A success returns at once. The exchange is taken apart in a plain function: a decoded
            // value moved out of its box here would get room in this state machine, which every
            // future above holds and copies whole (profiled).
            let (raw, answer) = match settle(exchanged, attempt, span) {
                Ok(response) => {
                    call.in_flight.store(false, Ordering::Relaxed);
                    let status = Some(response.meta().status);
                    attempt_span.finish(status, None);
                    self.metrics.attempt(op, status, None, sent.elapsed());
                    return Ok(response);
                }
                Err(failed) => *failed,
            };
            // Boxed: the error path's futures stay out of the success path's state machine. Reading
            // and sorting the answer is part of the attempt.
            let classify = Box::pin(self.classify::<T>(op, raw, answer, attempt, secrets, span))
                .instrument(attempt_span.span().clone());
            let outcome = match retry_deadline {
                // Reading a retry's error body is under the deadline too.
                Some(deadline) => match tokio::time::timeout_at(deadline, classify).await {
                    Ok(outcome) => outcome,
                    Err(_) => return Err(self.timed_out(op, call, started)),
                },
                None => classify.await,
            };
            call.in_flight.store(false, Ordering::Relaxed);
            let mut failure = match outcome {
                Ok(response) => {
                    let status = Some(response.meta().status);
                    attempt_span.finish(status, None);
                    self.metrics.attempt(op, status, None, sent.elapsed());
                    return Ok(response);
                }
                Err(failure) => failure,
            };
            let status = failure.error.status();
            attempt_span.finish(status, Some(&failure.error));
            drop(attempt_span);
            self.metrics
                .attempt(op, status, Some(&failure.error), sent.elapsed());
            if let Error::Api(error) = &mut failure.error {
                error.follows_unknown_outcome = earlier_maybe_applied;
            }
            // A 429 holds back everyone who shares the limit, not only this call.
            if failure.ending == Ending::Status(429)
                && let Some(limiter) = &self.limiter
            {
                Box::pin(limiter.throttled(failure.wait, call.slot()))
                    .instrument(spans::throttled())
                    .await;
            }
            earlier_maybe_applied |= !failure.ending.proves_nothing_applied();
            if !failure.ending.may_retry(op.idempotency) || attempt >= policy.max_attempts {
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
                    delay_ms = millis(delay),
                    "not retrying: the wait would exceed the time budget"
                );
                return Err(failure.error);
            }
            // The error's text is already free of the request's and the client's secrets.
            tracing::debug!(attempt, delay_ms = millis(delay), error = %failure.error, "retrying");
            let backoff = spans::backoff(attempt, delay, &failure.error, failure.wait.is_some());
            if let Ok(mut last) = call.last_error.lock() {
                *last = Some(failure.error);
            }
            Box::pin(tokio::time::sleep(delay))
                .instrument(backoff)
                .await;
        }
    }

    /// One exchange, in its attempt span (returned, for the answer's sorting): waits for the
    /// client-side rate limit first on a retry (the first attempt took its permit before the clock
    /// started), asks the send check, marks the call in flight, then sends with the span's trace
    /// context; with the time it was sent at. `Err` is the send check's refusal: nothing was sent.
    async fn attempt<T, Fut>(
        &self,
        op: &'static Operation,
        send: Pin<Box<Fut>>,
        number: u32,
        call: &Call,
        deadline: Option<tokio::time::Instant>,
        (call_span, secrets): (&tracing::Span, &[&str]),
    ) -> std::result::Result<
        (
            Box<Attempt<std::result::Result<ResponseValue<T>, RawError<()>>>>,
            Instant,
            spans::SpanEnd,
        ),
        String,
    >
    where
        Fut: Future<Output = std::result::Result<ResponseValue<T>, RawError<()>>>,
    {
        if number > 1
            && let Some(limiter) = &self.limiter
        {
            let (waited, slot) = Box::pin(self.limit_wait(limiter)).await;
            call.sent_on(slot);
            self.metrics.limiter_wait(op, waited);
        }
        // Last, after every wait: what the check guards must hold when the request leaves.
        if let Some(check) = &self.send_check {
            check(op)?;
        }
        let server = self.server.as_ref().map(|(host, port)| (&**host, *port));
        let span = spans::attempt(op, number, server);
        let headers = if self.config.trace_propagation {
            spans::trace_context(&span)
        } else {
            HeaderMap::new()
        };
        call.in_flight.store(true, Ordering::Relaxed);
        let sent = Instant::now();
        // The URL, recorded when the request is built (before it is sent: an attempt cut short has
        // it too), with the path's ids on the call's span.
        let on_url: Option<UrlHook> = (!span.is_disabled()).then(|| {
            let (attempt_span, call_span) = (span.clone(), call_span.clone());
            // The client's own redactor shared, unless the request brings secrets of its own.
            let redactor = match self.redactor_for(secrets) {
                Cow::Borrowed(_) => Arc::clone(&self.redactor),
                Cow::Owned(with_request) => Arc::new(with_request),
            };
            Box::new(move |url: &reqwest::Url| {
                spans::record_url(&attempt_span, &call_span, op, url, &redactor);
            }) as UrlHook
        });
        // Made before the exchange: an exchange cut short (the operation's deadline, or the caller
        // dropping the call) drops it, which records how.
        let attempt = spans::SpanEnd::new(span.clone(), deadline);
        let exchanged = with_attempt(send, headers, on_url).instrument(span).await;
        Ok((exchanged, sent, attempt))
    }

    /// Sorts a failed attempt by [`outcome`](crate::outcome)'s rule; an unexpected 2xx or a tolerated
    /// empty body still ends as a success. Every error leaves here redacted of the client's and the
    /// request's secrets.
    async fn classify<T: ResponseBody>(
        &self,
        op: &'static Operation,
        raw: RawError<()>,
        answer: Option<(u16, HeaderMap)>,
        attempt: u32,
        secrets: &[&str],
        span: &tracing::Span,
    ) -> std::result::Result<Response<T>, Failure> {
        let redactor = self.redactor_for(secrets);
        let transport = |kind: TransportKind, source, ending: Ending| Failure {
            error: Error::Transport(TransportError {
                operation: op.id,
                attempt,
                kind,
                source,
                outcome_unknown: ending.leaves_outcome_unknown(op.idempotency),
            }),
            ending,
            wait: None,
        };
        let decoded = |result: Result<Response<T>>, status: u16| {
            result.map_err(|mut error| {
                error.redact_with(&redactor);
                Failure {
                    error,
                    ending: Ending::Undecodable(status),
                    wait: None,
                }
            })
        };
        match raw {
            RawError::UnexpectedResponse(response) => {
                let status = response.status().as_u16();
                span.record("http.response.status_code", status);
                let headers = response.headers().clone();
                if (200..300).contains(&status) {
                    // A success body is read whole.
                    return match response.text().await {
                        Ok(body) => decoded(
                            decode_success(op, status, headers, &body, attempt, span),
                            status,
                        ),
                        Err(e) => Err(transport(TransportKind::Body, e, Ending::BodyLost(status))),
                    };
                }
                // An error body only up to a bound, and what could be read of it: the status
                // already says how the call ended.
                let body = read_bounded(response, MAX_ERROR_READ).await;
                let mut error = api_error(op.id, status, &headers, &body, attempt, &redactor);
                if let Some(id) = &error.request_id {
                    span.record("cloud_api.request_id", id.as_str());
                }
                let ending = Ending::Status(status);
                error.outcome_unknown = ending.leaves_outcome_unknown(op.idempotency);
                let wait = if ending.is_transient() {
                    server_wait(status, &headers)
                } else {
                    None
                };
                Err(Failure {
                    error: error.into(),
                    ending,
                    wait,
                })
            }
            RawError::CommunicationError(e) => {
                let (kind, ending) = if e.is_connect() {
                    (TransportKind::Connect, Ending::Refused)
                } else if e.is_timeout() {
                    (TransportKind::Timeout, Ending::Lost)
                } else {
                    (TransportKind::Request, Ending::Lost)
                };
                Err(transport(kind, e, ending))
            }
            RawError::ResponseBodyError(e) => {
                // A success status came (the generated code reads only success bodies).
                let status = answer.as_ref().map_or(200, |(status, _)| *status);
                let kind = if e.is_timeout() {
                    TransportKind::Timeout
                } else {
                    TransportKind::Body
                };
                Err(transport(kind, e, Ending::BodyLost(status)))
            }
            RawError::InvalidUpgrade(e) => Err(transport(TransportKind::Request, e, Ending::Lost)),
            RawError::InvalidResponsePayload(bytes, _) => {
                // The answer's status and headers went to the scope before the body was read
                // (`api_raw::support::from_response`).
                let (status, headers) = answer.unwrap_or((200, HeaderMap::new()));
                let body = String::from_utf8_lossy(&bytes);
                decoded(
                    decode_success(op, status, headers, &body, attempt, span),
                    status,
                )
            }
            RawError::ErrorResponse(value) => {
                let status = value.status().as_u16();
                let mut error = api_error(op.id, status, value.headers(), "", attempt, &redactor);
                let ending = Ending::Status(status);
                error.outcome_unknown = ending.leaves_outcome_unknown(op.idempotency);
                Err(Failure {
                    error: error.into(),
                    ending,
                    wait: None,
                })
            }
            RawError::InvalidRequest(message) | RawError::Custom(message) => Err(Failure {
                error: Error::Config(ConfigError(format!(
                    "{}: cannot build the request: {}",
                    op.id,
                    redactor.text(&message)
                ))),
                ending: Ending::NotSent,
                wait: None,
            }),
        }
    }

    /// The client's redactor, with the request's secret values added when it has any.
    fn redactor_for(&self, secrets: &[&str]) -> Cow<'_, Redactor> {
        if secrets.is_empty() {
            return Cow::Borrowed(&self.redactor);
        }
        let mut redactor = (*self.redactor).clone();
        secrets.iter().for_each(|secret| redactor.add(secret));
        Cow::Owned(redactor)
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
    /// The rate limit's slot the last attempt went on: a 429 to it cuts the rate only when no
    /// other 429 cut it since that slot was booked.
    slot: Mutex<Option<Booked>>,
}

impl Call {
    /// The last attempt goes on `slot`.
    fn sent_on(&self, slot: Booked) {
        if let Ok(mut held) = self.slot.lock() {
            *held = Some(slot);
        }
    }

    /// The slot the last attempt went on, when the limit gave one.
    fn slot(&self) -> Option<Booked> {
        self.slot.lock().ok().and_then(|held| *held)
    }
}

/// The end of a call whose send check refused an attempt: [`Error::Withheld`] when nothing was sent
/// yet, else the error of the last attempt that was (the check only stopped a retry).
fn withheld(op: &'static Operation, call: &Call, reason: String) -> Error {
    let earlier = call.last_error.lock().ok().and_then(|mut e| e.take());
    tracing::debug!(operation = op.id, %reason, "not sent: the send check refused");
    earlier.unwrap_or_else(|| Error::Withheld {
        operation: op.id,
        reason,
    })
}

/// Reads at most `limit` bytes of a body; the rest is never read. A body that breaks off gives what
/// came before the break.
async fn read_bounded(mut response: reqwest::Response, limit: usize) -> String {
    let mut bytes = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        let room = limit.saturating_sub(bytes.len());
        bytes.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if bytes.len() >= limit {
            break;
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
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
    exchanged: Box<Attempt<std::result::Result<ResponseValue<T>, RawError<()>>>>,
    attempt: u32,
    span: &tracing::Span,
) -> std::result::Result<Response<T>, Box<(RawError<()>, Option<(u16, HeaderMap)>)>> {
    let Attempt { output, answer, .. } = *exchanged;
    match output {
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
    // The generated decode moved the headers to the scope (`api_raw::support::from_response`):
    // take them; a value decoded elsewhere (an empty answer) still carries its own.
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
    span.record("http.response.status_code", status);
    if let Some(id) = &request_id {
        span.record("cloud_api.request_id", id.as_str());
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
                    .with_request_id(request_id())
                    .with_status(status),
            )),
        };
    }
    let mut deserializer = serde_json::Deserializer::from_str(body);
    match serde_path_to_error::deserialize::<_, T>(&mut deserializer) {
        Ok(value) => Ok(finish(value, status, headers, attempt, span)),
        Err(e) => Err(Error::Decode(
            DecodeError::new(op.id, e.path().to_string(), e.into_inner().to_string())
                .with_request_id(request_id())
                .with_status(status),
        )),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::{Credentials, RateLimit};

    fn runtime(limit: Option<RateLimit>) -> Runtime {
        let config = Config::builder("http://127.0.0.1:1")
            .credentials(Credentials::basic("key-1", "secret-1"))
            .rate_limit(limit)
            .config()
            .unwrap();
        Runtime::new(config).unwrap()
    }

    #[tokio::test(flavor = "current_thread")]
    async fn the_rate_limiter_is_the_clients_own_and_shared_by_its_clones() {
        assert!(runtime(None).rate_limiter().is_none());
        let limited = runtime(Some(RateLimit::new(10, Duration::from_secs(1)).unwrap()));
        let clone = limited.with_retry(crate::RetryPolicy::disabled());
        // A 429 of one's own, told to the clone's limiter, holds the client's next slot back.
        clone
            .rate_limiter()
            .unwrap()
            .throttled(Some(Duration::from_millis(300)))
            .await;
        let waited = limited.rate_limiter().unwrap().acquire().await;
        assert!(waited >= Duration::from_millis(250), "{waited:?}");
    }

    #[test]
    fn what_a_client_learns_its_clones_know() {
        let first = runtime(None);
        let clone = first.with_retry(crate::RetryPolicy::disabled());
        assert!(first.learned().learn_command_less_read_refused());
        assert!(clone.learned().refuses_command_less_read());
    }
}
