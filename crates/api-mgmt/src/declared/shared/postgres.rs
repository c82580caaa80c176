//! The PostgreSQL engine of [`SharedStateStore`](super::SharedStateStore): one row per service in
//! a table of its own, each step one SQL statement (atomic on its own, in autocommit), with no
//! session state (no advisory lock, no named prepared statement, no `SET`), so it works behind a
//! transaction pooler (PgBouncer, RDS Proxy) as well as directly.
//!
//! The table, created on first use (`CREATE TABLE IF NOT EXISTS`):
//!
//! ```sql
//! CREATE TABLE cloud_sdk_state (
//!     key        text PRIMARY KEY,      -- the service's digest (API URL, organization, service)
//!     fence      bigint NOT NULL,       -- the fencing number: only ever incremented
//!     holder     text,                  -- who holds the lease
//!     since      bigint,                -- when it was taken (Unix seconds, the server's clock)
//!     expires_at timestamptz,           -- when it lapses unless renewed (NULL: not held)
//!     state      text,                  -- the recorded state's JSON
//!     probe      text,                  -- the self-check's slot
//!     lease_id   text,                  -- the latest lease's random id, compared by every write
//!     layout     integer                -- the layout's version (2)
//! );
//! ```
//!
//! A table made by an SDK of layout 1 (without the last two columns) is given them on first use
//! (`ALTER TABLE ... ADD COLUMN IF NOT EXISTS`). Every step that needs the lease compares the
//! fencing number and the lease's id: PostgreSQL keeps no epoch, so a row deleted and made again,
//! or written back from a backup, issues a number twice, and only the id tells the holders apart.
//!
//! The `postgres` client runs a runtime of its own, which must not run (or be dropped) on a thread
//! of an async runtime: every call, and every drop of a connection, happens on a short-lived
//! thread of its own.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use api_core::Secret;
use postgres::types::{ToSql, Type};

use super::{CALL_LIMIT, Engine, LeaseHolder, Slot, Taken, attempt_limit, redacted};

/// How long sent data may stay unacknowledged before the connection is given up (a server gone
/// mid-statement), beyond the step's own limit (connecting and each statement: [`CALL_LIMIT`], a
/// renewal's a third of the TTL).
const TCP_USER_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a silent connection waits before TCP keepalives probe it, and between probes (three
/// unanswered: the connection is given up), so that a server gone without a word is found in
/// about 11 s, not the system's 2 hours.
const KEEPALIVE_IDLE: Duration = Duration::from_secs(5);
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(2);

const CREATE: &str = "CREATE TABLE IF NOT EXISTS cloud_sdk_state (
    key text PRIMARY KEY,
    fence bigint NOT NULL,
    holder text,
    since bigint,
    expires_at timestamptz,
    state text,
    probe text,
    lease_id text,
    layout integer
)";

/// How many of layout 2's columns the table has: fewer than two on a table made by layout 1.
const LAYOUT_2_COLUMNS: &str = "SELECT count(*) FROM information_schema.columns
WHERE table_name = 'cloud_sdk_state' AND column_name IN ('lease_id', 'layout')
  AND table_schema = current_schema()";

/// Gives a table of layout 1 the columns of layout 2: only when they are missing, since an ALTER
/// needs the table's owner and takes its strongest lock.
const ADD_LAYOUT_2_COLUMNS: &str =
    "ALTER TABLE cloud_sdk_state ADD COLUMN IF NOT EXISTS lease_id text;
ALTER TABLE cloud_sdk_state ADD COLUMN IF NOT EXISTS layout integer";

/// Takes the lease when no live lease exists (the row made on first use): the new fencing number.
/// `$1` key, `$2` holder, `$3` TTL in ms, `$4` the lease's id, `$5` this SDK's layout. No row:
/// another holds it, or the row is of a newer layout.
const ACQUIRE: &str = "INSERT INTO cloud_sdk_state AS s
  (key, fence, holder, since, expires_at, lease_id, layout)
