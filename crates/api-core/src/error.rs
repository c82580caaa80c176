//! The one error type of the SDK, and what each kind of failure carries.

use std::fmt;
use std::time::Duration;

pub use crate::error_code::ErrorCode;
use crate::ids::IdError;
use crate::outcome::{Ending, idempotency_of, unknown_outcome_hint};

/// `Result` with the SDK's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in a call. No variant ever contains a secret: neither credentials nor
/// request bodies are kept, and error bodies only redacted and truncated.
///
/// Branch on [`code`](Error::code) for what the server said, on [`is_retryable`](Error::is_retryable)
/// for whether trying again is safe and may help, and on
/// [`is_outcome_unknown`](Error::is_outcome_unknown) for a create that may have happened without an
/// answer.
///
/// ```
/// use api_core::{Error, ErrorCode};
///
/// fn explain(error: &Error) -> &'static str {
///     if error.is_outcome_unknown() {
///         return "it may have been created: look before creating it again";
///     }
///     match error.code() {
///         Some(ErrorCode::NotFound) => "no such thing",
///         Some(ErrorCode::Unauthorized | ErrorCode::Forbidden) => "check the key",
///         Some(ErrorCode::FailedDependency) => "start the service first",
///         _ if error.is_retryable() => "try again later",
///         _ => "a bug or a bad request",
///     }
/// }
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The server answered with an error status.
    #[error(transparent)]
    Api(Box<ApiError>),
    /// The request was refused before anything was sent.
    #[error(transparent)]
    Validation(#[from] ValidationError),
    /// A success answer whose body does not decode.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// The connection failed or an attempt timed out.
    #[error(transparent)]
    Transport(#[from] TransportError),
    /// The whole operation, retries included, took longer than its limit.
    #[error(
        "{operation}: gave up after {elapsed:?} and {attempts} attempt(s); the operation timeout is {limit:?}{}",
        unknown_outcome_hint(operation, *.outcome_unknown)
    )]
    Timeout {
        /// The operation id.
        operation: &'static str,
        /// Attempts started.
        attempts: u32,
        /// Time spent.
        elapsed: Duration,
        /// The configured limit.
        limit: Duration,
        /// The error of the last finished attempt, if one failed before time ran out.
        last_error: Option<Box<Error>>,
        /// Whether a create was in flight when time ran out (see [`Error::is_outcome_unknown`]).
        outcome_unknown: bool,
    },
    /// Not sent: the client's send check ([`Runtime::with_send_check`](crate::Runtime::with_send_check))
    /// refused the call right before its first attempt would have left. Nothing reached the server.
    #[error("{operation}: not sent: {reason}")]
    Withheld {
        /// The operation id.
        operation: &'static str,
        /// What the check said.
        reason: String,
    },
    /// The client configuration is unusable.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// An identifier that does not parse.
    #[error(transparent)]
    InvalidId(#[from] IdError),
    /// A waiter stopped: the target cannot be reached, an error ended it, or the time ran out.
    #[cfg(feature = "management")]
    #[error(transparent)]
    Wait(#[from] crate::management::WaitError),
}

impl From<ApiError> for Error {
    fn from(error: ApiError) -> Self {
        Error::Api(Box::new(error))
    }
}

impl Error {
    /// Removes these secret values, in any encoding, from every text this error shows, nested errors
    /// included (see [`api_raw::support::redact`]).
    pub fn redact<'a>(&mut self, secrets: impl IntoIterator<Item = &'a str>) {
        let mut redactor = api_raw::support::redact::Redactor::new();
        secrets.into_iter().for_each(|secret| redactor.add(secret));
        self.redact_with(&redactor);
    }

    /// Applies `redactor` to every text this error shows, nested errors included.
    pub(crate) fn redact_with(&mut self, redactor: &api_raw::support::redact::Redactor) {
        match self {
            Error::Api(error) => error.redact_with(redactor),
            Error::Decode(error) => error.message = redactor.text(&error.message).into_owned(),
            Error::Timeout {
                last_error: Some(last),
                ..
            } => last.redact_with(redactor),
            Error::Withheld { reason, .. } => *reason = redactor.text(reason).into_owned(),
            #[cfg(feature = "management")]
            Error::Wait(crate::management::WaitError::PipeWaitInterrupted { source, .. }) => {
                source.redact_with(redactor)
            }
            _ => {}
        }
    }

    /// How the call ended, as far as trying again goes; `None` for what no retry can change
    /// (validation, configuration, an answer that does not decode, a waiter).
    fn ending(&self) -> Option<Ending> {
        match self {
            Error::Api(e) => Some(Ending::Status(e.status)),
            // A refused connection, a lost one and a body that broke off are all transient; which
            // of them leaves a create unknown is already in the transport error's flag.
            Error::Transport(_) | Error::Timeout { .. } => Some(Ending::Lost),
            _ => None,
        }
    }

    /// The HTTP status of an API error.
    pub fn status(&self) -> Option<u16> {
        self.as_api().map(|e| e.status)
    }

    /// The API error, if this is one (also when it ended a wait for a created pipe).
    pub fn as_api(&self) -> Option<&ApiError> {
        match self {
            Error::Api(e) => Some(e),
            #[cfg(feature = "management")]
            Error::Wait(crate::management::WaitError::PipeWaitInterrupted { source, .. }) => {
                source.as_api()
            }
            _ => None,
        }
    }

    /// What the server said, when it answered with an error: taken from the status and the body,
    /// never from the message text.
    pub fn code(&self) -> Option<&ErrorCode> {
        self.as_api().map(|e| &e.code)
    }

    /// The server's request id, when the server answered (with an error, or with a body that does not
    /// decode).
    pub fn request_id(&self) -> Option<&str> {
        match self {
            Error::Decode(e) => e.request_id.as_deref(),
            _ => self.as_api().and_then(|e| e.request_id.as_deref()),
        }
    }

    /// 404: the resource does not exist (or no longer).
    pub fn is_not_found(&self) -> bool {
        self.status() == Some(404)
    }

    /// 429: too many requests.
    pub fn is_rate_limited(&self) -> bool {
        self.status() == Some(429)
    }

    /// 424 `FAILED_DEPENDENCY`: a pipe create on a service that is not running.
    pub fn is_service_not_running(&self) -> bool {
        self.status() == Some(424)
    }

    /// 401: the credentials are missing or wrong.
    pub fn is_unauthorized(&self) -> bool {
        self.status() == Some(401)
    }

    /// 403: the credentials may not do this (a read-only key, another organization).
    pub fn is_forbidden(&self) -> bool {
        self.status() == Some(403)
    }

    /// 409: the request conflicts with the resource's state.
    pub fn is_conflict(&self) -> bool {
        self.status() == Some(409)
    }

    /// 400, or a validation error found before sending.
    pub fn is_invalid_request(&self) -> bool {
        matches!(self, Error::Validation(_)) || self.status() == Some(400)
    }

    /// A timeout: of the whole operation, of an attempt, or of a waiter.
    pub fn is_timeout(&self) -> bool {
        match self {
            Error::Timeout { .. } => true,
            Error::Transport(e) => e.kind == TransportKind::Timeout,
            #[cfg(feature = "management")]
            Error::Wait(e) => e.is_timeout(),
            _ => false,
        }
    }

    /// Whether the same call may succeed if made again, and making it again is safe: the ending is
    /// transient (a 429, a 502, 503 or 504, a refused or lost connection, a timeout) and the outcome
    /// is not unknown ([`is_outcome_unknown`](Self::is_outcome_unknown)): repeating a create that may
    /// have happened can duplicate it. The rule is [`outcome`](crate::outcome)'s table.
    pub fn is_retryable(&self) -> bool {
        !self.is_outcome_unknown() && self.ending().is_some_and(Ending::is_transient)
    }

    /// The operation (its `operationId`) the error ended, when it came from one.
    pub fn operation(&self) -> Option<&'static str> {
        match self {
            Error::Api(e) => Some(e.operation),
            Error::Decode(e) => Some(e.operation),
            Error::Transport(e) => Some(e.operation),
            Error::Timeout { operation, .. } | Error::Withheld { operation, .. } => Some(operation),
            _ => None,
        }
    }

    /// How to find out what happened, when the outcome is unknown
    /// ([`is_outcome_unknown`](Self::is_outcome_unknown)): the operation's `x-reconcile` in the
    /// spec ("The API cannot look a pipe up by name: ..."). `None` otherwise.
    pub fn reconcile(&self) -> Option<&'static str> {
        if !self.is_outcome_unknown() {
            return None;
        }
        api_raw::support::operation(self.operation()?).and_then(|op| op.reconcile)
    }

    /// Whether a call that is not idempotent (a create: the API has no idempotency key) may have
    /// been applied without an answer saying so: any ending other than one that proves nothing was
    /// applied (a 4xx of [`outcome`](crate::outcome)'s table, a 429, a refused connection, a request
    /// never sent). That covers every 5xx, a connection lost or timed out after sending, and a success
    /// whose body cannot be read or decoded. The SDK never repeats such a call; the error's `Display`
    /// says how to reconcile (the operation's `x-reconcile` in the spec).
    ///
    /// Always `false` for idempotent calls, which may simply be made again.
    pub fn is_outcome_unknown(&self) -> bool {
        match self {
            Error::Api(e) => e.outcome_unknown,
            Error::Decode(e) => e.outcome_unknown,
            Error::Transport(e) => e.outcome_unknown,
            Error::Timeout {
                outcome_unknown, ..
            } => *outcome_unknown,
            _ => false,
        }
    }
}

