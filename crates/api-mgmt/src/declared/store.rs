//! Where a [`RecordedState`] lives: the [`StateStore`] trait, and [`FileStateStore`], a file written
//! atomically, with an OS lock per service for the length of an apply.

use std::any::Any;
use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use api_core::PipeId;

use super::RecordedState;
use super::recorded::StateTarget;

/// Where a recorded state is kept: [`FileStateStore`], or `SharedStateStore` (the `state-redis`
/// feature) for applies from many hosts. An apply saves after every step that changes it (an intent before each create,
/// the id after it), so `save` must be durable when it returns.
pub trait StateStore: Send + Sync {
    /// The recorded state, or `None` when nothing has been recorded yet.
    fn load(&self) -> Result<Option<RecordedState>, StateError>;

    /// Replaces the recorded state, durably, under `lock` (this store's lock of the state's
    /// service): a store with fencing writes nothing once another holder has taken the service
    /// ([`StateError::Fenced`]).
    fn save(&self, lock: &StateLock, state: &RecordedState) -> Result<(), StateError>;

    /// Checks that `lock` still holds its service: a store with leases answers
    /// [`StateError::Fenced`] once another holder has taken it (this process was paused, or cut off
    /// from the store, past its lease). [`Plan::apply`](super::Plan::apply) asks before it starts.
    /// Locks that cannot be taken over (the file store's) always hold.
    fn check_held(&self, lock: &StateLock) -> Result<(), StateError> {
        let _ = lock;
        Ok(())
    }

    /// Takes the lock of `target`'s service without waiting, held until the [`StateLock`] is
    /// dropped: one apply per service at a time, whichever state file or directory it comes from.
    /// [`Plan::apply`](super::Plan::apply) asks for it.
    fn lock(&self, target: &StateTarget) -> Result<StateLock, StateError>;

    /// Whether a service with no state here must be set up first ([`init`](Self::init)) rather
    /// than read as managing nothing: `true` for a shared store, where a missing state is far more
    /// often a state lost (a store restarted without persistence, an eviction, a `FLUSHDB`,
    /// another database number, a restore) than a service never applied, and reading it as empty
    /// would create every declared pipe a second time. `false` for the file store: a new directory
    /// starts empty.
    fn requires_init(&self) -> bool {
        false
    }

    /// The store in messages (a file's path, a URL with its password redacted).
    fn describe_store(&self) -> String {
        "the state store".to_string()
    }

    /// The recorded state of `target`'s service, refused when it belongs to another: an empty
    /// state when there is none and the store does not [require an init](Self::requires_init),
    /// else [`StateError::Missing`]. What a plan should read.
    fn load_for(&self, target: &StateTarget) -> Result<RecordedState, StateError> {
        match self.load()? {
            Some(state) => {
                state.check_target(target)?;
                Ok(state)
            }
            None if self.requires_init() => Err(StateError::Missing {
                store: self.describe_store(),
                target: Box::new(target.clone()),
            }),
            None => Ok(RecordedState::new(target.clone())),
        }
    }

    /// Records an empty state of a new lineage for the lock's service, the explicit first step of
    /// a service on a store that [requires it](Self::requires_init); refused when the store holds a
    /// state of the service already (whatever it records).
    fn init(&self, lock: &StateLock) -> Result<RecordedState, StateError> {
        if let Some(existing) = self.load()? {
            return Err(StateError::Refused(format!(
                "{} holds a state of this service already ({}, {} pipes, {} pending creates); \
                 nothing was written",
                self.describe_store(),
                existing.generation(),
                existing.pipes.len(),
                existing.pending.len()
            )));
        }
        let mut state = RecordedState::new(lock.target().clone());
        state.serial = 1;
        self.save(lock, &state)?;
        Ok(state)
    }
}

/// A held lock of one service's applies ([`StateStore::lock`]); released when dropped (or when the
/// process ends). [`Plan::apply`](super::Plan::apply) takes it as the proof that its caller holds
/// the service.
pub struct StateLock {
    target: StateTarget,
    fence: Option<u64>,
    lease: Option<LeaseClock>,
    _held: Box<dyn Any + Send + Sync>,
}