VALUES ($1, 1, $2, extract(epoch FROM now())::bigint,
        now() + make_interval(secs => $3::double precision / 1000), $4, $5)
ON CONFLICT (key) DO UPDATE
  SET fence = s.fence + 1, holder = EXCLUDED.holder, since = EXCLUDED.since,
      expires_at = EXCLUDED.expires_at, lease_id = EXCLUDED.lease_id,
      layout = greatest(coalesce(s.layout, 0), EXCLUDED.layout)
  WHERE (s.expires_at IS NULL OR s.expires_at <= now()) AND coalesce(s.layout, 0) <= EXCLUDED.layout
RETURNING fence";

/// The layout of the service's row. `$1` key.
const LAYOUT: &str = "SELECT coalesce(layout, 0) FROM cloud_sdk_state WHERE key = $1";

/// The live lease. `$1` key.
const HOLDER: &str = "SELECT holder, since,
       (extract(epoch FROM (expires_at - now())) * 1000)::bigint
FROM cloud_sdk_state WHERE key = $1 AND expires_at > now()";

/// Extends the lease when `$2` and `$5` are still the latest number and id (taking it again when
/// it lapsed untaken). `$1` key, `$2` fence, `$3` holder, `$4` TTL in ms, `$5` lease id.
const RENEW: &str = "UPDATE cloud_sdk_state SET
  holder = CASE WHEN expires_at IS NULL OR expires_at <= now() THEN $3 ELSE holder END,
  since = CASE WHEN expires_at IS NULL OR expires_at <= now()
               THEN extract(epoch FROM now())::bigint ELSE since END,
  expires_at = now() + make_interval(secs => $4::double precision / 1000)
WHERE key = $1 AND fence = $2 AND lease_id = $5
RETURNING 1";

/// Ends the lease when `$2` and `$3` are still the latest number and id. `$1` key.
const RELEASE: &str = "UPDATE cloud_sdk_state SET holder = NULL, since = NULL, expires_at = NULL
WHERE key = $1 AND fence = $2 AND lease_id = $3 RETURNING 1";

/// Ends the lease whoever holds it, and moves the number on (and clears the lease's id). `$1` key.
const FORCE_RELEASE: &str = "UPDATE cloud_sdk_state s
SET fence = s.fence + 1, holder = NULL, since = NULL, expires_at = NULL, lease_id = NULL
FROM (SELECT key, holder, since, expires_at FROM cloud_sdk_state WHERE key = $1 FOR UPDATE) old
WHERE s.key = old.key
RETURNING old.holder, old.since, coalesce(old.expires_at > now(), false),
          coalesce((extract(epoch FROM (old.expires_at - now())) * 1000)::bigint, 0)";

const READ_STATE: &str = "SELECT state FROM cloud_sdk_state WHERE key = $1";
const READ_PROBE: &str = "SELECT probe FROM cloud_sdk_state WHERE key = $1";

/// Writes when `$2` and `$4` are the latest number and lease id. `$1` key, `$3` text.
const WRITE_STATE: &str = "UPDATE cloud_sdk_state SET state = $3
WHERE key = $1 AND fence = $2 AND lease_id = $4 RETURNING 1";
const WRITE_PROBE: &str = "UPDATE cloud_sdk_state SET probe = $3
WHERE key = $1 AND fence = $2 AND lease_id = $4 RETURNING 1";

type Connection = Option<postgres::Client>;

/// How a connection is protected: libpq's `sslmode` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TlsMode {
    /// No TLS: only when the URL says so (`sslmode=disable`).
    Disable,
    /// TLS when the server offers it, else plain: the default for a server on this machine only
    /// (a loopback address, `localhost`, a Unix socket).
    Prefer,
    /// TLS, the certificate checked as `verify-full` checks it (never without a check).
    Require,
    /// TLS, the certificate's chain checked against the roots, not its name.
    VerifyCa,
    /// TLS, the certificate's chain and its name checked: the default for any other host.
    VerifyFull,
}

