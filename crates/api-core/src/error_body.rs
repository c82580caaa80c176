//! Turning an error answer (JSON envelope, JSON message, HTML page or plain text) into an [`ApiError`].

use std::time::{Duration, SystemTime};

use api_raw::support::redact::Redactor;
use reqwest::header::HeaderMap;
use serde_json::Value;

use crate::error::{ApiError, ErrorCode, MAX_ERROR_BODY, MAX_ERROR_MESSAGE};

/// The request id header of both APIs.
pub const REQUEST_ID_HEADER: &str = "x-request-id";

/// [`REQUEST_ID_HEADER`] as a header name, for the lookup on every answer (a `&str` name is parsed and
/// hashed again at each lookup).
pub(crate) static REQUEST_ID: reqwest::header::HeaderName =
    reqwest::header::HeaderName::from_static(REQUEST_ID_HEADER);

/// Builds the error for an answer with `status`, `headers` and `body`. The body is redacted by
/// `redactor` (the one rule: secret values in any encoding, URI passwords, secret-named members)
/// before anything is taken from it or cut off, and the message taken from it again after it is
/// decoded, so no part of a secret survives in the message or the kept body.
pub(crate) fn api_error(
    operation: &'static str,
    status: u16,
    headers: &HeaderMap,
    body: &str,
    attempts: u32,
    redactor: &Redactor,
) -> ApiError {
    let body = redactor.text(body);
    let body = body.as_ref();
    let json: Option<Value> = serde_json::from_str(body).ok();
    let field = |name: &str| {
        json.as_ref()
            .and_then(|v| v.get(name))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let (code, message) = if let Some(error) = field("error") {
        split_code(&error)
    } else if let Some(message) = field("message") {
        (None, message)
    } else {
        (None, summarize(body, headers))
    };
    let message = redactor.text(&message);
    let mut error = ApiError::new(operation, status)
        .with_message(truncate(&message, MAX_ERROR_MESSAGE))
        .with_body(truncate(body, MAX_ERROR_BODY))
        .with_attempts(attempts);
    if let Some(code) = code {
        error.code = ErrorCode::from(code);
    }
    error.request_id = field("requestId").or_else(|| header(headers, &REQUEST_ID));
    error.retry_after = server_wait(status, headers);
    error
}

/// `FAILED_DEPENDENCY: service is stopped` -> (`FAILED_DEPENDENCY`, `service is stopped`).
fn split_code(error: &str) -> (Option<String>, String) {
    match error.split_once(':') {
        Some((code, text))
            if !code.is_empty()
                && code
                    .bytes()
                    .all(|b| b.is_ascii_uppercase() || b == b'_' || b.is_ascii_digit()) =>
        {
            (Some(code.to_string()), text.trim().to_string())
        }
        _ => (None, error.trim().to_string()),
    }
}

/// A one-line summary of a body that is not JSON: an HTML page's title, or the first line of text.
fn summarize(body: &str, headers: &HeaderMap) -> String {
    let content_type = header(headers, "content-type").unwrap_or_default();
    if content_type.contains("html") || body.trim_start().starts_with('<') {
        let lower = body.to_ascii_lowercase();
        let title = lower
            .find("<title>")
            .and_then(|start| {
                lower[start..]
                    .find("</title>")
                    .map(|end| (start + 7, start + end))
            })
            .and_then(|(from, to)| body.get(from..to))
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty());
        return match title {
            Some(title) => format!("{title} (an HTML page, not an API answer)"),
            None => "an HTML page, not an API answer".to_string(),
        };
    }
    let line = body
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or_default();
    truncate(line, 200)
}

/// A header's value as text, trimmed; `None` when absent or not text.
pub(crate) fn header(
    headers: &HeaderMap,
    name: impl reqwest::header::AsHeaderName,
) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim().to_string())
}

/// The longest wait taken from a server's answer; a longer one is cut to it.
const MAX_SERVER_WAIT: Duration = Duration::from_secs(3600);

/// A rate limit reset above this many seconds is a Unix time (2001-09-09), not a wait: no window
/// lasts thirty years.
const EPOCH_RESET: f64 = 1e9;

