//! [`Runtime`]: runs generated operations with rate limiting, retries, timeouts, tracing and error
//! decoding.

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use progenitor_client::{Error as RawError, ResponseValue};
use reqwest::header::{HeaderMap, HeaderValue};
use tracing::Instrument;

use crate::config::Config;
use crate::error::{ConfigError, DecodeError, Error, Result, TransportError, TransportKind};
use crate::error_body::{REQUEST_ID_HEADER, api_error, server_wait};
use crate::operation::{Idempotency, Operation, ResponseBody};
use crate::response::{Response, ResponseMeta};
use crate::retry::RetryPolicy;

/// The HTTP client and policies behind a facade client. Cheap to clone: clones share the connection
/// pool and the rate limiter.
#[derive(Clone)]
pub struct Runtime {
    config: Arc<Config>,
    http: reqwest::Client,
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
}

impl Runtime {
    /// Builds the HTTP client (rustls, timeouts, user agent, sensitive `Authorization` header).
    pub fn new(config: Config) -> Result<Self, ConfigError> {
        let mut headers = HeaderMap::new();
        headers.insert(
            reqwest::header::AUTHORIZATION,
            config.credentials.header_value()?,
        );
        let user_agent = HeaderValue::from_str(&config.user_agent)
            .map_err(|_| ConfigError(format!("invalid user agent {:?}", config.user_agent)))?;
        headers.insert(reqwest::header::USER_AGENT, user_agent);
        let http = reqwest::Client::builder()
            .default_headers(headers)
            .connect_timeout(config.connect_timeout)
            .timeout(config.attempt_timeout)
            .build()
            .map_err(|e| ConfigError(format!("cannot build the HTTP client: {e}")))?;
        Ok(Self {
            config: Arc::new(config),
            http,
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
            limiter.acquire().instrument(span.clone()).await;
        }
        let started = Instant::now();
        let attempts = AtomicU32::new(0);
        let limit = self.config.operation_timeout;
        let run = self
            .attempts(op, send, started, &attempts, &span)
            .instrument(span.clone());
        let result = match tokio::time::timeout(limit, run).await {
            Ok(result) => result,
            Err(_) => Err(Error::Timeout {
                operation: op.id,
                attempts: attempts.load(Ordering::Relaxed),
                elapsed: started.elapsed(),
                limit,
            }),
        };
        span.record("duration_ms", started.elapsed().as_millis() as u64);
        result
    }

    async fn attempts<T, F, Fut>(
        &self,
        op: &'static Operation,
        mut send: F,
        started: Instant,
        attempts: &AtomicU32,
        span: &tracing::Span,
    ) -> Result<Response<T>>
    where
        T: ResponseBody,
        F: FnMut() -> Fut,
        Fut: Future<Output = std::result::Result<ResponseValue<T>, RawError<()>>>,
    {
        let policy = &self.config.retry;
        loop {
            let attempt = attempts.fetch_add(1, Ordering::Relaxed) + 1;
            span.record("attempt", attempt);
            if attempt > 1
                && let Some(limit) = &self.config.rate_limit
            {
                limit.acquire().await;
            }
            let failure = match send().await {
                Ok(value) => return Ok(success(value, attempt, span)),
                Err(raw) => match self.classify(op, raw, attempt, span).await {
                    Ok(response) => return Ok(response),
                    Err(failure) => failure,
                },
            };
            if !failure.retryable || attempt >= policy.max_attempts {
                return Err(failure.error);
            }
            let delay = failure.wait.unwrap_or_else(|| policy.backoff(attempt));
            let spent = started.elapsed() + delay;
            if spent > policy.max_elapsed || spent > self.config.operation_timeout {
                tracing::debug!(
                    attempt,
                    delay_ms = delay.as_millis() as u64,
                    "not retrying: the wait would exceed the time budget"
                );
                return Err(failure.error);
            }
            tracing::debug!(attempt, delay_ms = delay.as_millis() as u64, error = %failure.error, "retrying");
            tokio::time::sleep(delay).await;
        }
    }

    /// Sorts a failed attempt; an unexpected 2xx or a tolerated empty body still ends as a success.
    async fn classify<T: ResponseBody>(
        &self,
        op: &'static Operation,
        raw: RawError<()>,
        attempt: u32,
        span: &tracing::Span,
    ) -> std::result::Result<Response<T>, Failure> {
        let idempotent = op.idempotency == Idempotency::Idempotent;
        let transport = |kind, source| {
            Error::Transport(TransportError {
                operation: op.id,
                attempt,
                kind,
                source,
            })
        };
        match raw {
            RawError::UnexpectedResponse(response) => {
                let status = response.status().as_u16();
                span.record("status", status);
                let headers = response.headers().clone();
                let body = match response.text().await {
                    Ok(body) => body,
                    Err(e) => {
                        return Err(Failure {
                            error: transport(TransportKind::Body, e),
                            retryable: idempotent,
                            wait: None,
                        });
                    }
                };
                if (200..300).contains(&status) {
                    return decode_success(op, status, headers, &body, attempt, span).map_err(
                        |error| Failure {
                            error,
                            retryable: false,
                            wait: None,
                        },
                    );
                }
                let mut error = api_error(op.id, status, &headers, &body, attempt);
                error.redact(self.config.credentials.secret());
                if let Some(id) = &error.request_id {
                    span.record("request_id", id.as_str());
                }
                let retryable = status == 429 || (idempotent && matches!(status, 502..=504));
                let wait = if retryable {
                    server_wait(status, &headers)
                } else {
                    None
                };
                Err(Failure {
                    error: error.into(),
                    retryable,
                    wait,
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
                let retryable = kind == TransportKind::Connect || idempotent;
                Err(Failure {
                    error: transport(kind, e),
                    retryable,
                    wait: None,
                })
            }
            RawError::ResponseBodyError(e) => {
                let kind = if e.is_timeout() {
                    TransportKind::Timeout
                } else {
                    TransportKind::Body
                };
                Err(Failure {
                    error: transport(kind, e),
                    retryable: idempotent,
                    wait: None,
                })
            }
            RawError::InvalidUpgrade(e) => Err(Failure {
                error: transport(TransportKind::Request, e),
                retryable: false,
                wait: None,
            }),
            RawError::InvalidResponsePayload(bytes, _) => {
                let body = String::from_utf8_lossy(&bytes);
                decode_success(op, 200, HeaderMap::new(), &body, attempt, span).map_err(|error| {
                    Failure {
                        error,
                        retryable: false,
                        wait: None,
                    }
                })
            }
            RawError::ErrorResponse(value) => {
                let status = value.status().as_u16();
                let error = api_error(op.id, status, value.headers(), "", attempt);
                Err(Failure {
                    error: error.into(),
                    retryable: false,
                    wait: None,
                })
            }
            RawError::InvalidRequest(message) | RawError::Custom(message) => Err(Failure {
                error: Error::Config(ConfigError(format!(
                    "{}: cannot build the request: {message}",
                    op.id
                ))),
                retryable: false,
                wait: None,
            }),
        }
    }
}

fn request_id_of<T: ResponseBody>(headers: &HeaderMap, value: &T) -> Option<String> {
    headers
        .get(REQUEST_ID_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
        .or_else(|| value.request_id())
}

fn success<T: ResponseBody>(
    value: ResponseValue<T>,
    attempt: u32,
    span: &tracing::Span,
) -> Response<T> {
    let status = value.status().as_u16();
    let headers = value.headers().clone();
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
    if body.trim().is_empty() {
        return match T::empty() {
            Some(value) => Ok(finish(value, status, headers, attempt, span)),
            None => Err(Error::Decode(DecodeError {
                operation: op.id,
                path: ".".into(),
                message: "the answer has an empty body".into(),
            })),
        };
    }
    let mut deserializer = serde_json::Deserializer::from_str(body);
    match serde_path_to_error::deserialize::<_, T>(&mut deserializer) {
        Ok(value) => Ok(finish(value, status, headers, attempt, span)),
        Err(e) => Err(Error::Decode(DecodeError {
            operation: op.id,
            path: e.path().to_string(),
            message: e.into_inner().to_string(),
        })),
    }
}