/// How the URL asks its connection protected: the URL without `sslmode` and `sslrootcert` (the
/// driver knows neither `verify-ca` nor `verify-full`, and no root file), the mode, and the roots'
/// file. With no `sslmode`, a server on this machine is `prefer` and any other `verify-full`: a
/// plain connection across a network needs the URL to say so (`sslmode=disable`), and TLS cannot
/// be stripped on the path.
pub(crate) fn tls_policy(url: &str) -> Result<(String, TlsMode, Option<PathBuf>), String> {
    let (rest, mode) = super::take_query_parameter(url, "sslmode");
    let (rest, root) = super::take_query_parameter(&rest, "sslrootcert");
    let config: postgres::Config = rest
        .parse()
        .map_err(|e| format!("not a usable PostgreSQL URL: {e}"))?;
    // Local only when every host named and every address given (`hostaddr`) is this machine.
    let local = !config.get_hosts().is_empty()
        && config.get_hosts().iter().all(|host| match host {
            postgres::config::Host::Tcp(name) => super::is_loopback(name),
            #[cfg(unix)]
            postgres::config::Host::Unix(_) => true,
        })
        && config
            .get_hostaddrs()
            .iter()
            .all(std::net::IpAddr::is_loopback);
    let mode = match mode.as_deref() {
        None if local => TlsMode::Prefer,
        None => TlsMode::VerifyFull,
        Some("disable") => TlsMode::Disable,
        Some("prefer" | "allow") => TlsMode::Prefer,
        Some("require") => TlsMode::Require,
        Some("verify-ca") => TlsMode::VerifyCa,
        Some("verify-full") => TlsMode::VerifyFull,
        Some(other) => {
            return Err(format!(
                "sslmode={other} is none of disable, prefer, require, verify-ca, verify-full"
            ));
        }
    };
    // libpq 16's `sslrootcert=system`: the platform's roots, as without it.
    let root = root.filter(|root| root != "system").map(PathBuf::from);
    Ok((rest, mode, root))
}

/// One service's row in one PostgreSQL; a connection kept open (and one for the renewals),
/// opened again after a failure.
pub(crate) struct PostgresEngine {
    config: postgres::Config,
    mode: TlsMode,
    root: Option<PathBuf>,
    url: Secret,
    key: String,
    connection: Mutex<Connection>,
    renewal: Mutex<Connection>,
}

impl PostgresEngine {
    /// Opens the connection and makes the table (when it is not there yet), so that a wrong URL,
    /// password or host fails at once.
    pub(crate) fn connect(url: &Secret, key: &str) -> Result<Self, String> {
        let (rest, mode, root) = tls_policy(url.expose()).map_err(|e| redacted(url, &e))?;
        let mut config: postgres::Config = rest
            .parse()
            .map_err(|e| redacted(url, &format!("not a usable PostgreSQL URL: {e}")))?;
        config.ssl_mode(match mode {
            TlsMode::Disable => postgres::config::SslMode::Disable,
            TlsMode::Prefer => postgres::config::SslMode::Prefer,
            _ => postgres::config::SslMode::Require,
        });
        config
            .connect_timeout(CALL_LIMIT)
            .tcp_user_timeout(TCP_USER_TIMEOUT)
            .keepalives(true)
            .keepalives_idle(KEEPALIVE_IDLE)
            .keepalives_interval(KEEPALIVE_INTERVAL)
            .keepalives_retries(3)
            .application_name("cloud-sdk declared state");
        let engine = Self {
            config,
            mode,
            root,
            url: url.clone(),
            key: key.to_string(),
            connection: Mutex::new(None),
            renewal: Mutex::new(None),
        };
        engine.run(&engine.connection, CALL_LIMIT, |client| {
            let made = client.batch_execute(CREATE).and_then(|()| {
                // An unnamed statement (`query_typed`), as every other: a named one collides
                // with other clients' behind a transaction pooler.
                let found = client.query_typed(LAYOUT_2_COLUMNS, &[])?;
                let columns: i64 = found.first().map_or(0, |row| row.get(0));
                if columns < 2 {
                    client.batch_execute(ADD_LAYOUT_2_COLUMNS)?;
                }
                Ok(())
            });
            match made {
                Ok(()) => Ok(()),
                // Two first uses at once: the other one made it.
                Err(e)
                    if e.code().is_some_and(|c| {
                        *c == postgres::error::SqlState::UNIQUE_VIOLATION
                            || *c == postgres::error::SqlState::DUPLICATE_TABLE
                    }) =>
                {
                    Ok(())
                }
                Err(e) => Err(e),
            }
        })?;
        Ok(engine)
    }