/// How long the server asks the client to wait: on a 429 `Retry-After`, else `X-RateLimit-Reset`,
/// else `RateLimit-Reset`; on a 503 only `Retry-After`. A value is seconds (fractions allowed) or,
/// for `Retry-After`, an HTTP-date (RFC 9110: IMF-fixdate, RFC 850 or asctime); a reset header above
/// [`EPOCH_RESET`] is the Unix time the window ends at (as GitHub's and many gateways' are). Dates
/// and times are counted from the answer's `Date` header when it has one (the server's clock), else
/// from this machine's clock. At most an hour. The reset headers say when the rate-limit window ends, which means nothing for other
/// answers (the observability API sends `RateLimit-Reset` on every answer).
pub(crate) fn server_wait(status: u16, headers: &HeaderMap) -> Option<Duration> {
    let names: &[&str] = match status {
        429 => &["retry-after", "x-ratelimit-reset", "ratelimit-reset"],
        503 => &["retry-after"],
        _ => &[],
    };
    names
        .iter()
        .filter_map(|name| header(headers, *name).map(|value| (*name, value)))
        .find_map(|(name, value)| match value.parse::<f64>() {
            Ok(at) if name != "retry-after" && at > EPOCH_RESET && at.is_finite() => {
                Some(until_epoch(at, headers))
            }
            Ok(secs) => (secs.is_finite() && secs >= 0.0)
                .then(|| Duration::from_secs_f64(secs.min(MAX_SERVER_WAIT.as_secs_f64()))),
            Err(_) if name == "retry-after" => until_date(&value, headers),
            Err(_) => None,
        })
        .map(|wait| wait.min(MAX_SERVER_WAIT))
}

/// The time from the answer's `Date` (or now) to the Unix time `at` (seconds); zero when it has
/// passed.
fn until_epoch(at: f64, headers: &HeaderMap) -> Duration {
    let now = header(headers, "date")
        .and_then(|date| httpdate::parse_http_date(&date).ok())
        .unwrap_or_else(SystemTime::now);
    let now = now
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0.0, |since| since.as_secs_f64());
    Duration::from_secs_f64((at - now).clamp(0.0, MAX_SERVER_WAIT.as_secs_f64()))
}

