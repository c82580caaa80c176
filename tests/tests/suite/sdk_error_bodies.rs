//! Error bodies from a server that echoes what it was sent: whatever the body's form (JSON envelope,
//! HTML page, plain text, a huge page, a secret cut in two by the size limit, a secret escaped inside
//! JSON), no part of a secret survives in the error's message, body, `Display` or `Debug`, and the
//! SDK reads a bounded amount of it.

use crate::support;

use api_mgmt::{
    NewPipe,
    error::{MAX_ERROR_BODY, MAX_ERROR_MESSAGE},
    pipes::{Destination, KafkaSource},
};
use support::{KEY_SECRET, Reply, ScriptServer, service};

/// A password with a quote, so that JSON writes it escaped.
const PASSWORD: &str = "kafka-pa\"ss-7f3e9c21b8d4";

fn pipe() -> NewPipe {
    NewPipe::builder("echo")
        .source(KafkaSource::new("b-1:9098", "orders").credentials("reader", PASSWORD))
        .destination(Destination::new("default").table("t").managed_table(true))
        .mapped_column("id", "id", "UInt64")
        .build()
        .unwrap()
}

/// Every piece of `secret` of 6 or more characters: none may appear anywhere.
fn pieces(secret: &str) -> Vec<String> {
    let chars: Vec<char> = secret.chars().collect();
    (0..chars.len())
        .flat_map(|start| (start + 6..=chars.len()).map(move |end| (start, end)))
        .map(|(start, end)| chars[start..end].iter().collect())
        .collect()
}

fn assert_no_secret(error: &api_mgmt::Error) {
    let api = error.as_api().expect("an API error");
    let escaped = serde_json::to_string(PASSWORD).unwrap();
    let texts = [
        error.to_string(),
        format!("{error:?}"),
        api.message.clone(),
        api.body.clone(),
    ];
    for text in &texts {
        for secret in [PASSWORD, escaped.trim_matches('"'), KEY_SECRET] {
            for piece in pieces(secret) {
                assert!(!text.contains(&piece), "{piece:?} leaked into {text}");
            }
        }
    }
    assert!(api.body.len() <= MAX_ERROR_BODY + 3, "{}", api.body.len());
    assert!(
        api.message.len() <= MAX_ERROR_MESSAGE + 3,
        "{}",
        api.message.len()
    );
}

async fn create_against(reply: Reply) -> api_mgmt::Error {
    let server = ScriptServer::start(vec![reply]).await;
    let error = service(&server.mgmt())
        .pipes()
        .create(&pipe())
        .await
        .unwrap_err();
    assert_eq!(server.requests().len(), 1);
    error
}

#[tokio::test]
async fn a_json_envelope_echoing_the_request() {
    let escaped = serde_json::to_string(PASSWORD).unwrap();
    let body = format!(
        r#"{{"status": 400, "error": "BAD_REQUEST: credentials.password {escaped} is wrong for key {KEY_SECRET}", "requestId": "r-1"}}"#
    );
    let error = create_against(Reply::json(400, body)).await;
    assert_eq!(error.code().map(|c| c.as_str()), Some("BAD_REQUEST"));
    assert!(error.to_string().contains("[REDACTED]"), "{error}");
    assert_no_secret(&error);
}

#[tokio::test]
async fn an_html_page_and_plain_text() {
    let page =
        format!("<html><head><title>400 {PASSWORD}</title></head><body>{KEY_SECRET}</body></html>");
    let error = create_against(Reply::text(400, "text/html", page)).await;
    assert_no_secret(&error);
    let text = format!("rejected: {PASSWORD}\nkey {KEY_SECRET}");
    let error = create_against(Reply::text(400, "text/plain", text)).await;
    assert!(
        error.to_string().contains("rejected: [REDACTED]"),
        "{error}"
    );
    assert_no_secret(&error);
}

#[tokio::test]
async fn a_huge_body_with_a_secret_at_the_cut_and_beyond_the_read_limit() {
    // The secret straddles the 4 KiB the error keeps: redaction comes before the cut.
    let mut body = "x".repeat(MAX_ERROR_BODY - 6);
    body.push_str(PASSWORD);
    body.push_str(&"y".repeat(200_000));
    body.push_str(KEY_SECRET);
    let error = create_against(Reply::text(400, "text/plain", body)).await;
    assert_no_secret(&error);
    let api = error.as_api().unwrap();
    assert!(api.body.ends_with("..."), "cut");
    // A message is bounded too: one line of 100 KB.
    let line = "z".repeat(100_000);
    let error = create_against(Reply::text(400, "text/plain", line)).await;
    assert!(error.as_api().unwrap().message.len() <= 200 + 3);
    assert_no_secret(&error);
}

#[tokio::test]
async fn a_gateway_page_on_a_create_says_the_outcome_is_unknown() {
    let page = "<html><head><title>504 Gateway Time-out</title></head></html>";
    let error = create_against(Reply::text(504, "text/html", page)).await;
    assert!(
        error.is_outcome_unknown() && !error.is_retryable(),
        "{error}"
    );
    let text = error.to_string();
    assert!(text.contains("504 Gateway Time-out"), "{text}");
    assert!(text.contains("inspect the service"), "{text}");
    assert_no_secret(&error);
}
