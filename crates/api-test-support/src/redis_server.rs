//! A real `redis-server` (or `valkey-server`) for one test, on a free loopback port, stopped when
//! dropped. Outside CI a machine without the server skips the test, saying so; under `CI=true` a
//! missing server fails it (`.ci/run` installs it).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running server.
pub struct RedisServer {
    child: Child,
    /// `redis://127.0.0.1:<port>`.
    pub url: String,
    _dir: tempfile::TempDir,
}

impl RedisServer {
    /// Starts a server, or says why the test does not run (`None`).
    pub fn start(test: &str) -> Option<Self> {
        let Some(binary) = ["redis-server", "valkey-server"]
            .into_iter()
            .find(|binary| Command::new(binary).arg("--version").output().is_ok())
        else {
            let ci = std::env::var("CI").is_ok_and(|ci| ci == "true" || ci == "1");
            assert!(
                !ci,
                "{test}: no redis-server or valkey-server, which CI installs"
            );
            eprintln!("{test}: not run: no redis-server or valkey-server on this machine");
            return None;
        };
        let port = crate::ports::free_port();
        let dir = tempfile::tempdir().expect("a directory");
        let child = Command::new(binary)
            .args(["--bind", "127.0.0.1", "--port", &port.to_string()])
            .args([
                "--save",
                "",
                "--appendonly",
                "no",
                "--protected-mode",
                "yes",
            ])
            .arg("--dir")
            .arg(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the server starts");
        let server = Self {
            child,
            url: format!("redis://127.0.0.1:{port}"),
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while !ping(port) {
            assert!(Instant::now() < deadline, "{test}: {binary} did not answer");
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(server)
    }
}

impl RedisServer {
    /// The time to live of `key` in milliseconds (`PTTL`): -2 when there is no such key, -1 when it
    /// never expires.
    pub fn pttl(&self, key: &str) -> i64 {
        let answer = self.command(&["PTTL", key]);
        answer
            .parse()
            .unwrap_or_else(|_| panic!("PTTL answered {answer:?}"))
    }
}

impl RedisServer {
    /// Runs one command and answers its reply as text: a number or a string as written, an array
    /// one element per line, nil as an empty string. An error reply fails the test.
    pub fn command(&self, args: &[&str]) -> String {
        let port = self
            .url
            .rsplit(':')
            .next()
            .and_then(|p| p.parse::<u16>().ok());
        let mut stream =
            TcpStream::connect(("127.0.0.1", port.expect("a port"))).expect("connects");
        let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
        let mut command = format!("*{}\r\n", args.len());
        for arg in args {
            command.push_str(&format!("${}\r\n{arg}\r\n", arg.len()));
        }
        stream.write_all(command.as_bytes()).expect("sends");
        let mut reader = std::io::BufReader::new(stream);
        reply(&mut reader, args)
    }
}

/// One RESP reply, as text.
fn reply(reader: &mut impl std::io::BufRead, args: &[&str]) -> String {
    let mut line = String::new();
    reader.read_line(&mut line).expect("a reply");
    let line = line.trim_end_matches("\r\n");
    let (kind, rest) = line.split_at(1.min(line.len()));
    match kind {
        "+" | ":" => rest.to_string(),
        "-" => panic!("{args:?} answered the error {rest}"),
        "$" => {
            let Ok(length) = rest.parse::<usize>() else {
                return String::new(); // $-1: nil
            };
            let mut bulk = vec![0u8; length + 2];
            reader.read_exact(&mut bulk).expect("the bulk string");
            bulk.truncate(length);
            String::from_utf8_lossy(&bulk).into_owned()
        }
        "*" => {
            let count = rest.parse::<usize>().unwrap_or(0);
            (0..count)
                .map(|_| reply(reader, args))
                .collect::<Vec<_>>()
                .join("\n")
        }
        _ => panic!("{args:?} answered {line:?}"),
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether a server on `port` answers `PING`.
fn ping(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
    let mut answer = [0u8; 7];
    stream.write_all(b"PING\r\n").is_ok()
        && stream.read_exact(&mut answer).is_ok()
        && &answer == b"+PONG\r\n"
}