/// Until when a lease is valid by this process's own monotonic clock, moved on by each renewal
/// the store confirmed, and said of what store.
#[derive(Clone)]
pub(crate) struct LeaseClock {
    pub(crate) valid_until: std::sync::Arc<std::sync::Mutex<std::time::Instant>>,
    pub(crate) store: String,
    pub(crate) ttl: Duration,
}

impl LeaseClock {
    /// How long the lease is still valid by this process's own clock (zero once it may have
    /// lapsed).
    fn valid_for(&self) -> Duration {
        let until = *self.valid_until.lock().unwrap_or_else(|p| p.into_inner());
        until.saturating_duration_since(std::time::Instant::now())
    }

    /// Whether the lease may have lapsed by this process's own clock.
    pub(crate) fn lapsed(&self) -> bool {
        self.valid_for().is_zero()
    }
}

impl std::fmt::Debug for StateLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StateLock")
            .field("target", &self.target)
            .field("fence", &self.fence)
            .finish_non_exhaustive()
    }
}

impl StateLock {
    /// The lock of `target`, held as long as `held` lives (for [`StateStore`] implementations:
    /// `held` is what keeps the lock, released when dropped).
    pub fn new(target: StateTarget, held: impl Any + Send + Sync) -> Self {
        Self {
            target,
            fence: None,
            lease: None,
            _held: Box::new(held),
        }
    }

    /// With the clock of its lease (a shared store's).
    #[cfg(any(feature = "state-redis", feature = "state-postgres"))]
    pub(crate) fn with_lease_clock(mut self, clock: LeaseClock) -> Self {
        self.lease = Some(clock);
        self
    }

    /// How long the lease is still valid by this process's own clock (the last renewal the store
    /// confirmed, counted from when it was sent, plus the TTL, less a margin): `None` for a lock
    /// that cannot lapse (the file store's OS locks).
    pub fn lease_valid_for(&self) -> Option<Duration> {
        self.lease.as_ref().map(LeaseClock::valid_for)
    }

    /// The lease's TTL, for a lock that can lapse.
    pub(crate) fn lease_ttl(&self) -> Option<Duration> {
        self.lease.as_ref().map(|clock| clock.ttl)
    }

    /// Refuses, with [`StateError::LeaseLost`], once the lease may have lapsed by this process's
    /// own clock: asked before every call that changes the server, so a runner cut off from its
    /// store (while the API still answers) changes nothing after another may have taken over.
    pub fn check_lease(&self) -> Result<(), StateError> {
        match &self.lease {
            Some(clock) if clock.lapsed() => Err(StateError::LeaseLost {
                store: clock.store.clone(),
                ttl: clock.ttl,
            }),
            _ => Ok(()),
        }
    }

    /// The clock of its lease (cloned for a check that outlives the borrow: the one asked right
    /// before each request an apply sends); `None` for a lock that cannot lapse.
    pub(crate) fn lease(&self) -> Option<&LeaseClock> {
        self.lease.as_ref()
    }

    /// With the fencing number of its lease (for stores that fence their writes: every write
    /// presents it, and the store refuses it once a later lease exists).
    pub fn with_fence(mut self, fence: u64) -> Self {
        self.fence = Some(fence);
        self
    }

    /// The fencing number of its lease, for stores that fence their writes.
    pub fn fence(&self) -> Option<u64> {
        self.fence
    }

    /// What keeps the lock (for a store to tell its own locks from others').
    pub(crate) fn held(&self) -> &(dyn Any + Send + Sync) {
        &*self._held
    }

    /// The service it locks.
    pub fn target(&self) -> &StateTarget {
        &self.target
    }

    /// Refuses a lock of another service than `target`.
    pub(crate) fn check(&self, target: &StateTarget) -> Result<(), StateError> {
        if &self.target == target {
            Ok(())
        } else {
            Err(StateError::Refused(format!(
                "the lock held is of service {} of organization {} at {}, not of the plan's service {}; \
                 nothing was done",
                self.target.service_id,
                self.target.organization_id,
                self.target.api_url,
                target.service_id
            )))
        }
    }
}

