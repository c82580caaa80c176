//! A recorded state shared by many hosts: [`SharedStateStore`], on Redis / Valkey (the
//! `state-redis` feature) or PostgreSQL (`state-postgres`). A lease per service, renewed while its
//! holder works, and fencing: every write is a compare-and-swap on the lease's number, so a holder
//! paused past its lease writes nothing.

#[cfg(feature = "state-postgres")]
mod postgres;
#[cfg(feature = "state-redis")]
mod redis;

/// rustls (`rediss://`, PostgreSQL's TLS) takes the process's crypto provider: the one installed
/// already (by the application, or the SDK's HTTP client), else ring, installed here. The stores'
/// one place for it; api-core keeps its own for the HTTP client and the rate limit's Redis, as a
/// shared one would be a public item of api-core for a detail of two features.
#[cfg(any(feature = "state-redis", feature = "state-postgres"))]
fn ensure_ring_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Fails only when another thread installed one just now, which is as good.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use api_core::Secret;
use api_core::redact::Redactor;

use super::RecordedState;
use super::recorded::StateTarget;
use super::store::{LeaseHolder, StateError, StateLock, StateStore};

/// How long a lease lasts without renewal, unless [`SharedStateStore::lease_ttl`] says otherwise.
pub const DEFAULT_LEASE_TTL: Duration = Duration::from_secs(30);

/// The longest lease [`SharedStateStore::lease_ttl`] takes.
pub const MAX_LEASE_TTL: Duration = Duration::from_secs(24 * 3600);

/// The shortest lease [`SharedStateStore::lease_ttl`] takes: a renewal attempt is bounded by a
/// third of the TTL (at most 5 s), and a store across a network needs a few hundred
/// milliseconds to connect and answer.
pub const MIN_LEASE_TTL: Duration = Duration::from_secs(1);

/// The longest a store call may take when nothing bounds it tighter (connecting, or a statement).
pub(crate) const CALL_LIMIT: Duration = Duration::from_secs(5);

/// How long one renewal attempt may take, connecting included, before it counts as failed and is
/// tried again: a third of the TTL, at most [`CALL_LIMIT`]. The lease is valid for nine tenths of
/// its TTL after a renewal is sent, so an attempt that hangs leaves time for another.
pub(crate) fn attempt_limit(ttl: Duration) -> Duration {
    (ttl / 3).min(CALL_LIMIT)
}

/// The version of the stores' layout (keys, columns, what each write compares) this SDK writes: 2
/// adds the lease's random id, compared by every write. A store of a newer layout is refused.
pub(crate) const LAYOUT: u32 = 2;

/// How much of a lease's TTL this process does not count on: the lease is taken as valid until
/// the last confirmed renewal's sending plus the TTL less this part of it (clocks may run at
/// slightly different rates, and the store's timer starts after the request was sent).
const LEASE_MARGIN_DIVISOR: u32 = 10;

/// The first wait before a failed renewal is tried again; it doubles, up to a sixth of the TTL.
const RENEWAL_BACKOFF: Duration = Duration::from_millis(50);

/// Where an engine writes: the state, or the self-check's own slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Slot {
    State,
    Probe,
}

/// What a lease request found.
pub(crate) enum Taken {
    /// The lease, with its fencing number (greater than any before it).
    Lease(u64),
    /// Another holds it.
    Held(LeaseHolder),
    /// The store's layout is of this newer version: nothing was taken.
    NewerLayout(u64),
}

