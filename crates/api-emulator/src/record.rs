//! `api-emulator record`: a recording proxy in front of a real deployment. Every exchange is
//! forwarded unchanged (but for `Accept-Encoding`: the proxy asks for plain answers, which it can
//! keep) and, once answered, appended to a [cassette](crate::cassette) with its secrets removed by
//! the SDK's one redaction rule: no `Authorization` or cookie header is written, and every secret
//! value the recording has seen in a request (a secret-named member, a credential) is searched for
//! in everything written, in any encoding: in this exchange, in every later one, and, when it is
//! first seen, in every line already written (the cassette is then rewritten without it).

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use api_core::reqwest;
use axum::body::Bytes;
use axum::extract::State;
use axum::extract::connect_info::ConnectInfo;
use axum::http::{HeaderMap, HeaderName, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};

use crate::EmulatorError;
use api_raw::support::redact::Redactor;

use crate::cassette::{
    CASSETTE_VERSION, Exchange, Header, KEPT_HEADERS, Kept, kept_body, kept_request,
};
use crate::connection::Connection;
use crate::operation::OperationId;
use crate::serving::Serving;

/// The most a request body may be (the API's own limit) for the proxy to forward it.
const REQUEST_LIMIT: usize = 2 * 1024 * 1024;

/// The most of an answer the proxy reads and forwards (eight times what a cassette keeps): a larger
/// one is not held whole in memory, nor forwarded; the proxy hangs up, as on a lost upstream.
const RESPONSE_LIMIT: usize = 8 * crate::cassette::MAX_BODY;

/// How long the proxy waits to connect to the upstream.
const UPSTREAM_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the proxy waits for the upstream's whole answer; then it hangs up, as a lost upstream.
const UPSTREAM_TIMEOUT: Duration = Duration::from_secs(60);

/// Headers that belong to one connection, not to the exchange, or that the proxy sets itself: never
/// forwarded.
const HOP_BY_HOP: [&str; 10] = [
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "host",
    // The proxy asks for `identity`: a compressed answer could not be kept.
    "accept-encoding",
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
    cassette: Mutex<Written>,
}

/// The cassette being written, and every secret value the recording has seen.
struct Written {
    file: File,
    path: PathBuf,
    secrets: Redactor,
}

