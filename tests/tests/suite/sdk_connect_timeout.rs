//! A connection that never completes (a server whose accept queue is full: the kernel drops the
//! SYN) ends the same way through the client the SDK builds and through a caller's own client built
//! from `http_client_builder()`: a `Connect` failure, nothing sent, so a create's outcome is known
//! (not applied). Without a connect timeout of its own a client could only say that the attempt
//! timed out, and a create's outcome would be unknown.

use crate::support;

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use api_mgmt::{Client, Credentials, client::RetryPolicy, error::TransportKind};
use support::{KEY_ID, KEY_SECRET, service};

/// A listener that accepts nothing, with its accept queue filled: a new connection to it never
/// completes. The connections that fill it are kept with it.
fn full_listener() -> (SocketAddr, TcpListener, Vec<TcpStream>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    let mut queued = Vec::new();
    let started = Instant::now();
    loop {
        match TcpStream::connect_timeout(&address, Duration::from_millis(200)) {
            Ok(stream) => queued.push(stream),
            Err(_) => break,
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the accept queue never filled"
        );
    }
    (address, listener, queued)
}

async fn create_through(client: &Client) -> api_mgmt::Error {
    let pipe = support::secrets::pipes_with_every_secret().remove(0);
    service(client).pipes().create(&pipe).await.unwrap_err()
}

fn connect_failure(error: &api_mgmt::Error) -> bool {
    matches!(error, api_mgmt::Error::Transport(t) if t.kind == TransportKind::Connect)
        && !error.is_outcome_unknown()
}

#[tokio::test]
async fn a_connection_that_never_completes_is_a_connect_failure_whoever_built_the_client() {
    let (address, _listener, _queued) = full_listener();
    let url = format!("http://{address}");
    let builder = || {
        Client::builder(url.as_str())
            .credentials(Credentials::basic(KEY_ID, KEY_SECRET))
            .retry(RetryPolicy::disabled())
    };
    // The SDK's client, its connect timeout left to the default: below the attempt timeout.
    let built = builder()
        .attempt_timeout(Duration::from_millis(800))
        .build()
        .unwrap();
    let started = Instant::now();
    let error = create_through(&built).await;
    assert!(connect_failure(&error), "{error:?}");
    assert!(
        started.elapsed() < Duration::from_millis(800),
        "{:?}",
        started.elapsed()
    );
    // A caller's client from `http_client_builder()` (its connect timeout shortened for the test).
    let own = api_mgmt::client::http_client_builder()
        .connect_timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let theirs = builder()
        .attempt_timeout(Duration::from_secs(2))
        .http_client(own)
        .build()
        .unwrap();
    let error = create_through(&theirs).await;
    assert!(connect_failure(&error), "{error:?}");
    // A client without a connect timeout can only say that the attempt timed out.
    let bare = builder()
        .attempt_timeout(Duration::from_millis(300))
        .http_client(reqwest::Client::new())
        .build()
        .unwrap();
    let error = create_through(&bare).await;
    assert!(
        !connect_failure(&error) && error.is_outcome_unknown(),
        "{error:?}"
    );
}