/// The most of an error body the SDK keeps, in bytes (after redaction).
pub const MAX_ERROR_BODY: usize = 4096;

/// The most of an error body the SDK reads, in bytes; the rest is never read.
pub const MAX_ERROR_READ: usize = 64 * 1024;

/// The most of an error message the SDK keeps, in bytes.
pub const MAX_ERROR_MESSAGE: usize = 1024;

/// An error answer of the server.
///
/// Build one in your own tests with [`ApiError::new`]:
///
/// ```
/// use api_core::{ApiError, Error, ErrorCode};
///
/// let error = Error::from(
///     ApiError::new("createPipe", 424)
///         .with_message("service is stopped")
///         .with_request_id("91021324-3546-4f70-8182-930415263748"),
/// );
/// assert_eq!(error.code(), Some(&ErrorCode::FailedDependency));
/// assert!(error.is_service_not_running() && !error.is_retryable());
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ApiError {
    /// The operation id, e.g. `createPipe`.
    pub operation: &'static str,
    /// The HTTP status.
    pub status: u16,
    /// What kind of error: the code of the body (`FAILED_DEPENDENCY`, ...), else the status's.
    pub code: ErrorCode,
    /// The error text: the part after the code, the observability `message`, or a summary of a
    /// plain-text or HTML body; at most [`MAX_ERROR_MESSAGE`] bytes, secrets redacted.
    pub message: String,
    /// The server's request id (envelope `requestId` or the `x-request-id` header).
    pub request_id: Option<String>,
    /// The raw body, secrets redacted, at most [`MAX_ERROR_BODY`] bytes (HTML and plain-text answers
    /// included).
    pub body: String,
    /// How long the server asked the client to wait (`Retry-After`, `X-RateLimit-Reset`).
    pub retry_after: Option<Duration>,
    /// Attempts made, retries included.
    pub attempts: u32,
    /// Whether this answer leaves the outcome of a call that is not idempotent unknown (any status
    /// that does not prove nothing was applied, a 5xx above all): see [`Error::is_outcome_unknown`].
    pub outcome_unknown: bool,
    /// Whether an earlier attempt of the same call may have taken effect (it timed out, lost its
    /// connection or met a gateway error) before this answer came: a 404 to a retried delete then
    /// most likely means that earlier attempt deleted it.
    pub follows_unknown_outcome: bool,
}

