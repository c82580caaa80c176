//! Turning an error answer (JSON envelope, JSON message, HTML page or plain text) into an [`ApiError`].

use std::time::Duration;

use reqwest::header::HeaderMap;
use serde_json::Value;

use crate::error::{ApiError, ErrorCode, MAX_ERROR_BODY, MAX_ERROR_MESSAGE};

/// The request id header of both APIs.
pub const REQUEST_ID_HEADER: &str = "x-request-id";

/// [`REQUEST_ID_HEADER`] as a header name, for the lookup on every answer (a `&str` name is parsed and
/// hashed again at each lookup).
pub(crate) static REQUEST_ID: reqwest::header::HeaderName =
    reqwest::header::HeaderName::from_static(REQUEST_ID_HEADER);

/// Builds the error for an answer with `status`, `headers` and `body`. Every value of `secrets` is
/// removed from the body before anything is taken from it or cut off, so no part of a secret
/// survives in the message or the kept body.
pub(crate) fn api_error(
    operation: &'static str,
    status: u16,
    headers: &HeaderMap,
    body: &str,
    attempts: u32,
    secrets: &[&str],
) -> ApiError {
    let body = redact(body, secrets);
    let body = body.as_str();
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

/// Replaces every secret (as sent, and as it looks inside a JSON string) with `[REDACTED]`. Values
/// shorter than four characters are left alone: they would redact ordinary text.
pub(crate) fn redact(text: &str, secrets: &[&str]) -> String {
    let mut text = text.to_string();
    for secret in secrets.iter().filter(|s| s.len() >= 4) {
        text = text.replace(secret, "[REDACTED]");
        // The form JSON gives it inside a string (quotes, backslashes and controls escaped); never
        // shorter than the secret itself.
        let escaped = serde_json::to_string(secret).unwrap_or_default();
        text = text.replace(escaped.trim_matches('"'), "[REDACTED]");
    }
    text
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

/// How long the server asks the client to wait, in seconds (fractions allowed): on a 429
/// `Retry-After`, else `X-RateLimit-Reset`, else `RateLimit-Reset`; on a 503 only `Retry-After`. The
/// reset headers say when the rate-limit window ends, which means nothing for other answers (the
/// observability API sends `RateLimit-Reset` on every answer).
pub(crate) fn server_wait(status: u16, headers: &HeaderMap) -> Option<Duration> {
    let names: &[&str] = match status {
        429 => &["retry-after", "x-ratelimit-reset", "ratelimit-reset"],
        503 => &["retry-after"],
        _ => &[],
    };
    names
        .iter()
        .filter_map(|name| header(headers, *name))
        .find_map(|value| value.parse::<f64>().ok())
        .filter(|secs| secs.is_finite() && *secs >= 0.0)
        .map(|secs| Duration::from_secs_f64(secs.min(3600.0)))
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
        let err = api_error("createPipe", 424, &HeaderMap::new(), body, 1, &[]);
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
            &[],
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
            &[],
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
            &[],
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
        let err = api_error("getPipe", 500, &HeaderMap::new(), &body, 1, &[]);
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
            &[],
        );
        assert_eq!(by_type.message, "an HTML page, not an API answer");
        let by_shape = api_error(
            "getPipe",
            502,
            &HeaderMap::new(),
            "<html><title>Bad</title></html>",
            1,
            &[],
        );
        assert_eq!(by_shape.message, "Bad (an HTML page, not an API answer)");
        let text = api_error(
            "getPipe",
            503,
            &headers(&[("content-type", "text/plain")]),
            "try later",
            1,
            &[],
        );
        assert_eq!(text.message, "try later");
    }

    #[test]
    fn secrets_are_redacted_as_sent_and_as_json_escapes_them() {
        let secret = "pa\"ss\\word";
        let body = format!(
            "sent {secret} and {}",
            serde_json::to_string(secret).unwrap()
        );
        let redacted = redact(&body, &[secret, "abc"]);
        assert_eq!(redacted, "sent [REDACTED] and \"[REDACTED]\"");
        assert_eq!(
            redact("abc abcd", &["abc"]),
            "abc abcd",
            "too short to redact"
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
                let error = api_error("getPipe", status, &HeaderMap::new(), &text, 1, &[&secret]);
                prop_assert!(error.body.len() <= MAX_ERROR_BODY + 3);
                prop_assert!(error.message.len() <= MAX_ERROR_MESSAGE + 3);
                prop_assert!(!error.body.contains(&secret) && !error.message.contains(&secret));
                prop_assert!(!error.to_string().contains(&secret));
            }

            #[test]
            fn the_envelope_status_may_be_an_integer_or_a_float(status in 400u16..600, float in any::<bool>()) {
                let status_json = if float { serde_json::json!(f64::from(status)) } else { serde_json::json!(status) };
                let body = serde_json::json!({"status": status_json, "error": "NOT_FOUND: gone", "requestId": "r-9"}).to_string();
                let error = api_error("getPipe", status, &HeaderMap::new(), &body, 1, &[]);
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