/// Who holds a service's lease, as the store says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseHolder {
    /// Who took it (process, host, and what it said of itself).
    pub holder: String,
    /// When it was taken, as the store's clock says (seconds since the Unix epoch).
    pub since: i64,
    /// How long until it lapses unless renewed.
    pub expires_in: Duration,
}

impl std::fmt::Display for LeaseHolder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let since = chrono::DateTime::from_timestamp(self.since, 0).map_or_else(
            || format!("{}s after the epoch", self.since),
            |at| at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        );
        write!(
            f,
            "{}, since {since}, lapsing in {:.0?} unless renewed",
            self.holder, self.expires_in
        )
    }
}

/// Why a recorded state could not be read, written or used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StateError {
    /// The state could not be read or written.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        message: String,
    },
    /// The state is not one this SDK wrote (corrupt, truncated, foreign).
    #[error("the recorded state is not readable: {0}")]
    Corrupt(String),
    /// A newer version of the SDK wrote it.
    #[error(
        "the recorded state is of version {version}, newer than this SDK's ({}); use a newer cloudctl or SDK",
        super::STATE_VERSION
    )]
    Newer {
        /// The version found.
        version: u64,
    },
    /// It belongs to another service or deployment.
    #[error(
        "the recorded state belongs to service {} of organization {} at {}, not to service {} of organization {} at {}",
        recorded.service_id, recorded.organization_id, recorded.api_url, asked.service_id, asked.organization_id, asked.api_url
    )]
    OtherTarget {
        /// The service it was recorded for.
        recorded: Box<StateTarget>,
        /// The service asked for.
        asked: Box<StateTarget>,
    },
    /// The change asked of the state cannot be made; the text says why.
    #[error("{0}")]
    Refused(String),
    /// The plan would delete a protected pipe ([`Lifecycle::protect`](super::Lifecycle)): its file
    /// removed, a replace, or the recreate of a failed pipe. Nothing was sent.
    #[error(
        "the plan would delete {} protected pipe{} ({}): nothing was done; to delete {}, apply \
         `protect: false` first",
        names.len(),
        if names.len() == 1 { "" } else { "s" },
        names.join(", "),
        if names.len() == 1 { "it" } else { "them" }
    )]
    Protected {
        /// The protected pipes, by name.
        names: Vec<String>,
    },
    /// The plan deletes, replaces and recreates more pipes than the apply allows
    /// ([`ApplyOptions::max_destructive`](super::ApplyOptions::max_destructive)). Nothing was sent.
    #[error(
        "the plan deletes, replaces or recreates {planned} pipe{}, more than the {max} allowed: \
         nothing was done",
        if *planned == 1 { "" } else { "s" }
    )]
    TooDestructive {
        /// How many actions delete a pipe.
        planned: usize,
        /// The cap.
        max: usize,
    },
    /// Another apply holds the state.
    #[error("{}: another apply holds the state (its lock is taken); nothing was done", path.display())]
    Locked {
        /// The lock file.
        path: PathBuf,
    },
    /// Another apply holds the service, from this state or another (another directory, another
    /// `--state` file).
    #[error(
        "another apply holds service {} of organization {} at {} ({holder}); nothing was done",
        target.service_id, target.organization_id, target.api_url
    )]
    ServiceLocked {
        /// The service.
        target: Box<StateTarget>,
        /// Who holds it, as its lock file says (process id, state file, since when).
        holder: String,
        /// The lock file.
        path: PathBuf,
    },
    /// A shared store holds the service's lease for another apply (another host, or another
    /// process).
    #[error(
        "another apply holds service {} of organization {} at {} in {store} ({holder}); nothing was done",
        target.service_id, target.organization_id, target.api_url
    )]
    Leased {
        /// The service.
        target: Box<StateTarget>,
        /// Who holds it, since when, and for how long unless renewed.
        holder: LeaseHolder,
        /// The store, its URL's password redacted.
        store: String,
    },
    /// Another apply took the service's lease after this one's lapsed (this process was paused, or
    /// cut off from the store, past its TTL): the write was refused and nothing was written.
    #[error(
        "{store}: this apply's lease of the service lapsed and another apply took it (held now by \
         {holder}); nothing more was written, the state is as the new holder keeps it"
    )]
    Fenced {
        /// The store, its URL's password redacted.
        store: String,
        /// Who holds the lease now.
        holder: String,
    },
    /// A shared store could not be reached or used (unreachable, timeout, authentication): it is
    /// named, and nothing falls back to a local file.
    #[error("the state store {store}: {message}")]
    Store {
        /// The store, its URL's password redacted.
        store: String,
        /// What failed.
        message: String,
    },
    /// A shared store failed the self-check of its fencing, so it could not keep a paused holder
    /// from writing over the next one's state; it is not used.
    #[error("the state store {store} is refused: {message}")]
    UnsafeStore {
        /// The store, its URL's password redacted.
        store: String,
        /// What the self-check found.
        message: String,
    },
    /// A shared store holds no state of the service: it was never set up there (`cloudctl state
    /// init`, [`StateStore::init`], or a state pushed from a file), or the store lost it. Nothing
    /// was read from the API and nothing was sent.
    #[error(
        "{store} holds no state of service {} of organization {} at {}: either the service was \
         never set up in this store, or the store lost its data (a restart without persistence, an \
         eviction, a flush, another database number in the URL, a restore); planning against an \
         empty state would create every declared pipe a second time, so nothing was done",
        target.service_id, target.organization_id, target.api_url
    )]
    Missing {
        /// The store, its URL's password redacted.
        store: String,
        /// The service.
        target: Box<StateTarget>,
    },
    /// This process's lease of the service may have lapsed by its own clock (its renewals failed
    /// for longer than the TTL allows): no call that changes the server was made after that.
    #[error(
        "{store}: this apply's lease of the service may have lapsed (no renewal was confirmed \
         within its {ttl:?} TTL), so another apply may hold the service now; no create, delete or \
         service command was sent after that"
    )]
    LeaseLost {
        /// The store, its URL's password redacted.
        store: String,
        /// The lease's TTL.
        ttl: Duration,
    },
    /// A pipe was created and the state could not record it: its id, so that it can be recorded
    /// (the intent of its create is pending in the state).
    #[error(
        "pipe {name:?} was created as {id}, and the state could not record it ({error}); record it \
         with `cloudctl state resolve {name} --id {id}` (or `RecordedState::adopt`)"
    )]
    CreatedNotRecorded {
        /// The pipe's name.
        name: String,
        /// The id of the pipe created.
        id: PipeId,
        /// Why the save failed.
        error: Box<StateError>,
    },
}