impl ApiError {
    /// An error answer of operation `operation` with `status`, its code taken from the status and
    /// its outcome from [`outcome`](crate::outcome)'s table and the operation's idempotency in the
    /// spec (`ApiError::new("createPipe", 500)` leaves the outcome unknown).
    pub fn new(operation: &'static str, status: u16) -> Self {
        Self {
            operation,
            status,
            code: ErrorCode::from_status(status),
            message: String::new(),
            request_id: None,
            body: String::new(),
            retry_after: None,
            attempts: 1,
            outcome_unknown: Ending::Status(status)
                .leaves_outcome_unknown(idempotency_of(operation)),
            follows_unknown_outcome: false,
        }
    }

    /// With this code (as the management API writes it, e.g. `FAILED_DEPENDENCY`).
    pub fn with_code(mut self, code: impl Into<ErrorCode>) -> Self {
        self.code = code.into();
        self
    }

    /// With this message.
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = message.into();
        self
    }

    /// With this request id.
    pub fn with_request_id(mut self, request_id: impl Into<String>) -> Self {
        self.request_id = Some(request_id.into());
        self
    }

    /// With this raw body.
    pub fn with_body(mut self, body: impl Into<String>) -> Self {
        self.body = body.into();
        self
    }

    /// With the wait the server asked for.
    pub fn with_retry_after(mut self, wait: Duration) -> Self {
        self.retry_after = Some(wait);
        self
    }

    /// After this many attempts.
    pub fn with_attempts(mut self, attempts: u32) -> Self {
        self.attempts = attempts;
        self
    }

    /// Overrides whether the outcome of the call is unknown.
    pub fn with_outcome_unknown(mut self, unknown: bool) -> Self {
        self.outcome_unknown = unknown;
        self
    }

    /// Replaces `secret`, in any encoding (see [`api_raw::support::redact`]), in the message and the
    /// raw body with `[REDACTED]`, for servers that echo what they were sent. Values shorter than four
    /// characters are left alone.
    pub fn redact(&mut self, secret: &str) {
        self.redact_with(&api_raw::support::redact::Redactor::new().secret(secret));
    }

    pub(crate) fn redact_with(&mut self, redactor: &api_raw::support::redact::Redactor) {
        self.message = redactor.text(&self.message).into_owned();
        self.body = redactor.text(&self.body).into_owned();
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: HTTP {} {}", self.operation, self.status, self.code)?;
        if !self.message.is_empty() {
            write!(f, ": {}", self.message)?;
        }
        if let Some(id) = &self.request_id {
            write!(f, " (request id {id})")?;
        }
        if self.attempts > 1 {
            write!(f, " after {} attempts", self.attempts)?;
        }
        f.write_str(&unknown_outcome_hint(self.operation, self.outcome_unknown))
    }
}