    /// Runs `step` with the connection of `slot` (opened when there is none, within `limit`), on a
    /// thread of its own; a failed connection is dropped there, and opened again by the next step.
    ///
    /// A statement that has not answered within `limit` (a row lock held by a runaway session, an
    /// overloaded server) is cancelled through PostgreSQL's cancel request (no session state: it
    /// works through PgBouncer too), and fails; in autocommit it changed nothing. A server gone
    /// silent ends the connection after `limit` of unacknowledged data.
    fn run<T: Send>(
        &self,
        slot: &Mutex<Connection>,
        limit: Duration,
        step: impl FnOnce(&mut postgres::Client) -> Result<T, postgres::Error> + Send,
    ) -> Result<T, String> {
        let mut connection = slot.lock().unwrap_or_else(|p| p.into_inner());
        let connection = &mut *connection;
        let (done, finished) = std::sync::mpsc::channel::<()>();
        let outcome = std::thread::scope(|scope| {
            let worker = scope.spawn(move || {
                if connection.is_none() {
                    *connection = Some(self.open(limit)?);
                }
                let Some(client) = connection.as_mut() else {
                    return Err("no connection".to_string());
                };
                let cancel = client.cancel_token();
                let result = std::thread::scope(|watch| {
                    watch.spawn(move || {
                        if finished.recv_timeout(limit)
                            == Err(std::sync::mpsc::RecvTimeoutError::Timeout)
                            && let Ok(tls) = tls(self.mode, self.root.as_deref())
                        {
                            let _ = cancel.cancel_query(tls);
                        }
                    });
                    let result = step(client);
                    let _ = done.send(());
                    result
                });
                if result.is_err() && client.is_closed() {
                    *connection = None;
                }
                result.map_err(|e| describe_statement_error(&e, limit))
            });
            worker.join()
        });
        outcome
            .unwrap_or_else(|_| Err("the PostgreSQL client panicked".into()))
            .map_err(|e| redacted(&self.url, &e))
    }

    /// A new connection, made within `limit`. With a limit tighter than [`CALL_LIMIT`] (a
    /// renewal's), its unacknowledged data is given up after that limit too, instead of
    /// [`TCP_USER_TIMEOUT`].
    fn open(&self, limit: Duration) -> Result<postgres::Client, String> {
        let tls = tls(self.mode, self.root.as_deref())?;
        let connected = if limit < CALL_LIMIT {
            let mut config = self.config.clone();
            config.connect_timeout(limit).tcp_user_timeout(limit);
            config.connect(tls)
        } else {
            self.config.connect(tls)
        };
        connected.map_err(|e| format!("cannot connect: {}", describe_error(&e)))
    }

    fn rows(
        &self,
        slot: &Mutex<Connection>,
        sql: &'static str,
        params: &[(&(dyn ToSql + Sync), Type)],
    ) -> Result<Vec<postgres::Row>, String> {
        self.rows_within(slot, CALL_LIMIT, sql, params)
    }

    fn rows_within(
        &self,
        slot: &Mutex<Connection>,
        limit: Duration,
        sql: &'static str,
        params: &[(&(dyn ToSql + Sync), Type)],
    ) -> Result<Vec<postgres::Row>, String> {
        self.run(slot, limit, |client| client.query_typed(sql, params))
    }
}

impl Drop for PostgresEngine {
    fn drop(&mut self) {
        // A client holds a runtime, which must not be dropped on an async runtime's thread.
        let connections = [
            self.connection
                .get_mut()
                .unwrap_or_else(|p| p.into_inner())
                .take(),
            self.renewal
                .get_mut()
                .unwrap_or_else(|p| p.into_inner())
                .take(),
        ];
        std::thread::scope(|scope| {
            scope.spawn(move || drop(connections));
        });
    }
}

