//! `api-emulator record`: a recording proxy in front of a real deployment. Every exchange is
//! forwarded unchanged and, once answered, appended to a [cassette](crate::cassette) with its
//! secrets removed by the SDK's one redaction rule: no `Authorization` or cookie header is written,
//! and the request's secret values are searched for in everything written, in any encoding.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use api_core::reqwest;
use axum::body::Bytes;
use axum::extract::State;
use axum::extract::connect_info::ConnectInfo;
use axum::http::{HeaderMap, HeaderName, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};

use crate::EmulatorError;
use crate::cassette::{CASSETTE_VERSION, Exchange, Header, KEPT_HEADERS, kept_body, redactor_for};
use crate::connection::Connection;
use crate::operation::OperationId;
use crate::serving::Serving;

/// The most a request body may be (the API's own limit) for the proxy to forward it.
const REQUEST_LIMIT: usize = 2 * 1024 * 1024;

/// Headers that belong to one connection, not to the exchange: never forwarded.
const HOP_BY_HOP: [&str; 9] = [
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "host",
];

/// Where to record.
#[derive(Debug, Clone)]
pub struct RecordOptions {
    /// The management API of the deployment (`https://api.example.com`).
    pub upstream: String,
    /// The observability API, when it is elsewhere; `/api/v2` paths go to `upstream` otherwise.
    pub observability_upstream: Option<String>,
    /// The cassette file: created private (0600), or continued when it exists.
    pub cassette: PathBuf,
    /// The address to listen on; port 0 picks a free port.
    pub listen: SocketAddr,
}

/// A running recording proxy. [`Recorder::shutdown`] answers the exchanges in flight, writes
/// them, and closes the cassette.
#[derive(Debug)]
pub struct Recorder {
    serving: Serving,
}

struct Shared {
    upstream: String,
    observability_upstream: Option<String>,
    http: reqwest::Client,
    cassette: Mutex<File>,
}

impl Recorder {
    /// Opens the cassette and starts the proxy.
    pub async fn start(options: RecordOptions) -> Result<Self, EmulatorError> {
        let cassette = open(&options.cassette)
            .map_err(|e| EmulatorError(format!("cassette {}: {e}", options.cassette.display())))?;
        let http = api_core::http_client_builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| EmulatorError(format!("cannot build the HTTP client: {e}")))?;
        let shared = Arc::new(Shared {
            upstream: options.upstream.trim_end_matches('/').to_string(),
            observability_upstream: options
                .observability_upstream
                .map(|url| url.trim_end_matches('/').to_string()),
            http,
            cassette: Mutex::new(cassette),
        });
        let router = axum::Router::new()
            .fallback(forward)
            .with_state(shared.clone());
        let closing = shared.clone();
        let serving = Serving::start(router, options.listen, async move {
            let file = closing
                .cassette
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if let Err(error) = file.sync_all() {
                tracing::error!(%error, "the cassette could not be synced");
            }
        })
        .await?;
        Ok(Self { serving })
    }

    /// The proxy's base URL: point the SDK or cloudctl at it.
    pub fn base_url(&self) -> String {
        self.serving.base_url()
    }

    /// Stops taking requests, finishes and writes those in flight, and closes the cassette.
    pub async fn shutdown(self) {
        self.serving.shutdown().await;
    }
}

/// Opens the cassette for appending: a new file private to the user with its header, or an existing
/// cassette of this version.
fn open(path: &Path) -> std::io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.append(true).create(true).read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    let mut first = String::new();
    BufReader::new(&file).read_line(&mut first)?;
    if first.trim().is_empty() {
        let header = Header {
            cassette: CASSETTE_VERSION,
            recorded_at: chrono::Utc::now(),
            tool: "api-emulator record".into(),
        };
        writeln!(file, "{}", serde_json::to_string(&header)?)?;
        file.sync_data()?;
    } else {
        let header: Header = serde_json::from_str(&first).map_err(|e| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("not a cassette: {e}"),
            )
        })?;
        if header.cassette != CASSETTE_VERSION {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "cassette version {} is not {CASSETTE_VERSION}",
                    header.cassette
                ),
            ));
        }
    }
    Ok(file)
}

async fn forward(
    State(shared): State<Arc<Shared>>,
    ConnectInfo(connection): ConnectInfo<Connection>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if body.len() > REQUEST_LIMIT {
        return (
            StatusCode::PAYLOAD_TOO_LARGE,
            "the request body is over 2 MiB",
        )
            .into_response();
    }
    let path = uri.path();
    let base = match &shared.observability_upstream {
        Some(observability) if path.starts_with("/api/v2") => observability,
        _ => &shared.upstream,
    };
    let url = match uri.query() {
        Some(query) => format!("{base}{path}?{query}"),
        None => format!("{base}{path}"),
    };
    let mut request = shared.http.request(method.clone(), url).body(body.clone());
    for (name, value) in &headers {
        if !is_hop_by_hop(name) {
            request = request.header(name, value);
        }
    }
    let (request_body, request_text) = kept_body(&body);
    let redactor = redactor_for(&headers, request_body.as_ref());
    let mut exchange = Exchange {
        operation_id: OperationId::of_request(method.as_str(), path),
        method: method.to_string(),
        path: redactor.text(path).into_owned(),
        query: uri.query().map(|q| redactor.text(q).into_owned()),
        request_body: request_body.map(|body| redactor.json_copy(&body)),
        request_text: request_text.map(|text| redactor.text(&text).into_owned()),
        status: 0,
        response_headers: Default::default(),
        response_body: None,
        response_text: None,
    };
    let answered = match request.send().await {
        Ok(answer) => {
            let status = answer.status();
            let answer_headers = answer.headers().clone();
            answer
                .bytes()
                .await
                .map(|bytes| (status, answer_headers, bytes))
        }
        Err(e) => Err(e),
    };
    let response = match answered {
        Ok((status, answer_headers, bytes)) => {
            exchange.status = status.as_u16();
            for name in KEPT_HEADERS {
                if let Some(value) = answer_headers.get(name).and_then(|v| v.to_str().ok()) {
                    exchange
                        .response_headers
                        .insert(name.to_string(), redactor.text(value).into_owned());
                }
            }
            let (json, text) = kept_body(&bytes);
            exchange.response_body = json.map(|body| redactor.json_copy(&body));
            exchange.response_text = text.map(|text| redactor.text(&text).into_owned());
            let mut response = (status, bytes).into_response();
            for (name, value) in &answer_headers {
                if !is_hop_by_hop(name) && name != "content-length" {
                    response.headers_mut().append(name, value.clone());
                }
            }
            response
        }
        Err(error) => {
            // The upstream closed without an answer: so does the proxy.
            tracing::warn!(error = %redactor.text(&error.to_string()), "the upstream did not answer");
            connection.hang_up();
            StatusCode::BAD_GATEWAY.into_response()
        }
    };
    if let Err(error) = append(&shared, &exchange) {
        tracing::error!(%error, "an exchange could not be written to the cassette");
    }
    response
}

fn is_hop_by_hop(name: &HeaderName) -> bool {
    HOP_BY_HOP.contains(&name.as_str())
}

/// Appends one exchange and makes it durable, so a SIGKILL loses at most those in flight.
fn append(shared: &Shared, exchange: &Exchange) -> std::io::Result<()> {
    let line = serde_json::to_string(exchange)?;
    let mut file = shared
        .cassette
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    writeln!(file, "{line}")?;
    file.sync_data()
}