/// The atomic operations of one engine on one service's keys. Each is a single atomic step on the
/// server (a Lua script, a single SQL statement); an `Err` is the engine's own failure, its text
/// free of the URL's password.
///
/// A lease is its fencing number and its random id (`lease`, 128 bits): every step that needs the
/// lease compares both, so a store whose counter went back (a snapshot restored, an AOF tail
/// lost, a failover to a replica behind) and issued a number twice still lets only the holder
/// whose id it keeps write.
pub(crate) trait Engine: Send + Sync + 'static {
    /// Takes the lease when no live lease exists: a new fencing number, greater than every one
    /// the store remembers, kept with `lease`; it lapses after `ttl` unless renewed. Refused
    /// ([`Taken::NewerLayout`]) on a store of a layout newer than [`LAYOUT`].
    fn acquire(&self, holder: &str, ttl: Duration, lease: &str) -> Result<Taken, String>;
    /// Extends the lease by `ttl` when `fence` and `lease` are still the latest (taking it again
    /// if it lapsed and no one took it since); `false` when another took it.
    fn renew(&self, fence: u64, lease: &str, holder: &str, ttl: Duration) -> Result<bool, String>;
    /// Ends the lease when `fence` and `lease` are still the latest.
    fn release(&self, fence: u64, lease: &str) -> Result<(), String>;
    /// Ends the lease whoever holds it, and moves the fencing number on so that its holder can no
    /// longer write; answers who held it.
    fn force_release(&self) -> Result<Option<LeaseHolder>, String>;
    /// Who holds the lease now.
    fn holder(&self) -> Result<Option<LeaseHolder>, String>;
    /// The text in `slot`.
    fn read(&self, slot: Slot) -> Result<Option<String>, String>;
    /// Writes `text` in `slot` only when `fence` and `lease` are the latest; `false` (nothing
    /// written) when another lease exists.
    fn write(&self, fence: u64, lease: &str, slot: Slot, text: &str) -> Result<bool, String>;
}

/// A recorded state kept in a shared store, one per service, for applies that run on many hosts
/// (CI runners with fresh disks): `redis://` or `rediss://` (Redis, Valkey; the `state-redis`
/// feature), `postgres://` (PostgreSQL, a table of its own; the `state-postgres` feature).
///
/// - **A lease per service** (API URL, organization, service): [`lock`](StateStore::lock) takes it
///   without waiting, a thread of its own renews it every third of its TTL while the
///   [`StateLock`] lives (a failed renewal is tried again at once, backing off from 50 ms), and
///   dropping the lock ends it. By this process's own monotonic clock the lease is valid until the
///   last confirmed renewal plus the TTL, less a tenth: past that,
///   [`StateLock::check_lease`] refuses, and an apply sends no create, delete or service command. A holder that was killed is replaced once
///   its TTL has passed ([`DEFAULT_LEASE_TTL`]) with no manual step;
///   [`force_unlock`](Self::force_unlock) ends a lease at once.
/// - **Fencing:** each lease carries a number that only grows and a random id, and every
///   [`save`](StateStore::save) is a compare-and-swap on both, in one atomic step on the server (a
///   Lua script; an `UPDATE ... WHERE fence = $n AND lease_id = $id`): a number issued twice by a
///   store whose counter went back still lets only one holder write. A holder paused past its lease
///   (SIGSTOP, a long pause, a partition) whose lease another took writes nothing: its next save
///   fails with [`StateError::Fenced`], the state as the new holder left it.
/// - **Intents** are part of the recorded state, so a create whose outcome is unknown on one
///   runner blocks its name on every runner.
/// - **A self-check** with every lease: a write with the previous number, or with the lease's
///   number and another id, must be refused and one with the lease's own accepted, or the store is
///   refused ([`StateError::UnsafeStore`]).
/// - **No state is not an empty state:** [`requires_init`](StateStore::requires_init) is `true`,
///   so a plan finds [`StateError::Missing`] where the store holds no state of the service (lost,
///   or never set up) instead of creating every declared pipe again; the first apply of a service
///   on a store follows [`init`](StateStore::init) (`cloudctl state init`) or a state pushed
///   there.
/// - **A layout version** in the store: a store written by a newer SDK is refused.
/// - **TLS that cannot be stripped:** PostgreSQL with no `sslmode` is `verify-full` for any host
///   but this machine (`prefer` there); `verify-ca`, `verify-full` and `sslrootcert` (a PEM file)
///   are taken, and `sslmode=disable` says plain. A plain `redis://` to another machine is refused
///   unless its query says `plaintext=true`.
/// - The URL's password is never shown: messages name the store by its URL, redacted. The store's
///   own failures (unreachable, timeout, authentication) are [`StateError::Store`] errors naming
///   it, never a fallback to a local file.
///
/// Its calls block their thread for at most a few seconds (the engine's timeouts), as the file
/// store's `fsync` does.
///
/// ```no_run
/// # fn run(target: api_mgmt::declared::StateTarget) -> Result<(), api_mgmt::declared::StateError> {
/// use api_mgmt::declared::{SharedStateStore, StateStore};
///
/// let url = std::env::var("CLOUD_STATE_URL").unwrap_or_default(); // redis://:pw@redis:6379/0
/// let store = SharedStateStore::open(&url, &target)?;
/// let lock = store.lock(&target)?; // the lease, renewed until dropped
/// let recorded = store.load()?;
/// # let _ = (lock, recorded); Ok(()) }
/// ```
pub struct SharedStateStore {
    engine: Arc<dyn Engine>,
    store: String,
    target: StateTarget,
    ttl: Duration,
    holder: String,
}

