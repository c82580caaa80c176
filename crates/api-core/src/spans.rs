//! The `tracing` spans of a call, named and filled as OpenTelemetry's stable HTTP conventions say,
//! so that `tracing-opentelemetry` turns them into conformant spans with no other code.
//!
//! | span (`tracing` name) | `otel.kind` | `otel.name` | covers |
//! |---|---|---|---|
//! | `api.call` | `internal` | the operation (`createPipe`) | the whole call: its rate-limit waits, attempts and backoffs |
//! | `api.attempt` | `client` | `{method} {url.template}` | one HTTP request: sending, the answer read and sorted |
//! | `api.rate_limit` | `internal` | `rate limit` | a wait for a slot of the client-side rate limit |
//! | `api.rate_limit.throttled` | `internal` | `rate limit throttled` | a 429 told to everyone who shares the limit |
//! | `api.backoff` | `internal` | `backoff` | the sleep before a retry |
//! | `api.wait` | `internal` | `wait pipe`, `wait service` | a waiter: its polls (each an `api.call`) and its sleeps |
//! | `api.wait.sleep` | `internal` | `wait sleep` | a waiter's sleep between two polls |
//!
//! Attributes named by the conventions keep their names; the SDK's own are `cloud_api.*`, as its
//! metrics' are.
//!
//! - **call**: `cloud_api.operation`, `http.request.method`, `url.template`,
//!   `cloud_api.organization_id`, `cloud_api.service_id`, `cloud_api.pipe_id` and
//!   `cloud_api.resource_id` (the path's ids, where it has them), `cloud_api.attempts`,
//!   `http.response.status_code` and `cloud_api.request_id` (the last answer's), and on a failure
//!   `error.type` and the `error` status: `cancelled` for a call the caller dropped; none for a 404
//!   the caller expects ([`expecting_not_found`]: `get_opt`, `delete_if_exists`, a wait's
//!   tolerated 404 and the one that ends a wait for a deletion).
//! - **attempt**: `http.request.method`, `server.address` and `server.port` (from the span's
//!   start), `url.full` (recorded when the request is built, before it is sent: an attempt cut
//!   short has it; the URL as sent, user information as `REDACTED:REDACTED`, the values of secret-named query members and
//!   the client's and the request's secrets replaced by the SDK's one redaction rule),
//!   `url.template`, `http.response.status_code`, `http.request.resend_count` on a resend only (1 on
//!   the first retry), and on a failure (a 4xx, a 5xx, no answer, or the operation's time running
//!   out) `error.type` and the `error` status. `error.type` takes the metrics' values: the status
//!   for an error answer, else `connect`, `timeout`, `request`, `body`, `decode`, `validation`,
//!   `withheld` or `_OTHER`; and `cancelled` for an attempt the caller dropped (a `select!`, a timeout of its
//!   own).
//! - **rate limit**: `cloud_api.rate_limit.store` (the store that answered: `process`, `host` or
//!   `redis`; the host store when Redis could not, the process when the host file could not),
//!   `cloud_api.rate_limit.blocked` (whether a 429's block held the slot back) and
//!   `cloud_api.rate_limit.wait_ms`.
//! - **backoff**: `cloud_api.attempt` (the attempt that failed), `cloud_api.backoff.delay_ms` and
//!   `cloud_api.backoff.reason` (`retry-after` when the server said how long, else `status 503`,
//!   `connect`, `timeout`, ...).
//! - **wait**: `cloud_api.wait.target` (`Running`, `stopped`, a condition's description); a wait
//!   that fails has the `error` status. **wait sleep**: `cloud_api.wait.delay_ms`.
//!
//! A success leaves a span's status unset, as the conventions ask of a library. No span holds a
//! header value, a body, a key or a token.

use std::time::Duration;

use api_raw::support::redact::Redactor;
use tracing::Span;
use tracing::field::Empty;

use crate::error::Error;
use crate::metrics::error_type;
use crate::operation::Operation;

/// The span of one call, named after its operation.
pub(crate) fn call(op: &'static Operation) -> Span {
    tracing::info_span!(
        "api.call",
        otel.name = op.id,
        otel.kind = "internal",
        otel.status_code = Empty,
        cloud_api.operation = op.id,
        http.request.method = op.method,
        url.template = op.path,
        cloud_api.organization_id = Empty,
        cloud_api.service_id = Empty,
        cloud_api.pipe_id = Empty,
        cloud_api.resource_id = Empty,
        cloud_api.attempts = Empty,
        http.response.status_code = Empty,
        cloud_api.request_id = Empty,
        error.type = Empty,
    )
}

