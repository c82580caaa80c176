//! A real PostgreSQL server for one test: `initdb` into a temporary directory (as a user other than
//! root, which PostgreSQL requires: `nobody` when the tests run as root), `pg_ctl -w start` on a
//! free loopback port, stopped (`pg_ctl stop -m immediate`) when dropped. Connections over TCP
//! authenticate with a password (SCRAM). Outside CI a machine without PostgreSQL skips the test,
//! saying so; under `CI=true` a missing server fails it (`.ci/run` installs it).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The superuser's password of every test server.
pub const PASSWORD: &str = "pg-test-pa55word";

/// A running server.
pub struct PostgresServer {
    bin: PathBuf,
    data: PathBuf,
    user: Option<String>,
    /// `postgres://USER:PASSWORD@127.0.0.1:<port>/postgres`.
    pub url: String,
    /// The port.
    pub port: u16,
    /// The superuser.
    pub superuser: String,
    _dir: tempfile::TempDir,
}

/// The directory of PostgreSQL's server programs: `initdb` on the PATH, else the newest of
/// Debian's `/usr/lib/postgresql/N/bin`.
fn bin_dir() -> Option<PathBuf> {
    if let Ok(output) = Command::new("sh")
        .args(["-c", "command -v initdb"])
        .output()
        && output.status.success()
    {
        let path = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
        let path = std::fs::canonicalize(&path).unwrap_or(path);
        return path.parent().map(Path::to_path_buf);
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let version = entry.file_name().to_string_lossy().parse().ok()?;
            let bin = entry.path().join("bin");
            bin.join("initdb").exists().then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin)
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0")
}

impl PostgresServer {
    /// Starts a server, or says why the test does not run (`None`).
    pub fn start(test: &str) -> Option<Self> {
        Self::start_with(test, None)
    }

    /// Starts a server that offers TLS with this certificate and key (PEM), or says why the test
    /// does not run (`None`).
    pub fn start_tls(test: &str, certificate: &str, key: &str) -> Option<Self> {
        Self::start_with(test, Some((certificate, key)))
    }

    fn start_with(test: &str, tls: Option<(&str, &str)>) -> Option<Self> {
        let Some(bin) = bin_dir() else {
            let ci = std::env::var("CI").is_ok_and(|ci| ci == "true" || ci == "1");
            assert!(!ci, "{test}: no PostgreSQL (initdb), which CI installs");
            eprintln!("{test}: not run: no PostgreSQL (initdb) on this machine");
            return None;
        };
        let dir = tempfile::tempdir().expect("a directory");
        let user = is_root().then(|| "nobody".to_string());
        let superuser = user.clone().unwrap_or_else(|| "postgres".to_string());
        let data = dir.path().join("data");
        let password_file = dir.path().join("password");
        std::fs::write(&password_file, PASSWORD).expect("the password file");
        if let Some(user) = &user {
            let status = Command::new("chown")
                .args(["-R", user])
                .arg(dir.path())
                .status()
                .expect("chown runs");
            assert!(status.success(), "{test}: chown {user}");
        }
        let port = crate::ports::free_port();
        let mut server = Self {
            bin,
            data,
            user,
            url: format!("postgres://{superuser}:{PASSWORD}@127.0.0.1:{port}/postgres"),
            port,
            superuser: superuser.clone(),
            _dir: dir,
        };
        let initdb = server
            .command("initdb")
            .arg("-D")
            .arg(&server.data)
            .args([
                "-U",
                &superuser,
                "--auth-local=trust",
                "--auth-host=scram-sha-256",
            ])
            .arg(format!("--pwfile={}", password_file.display()))
            .args(["--no-sync", "-E", "UTF8", "--locale=C"])
            .stdout(Stdio::null())
            .output()
            .expect("initdb runs");
        assert!(
            initdb.status.success(),
            "{test}: initdb: {}",
            String::from_utf8_lossy(&initdb.stderr)
        );
        let mut settings = String::new();
        if let Some((certificate, key)) = tls {
            // In the data directory, owned by the server's user, the key private to it.
            for (name, text) in [("server.crt", certificate), ("server.key", key)] {
                let path = server.data.join(name);
                std::fs::write(&path, text).expect("the TLS file");
                #[cfg(unix)]
                {
                    use std::os::unix::fs::PermissionsExt as _;
                    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
                        .expect("private");
                }
                if let Some(user) = &server.user {
                    let status = Command::new("chown")
                        .arg(user)
                        .arg(&path)
                        .status()
                        .expect("chown runs");
                    assert!(status.success(), "{test}: chown {name}");
                }
            }
            settings.push_str(" -c ssl=on -c ssl_cert_file=server.crt -c ssl_key_file=server.key");
        }
        // The port was free when it was picked; another test may take it before the server binds
        // it (tests start servers and proxies side by side): then another port, at most 3 times.
        for attempt in 1.. {
            let options = format!(
                "-c listen_addresses=127.0.0.1 -p {} -k {} -c fsync=off{settings}",
                server.port,
                server.data.display()
            );
            let start = server
                .command("pg_ctl")
                .arg("-D")
                .arg(&server.data)
                .args(["-w", "-t", "30", "-o", &options, "-l"])
                .arg(server.data.join("log"))
                .arg("start")
                .stdout(Stdio::null())
                .output()
                .expect("pg_ctl runs");
            if start.status.success() {
                break;
            }
            let log = std::fs::read_to_string(server.data.join("log")).unwrap_or_default();
            let taken = log.contains("could not bind") || log.contains("already in use");
            assert!(
                taken && attempt < 3,
                "{test}: pg_ctl start: {}\nthe server's log:\n{log}",
                String::from_utf8_lossy(&start.stderr)
            );
            server.port = crate::ports::free_port();
            server.url = format!(
                "postgres://{superuser}:{PASSWORD}@127.0.0.1:{}/postgres",
                server.port
            );
        }
        Some(server)
    }

