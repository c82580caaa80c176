//! A scripted HTTP server for SDK tests: it answers from a list of replies, in order, and records every
//! request it receives (method, path, headers, body) so a test can check exactly what was sent.
#![allow(dead_code)]

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};

/// The secrets every test client uses; no output may ever contain them.
pub const KEY_ID: &str = "key-id-0001";
pub const KEY_SECRET: &str = "mgmt-key-secret-s3cr3t";
pub const TOKEN: &str = "0d8f3a4e-1c2b-4d5e-8f60-718293a4b5c6";
pub const ORG: &str = "3f0c5e2a-8d41-4b7e-9a6c-1e2f3a4b5c6d";
pub const SERVICE: &str = "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d";
pub const PIPE: &str = "0f9e8d7c-6b5a-4f3e-9d2c-1b0a9f8e7d6c";

/// One scripted answer.
#[derive(Clone, Debug)]
pub struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
    delay: Duration,
}

impl Reply {
    /// A JSON answer.
    pub fn json(status: u16, body: impl Into<String>) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.into(),
            delay: Duration::ZERO,
        }
    }

    /// An answer with another content type.
    pub fn text(status: u16, content_type: &str, body: impl Into<String>) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), content_type.into())],
            body: body.into(),
            delay: Duration::ZERO,
        }
    }

    /// A fixture file of `tests/fixtures` as a 200 answer.
    pub fn fixture(name: &str) -> Self {
        let path = format!("{}/fixtures/{name}.json", env!("CARGO_MANIFEST_DIR"));
        Self::json(
            200,
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}")),
        )
    }

    /// A management error envelope.
    pub fn mgmt_error(status: u16, code: &str, text: &str) -> Self {
        Self::json(
            status,
            format!(
                r#"{{"status": {status}, "error": "{code}: {text}", "requestId": "91021324-3546-4f70-8182-930415263748"}}"#
            ),
        )
    }

    /// Adds a header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    /// Waits before answering.
    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }
}

/// A request as the server saw it.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub headers: BTreeMap<String, String>,
    pub body: String,
}

impl Recorded {
    /// The body as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("body is not JSON ({e}): {}", self.body))
    }
}

#[derive(Default)]
struct State {
    replies: VecDeque<Reply>,
    requests: Vec<Recorded>,
}

/// A running scripted server on a free loopback port; it stops with the test's runtime.
pub struct ScriptServer {
    pub url: String,
    state: Arc<Mutex<State>>,
}

impl ScriptServer {
    /// Starts a server that answers with `replies`, in order (then 500 "script exhausted").
    pub async fn start(replies: Vec<Reply>) -> Self {
        let state = Arc::new(Mutex::new(State {
            replies: replies.into(),
            requests: Vec::new(),
        }));
        let shared = state.clone();
        let app = axum::Router::new().fallback(
            move |method: Method, uri: Uri, headers: HeaderMap, body: Bytes| {
                let state = shared.clone();
                async move { answer(state, method, uri, headers, body).await }
            },
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("address"));
        tokio::spawn(async move { axum::serve(listener, app).await.ok() });
        Self { url, state }
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.state.lock().unwrap().requests.clone()
    }

    /// A management client of this server, with fast retries.
    pub fn mgmt(&self) -> api_mgmt::Client {
        api_mgmt::Client::builder(&self.url)
            .credentials(api_mgmt::Credentials::basic(KEY_ID, KEY_SECRET))
            .retry(fast_retries())
            .build()
            .expect("client")
    }

    /// A management client of this server through `transport`, with fast retries.
    pub fn mgmt_via(&self, transport: Transport) -> api_mgmt::Client {
        transport
            .mgmt_builder(&self.url)
            .retry(fast_retries())
            .build()
            .expect("client")
    }

    /// An observability client of this server, with fast retries.
    pub fn obs(&self) -> api_obs::Client {
        api_obs::Client::builder(&self.url)
            .credentials(api_obs::Credentials::bearer(TOKEN))
            .retry(fast_retries())
            .build()
            .expect("client")
    }
}

/// Who builds the HTTP client: the runtime, or the caller (`http_client(..)`, a `reqwest::Client` of
/// its own). The runtime promises the same behaviour for both, and its tests run with both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// The client the SDK builds.
    Built,
    /// A caller's own client, with a long timeout of its own that the SDK's attempt timeout must
    /// replace.
    Caller,
}

impl Transport {
    /// A management client builder for `url` with the test credentials, sending through this kind
    /// of client.
    pub fn mgmt_builder(self, url: &str) -> api_mgmt::client::ConfigBuilder<api_mgmt::Client> {
        let builder = api_mgmt::Client::builder(url)
            .credentials(api_mgmt::Credentials::basic(KEY_ID, KEY_SECRET));
        match self {
            Transport::Built => builder,
            Transport::Caller => builder.http_client(
                api_mgmt::client::http_client_builder()
                    .timeout(Duration::from_secs(600))
                    .build()
                    .expect("a caller's client"),
            ),
        }
    }
}

/// Runs each named `async fn name(transport: Transport)` as two tests, one per [`Transport`].
#[macro_export]
macro_rules! for_both_transports {
    ($($name:ident),* $(,)?) => {
        mod built_client {
            $(#[tokio::test]
            async fn $name() {
                super::$name($crate::support::Transport::Built).await
            })*
        }
        mod caller_client {
            $(#[tokio::test]
            async fn $name() {
                super::$name($crate::support::Transport::Caller).await
            })*
        }
    };
}

/// Retries with millisecond backoff, so tests do not sleep.
pub fn fast_retries() -> api_mgmt::client::RetryPolicy {
    api_mgmt::client::RetryPolicy::default()
        .initial_backoff(Duration::from_millis(5))
        .max_backoff(Duration::from_millis(20))
}

/// The service handle of the constants above.
pub fn service(client: &api_mgmt::Client) -> api_mgmt::ServiceHandle {
    client.service(ORG.parse().unwrap(), SERVICE.parse().unwrap())
}

async fn answer(
    state: Arc<Mutex<State>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let reply = {
        let mut state = state.lock().unwrap();
        state.requests.push(Recorded {
            method: method.to_string(),
            path: uri.path().to_string(),
            headers: headers
                .iter()
                .map(|(k, v)| {
                    (
                        k.as_str().to_string(),
                        v.to_str().unwrap_or_default().to_string(),
                    )
                })
                .collect(),
            body: String::from_utf8_lossy(&body).into_owned(),
        });
        state
            .replies
            .pop_front()
            .unwrap_or_else(|| Reply::text(500, "text/plain", "script exhausted"))
    };
    tokio::time::sleep(reply.delay).await;
    let mut response = (StatusCode::from_u16(reply.status).unwrap(), reply.body).into_response();
    for (name, value) in reply.headers {
        response.headers_mut().insert(
            axum::http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
            axum::http::HeaderValue::from_str(&value).unwrap(),
        );
    }
    response
}

pub mod emulated;
pub mod secrets;