impl std::error::Error for ApiError {}

/// A success answer whose body does not match the expected shape.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct DecodeError {
    /// The operation id.
    pub operation: &'static str,
    /// JSON path of the field that failed, e.g. `result.scaling.replicaCpuMillicores` (`.` for the root).
    pub path: String,
    /// What was wrong.
    pub message: String,
    /// The server's request id of the answer, when it had one.
    pub request_id: Option<String>,
    /// The success status of the answer, when one came over HTTP.
    pub status: Option<u16>,
    /// Whether the server accepted a call that is not idempotent and the answer that would say what
    /// it made cannot be read (see [`Error::is_outcome_unknown`]).
    pub outcome_unknown: bool,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.outcome_unknown, self.status) {
            (true, Some(status)) => write!(
                f,
                "{}: the server accepted the request (HTTP {status}) but its answer cannot be decoded at `{}`: {}",
                self.operation, self.path, self.message
            )?,
            _ => write!(
                f,
                "{}: cannot decode the response at `{}`: {}",
                self.operation, self.path, self.message
            )?,
        }
        if let Some(id) = &self.request_id {
            write!(f, " (request id {id})")?;
        }
        f.write_str(&unknown_outcome_hint(self.operation, self.outcome_unknown))
    }
}

impl std::error::Error for DecodeError {}