/// The number as PostgreSQL's `bigint`.
fn signed(fence: u64) -> i64 {
    i64::try_from(fence).unwrap_or(i64::MAX)
}

fn millis(ttl: Duration) -> i64 {
    i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX).max(1)
}

fn holder_of(holder: Option<String>, since: Option<i64>, left_ms: Option<i64>) -> LeaseHolder {
    LeaseHolder {
        holder: holder.unwrap_or_default(),
        since: since.unwrap_or(0),
        expires_in: Duration::from_millis(u64::try_from(left_ms.unwrap_or(0)).unwrap_or(0)),
    }
}

impl Engine for PostgresEngine {
    fn acquire(&self, holder: &str, ttl: Duration, lease: &str) -> Result<Taken, String> {
        let ttl = millis(ttl);
        let layout = i32::try_from(super::LAYOUT).unwrap_or(i32::MAX);
        // A lease that lapses between the two statements is taken on the next turn.
        for _ in 0..3 {
            let rows = self.rows(
                &self.connection,
                ACQUIRE,
                &[
                    (&self.key, Type::TEXT),
                    (&holder, Type::TEXT),
                    (&ttl, Type::INT8),
                    (&lease, Type::TEXT),
                    (&layout, Type::INT4),
                ],
            )?;
            if let Some(row) = rows.first() {
                let fence: i64 = row.try_get(0).map_err(|e| e.to_string())?;
                return Ok(Taken::Lease(u64::try_from(fence).unwrap_or(0)));
            }
            let found = self.rows(&self.connection, LAYOUT, &[(&self.key, Type::TEXT)])?;
            let found: i32 = found.first().and_then(|r| r.try_get(0).ok()).unwrap_or(0);
            if found > layout {
                return Ok(Taken::NewerLayout(u64::try_from(found).unwrap_or(0)));
            }
            if let Some(held) = self.holder()? {
                return Ok(Taken::Held(held));
            }
        }
        Err("the lease changed hands three times while it was asked for".into())
    }

    fn renew(&self, fence: u64, lease: &str, holder: &str, ttl: Duration) -> Result<bool, String> {
        let limit = attempt_limit(ttl);
        let (fence, ttl) = (signed(fence), millis(ttl));
        // The renewals' own connection, every step of it bounded well under the TTL.
        let rows = self.rows_within(
            &self.renewal,
            limit,
            RENEW,
            &[
                (&self.key, Type::TEXT),
                (&fence, Type::INT8),
                (&holder, Type::TEXT),
                (&ttl, Type::INT8),
                (&lease, Type::TEXT),
            ],
        )?;
        Ok(!rows.is_empty())
    }

    fn release(&self, fence: u64, lease: &str) -> Result<(), String> {
        let fence = signed(fence);
        self.rows(
            &self.connection,
            RELEASE,
            &[
                (&self.key, Type::TEXT),
                (&fence, Type::INT8),
                (&lease, Type::TEXT),
            ],
        )?;
        Ok(())
    }

    fn force_release(&self) -> Result<Option<LeaseHolder>, String> {
        let rows = self.rows(&self.connection, FORCE_RELEASE, &[(&self.key, Type::TEXT)])?;
        let Some(row) = rows.first() else {
            return Ok(None);
        };
        let held: bool = row.try_get(2).map_err(|e| e.to_string())?;
        Ok(held.then(|| {
            holder_of(
                row.try_get(0).ok().flatten(),
                row.try_get(1).ok().flatten(),
                row.try_get(3).ok(),
            )
        }))
    }

    fn holder(&self) -> Result<Option<LeaseHolder>, String> {
        let rows = self.rows(&self.connection, HOLDER, &[(&self.key, Type::TEXT)])?;
        Ok(rows.first().map(|row| {
            holder_of(
                row.try_get(0).ok().flatten(),
                row.try_get(1).ok().flatten(),
                row.try_get(2).ok().flatten(),
            )
        }))
    }

