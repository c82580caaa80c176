//! A real PgBouncer in transaction mode in front of a test's [`PostgresServer`], on a free loopback
//! port (as a user other than root, which PgBouncer requires), stopped when dropped: each
//! transaction may run on another server connection, so anything that keeps session state (an
//! advisory lock, a named prepared statement, a `SET`) breaks through it.

use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::postgres_server::{PASSWORD, PostgresServer};

/// A running PgBouncer.
pub struct PgBouncer {
    child: Child,
    /// `postgres://USER:PASSWORD@127.0.0.1:<port>/postgres`, through the pooler.
    pub url: String,
    dir: tempfile::TempDir,
}

/// The PgBouncer program: on the PATH, else Debian's `/usr/sbin/pgbouncer`.
fn program() -> Option<PathBuf> {
    let on_path = Command::new("sh")
        .args(["-c", "command -v pgbouncer"])
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()));
    on_path.or_else(|| {
        let debian = PathBuf::from("/usr/sbin/pgbouncer");
        debian.exists().then_some(debian)
    })
}

impl PgBouncer {
    /// Starts a pooler of `server` in transaction mode, or says why the test does not run
    /// (`None`; under `CI=true` a missing PgBouncer fails it, as `.ci/run` installs it).
    pub fn start(test: &str, server: &PostgresServer) -> Option<Self> {
        let Some(program) = program() else {
            let ci = std::env::var("CI").is_ok_and(|ci| ci == "true" || ci == "1");
            assert!(!ci, "{test}: no pgbouncer, which CI installs");
            eprintln!("{test}: not run: no pgbouncer on this machine");
            return None;
        };
        let dir = tempfile::tempdir().expect("a directory");
        let port = crate::ports::free_port();
        let user = &server.superuser;
        let ini = dir.path().join("pgbouncer.ini");
        std::fs::write(
            dir.path().join("userlist.txt"),
            format!("\"{user}\" \"{PASSWORD}\"\n"),
        )
        .expect("the user list");
        std::fs::write(
            &ini,
            format!(
                "[databases]\npostgres = host=127.0.0.1 port={upstream} dbname=postgres\n\
                 [pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = {port}\n\
                 unix_socket_dir =\nauth_type = scram-sha-256\nauth_file = {users}\n\
                 pool_mode = transaction\ndefault_pool_size = 4\nmax_client_conn = 200\n\
                 ignore_startup_parameters = extra_float_digits,options\n\
                 logfile = {log}\npidfile = {pid}\n",
                upstream = server.port,
                users = dir.path().join("userlist.txt").display(),
                log = dir.path().join("pgbouncer.log").display(),
                pid = dir.path().join("pgbouncer.pid").display(),
            ),
        )
        .expect("the configuration");
        let root = Command::new("id")
            .arg("-u")
            .output()
            .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0");
        let mut command = if root {
            let status = Command::new("chown")
                .args(["-R", "nobody"])
                .arg(dir.path())
                .status()
                .expect("chown runs");
            assert!(status.success(), "{test}: chown");
            let mut command = Command::new("runuser");
            command.args(["-u", "nobody", "--"]).arg(&program);
            command
        } else {
            Command::new(&program)
        };
        let child = command
            .arg(&ini)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("pgbouncer runs");
        let bouncer = Self {
            child,
            url: format!("postgres://{user}:{PASSWORD}@127.0.0.1:{port}/postgres"),
            dir,
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "{test}: pgbouncer did not listen: {}",
                std::fs::read_to_string(bouncer.dir.path().join("pgbouncer.log"))
                    .unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(bouncer)
    }
}

impl Drop for PgBouncer {
    fn drop(&mut self) {
        // Run through `runuser`, the pooler is its child: stopped by its own pid.
        if let Ok(pid) = std::fs::read_to_string(self.dir.path().join("pgbouncer.pid")) {
            let _ = Command::new("kill")
                .args(["-TERM", pid.trim()])
                .stderr(Stdio::null())
                .status();
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