impl std::fmt::Debug for SharedStateStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedStateStore")
            .field("store", &self.store)
            .field("target", &self.target)
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

/// The engines a store URL can name.
enum Scheme {
    Redis,
    Postgres,
}

fn scheme(url: &str) -> Option<Scheme> {
    let starts = |scheme: &str| {
        url.get(..scheme.len())
            .is_some_and(|s| s.eq_ignore_ascii_case(scheme))
    };
    if ["redis://", "rediss://", "valkey://", "valkeys://"]
        .iter()
        .any(|s| starts(s))
    {
        Some(Scheme::Redis)
    } else if ["postgres://", "postgresql://"].iter().any(|s| starts(s)) {
        Some(Scheme::Postgres)
    } else {
        None
    }
}

/// Whether `text` names a shared store (a URL of a scheme [`SharedStateStore::open`] knows:
/// `redis://`, `rediss://`, `valkey://`, `valkeys://`, `postgres://`, `postgresql://`), rather
/// than a file.
pub fn is_store_url(text: &str) -> bool {
    scheme(text).is_some()
}

impl SharedStateStore {
    /// The state of `target`'s service in the store at `url`. Connects (and fails, naming the
    /// store, when it cannot); the URL's password is kept as a secret.
    pub fn open(url: &str, target: &StateTarget) -> Result<Self, StateError> {
        let url = Secret::new(url.to_string());
        let store = describe(url.expose());
        let failed = |message: String| StateError::Store {
            store: store.clone(),
            message,
        };
        let key = target.digest();
        let engine: Arc<dyn Engine> = match scheme(url.expose()) {
            Some(Scheme::Redis) => {
                #[cfg(feature = "state-redis")]
                {
                    Arc::new(redis::RedisEngine::connect(&url, &key).map_err(failed)?)
                }
                #[cfg(not(feature = "state-redis"))]
                {
                    return Err(failed(
                        "this build has no Redis state store (api-mgmt's `state-redis` feature)"
                            .into(),
                    ));
                }
            }
            Some(Scheme::Postgres) => {
                #[cfg(feature = "state-postgres")]
                {
                    Arc::new(postgres::PostgresEngine::connect(&url, &key).map_err(failed)?)
                }
                #[cfg(not(feature = "state-postgres"))]
                {
                    return Err(failed(
                        "this build has no PostgreSQL state store (api-mgmt's `state-postgres` \
                         feature)"
                            .into(),
                    ));
                }
            }
            None => {
                return Err(failed(
                    "not a state store URL: redis://, rediss://, valkey://, valkeys://, \
                     postgres:// or postgresql:// expected"
                        .into(),
                ));
            }
        };
        Ok(Self::with_engine(engine, store, target))
    }

    pub(crate) fn with_engine(
        engine: Arc<dyn Engine>,
        store: String,
        target: &StateTarget,
    ) -> Self {
        Self {
            engine,
            store,
            target: target.clone(),
            ttl: DEFAULT_LEASE_TTL,
            holder: default_holder(),
        }
    }

    /// A lease that lapses after `ttl` without renewal: how long after a holder dies another can
    /// take the service. From [`MIN_LEASE_TTL`] to [`MAX_LEASE_TTL`]; [`lock`](StateStore::lock)
    /// refuses another, since each renewal attempt must end within a third of it.
    pub fn lease_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// Says who takes the lease (shown to those it refuses, and by `force_unlock`): by default the
    /// process id and the host name.
    pub fn holder(mut self, holder: impl Into<String>) -> Self {
        self.holder = holder.into();
        self
    }

    /// The store's URL, its password redacted.
    pub fn describe(&self) -> &str {
        &self.store
    }