/// The span of one attempt (an HTTP request), a child of the current span (the call's), with the
/// server it goes to (`server.address`, `server.port`) from its start: before any sampler or
/// exporter reads it, and on an attempt cut short too. `url.full` is recorded when the request is
/// built, before it is sent ([`record_url`]).
pub(crate) fn attempt(op: &'static Operation, attempt: u32, server: Option<(&str, u16)>) -> Span {
    let span = tracing::info_span!(
        "api.attempt",
        otel.name = Empty,
        otel.kind = "client",
        otel.status_code = Empty,
        http.request.method = op.method,
        server.address = Empty,
        server.port = Empty,
        url.full = Empty,
        url.template = op.path,
        http.request.resend_count = Empty,
        http.response.status_code = Empty,
        error.type = Empty,
    );
    if !span.is_disabled() {
        span.record("otel.name", format!("{} {}", op.method, op.path));
        if let Some((host, port)) = server {
            span.record("server.address", host);
            span.record("server.port", port);
        }
        // Absent on the first attempt, as the conventions say.
        if attempt > 1 {
            span.record("http.request.resend_count", attempt - 1);
        }
    }
    span
}

/// Records what the request's URL says on the attempt span, and the path's ids on the call span.
/// `redactor` holds the client's secrets and the request's.
pub(crate) fn record_url(
    attempt: &Span,
    call: &Span,
    op: &Operation,
    url: &reqwest::Url,
    redactor: &Redactor,
) {
    if let Some(host) = url.host_str() {
        attempt.record("server.address", host);
    }
    if let Some(port) = url.port_or_known_default() {
        attempt.record("server.port", port);
    }
    attempt.record("url.full", full_url(url, redactor).as_str());
    for (name, value) in path_ids(op.path, url.path()) {
        let field = match name {
            "organizationId" => "cloud_api.organization_id",
            "serviceId" => "cloud_api.service_id",
            "pipeId" => "cloud_api.pipe_id",
            _ => "cloud_api.resource_id",
        };
        call.record(field, value);
    }
}

/// The URL as `url.full` shows it: as sent, its user information as `REDACTED:REDACTED` (the
/// conventions' form), then through the one redaction rule (secret-named query members, URI
/// passwords, the secrets `redactor` knows).
fn full_url(url: &reqwest::Url, redactor: &Redactor) -> String {
    if url.username().is_empty() && url.password().is_none() {
        return redactor.text(url.as_str()).into_owned();
    }
    let rest = &url[url::Position::BeforeHost..];
    format!(
        "{}://REDACTED:REDACTED@{}",
        url.scheme(),
        redactor.text(rest)
    )
}

/// The values of a path template's `{name}` segments in `path`, in order; none when the path does
/// not fit the template.
fn path_ids<'a>(template: &'a str, path: &'a str) -> Vec<(&'a str, &'a str)> {
    let (template, path) = (template.trim_matches('/'), path.trim_matches('/'));
    if template.split('/').count() != path.split('/').count() {
        return Vec::new();
    }
    template
        .split('/')
        .zip(path.split('/'))
        .filter_map(|(part, value)| {
            let name = part.strip_prefix('{')?.strip_suffix('}')?;
            Some((name, value))
        })
        .collect()
}

tokio::task_local! {
    static NOT_FOUND_EXPECTED: ();
}

/// Runs `future` with a 404 to its calls expected (`get_opt`, the delete of a pipe that may be
/// gone, a wait for a deletion): their call spans record the status but no error. An attempt's
/// span still marks the 404 an error, as the HTTP conventions ask of a client span.
///
/// ```no_run
/// # async fn run(pipe_gone: impl std::future::Future<Output = ()>) {
/// api_core::spans::expecting_not_found(pipe_gone).await;
/// # }
/// ```
pub async fn expecting_not_found<F: std::future::Future>(future: F) -> F::Output {
    NOT_FOUND_EXPECTED.scope((), future).await
}