    /// A server program, run as the server's user.
    fn command(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        match &self.user {
            Some(user) => {
                let mut command = Command::new("runuser");
                command.args(["-u", user, "--"]).arg(path);
                command
            }
            None => Command::new(path),
        }
    }

    /// A session of its own that runs `sql` in a transaction it keeps open (a runaway session
    /// holding its locks); answers once the server shows it idle in its transaction. The session
    /// ends with `pg_terminate_backend` (its `psql`, run through `runuser` as root, outlives a kill
    /// of the child until the test process ends).
    pub fn hold(&self, sql: &str) -> std::process::Child {
        use std::io::Write as _;
        let mut child = self
            .psql()
            .arg("-q")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("psql runs");
        let mut stdin = child.stdin.take().expect("its input");
        writeln!(stdin, "BEGIN; {sql};").expect("the statement is written");
        // Kept open (never dropped here): psql waits for more, the transaction open.
        std::mem::forget(stdin);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while self.sql("SELECT count(*) FROM pg_stat_activity WHERE state = 'idle in transaction'")
            != "1"
        {
            assert!(
                std::time::Instant::now() < deadline,
                "the session never held"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        child
    }

    /// `psql` as the superuser over the data directory's socket, on database `postgres`.
    fn psql(&self) -> Command {
        let mut command = self.command("psql");
        command
            .args(["-X", "-h"])
            .arg(&self.data)
            .args(["-p", &self.port.to_string(), "-U", &self.superuser])
            .args(["-d", "postgres"]);
        command
    }

    /// Runs `sql` through `psql` (as the superuser, over the data directory's socket) and answers
    /// its output, unaligned, without headers.
    pub fn sql(&self, sql: &str) -> String {
        let output = self
            .psql()
            .args(["-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql])
            .output()
            .expect("psql runs");
        assert!(
            output.status.success(),
            "psql {sql:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).trim().to_string()
    }
}

impl Drop for PostgresServer {
    fn drop(&mut self) {
        let _ = self
            .command("pg_ctl")
            .arg("-D")
            .arg(&self.data)
            .args(["-m", "immediate", "-w", "stop"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}
