//! The binary as a user runs it: started on a free loopback port, spoken to in plain HTTP/1.1, and
//! the built-in seed's first key and the path of its running service.
#![allow(dead_code)] // each test binary uses its own part

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;

pub const BINARY: &str = env!("CARGO_BIN_EXE_api-emulator");

/// A free loopback port that no other test's listener is given meanwhile.
pub fn port() -> u16 {
    api_test_support::ports::free_port()
}

/// Starts the binary with `args` and waits until `port` takes connections.
pub fn spawn(args: &[&str], port: u16) -> Child {
    let child = Command::new(BINARY)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary starts");
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "nothing listens on {port}");
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

/// One HTTP/1.1 request (a JSON body when given); the status and the rest of the answer (headers
/// and body).
pub fn request(
    port: u16,
    method: &str,
    path: &str,
    authorization: &str,
    body: Option<&str>,
) -> (u16, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let body = body.unwrap_or_default();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: x\r\nAuthorization: {authorization}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut reader = BufReader::new(&mut stream);
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    let mut rest = String::new();
    let _ = reader.read_to_string(&mut rest);
    let status = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, rest)
}

/// A GET; the status.
pub fn get(port: u16, path: &str, authorization: &str) -> u16 {
    request(port, "GET", path, authorization, None).0
}

/// The built-in seed's first key as a Basic `Authorization` value, and the path of a service of
/// its organization (`/v1/organizations/{org}/services/{id}`).
pub fn admin() -> (String, String) {
    let seed = api_emulator::Seed::builtin();
    let key = &seed.api_keys[0];
    let service = seed
        .services
        .iter()
        .find(|s| s.organization == key.organization)
        .expect("a service of the key's organization");
    let basic = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{}:{}", key.id, key.secret))
    );
    let path = format!(
        "/v1/organizations/{}/services/{}",
        key.organization,
        service.service.id.expect("a seeded service id")
    );
    (basic, path)
}