    /// Who holds the service's lease now, if anyone.
    pub fn lease_holder(&self) -> Result<Option<LeaseHolder>, StateError> {
        self.engine.holder().map_err(|m| self.failed(m))
    }

    /// Ends the service's lease, whoever holds it, and answers who did: for a holder that is known
    /// to be gone, when its TTL is too long to wait. A holder still alive can no longer write (its
    /// fencing number is passed).
    pub fn force_unlock(&self) -> Result<Option<LeaseHolder>, StateError> {
        self.engine.force_release().map_err(|m| self.failed(m))
    }

    /// The lease of `lock`, one this store's engine gave (a lock of another store, whose number
    /// could match by chance, is refused).
    fn own_lease<'l>(&self, lock: &'l StateLock) -> Result<&'l Lease, StateError> {
        match lock.held().downcast_ref::<Lease>() {
            Some(lease) if Arc::ptr_eq(&lease.engine, &self.engine) => Ok(lease),
            _ => Err(StateError::Refused(format!(
                "this lock was not taken from the shared store {}; take it with its `lock`",
                self.store
            ))),
        }
    }

    /// The error of a write refused by fencing, naming the lease's holder now.
    fn fenced(&self) -> StateError {
        let now = self.engine.holder().ok().flatten();
        StateError::Fenced {
            store: self.store.clone(),
            holder: now.map_or_else(|| "no one now".into(), |h| h.to_string()),
        }
    }

    fn failed(&self, message: String) -> StateError {
        StateError::Store {
            store: self.store.clone(),
            message,
        }
    }

    fn check_target(&self, target: &StateTarget) -> Result<(), StateError> {
        if target == &self.target {
            Ok(())
        } else {
            Err(StateError::OtherTarget {
                recorded: Box::new(self.target.clone()),
                asked: Box::new(target.clone()),
            })
        }
    }

    /// The self-check: the store must refuse a write with a number before the lease's, or with
    /// the lease's number and another id, and take one with the lease's own.
    fn self_check(&self, fence: u64, lease: &str) -> Result<(), StateError> {
        let refuse = |why: &str| StateError::UnsafeStore {
            store: self.store.clone(),
            message: why.to_string(),
        };
        let stale = self
            .engine
            .write(fence - 1, lease, Slot::Probe, "stale")
            .map_err(|m| self.failed(m))?;
        if stale {
            return Err(refuse(
                "it accepted a write with a fencing number older than the lease's, so a holder \
                 paused past its lease could overwrite the next holder's state",
            ));
        }
        let stranger = self
            .engine
            .write(fence, &new_lease_id(), Slot::Probe, "stranger")
            .map_err(|m| self.failed(m))?;
        if stranger {
            return Err(refuse(
                "it accepted a write with the lease's number and another lease's id, so a number \
                 issued twice (a counter rolled back) would let two holders write",
            ));
        }
        let current = self
            .engine
            .write(fence, lease, Slot::Probe, "current")
            .map_err(|m| self.failed(m))?;
        if !current
            && !self
                .engine
                .renew(fence, lease, &self.holder, self.ttl)
                .map_err(|m| self.failed(m))?
        {
            // Another took the lease in between (a forced unlock): fenced, not unsafe.
            return Err(self.fenced());
        }
        if !current
            || self
                .engine
                .read(Slot::Probe)
                .map_err(|m| self.failed(m))?
                .as_deref()
                != Some("current")
        {
            return Err(refuse(
                "it refused (or did not keep) a write with the lease's own fencing number",
            ));
        }
        Ok(())
    }
}

/// The store's URL for messages: its user part (user name and password, however written) never
/// shown, and any other secret of the SDK's rule redacted (the rule's
/// [`describe_url`](api_core::redact::describe_url)).
pub(crate) fn describe(url: &str) -> String {
    api_core::redact::describe_url(url)
}

/// `text` with the URL, its password (as written and unescaped) and any other secret redacted.
pub(crate) fn redacted(url: &Secret, text: &str) -> String {
    Redactor::new().url(url.expose()).text(text).into_owned()
}