impl DecodeError {
    /// A decode error of `operation` at the JSON path `path` (for tests of error handling).
    pub fn new(
        operation: &'static str,
        path: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            operation,
            path: path.into(),
            message: message.into(),
            request_id: None,
            status: None,
            outcome_unknown: false,
        }
    }

    /// With the server's request id of the answer.
    pub fn with_request_id(mut self, request_id: Option<String>) -> Self {
        self.request_id = request_id;
        self
    }

    /// Of an answer with this success status: the outcome of an operation that is not idempotent is
    /// then unknown by [`outcome`](crate::outcome)'s rule (the server accepted it; what it made is
    /// not known).
    pub fn with_status(mut self, status: u16) -> Self {
        self.status = Some(status);
        self.outcome_unknown =
            Ending::Undecodable(status).leaves_outcome_unknown(idempotency_of(self.operation));
        self
    }
}

/// What kind of transport failure happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TransportKind {
    /// The connection could not be made; nothing was sent.
    Connect,
    /// The attempt timed out.
    Timeout,
    /// The request failed after (part of) it was sent.
    Request,
    /// The response body could not be read.
    Body,
}

/// A transport failure of one attempt.
#[derive(Debug, thiserror::Error)]
#[error("{operation}: {kind:?} error on attempt {attempt}: {source}{}", unknown_outcome_hint(operation, *.outcome_unknown))]
#[non_exhaustive]
pub struct TransportError {
    /// The operation id.
    pub operation: &'static str,
    /// Which attempt failed (1-based).
    pub attempt: u32,
    /// What kind of failure.
    pub kind: TransportKind,
    /// The underlying error.
    #[source]
    pub source: reqwest::Error,
    /// Whether a create may have reached the server before the failure (see
    /// [`Error::is_outcome_unknown`]).
    pub outcome_unknown: bool,
}

/// An unusable configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid client configuration: {0}")]
pub struct ConfigError(pub String);

/// One problem found while validating a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Path of the field, e.g. `source.kafka.offset.timestamp`.
    pub path: String,
    /// What is wrong with it.
    pub message: String,
}

/// A request refused before sending, with every problem found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationError {
    /// What was validated, e.g. `pipe create request`.
    pub subject: &'static str,
    /// Every problem, in field order.
    pub problems: Vec<Problem>,
}

impl Problem {
    /// Whether the problem is at `path` or inside it (`scaling.replicas` is inside `scaling`, and
    /// `columns[0].name` inside `columns`): a mistake told at `path` already covers it.
    pub fn is_within(&self, path: &str) -> bool {
        self.path == path
            || self
                .path
                .strip_prefix(path)
                .is_some_and(|rest| rest.starts_with(['.', '[']))
    }
}

impl ValidationError {
    /// Whether a problem names this field path.
    pub fn has(&self, path: &str) -> bool {
        self.problems.iter().any(|p| p.path == path)
    }
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid {}: {} problem(s)",
            self.subject,
            self.problems.len()
        )?;
        for p in &self.problems {
            write!(f, "; {}: {}", p.path, p.message)?;
        }
        Ok(())
    }
}

impl std::error::Error for ValidationError {}

/// Collects validation problems, then turns them into a [`ValidationError`] if there are any.
#[derive(Debug, Default)]
pub struct Problems(Vec<Problem>);

impl Problems {
    /// An empty collection.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records a problem at `path`.
    pub fn add(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.0.push(Problem {
            path: path.into(),
            message: message.into(),
        });
    }

    /// Records a problem at `path` unless `ok`.
    pub fn check(&mut self, ok: bool, path: impl Into<String>, message: impl Into<String>) {
        if !ok {
            self.add(path, message);
        }
    }

