//! `api-bench canned-server N`, the canned server in a process of its own (what the timed runs
//! measure against, so that their CPU time and instructions are the client's alone): it says where
//! it listens, answers the canned bytes, and ends when its standard input closes.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn the_canned_server_process_answers_then_ends_with_its_stdin() {
    let mut server = Command::new(env!("CARGO_BIN_EXE_api-bench"))
        .args(["canned-server", "1"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("api-bench starts");
    let mut line = String::new();
    BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let address = line
        .strip_prefix("listening ")
        .map(str::trim)
        .unwrap_or_else(|| panic!("{line:?}"));
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .write_all(b"GET /api/v2/dashboards HTTP/1.1\r\nhost: bench\r\nconnection: close\r\n\r\n")
        .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{}", &answer[..80]);
    assert!(answer.contains("\"data\""), "the dashboards' body");

    drop(server.stdin.take());
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = server.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "still running with its stdin closed"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status}");
}
