//! A real `redis-server` (or `valkey-server`) for one test, on a free loopback port, stopped when
//! dropped. Outside CI a machine without the server skips the test, saying so; under `CI=true` a
//! missing server fails it (`.ci/run` installs it).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
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
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free port")
            .port();
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