/// The time from the answer's `Date` (or now) to the HTTP-date `value`; zero when it has passed.
fn until_date(value: &str, headers: &HeaderMap) -> Option<Duration> {
    let at = httpdate::parse_http_date(value).ok()?;
    let now = header(headers, "date")
        .and_then(|date| httpdate::parse_http_date(&date).ok())
        .unwrap_or_else(SystemTime::now);
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

fn truncate(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn management_envelopes_give_code_message_and_request_id() {
        let body = r#"{"status": 424, "error": "FAILED_DEPENDENCY: service is stopped", "requestId": "r-1"}"#;
        let err = api_error(
            "createPipe",
            424,
            &HeaderMap::new(),
            body,
            1,
            &Redactor::new(),
        );
        assert_eq!(err.code, ErrorCode::FailedDependency);
        assert_eq!(err.message, "service is stopped");
        assert_eq!(err.request_id.as_deref(), Some("r-1"));
        assert_eq!(err.body, body);
    }

    #[test]
    fn observability_messages_and_plain_text_are_kept() {
        let err = api_error(
            "getAlert",
            404,
            &HeaderMap::new(),
            r#"{"message":"Alert not found"}"#,
            1,
            &Redactor::new(),
        );
        assert_eq!(
            (err.code, err.message.as_str()),
            (ErrorCode::NotFound, "Alert not found")
        );
        let err = api_error(
            "getAlert",
            401,
            &headers(&[("content-type", "text/plain")]),
            "Unauthorized",
            1,
            &Redactor::new(),
        );
        assert_eq!(err.message, "Unauthorized");
        assert_eq!(err.body, "Unauthorized");
    }

    #[test]
    fn html_gateway_pages_are_summarised_and_kept_raw() {
        let page =
            "<html><head><title>502 Bad Gateway</title></head><body><h1>502</h1></body></html>";
        let err = api_error(
            "getPipe",
            502,
            &headers(&[("content-type", "text/html"), ("x-request-id", "h-1")]),
            page,
            2,
            &Redactor::new(),
        );
        assert_eq!(
            err.message,
            "502 Bad Gateway (an HTML page, not an API answer)"
        );
        assert_eq!(err.body, page);
        assert_eq!(err.request_id.as_deref(), Some("h-1"));
    }

    #[test]
    fn long_bodies_are_truncated_on_a_char_boundary() {
        let body = "é".repeat(MAX_ERROR_BODY);
        let err = api_error(
            "getPipe",
            500,
            &HeaderMap::new(),
            &body,
            1,
            &Redactor::new(),
        );
        assert!(err.body.len() <= MAX_ERROR_BODY + 3);
        assert!(err.body.ends_with("..."));
    }

    #[test]
    fn server_waits_depend_on_the_status() {
        let wait = |status, pairs: &[(&'static str, &str)]| server_wait(status, &headers(pairs));
        assert_eq!(
            wait(429, &[("x-ratelimit-reset", "1")]),
            Some(Duration::from_secs(1))
        );
        assert_eq!(
            wait(429, &[("retry-after", "60"), ("ratelimit-reset", "5")]),
            Some(Duration::from_secs(60))
        );
        assert_eq!(
            wait(429, &[("ratelimit-reset", "0.5")]),
            Some(Duration::from_millis(500))
        );
        assert_eq!(wait(429, &[("retry-after", "soon")]), None);
        // A reset that is a Unix time: the time until it, by the answer's clock (else ours).
        let date = "Wed, 25 Nov 2026 12:00:00 GMT";
        let noon = httpdate::parse_http_date(date)
            .unwrap()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap()
            .as_secs();
        for name in ["x-ratelimit-reset", "ratelimit-reset"] {
            let at = (noon + 7).to_string();
            assert_eq!(
                wait(429, &[(name, &at), ("date", date)]),
                Some(Duration::from_secs(7)),
                "{name}"
            );
            let past = (noon - 5).to_string();
            assert_eq!(
                wait(429, &[(name, &past), ("date", date)]),
                Some(Duration::ZERO)
            );
        }
        // The boundary itself is still seconds (capped), not a Unix time in 2001.
        assert_eq!(
            wait(429, &[("x-ratelimit-reset", "1000000000")]),
            Some(MAX_SERVER_WAIT)
        );
        let soon = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap()
            .as_secs()
            + 3;
        let by_our_clock = wait(429, &[("x-ratelimit-reset", &soon.to_string())]).unwrap();
        assert!(by_our_clock <= Duration::from_secs(3) && by_our_clock >= Duration::from_secs(1));
        assert_eq!(
            wait(429, &[("retry-after", "2000000000")]),
            Some(MAX_SERVER_WAIT),
            "Retry-After is seconds or an HTTP-date, never a Unix time"
        );
        assert_eq!(
            wait(503, &[("ratelimit-reset", "40")]),
            None,
            "a window reset is no 503 wait"
        );
        assert_eq!(
            wait(503, &[("retry-after", "2")]),
            Some(Duration::from_secs(2))
        );
        assert_eq!(
            wait(404, &[("retry-after", "2"), ("ratelimit-reset", "9")]),
            None
        );
    }

    #[test]
    fn html_is_recognised_by_its_content_type_or_its_first_character() {
        let page = "Service Unavailable <b>try later</b>";
        let by_type = api_error(
            "getPipe",
            503,
            &headers(&[("content-type", "text/html")]),
            page,
            1,
            &Redactor::new(),
        );
        assert_eq!(by_type.message, "an HTML page, not an API answer");
        let by_shape = api_error(
            "getPipe",
            502,
            &HeaderMap::new(),
            "<html><title>Bad</title></html>",
            1,
            &Redactor::new(),
        );
        assert_eq!(by_shape.message, "Bad (an HTML page, not an API answer)");
        let text = api_error(
            "getPipe",
            503,
            &headers(&[("content-type", "text/plain")]),
            "try later",
            1,
            &Redactor::new(),
        );
        assert_eq!(text.message, "try later");
    }

    #[test]
    fn secrets_are_redacted_in_any_encoding_before_anything_is_taken() {
        let redactor = Redactor::new().secret("p&ss<word>");
        let go = r#"{"status":400,"error":"BAD_REQUEST: password p\u0026ss\u003cword\u003e is weak","requestId":"r-1"}"#;
        let err = api_error("createPipe", 400, &HeaderMap::new(), go, 1, &redactor);
        assert_eq!(err.message, "password [REDACTED] is weak");
        assert!(!err.body.contains("ss\\u003c"), "{}", err.body);
        let page = "<html><title>p&amp;ss&lt;word&gt; rejected</title></html>";
        let err = api_error(
            "createPipe",
            502,
            &headers(&[("content-type", "text/html")]),
            page,
            1,
            &redactor,
        );
        assert_eq!(
            err.message,
            "[REDACTED] rejected (an HTML page, not an API answer)"
        );
        assert_eq!(err.body, "<html><title>[REDACTED] rejected</title></html>");
    }

    #[test]
    fn retry_after_may_be_an_http_date() {
        let date =
            |secs: u64| httpdate::fmt_http_date(SystemTime::UNIX_EPOCH + Duration::from_secs(secs));
        let wait = |pairs: &[(&'static str, &str)]| server_wait(429, &headers(pairs));
        // Counted from the answer's own Date header.
        assert_eq!(
            wait(&[
                ("retry-after", &date(1_000_120)),
                ("date", &date(1_000_000))
            ]),
            Some(Duration::from_secs(120))
        );
        // A date that has passed is no wait; RFC 850 and asctime forms are read too.
        assert_eq!(
            wait(&[
                ("retry-after", &date(1_000_000)),
                ("date", &date(1_000_500))
            ]),
            Some(Duration::ZERO)
        );
        assert_eq!(
            wait(&[
                ("retry-after", "Sunday, 06-Nov-94 08:49:37 GMT"),
                ("date", "Sun, 06 Nov 1994 08:48:37 GMT")
            ]),
            Some(Duration::from_secs(60))
        );
        assert_eq!(
            wait(&[
                ("retry-after", "Sun Nov  6 08:49:37 1994"),
                ("date", "Sun, 06 Nov 1994 08:49:07 GMT")
            ]),
            Some(Duration::from_secs(30))
        );
        // Without a Date header, from this machine's clock; never more than an hour.
        let later = SystemTime::now() + Duration::from_secs(7200);
        assert_eq!(
            wait(&[("retry-after", &httpdate::fmt_http_date(later))]),
            Some(Duration::from_secs(3600))
        );
        assert_eq!(wait(&[("retry-after", "not a date")]), None);
        assert_eq!(
            wait(&[("x-ratelimit-reset", &date(5))]),
            None,
            "only Retry-After takes a date"
        );
    }

    #[test]
    fn a_negative_or_endless_wait_is_no_wait() {
        let wait = |value: &str| server_wait(429, &headers(&[("retry-after", value)]));
        assert_eq!(wait("-5"), None);
        assert_eq!(wait("inf"), None);
        assert_eq!(wait("NaN"), None);
        assert_eq!(wait("0"), Some(Duration::ZERO));
        assert_eq!(
            wait("7200"),
            Some(Duration::from_secs(3600)),
            "capped at an hour"
        );
    }

    #[test]
    fn codes_are_upper_snake_case_only() {
        assert_eq!(
            split_code("NOT_FOUND: pipe x"),
            (Some("NOT_FOUND".into()), "pipe x".into())
        );
        assert_eq!(
            split_code("note: lowercase"),
            (None, "note: lowercase".into())
        );
    }

    mod properties {
        use super::*;
        use crate::error::MAX_ERROR_MESSAGE;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

            #[test]
            fn any_body_gives_a_bounded_error_without_a_secret(
                bytes in proptest::collection::vec(any::<u8>(), 0..9000),
                status in 100u16..600,
                secret in "[a-z0-9]{4,16}",
                at in 0usize..9000,
                json in any::<bool>(),
            ) {
                // Arbitrary bytes (invalid UTF-8 included), with the secret planted somewhere, maybe
                // inside a management envelope.
                let mut text = String::from_utf8_lossy(&bytes).into_owned();
                let at = (0..=at.min(text.len())).rev().find(|i| text.is_char_boundary(*i)).unwrap_or(0);
                text.insert_str(at, &secret);
                if json {
                    text = serde_json::json!({"status": status, "error": format!("BAD_REQUEST: {text}")}).to_string();
                }
                let error = api_error("getPipe", status, &HeaderMap::new(), &text, 1, &Redactor::new().secret(&secret));
                prop_assert!(error.body.len() <= MAX_ERROR_BODY + 3);
                prop_assert!(error.message.len() <= MAX_ERROR_MESSAGE + 3);
                prop_assert!(!error.body.contains(&secret) && !error.message.contains(&secret));
                prop_assert!(!error.to_string().contains(&secret));
            }

            #[test]
            fn the_envelope_status_may_be_an_integer_or_a_float(status in 400u16..600, float in any::<bool>()) {
                let status_json = if float { serde_json::json!(f64::from(status)) } else { serde_json::json!(status) };
                let body = serde_json::json!({"status": status_json, "error": "NOT_FOUND: gone", "requestId": "r-9"}).to_string();
                let error = api_error("getPipe", status, &HeaderMap::new(), &body, 1, &Redactor::new());
                prop_assert_eq!(error.code, ErrorCode::NotFound);
                prop_assert_eq!(error.message, "gone");
                prop_assert_eq!(error.request_id.as_deref(), Some("r-9"));
            }

            #[test]
            fn server_waits_are_bounded_for_any_header(value in ".{0,20}", status in 100u16..600) {
                let mut map = HeaderMap::new();
                if let Ok(v) = HeaderValue::from_str(&value) {
                    map.insert("retry-after", v.clone());
                    map.insert("x-ratelimit-reset", v);
                }
                if let Some(wait) = server_wait(status, &map) {
                    prop_assert!(wait <= Duration::from_secs(3600));
                    prop_assert!(matches!(status, 429 | 503));
                }
            }
        }
    }
}