/// `url` without the query parameter `name`, and its value (percent-decoded) when it had one.
pub(crate) fn take_query_parameter(url: &str, name: &str) -> (String, Option<String>) {
    let Some(question) = url.find('?') else {
        return (url.to_string(), None);
    };
    let (base, query) = (&url[..question], &url[question + 1..]);
    let (query, fragment) = match query.find('#') {
        Some(hash) => (&query[..hash], &query[hash..]),
        None => (query, ""),
    };
    let mut value = None;
    let kept: Vec<&str> = query
        .split('&')
        .filter(|pair| {
            let (key, found) = pair.split_once('=').unwrap_or((pair, ""));
            if key == name {
                value = Some(api_core::redact::percent_decoded(found));
                false
            } else {
                !pair.is_empty()
            }
        })
        .collect();
    let rest = if kept.is_empty() {
        format!("{base}{fragment}")
    } else {
        format!("{base}?{}{fragment}", kept.join("&"))
    };
    (rest, value)
}

pub(crate) use api_core::loopback::is_loopback;

/// The process id and the host's name.
fn default_holder() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok().filter(|h| !h.is_empty()))
        .or_else(|| std::env::var("COMPUTERNAME").ok().filter(|h| !h.is_empty()))
        .unwrap_or_else(|| "an unnamed host".into());
    format!("process {} on {host}", std::process::id())
}

/// A fresh lease id: 128 random bits (a version 4 UUID's 122, and its fixed bits), as text.
fn new_lease_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// Until when a lease taken or renewed by a request sent at `sent` is valid by this process's
/// clock.
fn valid_until(sent: Instant, ttl: Duration) -> Instant {
    sent + ttl - ttl / LEASE_MARGIN_DIVISOR
}

/// A held lease: the renewing thread, stopped and the lease ended when dropped.
struct Lease {
    engine: Arc<dyn Engine>,
    fence: u64,
    id: String,
    valid_until: Arc<Mutex<Instant>>,
    stop: Option<mpsc::Sender<()>>,
    renewer: Option<JoinHandle<()>>,
}

/// Moves a lease's validity on after a renewal sent at `sent` was confirmed.
fn extend(valid: &Mutex<Instant>, sent: Instant, ttl: Duration) {
    let mut until = valid.lock().unwrap_or_else(|p| p.into_inner());
    *until = (*until).max(valid_until(sent, ttl));
}

impl Drop for Lease {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(renewer) = self.renewer.take() {
            let _ = renewer.join();
        }
        if let Err(why) = self.engine.release(self.fence, &self.id) {
            tracing::warn!(error = %why, "the state store's lease could not be ended; it lapses on its own");
        }
    }
}

impl StateStore for SharedStateStore {
    fn load(&self) -> Result<Option<RecordedState>, StateError> {
        let Some(text) = self.engine.read(Slot::State).map_err(|m| self.failed(m))? else {
            return Ok(None);
        };
        let state = RecordedState::from_json(&text).map_err(|e| match e {
            StateError::Corrupt(why) => StateError::Corrupt(format!("{}: {why}", self.store)),
            other => other,
        })?;
        state.check_target(&self.target)?;
        Ok(Some(state))
    }

    fn save(&self, lock: &StateLock, state: &RecordedState) -> Result<(), StateError> {
        lock.check(&self.target)?;
        state.check_target(&self.target)?;
        let lease = self.own_lease(lock)?;
        let text = state.to_json()?;
        let written = self
            .engine
            .write(lease.fence, &lease.id, Slot::State, &text)
            .map_err(|m| self.failed(m))?;
        if written {
            return Ok(());
        }
        Err(self.fenced())
    }

    fn check_held(&self, lock: &StateLock) -> Result<(), StateError> {
        lock.check(&self.target)?;
        let lease = self.own_lease(lock)?;
        let sent = Instant::now();
        if self
            .engine
            .renew(lease.fence, &lease.id, &self.holder, self.ttl)
            .map_err(|m| self.failed(m))?
        {
            extend(&lease.valid_until, sent, self.ttl);
            return Ok(());
        }
        Err(self.fenced())
    }

    fn requires_init(&self) -> bool {
        true
    }

    fn describe_store(&self) -> String {
        self.store.clone()
    }