    fn read(&self, slot: Slot) -> Result<Option<String>, String> {
        let sql = match slot {
            Slot::State => READ_STATE,
            Slot::Probe => READ_PROBE,
        };
        let rows = self.rows(&self.connection, sql, &[(&self.key, Type::TEXT)])?;
        Ok(rows
            .first()
            .and_then(|row| row.try_get::<_, Option<String>>(0).ok().flatten()))
    }

    fn write(&self, fence: u64, lease: &str, slot: Slot, text: &str) -> Result<bool, String> {
        let sql = match slot {
            Slot::State => WRITE_STATE,
            Slot::Probe => WRITE_PROBE,
        };
        let fence = signed(fence);
        let rows = self.rows(
            &self.connection,
            sql,
            &[
                (&self.key, Type::TEXT),
                (&fence, Type::INT8),
                (&text, Type::TEXT),
                (&lease, Type::TEXT),
            ],
        )?;
        Ok(!rows.is_empty())
    }
}

/// TLS as [`tls_policy`] decided: the roots of `root` (a PEM file), else the platform's; the
/// server's name checked but for `verify-ca`. rustls takes the process's crypto provider, else
/// ring.
fn tls(
    mode: TlsMode,
    root: Option<&Path>,
) -> Result<tokio_postgres_rustls::MakeRustlsConnect, String> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject as _;
    super::ensure_ring_provider();
    let mut roots = rustls::RootCertStore::empty();
    match root {
        Some(path) => {
            let certificates = CertificateDer::pem_file_iter(path)
                .and_then(|found| found.collect::<Result<Vec<_>, _>>())
                .map_err(|e| format!("sslrootcert {}: {e}", path.display()))?;
            if certificates.is_empty() {
                return Err(format!(
                    "sslrootcert {}: no certificate in it",
                    path.display()
                ));
            }
            for certificate in certificates {
                roots
                    .add(certificate)
                    .map_err(|e| format!("sslrootcert {}: {e}", path.display()))?;
            }
        }
        None => {
            for certificate in rustls_native_certs::load_native_certs().certs {
                let _ = roots.add(certificate);
            }
        }
    }
    let builder = rustls::ClientConfig::builder();
    let config = if mode == TlsMode::VerifyCa {
        let chain = rustls::client::WebPkiServerVerifier::builder(std::sync::Arc::new(roots))
            .build()
            .map_err(|e| format!("cannot check certificates: {e}"))?;
        builder
            .dangerous()
            .with_custom_certificate_verifier(std::sync::Arc::new(ChainOnly(chain)))
            .with_no_client_auth()
    } else {
        builder.with_root_certificates(roots).with_no_client_auth()
    };
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

/// `verify-ca`: the certificate's chain checked as always, its name not.
#[derive(Debug)]
struct ChainOnly(std::sync::Arc<rustls::client::WebPkiServerVerifier>);

impl rustls::client::danger::ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &rustls::pki_types::CertificateDer<'_>,
        intermediates: &[rustls::pki_types::CertificateDer<'_>],
        server_name: &rustls::pki_types::ServerName<'_>,
        ocsp_response: &[u8],
        now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        use rustls::{CertificateError, Error};
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(rustls::client::danger::ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// A statement's error: a cancel of ours said as the timeout it is.
fn describe_statement_error(error: &postgres::Error, limit: Duration) -> String {
    if error.code() == Some(&postgres::error::SqlState::QUERY_CANCELED) {
        format!(
            "the statement took longer than {limit:?} and was cancelled (it changed \
             nothing): {}",
            describe_error(error)
        )
    } else {
        describe_error(error)
    }
}

/// A PostgreSQL error with its SQLSTATE, when the server sent one.
fn describe_error(error: &postgres::Error) -> String {
    match error.as_db_error() {
        Some(db) => format!("{} ({}): {}", db.severity(), db.code().code(), db.message()),
        None => error.to_string(),
    }
}
