//! The binary's memory under many large requests: the request log keeps at most its budget
//! ([`LOG_BUDGET`] bytes of entries), so nine hundred creates with bodies just under the size the log
//! keeps whole (about 49 MiB in all, three times the budget) leave the process's resident memory
//! grown by about the budget (at most twice it), not by what was sent.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use api_emulator::{LOG_BODY_LIMIT, LOG_BUDGET};
use base64::Engine;

const BINARY: &str = env!("CARGO_BIN_EXE_api-emulator");

struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The resident set size of process `pid`, in bytes (Linux).
fn resident_bytes(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// One HTTP/1.1 POST of a JSON body; the status.
fn post(port: u16, path: &str, authorization: &str, body: &str) -> u16 {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: {authorization}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut reader = BufReader::new(&mut stream);
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    let mut rest = Vec::new();
    let _ = reader.read_to_end(&mut rest);
    line.split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// A valid create body of nearly `size` bytes, the bulk in `destination.roles` (request-only, so
/// the stored pipe stays small and the log holds the bulk).
fn create_body(name: &str, size: usize) -> String {
    let role = "r".repeat(1024);
    let roles: Vec<&str> = std::iter::repeat_n(role.as_str(), size / 1100).collect();
    serde_json::json!({
        "name": name,
        "source": {"kafka": {"brokers": "b:9092", "topics": "t", "format": "JSONEachRow",
                             "authentication": "PLAIN", "credentials": {"username": "u", "password": "p"}}},
        "destination": {"database": "default", "table": "t", "managedTable": true,
                        "columns": [{"name": "id", "type": "UInt64"}], "roles": roles},
        "fieldMappings": [{"sourceField": "id", "destinationField": "id"}],
    })
    .to_string()
}

#[test]
fn nine_hundred_large_creates_grow_the_binary_by_about_its_log_budget() {
    let seed = api_emulator::Seed::builtin();
    let key = &seed.api_keys[0];
    let service = seed
        .services
        .iter()
        .find(|s| s.organization == key.organization)
        .unwrap();
    let path = format!(
        "/v1/organizations/{}/services/{}/pipes",
        key.organization,
        service.service.id.unwrap()
    );
    let basic = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{}:{}", key.id, key.secret))
    );
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let emulator = Running(
        Command::new(BINARY)
            .args([
                "--listen",
                &format!("127.0.0.1:{port}"),
                "--instant",
                "--no-rate-limit",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the binary starts"),
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "nothing listens on {port}");
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = emulator.0.id();
    let Some(_) = resident_bytes(pid) else {
        eprintln!("no /proc here: the memory of the binary is not measured");
        return;
    };

    // What every request allocates once is in the baseline.
    let size = LOG_BODY_LIMIT - 4 * 1024;
    for n in 0..20 {
        assert_eq!(
            post(
                port,
                &path,
                &basic,
                &create_body(&format!("warm-{n}"), size)
            ),
            200
        );
    }
    let before = resident_bytes(pid).unwrap();
    let body = create_body("big-000", size);
    assert!(body.len() < LOG_BODY_LIMIT, "kept whole by the log");
    let count = 900;
    for n in 0..count {
        let status = post(
            port,
            &path,
            &basic,
            &create_body(&format!("big-{n:03}"), size),
        );
        assert_eq!(status, 200, "create {n}");
    }
    let after = resident_bytes(pid).unwrap();
    let sent = count * body.len();
    let growth = after.saturating_sub(before);
    eprintln!(
        "{count} creates of {} bytes ({sent} bytes): RSS {before} -> {after} (+{growth}), budget {LOG_BUDGET}",
        body.len()
    );
    // Three budgets sent: a log that kept them all would break the bound below.
    assert!(sent >= 3 * LOG_BUDGET, "the log had to evict");
    // The budget counts entries as JSON text; held as values they take a little more, and the
    // allocator keeps some of what it freed.
    let bound = 2 * LOG_BUDGET as u64;
    assert!(
        growth <= bound,
        "RSS grew by {growth} bytes after {sent} bytes of requests (bound {bound})"
    );
}
