//! [`CannedServer`]: a minimal axum server on its own runtime that answers fixed bytes per path, so the
//! benchmark measures the clients and not a server's work. The timed runs start it in a process of
//! its own ([`CannedServer::spawn`], `api-bench canned-server N`), so that the CPU time and the
//! instructions counted are the client's alone.

use std::net::SocketAddr;
use std::thread::JoinHandle;

use axum::Router;
use axum::body::Bytes;
use axum::routing::{get, patch};
use tokio::sync::oneshot;

use crate::fixtures::{self, ORGANIZATION, PIPE, SERVICE};

/// The path of `getPipe` on the canned server.
pub fn pipe_path() -> String {
    format!("/v1/organizations/{ORGANIZATION}/services/{SERVICE}/pipes/{PIPE}")
}

/// The path of `updateServiceState` on the canned server.
pub fn service_state_path() -> String {
    format!("/v1/organizations/{ORGANIZATION}/services/{SERVICE}/state")
}

/// The path of `listReversePrivateEndpoints` on the canned server.
pub fn endpoints_path() -> String {
    format!("/v1/organizations/{ORGANIZATION}/services/{SERVICE}/pipesReversePrivateEndpoints")
}

/// The path of `listDashboards`.
pub const DASHBOARDS_PATH: &str = "/api/v2/dashboards";

/// Headers of a management answer, as the API sends them.
const MANAGEMENT_HEADERS: [(&str, &str); 2] = [
    ("content-type", "application/json"),
    ("x-request-id", "5e0c7a9b-2d41-4f3e-8b6a-0c9d8e7f6a5b"),
];

/// Headers of an observability answer, as the API sends them.
const OBSERVABILITY_HEADERS: [(&str, &str); 4] = [
    ("content-type", "application/json"),
    ("ratelimit-limit", "100"),
    ("ratelimit-remaining", "99"),
    ("ratelimit-reset", "60"),
];

/// A running canned server; stops when dropped.
pub struct CannedServer {
    address: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
    /// The server's own process, when it runs in one.
    process: Option<std::process::Child>,
}

/// The first word of the line `api-bench canned-server` writes once it listens.
const LISTENING: &str = "listening";

impl CannedServer {
    /// Starts the server on a runtime of `workers` threads of its own, on a free loopback port.
    pub fn start(workers: usize) -> std::io::Result<Self> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers)
            .thread_name("canned-server")
            .enable_all()
            .build()?;
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
        listener.set_nonblocking(true)?;
        let address = listener.local_addr()?;
        let (stop, stopped) = oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            runtime.block_on(async move {
                let listener = match tokio::net::TcpListener::from_std(listener) {
                    Ok(listener) => listener,
                    Err(e) => return eprintln!("the canned server cannot listen: {e}"),
                };
                let served = axum::serve(listener, router())
                    .with_graceful_shutdown(async {
                        let _ = stopped.await;
                    })
                    .await;
                if let Err(e) = served {
                    eprintln!("the canned server stopped: {e}");
                }
            });
        });
        Ok(Self {
            address,
            stop: Some(stop),
            thread: Some(thread),
            process: None,
        })
    }

    /// Starts the server in a process of its own (this executable, `canned-server workers`), so
    /// that this process's CPU time and instructions are the client's alone; it ends when dropped,
    /// or when this process does (its standard input closes).
    pub fn spawn(workers: usize) -> std::io::Result<Self> {
        use std::io::BufRead;
        let mut child = std::process::Command::new(std::env::current_exe()?)
            .args(["canned-server", &workers.to_string()])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| std::io::Error::other("no stdout"))?;
        let mut line = String::new();
        std::io::BufReader::new(stdout).read_line(&mut line)?;
        let address = line
            .strip_prefix(LISTENING)
            .and_then(|rest| rest.trim().parse::<SocketAddr>().ok());
        let Some(address) = address else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(std::io::Error::other(format!(
                "the canned server's process said {line:?}, not where it listens"
            )));
        };
        Ok(Self {
            address,
            stop: None,
            thread: None,
            process: Some(child),
        })
    }

    /// `api-bench canned-server N`: serves on `workers` threads, says where on stdout, and ends
    /// when its standard input closes (the benchmark that started it ended).
    pub fn serve_until_stdin_closes(workers: usize) -> std::io::Result<()> {
        use std::io::{Read, Write};
        let server = Self::start(workers)?;
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "{LISTENING} {}", server.address)?;
        stdout.flush()?;
        drop(stdout);
        let mut rest = Vec::new();
        let _ = std::io::stdin().read_to_end(&mut rest);
        drop(server);
        Ok(())
    }

    /// `http://127.0.0.1:<port>`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.address)
    }
}

impl Drop for CannedServer {
    fn drop(&mut self) {
        if let Some(mut process) = self.process.take() {
            // Its standard input closes with it: the server ends.
            drop(process.stdin.take());
            let _ = process.wait();
        }
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The fixed answer: its headers and body (a cheap clone of shared bytes).
async fn answer<const N: usize>(
    headers: [(&'static str, &'static str); N],
    body: Bytes,
) -> ([(&'static str, &'static str); N], Bytes) {
    (headers, body)
}

fn router() -> Router {
    let pipe = Bytes::from(fixtures::pipe());
    let service = Bytes::from(fixtures::service_state());
    let endpoints = Bytes::from(fixtures::reverse_private_endpoints());
    let dashboards = Bytes::from(fixtures::dashboards());
    Router::new()
        .route(
            &service_state_path(),
            patch(move || answer(MANAGEMENT_HEADERS, service.clone())),
        )
        .route(
            &pipe_path(),
            get(move || answer(MANAGEMENT_HEADERS, pipe.clone())),
        )
        .route(
            &endpoints_path(),
            get(move || answer(MANAGEMENT_HEADERS, endpoints.clone())),
        )
        .route(
            DASHBOARDS_PATH,
            get(move || answer(OBSERVABILITY_HEADERS, dashboards.clone())),
        )
}