/// The error a call's span records for `error`: none for a 404 the caller expects.
pub(crate) fn call_error(error: Option<&Error>) -> Option<&Error> {
    error.filter(|error| !(error.is_not_found() && NOT_FOUND_EXPECTED.try_with(|()| ()).is_ok()))
}

/// Records how a call or an attempt ended: the answer's status, and for a failure its `error.type`
/// and the `error` status. A success leaves the status unset.
pub(crate) fn record_end(span: &Span, status: Option<u16>, error: Option<&Error>) {
    if span.is_disabled() {
        return;
    }
    if let Some(status) = status {
        span.record("http.response.status_code", status);
    }
    if let Some(error) = error {
        span.record("error.type", error_type(error).as_str());
        span.record("otel.status_code", "error");
    }
}

/// A call's or an attempt's span that says how its work ended even when it is dropped before
/// [`finish`](Self::finish): `timeout` when the operation's deadline passed, else `cancelled` (the
/// caller dropped the call: a `select!`, a timeout of its own).
pub(crate) struct SpanEnd {
    span: Span,
    ended: bool,
    deadline: Option<tokio::time::Instant>,
}

impl SpanEnd {
    pub(crate) fn new(span: Span, deadline: Option<tokio::time::Instant>) -> Self {
        Self {
            span,
            ended: false,
            deadline,
        }
    }

    pub(crate) fn span(&self) -> &Span {
        &self.span
    }

    /// Records how the work ended (see [`record_end`]).
    pub(crate) fn finish(&mut self, status: Option<u16>, error: Option<&Error>) {
        record_end(&self.span, status, error);
        self.ended = true;
    }
}

impl Drop for SpanEnd {
    fn drop(&mut self) {
        if !self.ended && !self.span.is_disabled() {
            let timed_out = self
                .deadline
                .is_some_and(|deadline| tokio::time::Instant::now() >= deadline);
            let kind = if timed_out { "timeout" } else { "cancelled" };
            self.span.record("error.type", kind);
            self.span.record("otel.status_code", "error");
        }
    }
}

/// The span of a wait for a slot of the client-side rate limit.
pub(crate) fn rate_limit() -> Span {
    tracing::info_span!(
        "api.rate_limit",
        otel.name = "rate limit",
        otel.kind = "internal",
        cloud_api.rate_limit.store = Empty,
        cloud_api.rate_limit.blocked = Empty,
        cloud_api.rate_limit.wait_ms = Empty,
    )
}

/// The span of a 429 told to the store of the rate limit, which holds back everyone who shares it.
pub(crate) fn throttled() -> Span {
    tracing::info_span!(
        "api.rate_limit.throttled",
        otel.name = "rate limit throttled",
        otel.kind = "internal",
    )
}

/// The span of the sleep before retry `attempt + 1` after `error`, with why it sleeps: the
/// server's wait (`retry-after`) or the backoff after a status or a failure.
pub(crate) fn backoff(attempt: u32, delay: Duration, error: &Error, server_wait: bool) -> Span {
    let span = tracing::info_span!(
        "api.backoff",
        otel.name = "backoff",
        otel.kind = "internal",
        cloud_api.attempt = attempt,
        cloud_api.backoff.delay_ms = millis(delay),
        cloud_api.backoff.reason = Empty,
    );
    if !span.is_disabled() {
        span.record(
            "cloud_api.backoff.reason",
            backoff_reason(error, server_wait).as_str(),
        );
    }
    span
}

/// Why a retry waits: `retry-after` when the server said how long, else the backoff after the
/// failure (`status 503`, `connect`, `timeout`, ...).
fn backoff_reason(error: &Error, server_wait: bool) -> String {
    if server_wait {
        return "retry-after".to_string();
    }
    match error {
        Error::Api(api) => format!("status {}", api.status),
        other => error_type(other),
    }
}

/// The span of a waiter on a `kind` (`pipe`, `service`) until `target` (`Running`, `stopped`, a
/// condition's description): a name of a few fixed values, the target as an attribute.
#[cfg(feature = "management")]
pub(crate) fn wait(kind: &'static str, target: &dyn std::fmt::Display) -> Span {
    let span = tracing::info_span!(
        "api.wait",
        otel.name = Empty,
        otel.kind = "internal",
        otel.status_code = Empty,
        cloud_api.wait.target = Empty,
    );
    if !span.is_disabled() {
        span.record(
            "otel.name",
            if kind == "pipe" {
                "wait pipe"
            } else {
                "wait service"
            },
        );
        span.record("cloud_api.wait.target", target.to_string());
    }
    span
}