impl Recorder {
    /// Opens the cassette and starts the proxy.
    pub async fn start(options: RecordOptions) -> Result<Self, EmulatorError> {
        let cassette = open(&options.cassette)
            .map_err(|e| EmulatorError(format!("cassette {}: {e}", options.cassette.display())))?;
        // Bounded, so that a silent upstream cannot keep the proxy (or its shutdown) waiting: longer
        // than any attempt of the SDK (30 s by default), so the client gives up first.
        let http = api_core::http_client_builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(UPSTREAM_CONNECT_TIMEOUT)
            .timeout(UPSTREAM_TIMEOUT)
            .build()
            .map_err(|e| EmulatorError(format!("cannot build the HTTP client: {e}")))?;
        let shared = Arc::new(Shared {
            upstream: options.upstream.trim_end_matches('/').to_string(),
            observability_upstream: options
                .observability_upstream
                .map(|url| url.trim_end_matches('/').to_string()),
            http,
            cassette: Mutex::new(Written {
                file: cassette,
                path: options.cassette.clone(),
                secrets: Redactor::new(),
            }),
        });
        let router = axum::Router::new()
            .fallback(forward)
            .with_state(shared.clone());
        let closing = shared.clone();
        let serving = Serving::start(router, options.listen, async move {
            // Off the async threads, as every write of the cassette: the lock and the fsync.
            let synced = tokio::task::spawn_blocking(move || {
                let written = closing
                    .cassette
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                written.file.sync_all()
            })
            .await;
            match synced {
                Ok(Ok(())) => {}
                Ok(Err(error)) => tracing::error!(%error, "the cassette could not be synced"),
                Err(error) => tracing::error!(%error, "the cassette's last sync stopped"),
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
    let mut file = api_core::private_file::open(
        std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .read(true),
        path,
    )?;
    let mut first = String::new();
    BufReader::new(&file).read_line(&mut first)?;
    if first.trim().is_empty() {
        let header = Header {
            cassette: CASSETTE_VERSION,
            recorded_at: chrono::Utc::now(),
            tool: "api-emulator record".into(),
        };
        let mut line = serde_json::to_string(&header)?;
        line.push('\n');
        file.write_all(line.as_bytes())?;
        file.sync_data()?;
        // A new cassette's name too, or a power loss could take the file and its exchanges.
        api_core::private_file::sync_created(path)?;
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
        drop_torn_line(&file)?;
    }
    Ok(file)
}

/// Removes a last line without its newline (a recorder killed while writing it), so that the next
/// exchange starts a line of its own.
fn drop_torn_line(file: &File) -> std::io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let length = file.metadata()?.len();
    let mut reader = file;
    // The length up to the last newline: 0 when there is none.
    let mut kept = 0;
    let mut at = length;
    let mut chunk = [0u8; 4096];
    while at > 0 {
        let start = at.saturating_sub(chunk.len() as u64);
        let size = usize::try_from(at - start).unwrap_or(chunk.len());
        reader.seek(SeekFrom::Start(start))?;
        reader.read_exact(&mut chunk[..size])?;
        match chunk[..size].iter().rposition(|b| *b == b'\n') {
            Some(newline) => {
                kept = start + newline as u64 + 1;
                break;
            }
            None => at = start,
        }
    }
    if kept == 0 {
        // The header alone, read above, without its newline.
        return (&*file).write_all(b"\n");
    }
    if kept < length {
        tracing::warn!(
            bytes = length - kept,
            "the cassette's last line was cut short (a recorder was killed while writing it); it is removed"
        );
        file.set_len(kept)?;
    }
    Ok(())
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
        Some(observability) if crate::operation::is_observability_path(path) => observability,
        _ => &shared.upstream,
    };
    let url = match uri.query() {
        Some(query) => format!("{base}{path}?{query}"),
        None => format!("{base}{path}"),
    };
    let mut request = shared
        .http
        .request(method.clone(), url)
        .header("accept-encoding", "identity")
        .body(body.clone());
    for (name, value) in &headers {
        if !is_hop_by_hop(name) {
            request = request.header(name, value);
        }
    }
    let (kept, request_secrets) = kept_request(&headers, &body);
    // This request's secrets, and every one seen before it.
    let mut redactor = shared
        .cassette
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .secrets
        .clone();
    redactor.absorb(&request_secrets);
    let mut exchange = Exchange {
        operation_id: OperationId::of_request(method.as_str(), path),
        method: method.to_string(),
        path: redactor.text(path).into_owned(),
        query: uri.query().map(|q| redactor.text(q).into_owned()),
        request_body: None,
        request_text: None,
        request_unkept: None,
        status: 0,
        response_headers: Default::default(),
        response_body: None,
        response_text: None,
        response_unkept: None,
    };
    match kept {
        Kept::Empty => {}
        // Bodies are redacted once, in place, when the exchange is written (with every secret
        // known by then).
        Kept::Json(json) => exchange.request_body = Some(json),
        Kept::Text(text) => exchange.request_text = Some(text),
        Kept::Unkept(unkept) => exchange.request_unkept = Some(unkept),
    }
    let answered = match request.send().await {
        Ok(answer) => {
            let status = answer.status();
            let answer_headers = answer.headers().clone();
            read_bounded(answer)
                .await
                .map(|bytes| (status, answer_headers, bytes))
        }
        Err(e) => Err(Upstream::Failed(e)),
    };
    // A hangup is made once the exchange is written: a connection closed earlier would drop this
    // handler while its write is under way, and the cassette could be read (or the recorder shut
    // down) without it.
    let mut hang_up = false;
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
            let encoding = answer_headers
                .get(reqwest::header::CONTENT_ENCODING)
                .and_then(|v| v.to_str().ok());
            match kept_body(&bytes, encoding) {
                Kept::Empty => {}
                Kept::Json(json) => exchange.response_body = Some(json),
                Kept::Text(text) => exchange.response_text = Some(text),
                Kept::Unkept(unkept) => {
                    tracing::warn!(
                        status = status.as_u16(),
                        path = %exchange.path,
                        "the answer's body is not kept in the cassette: {unkept}"
                    );
                    exchange.response_unkept = Some(unkept);
                }
            }
            let mut response = (status, bytes).into_response();
            for (name, value) in &answer_headers {
                if !is_hop_by_hop(name) && name != "content-length" {
                    response.headers_mut().append(name, value.clone());
                }
            }
            response
        }
        Err(Upstream::Failed(error)) => {
            // The upstream closed without an answer: so does the proxy.
            tracing::warn!(error = %redactor.text(&error.to_string()), "the upstream did not answer");
            hang_up = true;
            StatusCode::BAD_GATEWAY.into_response()
        }
        Err(Upstream::TooLarge { status, bytes }) => {
            // Not forwarded: the proxy holds no answer whole past its bound, and hangs up.
            tracing::warn!(
                status = status.as_u16(),
                path = %exchange.path,
                "the answer is larger than {} MiB: not forwarded, the connection is closed",
                RESPONSE_LIMIT / (1024 * 1024)
            );
            // The client saw the connection close: a hangup, as the cassette records one.
            exchange.status = 0;
            exchange.response_unkept = Some(crate::cassette::Unkept {
                bytes,
                why: format!(
                    "larger than {} MiB: not forwarded",
                    RESPONSE_LIMIT / (1024 * 1024)
                ),
            });
            hang_up = true;
            StatusCode::BAD_GATEWAY.into_response()
        }
    };
    // The write and its fsync (and a rewrite for a new secret) off the async threads.
    let writing = tokio::task::spawn_blocking(move || append(&shared, exchange, &request_secrets));
    match writing.await {
        Ok(Ok(())) => {}
        Ok(Err(error)) => {
            tracing::error!(%error, "an exchange could not be written to the cassette");
        }
        Err(error) => tracing::error!(%error, "the cassette's writer stopped"),
    }
    if hang_up {
        connection.hang_up();
    }
    response
}

