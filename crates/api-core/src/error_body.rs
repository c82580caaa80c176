//! Turning an error answer (JSON envelope, JSON message, HTML page or plain text) into an [`ApiError`].

use std::time::Duration;

use reqwest::header::HeaderMap;
use serde_json::Value;

use crate::error::{ApiError, MAX_ERROR_BODY};

/// The request id header of both APIs.
pub const REQUEST_ID_HEADER: &str = "x-request-id";

/// Builds the error for an answer with `status`, `headers` and `body`.
pub(crate) fn api_error(
    operation: &'static str,
    status: u16,
    headers: &HeaderMap,
    body: &str,
    attempts: u32,
) -> ApiError {
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
    ApiError {
        operation,
        status,
        code,
        message,
        request_id: field("requestId").or_else(|| header(headers, REQUEST_ID_HEADER)),
        body: truncate(body, MAX_ERROR_BODY),
        retry_after: server_wait(status, headers),
        attempts,
    }
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

fn header(headers: &HeaderMap, name: &str) -> Option<String> {
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
        .filter_map(|name| header(headers, name))
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
        let err = api_error("createPipe", 424, &HeaderMap::new(), body, 1);
        assert_eq!(err.code.as_deref(), Some("FAILED_DEPENDENCY"));
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
        );
        assert_eq!((err.code, err.message.as_str()), (None, "Alert not found"));
        let err = api_error(
            "getAlert",
            401,
            &headers(&[("content-type", "text/plain")]),
            "Unauthorized",
            1,
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
        let err = api_error("getPipe", 500, &HeaderMap::new(), &body, 1);
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
}