    /// Records a problem unless `value` lies within `min..=max`.
    pub fn range<T: PartialOrd + fmt::Display + Copy>(
        &mut self,
        path: &str,
        value: Option<T>,
        min: T,
        max: Option<T>,
    ) {
        let Some(v) = value else { return };
        match max {
            Some(max) if v < min || v > max => {
                self.add(path, format!("must be between {min} and {max}, got {v}"))
            }
            None if v < min => self.add(path, format!("must be at least {min}, got {v}")),
            _ => {}
        }
    }

    /// The problems recorded, in order.
    #[cfg(feature = "management")]
    pub(crate) fn into_problems(self) -> Vec<Problem> {
        self.0
    }

    /// `Ok(())` when nothing was recorded, else the error.
    pub fn finish(self, subject: &'static str) -> Result<(), ValidationError> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(ValidationError {
                subject,
                problems: self.0,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_operation_and_how_to_reconcile_an_unknown_outcome() {
        let mut unknown = ApiError::new("createPipe", 500);
        unknown.outcome_unknown = true;
        let unknown = Error::from(unknown);
        assert_eq!(unknown.operation(), Some("createPipe"));
        let reconcile = unknown
            .reconcile()
            .expect("the spec's x-reconcile of createPipe");
        assert!(reconcile.contains("name"), "{reconcile}");
        // Known outcomes need no reconciling; errors of no operation have none.
        let known = Error::from(ApiError::new("createPipe", 400));
        assert_eq!(known.operation(), Some("createPipe"));
        assert_eq!(known.reconcile(), None);
        let timeout = Error::Timeout {
            operation: "getPipe",
            attempts: 1,
            elapsed: std::time::Duration::from_secs(1),
            limit: std::time::Duration::from_secs(1),
            last_error: None,
            outcome_unknown: false,
        };
        assert_eq!(timeout.operation(), Some("getPipe"));
        let config = Error::from(ConfigError("x".into()));
        assert_eq!((config.operation(), config.reconcile()), (None, None));
    }

    #[test]
    fn problems_are_all_reported() {
        let mut p = Problems::new();
        p.check(false, "name", "must not be empty");
        p.range("scaling.replicas", Some(50), 1, Some(40));
        p.range("settings.db_max_threads", Some(3), 0, Some(64));
        p.range("postgres.settings.pullBatchSize", Some(0), 1, None);
        let err = p.finish("pipe create request").unwrap_err();
        assert_eq!(err.problems.len(), 3);
        assert_eq!(
            err.to_string(),
            "invalid pipe create request: 3 problem(s); name: must not be empty; scaling.replicas: must be between 1 and 40, got 50; postgres.settings.pullBatchSize: must be at least 1, got 0"
        );
        assert!(err.has("scaling.replicas"));
    }

    #[test]
    fn api_error_display_names_operation_code_and_request_id() {
        let err = ApiError::new("createPipe", 424)
            .with_message("service is stopped")
            .with_request_id("91021324-3546-4f70-8182-930415263748");
        assert_eq!(
            err.to_string(),
            "createPipe: HTTP 424 FAILED_DEPENDENCY: service is stopped (request id 91021324-3546-4f70-8182-930415263748)"
        );
        assert!(Error::from(err).is_service_not_running());
    }

    #[cfg(feature = "management")]
    #[test]
    fn the_outcome_of_a_create_comes_from_the_one_table() {
        let create = |status| Error::from(ApiError::new("createPipe", status));
        for status in [500, 501, 502, 503, 504, 408, 410] {
            assert!(
                create(status).is_outcome_unknown() && !create(status).is_retryable(),
                "{status}"
            );
        }
        for status in [400, 401, 403, 404, 405, 409, 413, 422, 424] {
            assert!(
                !create(status).is_outcome_unknown() && !create(status).is_retryable(),
                "{status}"
            );
        }
        assert!(!create(429).is_outcome_unknown() && create(429).is_retryable());
        let undecodable =
            Error::from(DecodeError::new("createPipe", "result.id", "required").with_status(201));
        assert!(undecodable.is_outcome_unknown() && !undecodable.is_retryable());
        let text = undecodable.to_string();
        assert!(
            text.contains("the server accepted the request (HTTP 201)")
                && text.contains("inspect the service"),
            "{text}"
        );
        let read =
            Error::from(DecodeError::new("getPipe", "result.id", "required").with_status(200));
        assert!(!read.is_outcome_unknown() && !read.is_retryable());
        assert!(
            read.to_string()
                .starts_with("getPipe: cannot decode the response at `result.id`")
        );
    }

    #[cfg(feature = "management")]
    #[test]
    fn classification_follows_status_and_outcome() {
        let api = |status| Error::from(ApiError::new("getPipe", status));
        for status in [429, 502, 503, 504] {
            assert!(api(status).is_retryable(), "{status}");
        }
        for status in [400, 401, 403, 404, 409, 424, 500] {
            assert!(!api(status).is_retryable(), "{status}");
        }
        let unknown = Error::from(ApiError::new("createPipe", 504).with_outcome_unknown(true));
        assert!(unknown.is_outcome_unknown() && !unknown.is_retryable());
        assert_eq!(unknown.code(), Some(&ErrorCode::GatewayTimeout));
        let text = unknown.to_string();
        assert!(
            text.contains("may have reached the server") && text.contains("inspect the service"),
            "{text}"
        );
        assert!(!api(429).is_outcome_unknown() && !api(504).is_outcome_unknown());
        let code = Error::from(ApiError::new("getPipe", 400).with_code("QUOTA_EXCEEDED"));
        assert_eq!(code.code().map(ErrorCode::as_str), Some("QUOTA_EXCEEDED"));
        let timeout = Error::Timeout {
            operation: "createPipe",
            attempts: 1,
            elapsed: Duration::from_secs(1),
            limit: Duration::from_secs(1),
            last_error: None,
            outcome_unknown: true,
        };
        assert!(timeout.is_timeout() && timeout.is_outcome_unknown() && !timeout.is_retryable());
        let validation = Error::from(ValidationError {
            subject: "x",
            problems: vec![],
        });
        assert!(!validation.is_retryable() && !validation.is_outcome_unknown());
        assert_eq!(validation.code(), None);
    }

    fn transport(kind: TransportKind, error: reqwest::Error, outcome_unknown: bool) -> Error {
        Error::Transport(TransportError {
            operation: "getPipe",
            attempt: 1,
            kind,
            source: error,
            outcome_unknown,
        })
    }

    /// A real transport error (a refused connection) to wrap.
    async fn refused() -> reqwest::Error {
        crate::http_client_builder()
            .build()
            .unwrap()
            .get("http://127.0.0.1:1/")
            .send()
            .await
            .unwrap_err()
    }

    #[tokio::test]
    async fn every_kind_of_error_answers_the_predicates_by_its_ending() {
        let api = |status| Error::from(ApiError::new("getPipe", status).with_request_id("r-1"));
        let predicates = |e: &Error| {
            [
                e.is_not_found(),
                e.is_rate_limited(),
                e.is_service_not_running(),
                e.is_unauthorized(),
                e.is_forbidden(),
                e.is_conflict(),
                e.is_invalid_request(),
            ]
        };
        let table = [
            (404, 0),
            (429, 1),
            (424, 2),
            (401, 3),
            (403, 4),
            (409, 5),
            (400, 6),
        ];
        for (status, which) in table {
            let answers = predicates(&api(status));
            for (i, answer) in answers.iter().enumerate() {
                assert_eq!(*answer, i == which, "{status}: predicate {i}");
            }
        }
        let validation = Error::from(ValidationError {
            subject: "x",
            problems: vec![],
        });
        assert!(validation.is_invalid_request() && !validation.is_timeout());
        assert!(!api(500).is_timeout() && !api(500).is_invalid_request());
        assert_eq!(api(500).request_id(), Some("r-1"));
        let decode = Error::from(
            DecodeError::new("getPipe", "x", "bad").with_request_id(Some("r-2".into())),
        );
        assert_eq!(decode.request_id(), Some("r-2"));
        assert_eq!(decode.operation(), Some("getPipe"));
        assert!(!decode.is_retryable() && !decode.is_timeout());
        assert_eq!(Error::from(ConfigError("c".into())).request_id(), None);

        // Transport endings: refused and lost are transient; only a create that may have been sent
        // is unknown.
        let connect = transport(TransportKind::Connect, refused().await, false);
        assert!(connect.is_retryable() && !connect.is_timeout() && !connect.is_outcome_unknown());
        assert_eq!(connect.operation(), Some("getPipe"));
        let timed_out = transport(TransportKind::Timeout, refused().await, false);
        assert!(timed_out.is_timeout() && timed_out.is_retryable());
        let lost_create = transport(TransportKind::Request, refused().await, true);
        assert!(lost_create.is_outcome_unknown() && !lost_create.is_retryable());
        let body = transport(TransportKind::Body, refused().await, false);
        assert!(body.is_retryable() && !body.is_timeout());
        let timeout = Error::Timeout {
            operation: "getPipe",
            attempts: 2,
            elapsed: Duration::from_secs(1),
            limit: Duration::from_secs(1),
            last_error: None,
            outcome_unknown: false,
        };
        assert!(timeout.is_retryable() && timeout.is_timeout());
    }

    #[test]
    fn redaction_reaches_every_text_an_error_shows_nested_ones_too() {
        let leaky = || {
            ApiError::new("getPipe", 400)
                .with_message("bad key hunter22")
                .with_body(r#"{"error":"bad key hunter\u0032\u0032"}"#)
        };
        let mut api = Error::from(leaky());
        api.redact(["hunter22"]);
        let mut decode = Error::from(DecodeError::new("getPipe", "x", "invalid value hunter22"));
        decode.redact(["hunter22"]);
        let mut timeout = Error::Timeout {
            operation: "getPipe",
            attempts: 2,
            elapsed: Duration::from_secs(1),
            limit: Duration::from_secs(1),
            last_error: Some(Box::new(Error::from(leaky()))),
            outcome_unknown: false,
        };
        timeout.redact(["hunter22"]);
        let mut single = leaky();
        single.redact("hunter22");
        for shown in [
            format!("{api:?} {api}"),
            format!("{decode:?} {decode}"),
            format!("{timeout:?} {timeout}"),
            format!("{single:?} {single}"),
        ] {
            assert!(
                !shown.contains("hunter") && shown.contains("[REDACTED]"),
                "{shown}"
            );
        }
        #[cfg(feature = "management")]
        {
            let raw = serde_json::from_value(serde_json::json!({
                "id": "00000000-0000-4000-8000-000000000001",
                "serviceId": "00000000-0000-4000-8000-000000000002",
            }))
            .unwrap();
            let pipe =
                crate::management::Pipe::decode(raw, crate::decode::Path::Root("result")).unwrap();
            let mut waited = Error::Wait(crate::management::WaitError::PipeWaitInterrupted {
                target: "Running".into(),
                last_seen: Box::new(pipe),
                source: Box::new(Error::from(leaky())),
            });
            waited.redact(["hunter22"]);
            assert!(!format!("{waited:?}").contains("hunter"));
        }
    }

    #[test]
    fn display_names_the_attempts_only_when_there_were_several() {
        let once = ApiError::new("getPipe", 503).with_attempts(1).to_string();
        let twice = ApiError::new("getPipe", 503).with_attempts(2).to_string();
        assert!(!once.contains("attempts"), "{once}");
        assert!(twice.ends_with("after 2 attempts"), "{twice}");
        assert_eq!(MAX_ERROR_READ, 65_536);
        let problems = ValidationError {
            subject: "x",
            problems: vec![Problem {
                path: "a".into(),
                message: "m".into(),
            }],
        };
        assert!(problems.has("a") && !problems.has("b"));
        let mut range = Problems::new();
        range.range("min", Some(1), 1, None);
        range.range("max", Some(40), 1, Some(40));
        assert!(range.finish("x").is_ok(), "bounds are inclusive");
    }
}