/// Records how a wait ended: the `error` status when it failed, else nothing.
#[cfg(feature = "management")]
pub(crate) fn record_wait_end<T>(span: &Span, result: &Result<T, Error>) {
    if result.is_err() {
        span.record("otel.status_code", "error");
    }
}

/// The span of a waiter's sleep between two polls.
#[cfg(feature = "management")]
pub(crate) fn wait_sleep(delay: Duration) -> Span {
    tracing::info_span!(
        "api.wait.sleep",
        otel.name = "wait sleep",
        otel.kind = "internal",
        cloud_api.wait.delay_ms = millis(delay),
    )
}

/// A duration in whole milliseconds for a `tracing` field, saturating.
pub(crate) fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// The W3C `traceparent` and `tracestate` of `span` (an attempt span), when an OpenTelemetry
/// context is active for it (`tracing-opentelemetry` installed, cargo feature `otel`).
#[cfg(feature = "otel")]
pub(crate) fn trace_context(span: &Span) -> reqwest::header::HeaderMap {
    use opentelemetry::trace::TraceContextExt;
    use reqwest::header::{HeaderMap, HeaderValue};
    use tracing_opentelemetry::OpenTelemetrySpanExt;

    let mut headers = HeaderMap::new();
    if span.is_disabled() {
        return headers;
    }
    let context = span.context();
    let span_context = context.span().span_context().clone();
    if !span_context.is_valid() {
        return headers;
    }
    let parent = format!(
        "00-{}-{}-{:02x}",
        span_context.trace_id(),
        span_context.span_id(),
        span_context.trace_flags().to_u8()
    );
    if let Ok(value) = HeaderValue::from_str(&parent) {
        headers.insert("traceparent", value);
    }
    let state = span_context.trace_state().header();
    if !state.is_empty()
        && let Ok(value) = HeaderValue::from_str(&state)
    {
        headers.insert("tracestate", value);
    }
    headers
}

/// Without the `otel` feature no span has an OpenTelemetry context to send.
#[cfg(not(feature = "otel"))]
pub(crate) fn trace_context(_span: &Span) -> reqwest::header::HeaderMap {
    reqwest::header::HeaderMap::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_paths_ids_are_read_by_its_template() {
        let template =
            "/v1/organizations/{organizationId}/services/{serviceId}/clickpipes/{pipeId}";
        assert_eq!(
            path_ids(
                template,
                "/v1/organizations/o-1/services/s-2/clickpipes/p-3"
            ),
            vec![
                ("organizationId", "o-1"),
                ("serviceId", "s-2"),
                ("pipeId", "p-3")
            ]
        );
        assert!(path_ids(template, "/v1/organizations/o-1/services/s-2").is_empty());
        assert!(path_ids("/v1/alerts", "/v1/alerts").is_empty());
    }

    #[test]
    fn a_url_is_shown_without_user_information_or_secrets() {
        let redactor = Redactor::new().secret("hunter22-secret");
        let url: reqwest::Url =
            "https://app:pw-in-url@api.example.com:8443/v1/x?sig=abc123&limit=5&note=hunter22-secret"
                .parse()
                .unwrap();
        let shown = full_url(&url, &redactor);
        assert_eq!(
            shown,
            "https://REDACTED:REDACTED@api.example.com:8443/v1/x?sig=[REDACTED]&limit=5&note=[REDACTED]"
        );
        // As sent otherwise: no re-encoding of what the redaction leaves.
        let spaced: reqwest::Url = "http://h/v1/x?q=a%20b&r=c+d".parse().unwrap();
        assert_eq!(full_url(&spaced, &redactor), "http://h/v1/x?q=a%20b&r=c+d");
        let plain: reqwest::Url = "http://127.0.0.1:8080/v1/organizations/o".parse().unwrap();
        assert_eq!(
            full_url(&plain, &redactor),
            "http://127.0.0.1:8080/v1/organizations/o"
        );
    }

    #[test]
    fn a_backoff_says_why() {
        let busy: Error = crate::ApiError::new("getPipe", 503).into();
        assert_eq!(backoff_reason(&busy, false), "status 503");
        assert_eq!(backoff_reason(&busy, true), "retry-after");
    }
}