    fn lock(&self, target: &StateTarget) -> Result<StateLock, StateError> {
        self.check_target(target)?;
        if !(MIN_LEASE_TTL..=MAX_LEASE_TTL).contains(&self.ttl) {
            return Err(StateError::Refused(format!(
                "a lease TTL of {:?} is refused: it must be from {}s to {}h (each renewal attempt \
                 must end within a third of it, connecting to {} included)",
                self.ttl,
                MIN_LEASE_TTL.as_secs(),
                MAX_LEASE_TTL.as_secs() / 3600,
                self.store
            )));
        }
        let id = new_lease_id();
        let sent = Instant::now();
        let fence = match self
            .engine
            .acquire(&self.holder, self.ttl, &id)
            .map_err(|m| self.failed(m))?
        {
            Taken::Lease(fence) => fence,
            Taken::Held(holder) => {
                return Err(StateError::Leased {
                    target: Box::new(target.clone()),
                    holder,
                    store: self.store.clone(),
                });
            }
            Taken::NewerLayout(layout) => {
                return Err(StateError::UnsafeStore {
                    store: self.store.clone(),
                    message: format!(
                        "its layout is version {layout}, newer than this SDK's ({LAYOUT}): a newer \
                         cloudctl or SDK wrote it; use one as new"
                    ),
                });
            }
        };
        let valid = Arc::new(Mutex::new(valid_until(sent, self.ttl)));
        let mut lease = Lease {
            engine: Arc::clone(&self.engine),
            fence,
            id: id.clone(),
            valid_until: Arc::clone(&valid),
            stop: None,
            renewer: None,
        };
        // A store that would let a stale holder write is refused before anything is written.
        self.self_check(fence, &id)?;
        let (stop, stopped) = mpsc::channel::<()>();
        let renewer = {
            let renewal = Renewal {
                engine: Arc::clone(&self.engine),
                fence,
                id,
                holder: self.holder.clone(),
                ttl: self.ttl,
                store: self.store.clone(),
                valid_until: Arc::clone(&valid),
            };
            std::thread::Builder::new()
                .name("state-lease".into())
                .spawn(move || renewal.run(&stopped))
                .map_err(|e| self.failed(format!("cannot start the lease's renewal: {e}")))?
        };
        lease.stop = Some(stop);
        lease.renewer = Some(renewer);
        let clock = super::store::LeaseClock {
            valid_until: valid,
            store: self.store.clone(),
            ttl: self.ttl,
        };
        Ok(StateLock::new(target.clone(), lease)
            .with_fence(fence)
            .with_lease_clock(clock))
    }
}

/// What the renewing thread keeps of its lease.
struct Renewal {
    engine: Arc<dyn Engine>,
    fence: u64,
    id: String,
    holder: String,
    ttl: Duration,
    store: String,
    valid_until: Arc<Mutex<Instant>>,
}

impl Renewal {
    /// Renews the lease every third of its TTL until told to stop (or the lease is found taken); a
    /// failed renewal is tried again at once with a short backoff (50 ms, doubling, at most a
    /// sixth of the TTL), and each confirmed one moves the lease's validity on.
    fn run(&self, stopped: &mpsc::Receiver<()>) {
        let (every, most) = (self.ttl / 3, self.ttl / 6);
        let mut wait = every;
        let mut backoff = RENEWAL_BACKOFF.min(most);
        let store = self.store.as_str();
        loop {
            match stopped.recv_timeout(wait) {
                Err(RecvTimeoutError::Timeout) => {}
                Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
            }
            let sent = Instant::now();
            match self
                .engine
                .renew(self.fence, &self.id, &self.holder, self.ttl)
            {
                Ok(true) => {
                    extend(&self.valid_until, sent, self.ttl);
                    wait = every;
                    backoff = RENEWAL_BACKOFF.min(most);
                }
                Ok(false) => {
                    tracing::warn!(
                        store,
                        "the state's lease was taken by another holder; this apply sends no more \
                         changes and its next write will be refused"
                    );
                    // Nothing more is valid: the next check refuses at once.
                    *self.valid_until.lock().unwrap_or_else(|p| p.into_inner()) = sent;
                    return;
                }
                Err(why) => {
                    tracing::warn!(store, error = %why, "the state's lease could not be renewed; trying again");
                    wait = backoff;
                    backoff = (backoff * 2).min(most);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
