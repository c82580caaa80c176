//! The transport: whichever TLS feature is built (`rustls-ring` by default; CI also runs this file
//! with `--no-default-features --features rustls-aws-lc` and `--features native-tls`) connects over
//! https to a local server whose certificate a test CA signs, trusting that CA as an extra root; a
//! proxy and a caller's own `reqwest::Client` are used as configured.
//!
//! The server is the emulator behind a TLS front (rustls on ring, whatever the client uses).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use api_emulator::{Emulator, EmulatorOptions};
use api_mgmt::{Client, Credentials, Error, ServiceHandle, client::RetryPolicy};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const CA: &str = include_str!("fixtures/tls/ca.pem");
const SERVER_CERT: &str = include_str!("fixtures/tls/server.pem");
const SERVER_KEY: &str = include_str!("fixtures/tls/server.key");

/// Accepts TLS on a free loopback port and forwards the plain bytes to `backend`.
async fn tls_front(backend: SocketAddr) -> SocketAddr {
    let certs: Vec<CertificateDer<'static>> =
        CertificateDer::pem_slice_iter(SERVER_CERT.as_bytes())
            .collect::<Result<_, _>>()
            .expect("the fixture certificate");
    let key = PrivateKeyDer::from_pem_slice(SERVER_KEY.as_bytes()).expect("the fixture key");
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("TLS versions")
    .with_no_client_auth()
    .with_single_cert(certs, key)
    .expect("a server config");
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                // A client that refuses the certificate ends the handshake: nothing to forward.
                if let Ok(mut tls) = acceptor.accept(tcp).await
                    && let Ok(mut plain) = TcpStream::connect(backend).await
                {
                    let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
                }
            });
        }
    });
    address
}

/// A minimal HTTP CONNECT proxy on a free loopback port; counts the tunnels it opened.
async fn connect_proxy() -> (SocketAddr, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let tunnels = Arc::new(AtomicUsize::new(0));
    let counted = tunnels.clone();
    tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            let counted = counted.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    if client.read_exact(&mut byte).await.is_err() || head.len() > 8192 {
                        return;
                    }
                    head.push(byte[0]);
                }
                let head = String::from_utf8_lossy(&head).to_string();
                let Some(target) = head
                    .strip_prefix("CONNECT ")
                    .and_then(|rest| rest.split_whitespace().next())
                else {
                    let _ = client
                        .write_all(b"HTTP/1.1 405 Method Not Allowed\r\n\r\n")
                        .await;
                    return;
                };
                let Ok(mut upstream) = TcpStream::connect(target).await else {
                    let _ = client.write_all(b"HTTP/1.1 502 Bad Gateway\r\n\r\n").await;
                    return;
                };
                counted.fetch_add(1, Ordering::SeqCst);
                if client.write_all(b"HTTP/1.1 200 OK\r\n\r\n").await.is_ok() {
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
                }
            });
        }
    });
    (address, tunnels)
}

fn running_service(emulator: &Emulator, client: &Client) -> ServiceHandle {
    client.service(
        emulator.organization_id(),
        emulator.service_id("running").expect("a running service"),
    )
}

async fn emulator() -> Emulator {
    Emulator::start(EmulatorOptions::for_tests())
        .await
        .expect("the emulator starts")
}

fn credentials(emulator: &Emulator) -> Credentials {
    let (id, secret) = emulator.admin_key();
    Credentials::basic(id, secret)
}

#[tokio::test]
async fn https_with_a_custom_root_certificate() {
    let emulator = emulator().await;
    let front = tls_front(emulator.address()).await;
    let url = format!("https://localhost:{}", front.port());

    let client = Client::builder(&url)
        .credentials(credentials(&emulator))
        .root_certificate_pem(CA)
        .build()
        .expect("a client");
    let endpoints = running_service(&emulator, &client)
        .reverse_private_endpoints()
        .await
        .expect("a call over TLS");
    assert_eq!(endpoints.len(), 2);

    // Without the test CA the certificate is not trusted: no request is sent.
    let untrusting = Client::builder(&url)
        .credentials(credentials(&emulator))
        .retry(RetryPolicy::disabled())
        .build()
        .expect("a client");
    let err = running_service(&emulator, &untrusting)
        .reverse_private_endpoints()
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Transport(_)), "{err}");
    assert!(
        !err.is_outcome_unknown(),
        "the handshake failed before anything was sent: {err}"
    );
    assert_eq!(
        emulator.requests().len(),
        1,
        "only the trusted call reached the server"
    );
}

#[tokio::test]
async fn https_through_a_proxy() {
    let emulator = emulator().await;
    let front = tls_front(emulator.address()).await;
    let (proxy, tunnels) = connect_proxy().await;
    let client = Client::builder(format!("https://localhost:{}", front.port()))
        .credentials(credentials(&emulator))
        .root_certificate_pem(CA)
        .proxy(format!("http://user:proxy-password@{proxy}"))
        .build()
        .expect("a client");
    assert!(
        !format!("{:?}", client.config()).contains("proxy-password"),
        "the proxy's password stays out of Debug"
    );
    let service = running_service(&emulator, &client);
    service
        .reverse_private_endpoints()
        .await
        .expect("a call through the proxy");
    assert!(
        tunnels.load(Ordering::SeqCst) >= 1,
        "the call went through the proxy"
    );
}

#[tokio::test]
async fn a_callers_own_client_gets_credentials_and_user_agent() {
    let emulator = emulator().await;
    let mut headers = api_mgmt::client::reqwest::header::HeaderMap::new();
    headers.insert("x-team", "platform".parse().unwrap());
    // The client's own credentials and user agent give way to the SDK's: the call is authenticated
    // with the builder's key (a wrong one would answer 401).
    headers.insert("authorization", "Basic d3Jvbmc6a2V5".parse().unwrap());
    let own = api_mgmt::client::http_client_builder()
        .default_headers(headers)
        .user_agent("their-tool/1.0")
        .build()
        .expect("a reqwest client");
    let client = Client::builder(emulator.base_url())
        .credentials(credentials(&emulator))
        .http_client(own)
        .build()
        .expect("a client");
    running_service(&emulator, &client)
        .reverse_private_endpoints()
        .await
        .expect("authenticated through the caller's client");
    let log = emulator.requests();
    let sent = &log[0].headers;
    assert_eq!(sent["x-team"], "platform", "{sent:?}");
    assert_eq!(sent["authorization"], api_emulator::REDACTED);
    assert!(sent["user-agent"].starts_with("api-mgmt/"), "{sent:?}");
    assert_eq!(log[0].status, 200);
}

#[test]
fn transport_mistakes_are_configuration_errors() {
    let build =
        |builder: api_mgmt::client::ConfigBuilder<Client>| builder.build().unwrap_err().to_string();
    let base =
        || Client::builder("https://api.example.com").credentials(Credentials::basic("k", "s"));
    assert!(build(base().root_certificate_pem("not a certificate")).contains("root certificate 0"));
    let with_client = base()
        .http_client(api_mgmt::client::http_client_builder().build().unwrap())
        .proxy("http://proxy.example:3128");
    assert!(build(with_client).contains("proxy cannot apply to a reqwest::Client"));
    let secret_proxy = build(base().proxy("ftp://user:hunter2@proxy.example"));
    assert!(
        secret_proxy.contains("ftp") && !secret_proxy.contains("hunter2"),
        "{secret_proxy}"
    );
}
