//! The cassette: exchanges with a real deployment, recorded by `api-emulator record` and answered
//! again by `api-emulator replay`. A versioned, human-readable JSON Lines file, private to its user:
//!
//! ```text
//! {"cassette":1,"recordedAt":"2026-11-23T10:00:00Z","tool":"api-emulator record"}
//! {"operationId":"getPipe","method":"GET","path":"/v1/organizations/.../pipes/...","status":200,"responseHeaders":{"content-type":"application/json","x-request-id":"..."},"responseBody":{"status":200,"result":{...}}}
//! ```
//!
//! The first line is the [`Header`]; every other line is one [`Exchange`], written as soon as it
//! completes. A body is JSON when it parsed as JSON (`requestBody`, `responseBody`), else text
//! (`requestText`, `responseText`). A body the cassette cannot keep (over [`MAX_BODY`] bytes, not
//! text, or compressed although the recorder asked for it plain) is said so in its place
//! (`requestUnkept`, `responseUnkept`: its size and why), so that replay and check can say so too.
//! Nothing secret is in it: no `Authorization` or cookie header is written, and every body, path
//! and query went through the SDK's one redaction rule (`api_raw::support::redact`), with every
//! secret the recording has seen so far, before touching the disk.

use std::collections::BTreeMap;
use std::path::Path;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use api_raw::support::redact::{Redactor, is_secret_member};

use crate::operation::OperationId;

/// The version of the format this emulator writes and reads.
pub const CASSETTE_VERSION: u32 = 1;

/// The largest body kept whole, in bytes (8 MiB: four times the API's largest request); a larger one
/// is [`Unkept`].
pub const MAX_BODY: usize = 8 * 1024 * 1024;

/// The response headers a cassette keeps (the rest are not needed to answer again).
pub const KEPT_HEADERS: [&str; 8] = [
    "content-type",
    "x-request-id",
    "retry-after",
    "x-ratelimit-reset",
    "x-ratelimit-limit",
    "x-ratelimit-remaining",
    "ratelimit-reset",
    "ratelimit-remaining",
];

/// The first line of a cassette.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Header {
    /// The format's version, [`CASSETTE_VERSION`].
    pub cassette: u32,
    /// When recording began.
    pub recorded_at: DateTime<Utc>,
    /// What wrote it.
    pub tool: String,
}

/// One exchange: what was asked and what was answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Exchange {
    /// The operation the method and path match; `None` when they match none.
    pub operation_id: Option<OperationId>,
    /// The method.
    pub method: String,
    /// The path (redacted).
    pub path: String,
    /// The query string without `?` (redacted), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// The request body, when it was JSON (redacted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_body: Option<Value>,
    /// The request body, when it was text but not JSON (redacted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_text: Option<String>,
    /// The request body, when the cassette could not keep it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_unkept: Option<Unkept>,
    /// The status answered; 0 when the connection was closed without an answer (a hangup).
    pub status: u16,
    /// The kept response headers ([`KEPT_HEADERS`]), names in lower case.
    #[serde(default)]
    pub response_headers: BTreeMap<String, String>,
    /// The response body, when it was JSON (redacted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_body: Option<Value>,
    /// The response body, when it was text but not JSON (an HTML page, plain text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_text: Option<String>,
    /// The response body, when the cassette could not keep it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_unkept: Option<Unkept>,
}

/// A body a cassette could not keep, in its place: how large it was, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unkept {
    /// Its size in bytes, as received.
    pub bytes: u64,
    /// Why: `larger than 8 MiB`, `not text`, `compressed (gzip)`.
    pub why: String,
}

impl std::fmt::Display for Unkept {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} bytes, not kept: {}", self.bytes, self.why)
    }
}

/// A body as a cassette keeps it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Kept {
    /// No body.
    Empty,
    /// JSON.
    Json(Value),
    /// Text that is not JSON.
    Text(String),
    /// What could not be kept.
    Unkept(Unkept),
}