impl StateError {
    pub(crate) fn corrupt(message: impl Into<String>) -> Self {
        Self::Corrupt(message.into())
    }

    fn io(path: &Path, action: &str, error: &std::io::Error) -> Self {
        Self::Io {
            path: path.to_path_buf(),
            message: format!("cannot {action}: {error}"),
        }
    }
}

/// A recorded state in a file: JSON, private to its owner (0600 on Unix), replaced atomically
/// (written to a temporary file beside it, synced, renamed over it, and the directory synced), so a
/// crash leaves either the old state or the new one.
///
/// [`lock`](StateStore::lock) takes two OS locks without waiting, for the length of an apply: one on
/// a file beside the state (`<file>.lock`), and one per service in the lock directory
/// ([`lock_dir`](Self::lock_dir)), named for the service's API URL, organization and id, so that
/// two applies of one service from two directories or two state files of this user are refused
/// too ([`StateError::ServiceLocked`], naming the holder), never run side by side. The OS drops the
/// locks of a process that dies.
///
/// ```no_run
/// use api_mgmt::declared::{FileStateStore, StateStore};
///
/// # fn run(target: api_mgmt::declared::StateTarget) -> Result<(), api_mgmt::declared::StateError> {
/// let store = FileStateStore::new("pipes/.cloudctl-state.json");
/// let _lock = store.lock(&target)?;          // held until dropped
/// let recorded = store.load()?;              // None: nothing recorded yet
/// # let _ = recorded; Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct FileStateStore {
    path: PathBuf,
    lock_dir: PathBuf,
}