/// Why the proxy has no answer to forward.
enum Upstream {
    /// No answer, or one cut off.
    Failed(reqwest::Error),
    /// An answer over [`RESPONSE_LIMIT`] bytes: its `Content-Length`, else what arrived before the
    /// proxy stopped reading.
    TooLarge { status: StatusCode, bytes: u64 },
}

/// The answer's body, read up to [`RESPONSE_LIMIT`] bytes: a longer one (by its `Content-Length`,
/// or as it arrives) is not read further.
async fn read_bounded(mut answer: reqwest::Response) -> Result<Bytes, Upstream> {
    let status = answer.status();
    let limit = RESPONSE_LIMIT as u64;
    if let Some(length) = answer.content_length().filter(|length| *length > limit) {
        return Err(Upstream::TooLarge {
            status,
            bytes: length,
        });
    }
    let mut body = Vec::new();
    while let Some(chunk) = answer.chunk().await.map_err(Upstream::Failed)? {
        if body.len() + chunk.len() > RESPONSE_LIMIT {
            return Err(Upstream::TooLarge {
                status,
                bytes: (body.len() + chunk.len()) as u64,
            });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Bytes::from(body))
}

fn is_hop_by_hop(name: &HeaderName) -> bool {
    HOP_BY_HOP.contains(&name.as_str())
}

/// Appends one exchange and makes it durable, so a SIGKILL loses at most those in flight. Under the
/// cassette's lock: `request_secrets` join the recording's secrets; one that is new is searched for
/// in every line already written (the cassette is rewritten without it when found); and the
/// exchange is redacted with every secret known now (one a concurrent exchange brought is too).
fn append(
    shared: &Shared,
    mut exchange: Exchange,
    request_secrets: &Redactor,
) -> std::io::Result<()> {
    let mut written = shared
        .cassette
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    let new = written.secrets.absorb(request_secrets);
    if !new.is_empty() {
        rewrite_without(&mut written, &new)?;
    }
    redact(&mut exchange, &written.secrets);
    let mut line = serde_json::to_string(&exchange)?;
    line.push('\n');
    // One write of the whole line: a kill leaves it whole, missing, or cut short (and a cut line is
    // removed by the next recorder that continues the file).
    written.file.write_all(line.as_bytes())?;
    written.file.sync_data()
}

/// Every string of `exchange` redacted in place: its bodies (the one copy the proxy parsed), texts,
/// path, query and headers.
fn redact(exchange: &mut Exchange, secrets: &Redactor) {
    let text = |text: &mut String| {
        if let std::borrow::Cow::Owned(redacted) = secrets.text(text) {
            *text = redacted;
        }
    };
    for body in [&mut exchange.request_body, &mut exchange.response_body]
        .into_iter()
        .flatten()
    {
        secrets.json(body);
    }
    for held in [
        &mut exchange.request_text,
        &mut exchange.response_text,
        &mut exchange.query,
    ]
    .into_iter()
    .flatten()
    {
        text(held);
    }
    text(&mut exchange.path);
    exchange.response_headers.values_mut().for_each(text);
}

/// Rewrites the cassette with `secrets` removed from every line it holds, when one holds any: a new
/// file beside it, private, renamed over it and the directory synced (a crash leaves the old file
/// or the new one, and never the old one back once the new was written), then continued.
fn rewrite_without(written: &mut Written, secrets: &Redactor) -> std::io::Result<()> {
    let text = std::fs::read_to_string(&written.path)?;
    let mut changed = false;
    let mut lines = Vec::new();
    for (index, line) in text.lines().enumerate() {
        match serde_json::from_str::<serde_json::Value>(line) {
            Ok(mut value) if index > 0 => {
                let before = value.clone();
                secrets.json(&mut value);
                if value != before {
                    changed = true;
                    lines.push(serde_json::to_string(&value)?);
                    continue;
                }
                lines.push(line.to_string());
            }
            _ => lines.push(line.to_string()),
        }
    }
    if !changed {
        return Ok(());
    }
    tracing::warn!(
        "a secret first sent now was in an earlier exchange's answer: the cassette is rewritten without it"
    );
    let mut whole = lines.join("\n");
    whole.push('\n');
    api_core::private_file::replace(&written.path, whole.as_bytes())?;
    written.file = std::fs::OpenOptions::new()
        .append(true)
        .read(true)
        .open(&written.path)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cassette::Cassette;

    fn exchange(path: &str) -> Exchange {
        Exchange {
            operation_id: None,
            method: "GET".into(),
            path: path.into(),
            query: None,
            request_body: None,
            request_text: None,
            request_unkept: None,
            status: 200,
            response_headers: Default::default(),
            response_body: None,
            response_text: None,
            response_unkept: None,
        }
    }

    fn shared(path: &Path) -> Shared {
        Shared {
            upstream: String::new(),
            observability_upstream: None,
            http: api_core::http_client_builder().build().unwrap(),
            cassette: Mutex::new(Written {
                file: open(path).unwrap(),
                path: path.to_path_buf(),
                secrets: Redactor::new(),
            }),
        }
    }

    fn write(shared: &Shared, exchange: Exchange) {
        append(shared, exchange, &Redactor::new()).unwrap();
    }

    #[test]
    fn a_continued_cassette_loses_only_a_line_cut_short() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        write(&shared(&path), exchange("/first"));
        // A recorder killed in the middle of its second line.
        let whole = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, format!("{whole}{{\"operationId\":null,\"meth")).unwrap();
        write(&shared(&path), exchange("/third"));
        let read = Cassette::read(&path).unwrap();
        let paths: Vec<&str> = read.exchanges.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(paths, ["/first", "/third"]);
        assert!(std::fs::read_to_string(&path).unwrap().ends_with("}\n"));

        // A long cassette whose last line was cut after more than one read's worth of it.
        let long = dir.path().join("long.jsonl");
        let writer = shared(&long);
        for n in 0..40 {
            write(&writer, exchange(&format!("/{n}/{}", "p".repeat(300))));
        }
        drop(writer);
        let whole = std::fs::read_to_string(&long).unwrap();
        let torn = format!("{{\"path\": \"{}", "q".repeat(9000));
        std::fs::write(&long, format!("{whole}{torn}")).unwrap();
        write(&shared(&long), exchange("/after"));
        let read = Cassette::read(&long).unwrap();
        assert_eq!(read.exchanges.len(), 41);
        assert_eq!(read.exchanges[40].path, "/after");

        // A header whose newline was never written keeps the header.
        let bare = dir.path().join("bare.jsonl");
        open(&bare).unwrap();
        let header = std::fs::read_to_string(&bare).unwrap();
        std::fs::write(&bare, header.trim_end()).unwrap();
        write(&shared(&bare), exchange("/only"));
        assert_eq!(Cassette::read(&bare).unwrap().exchanges.len(), 1);
    }

    /// Continuing a cassette whose last line is whole warns of nothing; one whose last line was
    /// cut short says how much of it goes.
    #[test]
    fn only_a_line_cut_short_is_warned_about() {
        // `tracing` caches each callsite's interest process-wide. Another test reaching this
        // warning on its own thread, with no subscriber anywhere, while this one's subscriber came
        // or went, left it cached as wanted by no one, and the scoped subscriber below saw nothing
        // (once in three runs with eight test threads). A global subscriber that takes warnings
        // and drops them keeps every warning wanted; the scoped one still gets this thread's.
        static GLOBAL: std::sync::Once = std::sync::Once::new();
        GLOBAL.call_once(|| {
            let _ = tracing::subscriber::set_global_default(
                tracing_subscriber::fmt()
                    .with_max_level(tracing::Level::WARN)
                    .with_writer(std::io::sink)
                    .finish(),
            );
        });
        let continued = |path: &Path| -> String {
            let logs = api_test_support::captured_log::CapturedLog::default();
            let writer = logs.clone();
            let subscriber = tracing_subscriber::fmt()
                .with_max_level(tracing::Level::WARN)
                .with_writer(move || writer.clone())
                .finish();
            tracing::subscriber::with_default(subscriber, || {
                write(&shared(path), exchange("/next"));
            });
            logs.text()
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        write(&shared(&path), exchange("/first"));
        assert_eq!(continued(&path), "", "a whole last line");
        let whole = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, format!("{whole}{{\"meth")).unwrap();
        let logs = continued(&path);
        assert!(
            logs.contains("last line was cut short") && logs.contains("bytes=6"),
            "{logs}"
        );
    }

    /// An answer of exactly the bound is read whole (by its length, and as it arrives); one byte
    /// more is not.
    #[tokio::test]
    async fn an_answer_of_the_bound_is_read_and_one_byte_more_is_not() {
        let answer =
            |len: usize| reqwest::Response::from(axum::http::Response::new(vec![b' '; len]));
        assert_eq!(
            answer(RESPONSE_LIMIT).content_length(),
            Some(RESPONSE_LIMIT as u64)
        );
        let read = read_bounded(answer(RESPONSE_LIMIT)).await;
        assert_eq!(read.map(|body| body.len()).ok(), Some(RESPONSE_LIMIT));
        let over = read_bounded(answer(RESPONSE_LIMIT + 1)).await;
        assert!(
            matches!(over, Err(Upstream::TooLarge { bytes, .. }) if bytes == RESPONSE_LIMIT as u64 + 1)
        );
    }

    #[test]
    fn a_secret_first_sent_later_leaves_the_earlier_lines_too() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        let writer = shared(&path);
        // An answer that holds a value no request has sent yet, under no secret name.
        let mut early = exchange("/early");
        early.response_body = Some(serde_json::json!({"note": "uses s3cr3t-value-9 today"}));
        write(&writer, early);
        // Then a request sends it as a password, and a later answer echoes it, escaped.
        let mut sends = exchange("/sends");
        sends.request_body = Some(serde_json::json!({"password": "[REDACTED]"}));
        append(&writer, sends, &Redactor::new().secret("s3cr3t-value-9")).unwrap();
        let mut later = exchange("/later");
        later.response_text = Some("echo s3cr3t\\u002Dvalue-9".into());
        write(&writer, later);
        let file = std::fs::read_to_string(&path).unwrap();
        assert!(!file.contains("s3cr3t"), "{file}");
        let read = Cassette::read(&path).unwrap();
        assert_eq!(read.exchanges.len(), 3);
        assert_eq!(
            read.exchanges[0].response_body,
            Some(serde_json::json!({"note": "uses [REDACTED] today"}))
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "the rewritten cassette is private");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_cassette_is_private_whether_new_or_continued() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        let new = dir.path().join("new.jsonl");
        open(&new).unwrap();
        assert_eq!(mode(&new), 0o600);
        let open_to_all = dir.path().join("touched.jsonl");
        std::fs::write(&open_to_all, "").unwrap();
        std::fs::set_permissions(&open_to_all, std::fs::Permissions::from_mode(0o644)).unwrap();
        open(&open_to_all).unwrap();
        assert_eq!(mode(&open_to_all), 0o600);
    }
}