impl Exchange {
    /// Whether the upstream closed the connection without answering.
    pub fn is_hangup(&self) -> bool {
        self.status == 0
    }

    /// Reads the marker text of a cassette written before bodies could be said unkept
    /// (`<N bytes, not kept: ...>`, `<N bytes, not text>`) as what it is.
    fn read_markers(&mut self) {
        for (text, unkept) in [
            (&mut self.request_text, &mut self.request_unkept),
            (&mut self.response_text, &mut self.response_unkept),
        ] {
            if let Some(marker) = text.as_deref().and_then(old_marker) {
                *unkept = Some(marker);
                *text = None;
            }
        }
    }
}

/// The [`Unkept`] an older recorder's marker stood for.
fn old_marker(text: &str) -> Option<Unkept> {
    let inner = text.strip_prefix('<')?.strip_suffix('>')?;
    let (bytes, why) = inner.split_once(" bytes, ")?;
    let bytes = bytes.parse().ok()?;
    let why = why.strip_prefix("not kept: ").unwrap_or(why);
    Some(Unkept {
        bytes,
        why: why.to_string(),
    })
}

/// A cassette read from a file.
#[derive(Debug, Clone, PartialEq)]
pub struct Cassette {
    /// Its header.
    pub header: Header,
    /// Its exchanges, in the order they completed.
    pub exchanges: Vec<Exchange>,
}

/// A cassette that cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("cassette {path}: {message}")]
pub struct CassetteError {
    path: String,
    message: String,
}

impl Cassette {
    /// Reads a cassette file. Every line that does not read is an error naming it, the last one
    /// included, with one exception: a last line without its newline that does not read is a line a
    /// killed recorder cut short (each exchange is written whole, newline last, in one write), and
    /// is left out (a recorder that continues the file removes it).
    pub fn read(path: &Path) -> Result<Self, CassetteError> {
        let fail = |message: String| CassetteError {
            path: path.display().to_string(),
            message,
        };
        let text = std::fs::read_to_string(path).map_err(|e| fail(e.to_string()))?;
        let whole = text.ends_with('\n');
        let mut lines: Vec<&str> = text.split('\n').collect();
        if whole || lines.last() == Some(&"") {
            lines.pop();
        }
        let count = lines.len();
        let mut lines = lines.into_iter().enumerate();
        let header: Header = match lines.next() {
            Some((_, line)) => serde_json::from_str(line)
                .map_err(|e| fail(format!("line 1 is not a cassette header: {e}")))?,
            None => return Err(fail("the file is empty".into())),
        };
        if header.cassette != CASSETTE_VERSION {
            return Err(fail(format!(
                "version {} is not one this emulator reads ({CASSETTE_VERSION})",
                header.cassette
            )));
        }
        let mut exchanges = Vec::new();
        for (index, line) in lines {
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<Exchange>(line) {
                Ok(mut exchange) => {
                    exchange.read_markers();
                    exchanges.push(exchange);
                }
                // The last line of a recorder that was killed while writing it.
                Err(_) if index + 1 == count && !whole => {}
                Err(e) => return Err(fail(format!("line {} does not read: {e}", index + 1))),
            }
        }
        Ok(Self { header, exchanges })
    }
}

/// The one redaction rule with what one exchange's request carries: the values of its secret-named
/// members and headers, and its `Authorization` credentials in every form (a bearer token; a Basic
/// header's encoded value, its `id:secret` pair and the secret alone), so that a secret the answer
/// echoes goes too.
pub(crate) fn redactor_for(headers: &axum::http::HeaderMap, body: Option<&Value>) -> Redactor {
    let mut redactor = Redactor::new();
    if let Some(body) = body {
        redactor.add_json_secrets(body);
    }
    for (name, value) in headers {
        let Ok(value) = value.to_str() else { continue };
        if name == axum::http::header::AUTHORIZATION {
            for form in api_raw::support::redact::authorization_forms(value) {
                redactor.add(&form);
            }
        } else if is_secret_member(name.as_str()) {
            redactor.add(value);
        }
    }
    redactor
}