/// The OS locks a [`FileStateStore`] holds for a [`StateLock`].
struct FileLocks {
    _state: File,
    _service: File,
}

impl FileStateStore {
    /// A store in the file `path` (created by the first save), with the default lock directory:
    /// `$XDG_STATE_HOME/cloud-sdk/locks`, else `$HOME/.local/state/cloud-sdk/locks`, else
    /// `cloud-sdk-locks` in the temporary directory.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            lock_dir: default_lock_dir(),
        }
    }

    /// With the service locks in `dir` (created, private to its owner, when first used): every
    /// process that should exclude the others must use the same one.
    pub fn lock_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.lock_dir = dir.into();
        self
    }

    /// The state file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The lock file beside the state file.
    pub fn lock_path(&self) -> PathBuf {
        let mut name = self.path.file_name().unwrap_or_default().to_os_string();
        name.push(".lock");
        self.path.with_file_name(name)
    }

    /// The lock file of `target`'s service in the lock directory.
    pub fn service_lock_path(&self, target: &StateTarget) -> PathBuf {
        let digest = target.digest();
        self.lock_dir
            .join(format!("service-{}-{digest}.lock", target.service_id))
    }
}

/// The default directory of the service locks (see [`FileStateStore::new`]).
fn default_lock_dir() -> PathBuf {
    let home = |var: &str| {
        std::env::var_os(var)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(state) = home("XDG_STATE_HOME") {
        return state.join("cloud-sdk").join("locks");
    }
    if let Some(home) = home("HOME") {
        return home
            .join(".local")
            .join("state")
            .join("cloud-sdk")
            .join("locks");
    }
    std::env::temp_dir().join("cloud-sdk-locks")
}

/// Takes the OS lock of `path` without waiting; `Ok(None)` when another holds it.
fn try_lock(path: &Path) -> Result<Option<File>, StateError> {
    let file = api_core::private_file::open(
        OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .read(true),
        path,
    )
    .map_err(|e| StateError::io(path, "open the lock file", &e))?;
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(e)) => Err(StateError::io(path, "lock the lock file", &e)),
    }
}

impl StateStore for FileStateStore {
    fn describe_store(&self) -> String {
        self.path.display().to_string()
    }

