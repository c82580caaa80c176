//! The one error type of the SDK, and what each kind of failure carries.

use std::fmt;
use std::time::Duration;

use crate::ids::IdError;

/// `Result` with the SDK's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in a call. No variant ever contains a secret: neither credentials nor
/// request bodies are kept, and response bodies only in truncated form for error answers.
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
        "{operation}: gave up after {elapsed:?} and {attempts} attempt(s); the operation timeout is {limit:?}"
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
    },
    /// The client configuration is unusable.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// An identifier that does not parse.
    #[error(transparent)]
    InvalidId(#[from] IdError),
    /// A waiter stopped: the pipe failed, or the time ran out.
    #[cfg(feature = "management")]
    #[error(transparent)]
    Wait(#[from] crate::management::WaitError),
}

impl ApiError {
    /// Replaces every occurrence of `secret` in the message and the raw body with `[REDACTED]`, for
    /// servers that echo what they were sent. Values shorter than four characters are left alone.
    pub fn redact(&mut self, secret: &str) {
        if secret.len() >= 4 {
            self.message = self.message.replace(secret, "[REDACTED]");
            self.body = self.body.replace(secret, "[REDACTED]");
        }
    }
}

impl From<ApiError> for Error {
    fn from(error: ApiError) -> Self {
        Error::Api(Box::new(error))
    }
}

impl Error {
    /// Removes these secret values from the text of an API error (see [`ApiError::redact`]).
    pub fn redact<'a>(&mut self, secrets: impl IntoIterator<Item = &'a str>) {
        if let Error::Api(error) = self {
            secrets.into_iter().for_each(|secret| error.redact(secret));
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

    /// The server's request id, when the server answered.
    pub fn request_id(&self) -> Option<&str> {
        self.as_api().and_then(|e| e.request_id.as_deref())
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

    /// A timeout: of the whole operation, of the last attempt, or of a waiter.
    pub fn is_timeout(&self) -> bool {
        match self {
            Error::Timeout { .. } => true,
            Error::Transport(e) => e.kind == TransportKind::Timeout,
            #[cfg(feature = "management")]
            Error::Wait(e) => e.is_timeout(),
            _ => false,
        }
    }
}

/// The most of an error body the SDK keeps, in bytes.
pub const MAX_ERROR_BODY: usize = 4096;

/// An error answer of the server.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ApiError {
    /// The operation id, e.g. `createPipe`.
    pub operation: &'static str,
    /// The HTTP status.
    pub status: u16,
    /// The error code of the management API (`FAILED_DEPENDENCY`, ...); `None` when the body has none.
    pub code: Option<String>,
    /// The error text: the part after the code, the observability `message`, or the plain-text body.
    pub message: String,
    /// The server's request id (envelope `requestId` or the `x-request-id` header).
    pub request_id: Option<String>,
    /// The raw body, at most [`MAX_ERROR_BODY`] bytes (HTML and plain-text answers included).
    pub body: String,
    /// How long the server asked the client to wait (`Retry-After`, `X-RateLimit-Reset`).
    pub retry_after: Option<Duration>,
    /// Attempts made, retries included.
    pub attempts: u32,
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: HTTP {}", self.operation, self.status)?;
        if let Some(code) = &self.code {
            write!(f, " {code}")?;
        }
        if !self.message.is_empty() {
            write!(f, ": {}", self.message)?;
        }
        if let Some(id) = &self.request_id {
            write!(f, " (request id {id})")?;
        }
        if self.attempts > 1 {
            write!(f, " after {} attempts", self.attempts)?;
        }
        Ok(())
    }
}

impl std::error::Error for ApiError {}

/// A success answer whose body does not match the expected shape.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{operation}: cannot decode the response at `{path}`: {message}")]
#[non_exhaustive]
pub struct DecodeError {
    /// The operation id.
    pub operation: &'static str,
    /// JSON path of the field that failed, e.g. `result.scaling.replicaCpuMillicores` (`.` for the root).
    pub path: String,
    /// What was wrong.
    pub message: String,
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
#[error("{operation}: {kind:?} error on attempt {attempt}: {source}")]
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
        let err = ApiError {
            operation: "createPipe",
            status: 424,
            code: Some("FAILED_DEPENDENCY".into()),
            message: "service is stopped".into(),
            request_id: Some("91021324-3546-4f70-8182-930415263748".into()),
            body: String::new(),
            retry_after: None,
            attempts: 1,
        };
        assert_eq!(
            err.to_string(),
            "createPipe: HTTP 424 FAILED_DEPENDENCY: service is stopped (request id 91021324-3546-4f70-8182-930415263748)"
        );
        assert!(Error::from(err).is_service_not_running());
    }
}
