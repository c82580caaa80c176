//! Where a [`RecordedState`] lives: the [`StateStore`] trait, and [`FileStateStore`], a file written
//! atomically and held by an OS lock for the length of an apply.

use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use super::RecordedState;
use super::recorded::StateTarget;

/// Where a recorded state is kept. An apply saves after every step that changes it (an intent
/// before each create, the id after it), so `save` must be durable when it returns.
pub trait StateStore: Send + Sync {
    /// The recorded state, or `None` when nothing has been recorded yet.
    fn load(&self) -> Result<Option<RecordedState>, StateError>;

    /// Replaces the recorded state, durably.
    fn save(&self, state: &RecordedState) -> Result<(), StateError>;
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
    /// Another apply holds the state.
    #[error("{}: another apply holds the state (its lock is taken); nothing was done", path.display())]
    Locked {
        /// The lock file.
        path: PathBuf,
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
/// crash leaves either the old state or the new one. [`lock`](Self::lock) takes an OS lock on a
/// file beside it (`<file>.lock`) for the length of an apply: a second apply is refused at once
/// ([`StateError::Locked`]), never run beside the first; the OS drops the lock of a process that
/// dies.
///
/// ```no_run
/// use api_mgmt::declared::{FileStateStore, StateStore};
///
/// # fn run() -> Result<(), api_mgmt::declared::StateError> {
/// let store = FileStateStore::new("pipes/.cloudctl-state.json");
/// let _lock = store.lock()?;                 // held until dropped
/// let recorded = store.load()?;              // None: nothing recorded yet
/// # let _ = recorded; Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct FileStateStore {
    path: PathBuf,
}

/// The OS lock of a [`FileStateStore`]; released when dropped (or when the process ends).
#[derive(Debug)]
pub struct StateLock {
    _file: File,
}

impl FileStateStore {
    /// A store in the file `path` (created by the first save).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
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

    /// Takes the store's OS lock without waiting: [`StateError::Locked`] while another process (or
    /// another lock in this one) holds it.
    pub fn lock(&self) -> Result<StateLock, StateError> {
        let path = self.lock_path();
        let file = private(OpenOptions::new().create(true).truncate(false).write(true))
            .open(&path)
            .map_err(|e| StateError::io(&path, "open the lock file", &e))?;
        match file.try_lock() {
            Ok(()) => Ok(StateLock { _file: file }),
            Err(std::fs::TryLockError::WouldBlock) => Err(StateError::Locked { path }),
            Err(std::fs::TryLockError::Error(e)) => {
                Err(StateError::io(&path, "lock the lock file", &e))
            }
        }
    }
}

impl StateStore for FileStateStore {
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

    fn save(&self, state: &RecordedState) -> Result<(), StateError> {
        let directory = match self.path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let text = state.to_json()?;
        let mut name = self.path.file_name().unwrap_or_default().to_os_string();
        name.push(format!(".{}.tmp", std::process::id()));
        let temporary = self.path.with_file_name(name);
        let written = (|| {
            let mut file = private(OpenOptions::new().create(true).truncate(true).write(true))
                .open(&temporary)?;
            file.write_all(text.as_bytes())?;
            file.sync_all()
        })();
        if let Err(e) = written {
            let _ = std::fs::remove_file(&temporary);
            return Err(StateError::io(&temporary, "write the state", &e));
        }
        if let Err(e) = std::fs::rename(&temporary, &self.path) {
            let _ = std::fs::remove_file(&temporary);
            return Err(StateError::io(&self.path, "replace the state", &e));
        }
        // The rename is durable once the directory is (on Unix; elsewhere opening a directory fails).
        #[cfg(unix)]
        File::open(&directory)
            .and_then(|dir| dir.sync_all())
            .map_err(|e| StateError::io(&directory, "sync the directory", &e))?;
        let _ = directory;
        Ok(())
    }
}

/// Opens new files private to their owner (0600) on Unix.
fn private(options: &mut OpenOptions) -> &mut OpenOptions {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600)
    }
    #[cfg(not(unix))]
    {
        options
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
        let store = FileStateStore::new(dir.path().join("state.json"));
        assert!(store.load().unwrap().is_none(), "nothing recorded yet");
        let state = RecordedState::new(target());
        store.save(&state).unwrap();
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
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["state.json"], "no temporary file is left");
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
        let store = FileStateStore::new(dir.path().join("state.json"));
        let lock = store.lock().unwrap();
        assert!(matches!(store.lock(), Err(StateError::Locked { .. })));
        drop(lock);
        assert!(store.lock().is_ok());
    }
}