/// A request as a cassette keeps it (its body read per its own `Content-Encoding`), and the
/// redaction rule with the secrets it carries: what record and replay both take from a request.
pub(crate) fn kept_request(headers: &axum::http::HeaderMap, body: &[u8]) -> (Kept, Redactor) {
    let encoding = headers
        .get(axum::http::header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok());
    let kept = kept_body(body, encoding);
    let redactor = redactor_for(
        headers,
        match &kept {
            Kept::Json(json) => Some(json),
            _ => None,
        },
    );
    (kept, redactor)
}

/// A body as a cassette keeps it: JSON, text, or said unkept when it is larger than [`MAX_BODY`],
/// not text, or compressed (`encoding`, the answer's `Content-Encoding`, other than `identity`).
pub(crate) fn kept_body(bytes: &[u8], encoding: Option<&str>) -> Kept {
    if bytes.is_empty() {
        return Kept::Empty;
    }
    let unkept = |why: String| {
        Kept::Unkept(Unkept {
            bytes: bytes.len() as u64,
            why,
        })
    };
    if let Some(encoding) = encoding.map(str::trim)
        && !encoding.is_empty()
        && !encoding.eq_ignore_ascii_case("identity")
    {
        return unkept(format!("compressed ({encoding})"));
    }
    if bytes.len() > MAX_BODY {
        return unkept(format!("larger than {} MiB", MAX_BODY / (1024 * 1024)));
    }
    if let Ok(json) = serde_json::from_slice::<Value>(bytes) {
        return Kept::Json(json);
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => Kept::Text(text.to_string()),
        Err(_) => unkept("not text".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_are_kept_as_json_or_text_or_said_unkept() {
        let unkept = |bytes: u64, why: &str| {
            Kept::Unkept(Unkept {
                bytes,
                why: why.into(),
            })
        };
        assert_eq!(kept_body(b"", None), Kept::Empty);
        assert_eq!(
            kept_body(b"{\"a\":1}", Some("identity")),
            Kept::Json(serde_json::json!({"a": 1}))
        );
        assert_eq!(kept_body(b"<html>", None), Kept::Text("<html>".into()));
        assert_eq!(kept_body(&[0xff, 0xfe], None), unkept(2, "not text"));
        assert_eq!(
            kept_body(b"\x1f\x8b..", Some("gzip")),
            unkept(4, "compressed (gzip)")
        );
        // A large body up to the bound is kept whole.
        let large = format!("[{}]", vec!["1"; MAX_BODY / 2 - 2].join(","));
        assert!(large.len() <= MAX_BODY);
        assert!(matches!(kept_body(large.as_bytes(), None), Kept::Json(_)));
        let exact = vec![b'a'; MAX_BODY];
        assert!(matches!(kept_body(&exact, None), Kept::Text(text) if text.len() == MAX_BODY));
        let over = vec![b'a'; MAX_BODY + 1];
        assert_eq!(
            kept_body(&over, None),
            unkept(MAX_BODY as u64 + 1, "larger than 8 MiB")
        );
    }

    #[test]
    fn an_older_cassettes_markers_read_as_unkept_bodies() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.jsonl");
        let header = r#"{"cassette":1,"recordedAt":"2026-11-23T10:00:00Z","tool":"t"}"#;
        let exchange = r#"{"operationId":"listDashboards","method":"GET","path":"/api/v2/dashboards","status":200,"responseText":"<70000 bytes, not kept: larger than 65536>","requestText":"<2 bytes, not text>"}"#;
        std::fs::write(&path, format!("{header}\n{exchange}\n")).unwrap();
        let read = Cassette::read(&path).unwrap();
        let exchange = &read.exchanges[0];
        assert_eq!(exchange.response_text, None);
        assert_eq!(
            exchange
                .response_unkept
                .as_ref()
                .map(ToString::to_string)
                .as_deref(),
            Some("70000 bytes, not kept: larger than 65536")
        );
        assert_eq!(
            exchange.request_unkept.as_ref().map(|u| u.why.as_str()),
            Some("not text")
        );
    }

    #[test]
    fn an_empty_file_is_said_to_be_empty() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("empty.jsonl");
        std::fs::write(&path, "").unwrap();
        let err = Cassette::read(&path).unwrap_err().to_string();
        assert!(err.ends_with(": the file is empty"), "{err}");
    }

    /// What an answer may echo of a request's credentials goes: a Basic header's secret alone and
    /// its `id:secret` pair, a bearer token without its scheme, a secret-named header's value, a
    /// secret member of the body.
    #[test]
    fn a_request_s_credentials_are_secrets_in_every_form() {
        use axum::http::{HeaderMap, HeaderValue, header::AUTHORIZATION};
        use base64::Engine as _;
        let basic = base64::engine::general_purpose::STANDARD.encode("key-id-1:very-secret-1");
        let mut headers = HeaderMap::new();
        headers.insert(
            AUTHORIZATION,
            HeaderValue::from_str(&format!("Basic {basic}")).unwrap(),
        );
        headers.insert("x-api-secret", HeaderValue::from_static("header-secret-2"));
        let body = serde_json::json!({"password": "body-secret-3"});
        let redactor = redactor_for(&headers, Some(&body));
        let echoed = format!(
            "{basic} | very-secret-1 | key-id-1:very-secret-1 | header-secret-2 | body-secret-3"
        );
        assert_eq!(
            redactor.text(&echoed),
            "[REDACTED] | [REDACTED] | [REDACTED] | [REDACTED] | [REDACTED]"
        );
        let mut headers = HeaderMap::new();
        headers.insert(
            AUTHORIZATION,
            HeaderValue::from_static("Bearer tok-abcdef-123"),
        );
        assert_eq!(
            redactor_for(&headers, None).text("token tok-abcdef-123 echoed"),
            "token [REDACTED] echoed"
        );
    }

    #[test]
    fn a_cassette_reads_back_and_a_torn_last_line_is_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        let header = r#"{"cassette":1,"recordedAt":"2026-11-23T10:00:00Z","tool":"t"}"#;
        let exchange = r#"{"operationId":"getAlert","method":"GET","path":"/api/v2/alerts/x","status":404,"responseText":"nope"}"#;
        std::fs::write(
            &path,
            format!("{header}\n{exchange}\n{{\"operationId\":\"get"),
        )
        .unwrap();
        let cassette = Cassette::read(&path).unwrap();
        assert_eq!(cassette.exchanges.len(), 1);
        assert_eq!(
            cassette.exchanges[0].operation_id,
            Some(OperationId::GetAlert)
        );
        std::fs::write(&path, format!("{header}\nnot json\n{exchange}\n")).unwrap();
        let err = Cassette::read(&path).unwrap_err().to_string();
        assert!(err.contains("line 2"), "{err}");
        // A last line written whole (its newline there) that does not read is no torn write.
        std::fs::write(&path, format!("{header}\n{exchange}\nnot json\n")).unwrap();
        let err = Cassette::read(&path).unwrap_err().to_string();
        assert!(err.contains("line 3 does not read"), "{err}");
        std::fs::write(&path, format!("{header}\n{exchange}\n{exchange}")).unwrap();
        assert_eq!(
            Cassette::read(&path).unwrap().exchanges.len(),
            2,
            "a last line without its newline that reads is kept"
        );
        std::fs::write(
            &path,
            r#"{"cassette":9,"recordedAt":"2026-11-23T10:00:00Z","tool":"t"}"#,
        )
        .unwrap();
        assert!(
            Cassette::read(&path)
                .unwrap_err()
                .to_string()
                .contains("version 9")
        );
    }
}