    fn lock(&self, target: &StateTarget) -> Result<StateLock, StateError> {
        let state_path = self.lock_path();
        let Some(state) = try_lock(&state_path)? else {
            return Err(StateError::Locked { path: state_path });
        };
        std::fs::create_dir_all(&self.lock_dir)
            .map_err(|e| StateError::io(&self.lock_dir, "create the lock directory", &e))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let _ =
                std::fs::set_permissions(&self.lock_dir, std::fs::Permissions::from_mode(0o700));
        }
        let path = self.service_lock_path(target);
        let Some(mut service) = try_lock(&path)? else {
            let holder = std::fs::read_to_string(&path)
                .ok()
                .map(|text| text.trim().to_string())
                .filter(|text| !text.is_empty())
                .unwrap_or_else(|| "a process that has not said who it is".into());
            return Err(StateError::ServiceLocked {
                target: Box::new(target.clone()),
                holder,
                path,
            });
        };
        // Who holds it, for the message of the next one refused.
        let said = format!(
            "process {}, state {}, since {}",
            std::process::id(),
            std::path::absolute(&self.path)
                .unwrap_or_else(|_| self.path.clone())
                .display(),
            chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        );
        let _ = service
            .set_len(0)
            .and_then(|()| service.write_all(said.as_bytes()));
        Ok(StateLock::new(
            target.clone(),
            FileLocks {
                _state: state,
                _service: service,
            },
        ))
    }

    fn load(&self) -> Result<Option<RecordedState>, StateError> {
        match std::fs::read_to_string(&self.path) {
            Ok(text) => RecordedState::from_json(&text)
                .map(Some)
                .map_err(|e| match e {
                    StateError::Corrupt(why) => {
                        StateError::Corrupt(format!("{}: {why}", self.path.display()))
                    }
                    other => other,
                }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(StateError::io(&self.path, "read the state", &e)),
        }
    }

    fn save(&self, lock: &StateLock, state: &RecordedState) -> Result<(), StateError> {
        lock.check(&state.target)?;
        if lock.held().downcast_ref::<FileLocks>().is_none() {
            return Err(StateError::Refused(format!(
                "{}: this lock was not taken from a state file's store; take it with its `lock`",
                self.path.display()
            )));
        }
        let text = state.to_json()?;
        api_core::private_file::replace(&self.path, text.as_bytes())
            .map_err(|e| StateError::io(&self.path, "save the state", &e))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target() -> StateTarget {
        StateTarget {
            api_url: "http://127.0.0.1:8080".into(),
            organization_id: "3f0c5e2a-8d41-4b7e-9a6c-1e2f3a4b5c6d".parse().unwrap(),
            service_id: "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d".parse().unwrap(),
        }
    }

    #[test]
    fn a_saved_state_reads_back_private_and_whole() {
        let dir = tempfile::tempdir().unwrap();
        let locks = tempfile::tempdir().unwrap();
        let store = FileStateStore::new(dir.path().join("state.json")).lock_dir(locks.path());
        assert!(store.load().unwrap().is_none(), "nothing recorded yet");
        let state = RecordedState::new(target());
        let lock = store.lock(&target()).unwrap();
        store.save(&lock, &state).unwrap();
        assert_eq!(store.load().unwrap(), Some(state));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(store.path())
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            ["state.json", "state.json.lock"],
            "no temporary file is left"
        );
    }

    #[test]
    fn corrupt_newer_and_foreign_states_are_refused_with_a_reason() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileStateStore::new(dir.path().join("state.json"));
        for (text, expected) in [
            ("{\"version\": 1, \"target\": ", "not JSON"),
            ("{\"pipes\": {}}", "no `version`"),
            ("{\"version\": 9, \"target\": {}}", "version 9, newer"),
            (
                "{\"version\": 1, \"target\": {\"apiUrl\": 3}}",
                "at `target.apiUrl`",
            ),
        ] {
            std::fs::write(store.path(), text).unwrap();
            let error = store.load().unwrap_err().to_string();
            assert!(error.contains(expected), "{expected:?} in {error:?}");
        }
        let mut other = target();
        other.api_url = "https://api.example.com".into();
        let error = RecordedState::new(other)
            .check_target(&target())
            .unwrap_err();
        assert!(
            error
                .to_string()
                .contains("at https://api.example.com, not to service"),
            "{error}"
        );
    }

    #[test]
    fn the_lock_is_held_until_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let store =
            FileStateStore::new(dir.path().join("state.json")).lock_dir(dir.path().join("locks"));
        let lock = store.lock(&target()).unwrap();
        assert_eq!(lock.target(), &target());
        assert!(matches!(
            store.lock(&target()),
            Err(StateError::Locked { .. })
        ));
        drop(lock);
        assert!(store.lock(&target()).is_ok());
    }

    #[test]
    fn one_service_is_locked_whatever_the_state_file_and_others_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let locks = dir.path().join("locks");
        let first = FileStateStore::new(dir.path().join("a/state.json")).lock_dir(&locks);
        let second = FileStateStore::new(dir.path().join("b/state.json")).lock_dir(&locks);
        std::fs::create_dir_all(dir.path().join("a")).unwrap();
        std::fs::create_dir_all(dir.path().join("b")).unwrap();
        let held = first.lock(&target()).unwrap();
        let refused = second.lock(&target()).unwrap_err();
        let StateError::ServiceLocked { holder, .. } = &refused else {
            panic!("{refused:?}");
        };
        assert!(
            holder.contains(&format!("process {}", std::process::id()))
                && holder.contains("a/state.json"),
            "the holder is named: {holder}"
        );
        assert!(
            refused.to_string().contains("another apply holds service"),
            "{refused}"
        );
        let mut other = target();
        other.service_id = "b1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d".parse().unwrap();
        assert!(second.lock(&other).is_ok(), "another service is not held");
        drop(held);
        assert!(second.lock(&target()).is_ok());
    }
}
