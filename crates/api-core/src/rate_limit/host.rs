//! The host store: the pacing state of one API URL and key in a small file of the user's, read and
//! written under an exclusive OS file lock (`flock`, released by the OS when a process dies, even
//! by SIGKILL). A file that does not read back as ours is replaced, never trusted.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::pacing::PaceState;

/// The first word of a state file.
const MAGIC: &str = "cloud-sdk-rate-limit-v1";

/// The state file of one limit.
#[derive(Debug, Clone)]
pub(crate) struct HostFile {
    path: PathBuf,
}

impl HostFile {
    /// The file for `name` (already safe as a file name) in `dir`, or in the default directory.
    pub(crate) fn new(dir: Option<&Path>, name: &str) -> Self {
        let dir = dir.map_or_else(default_dir, Path::to_path_buf);
        Self {
            path: dir.join(format!("{name}.state")),
        }
    }

    /// The file's path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `change` on the state under the lock and writes what it returns; blocking (a few
    /// microseconds of file work, or as long as another process holds the lock to do the same).
    pub(crate) fn update<T>(
        &self,
        change: impl FnOnce(PaceState) -> (PaceState, T),
    ) -> std::io::Result<T> {
        if let Some(dir) = self.path.parent() {
            private_dir(dir)?;
        }
        let mut file = open(&self.path)?;
        file.lock()?;
        let mut text = String::new();
        // A file that is not UTF-8 text is foreign: read as nothing, then replaced.
        let state = match file.read_to_string(&mut text) {
            Ok(_) => decode(&text).unwrap_or_default(),
            Err(_) => PaceState::default(),
        };
        let (state, result) = change(state);
        file.seek(SeekFrom::Start(0))?;
        file.set_len(0)?;
        file.write_all(encode(&state).as_bytes())?;
        file.unlock()?;
        Ok(result)
    }
}

/// The user's runtime directory (`$XDG_RUNTIME_DIR`), else cache directory, else the temporary
/// directory, with `cloud-sdk/rate-limit` below it.
fn default_dir() -> PathBuf {
    dirs::runtime_dir()
        .or_else(dirs::cache_dir)
        .unwrap_or_else(std::env::temp_dir)
        .join("cloud-sdk")
        .join("rate-limit")
}

/// Creates `dir` private to the user (0700 on Unix), and makes it so when it is not.
fn private_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
        let mode = std::fs::metadata(dir)?.permissions().mode();
        if mode & 0o077 != 0 {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
        }
        Ok(())
    }
    #[cfg(not(unix))]
    std::fs::create_dir_all(dir)
}

/// Opens the state file for reading and writing, creating it private (0600); a link or anything
/// but a regular file in its place is removed first.
fn open(path: &Path) -> std::io::Result<File> {
    if let Ok(meta) = std::fs::symlink_metadata(path)
        && !meta.file_type().is_file()
    {
        std::fs::remove_file(path)?;
    }
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        options.mode(0o600);
        let file = options.open(path)?;
        if file.metadata()?.permissions().mode() & 0o077 != 0 {
            file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        }
        Ok(file)
    }
    #[cfg(not(unix))]
    options.open(path)
}

/// `MAGIC next blocked slowdown throttled checksum`.
fn encode(state: &PaceState) -> String {
    let fields = format!(
        "{MAGIC} {} {} {} {}",
        state.next_slot, state.blocked_until, state.slowdown, state.throttled_at
    );
    format!("{fields} {:016x}\n", super::store::fnv(fields.as_bytes()))
}

/// The state a file holds, when it is ours and whole.
fn decode(text: &str) -> Option<PaceState> {
    let line = text.strip_suffix('\n')?;
    let (fields, checksum) = line.rsplit_once(' ')?;
    if u64::from_str_radix(checksum, 16).ok()? != super::store::fnv(fields.as_bytes()) {
        return None;
    }
    let mut parts = fields.split(' ');
    if parts.next()? != MAGIC {
        return None;
    }
    let state = PaceState {
        next_slot: parts.next()?.parse().ok()?,
        blocked_until: parts.next()?.parse().ok()?,
        slowdown: parts.next()?.parse().ok()?,
        throttled_at: parts.next()?.parse().ok()?,
    };
    parts.next().is_none().then_some(state)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_round_trips_and_anything_else_reads_as_nothing() {
        let state = PaceState {
            next_slot: 5,
            blocked_until: 7,
            slowdown: 2.5,
            throttled_at: 3,
        };
        assert_eq!(decode(&encode(&state)), Some(state));
        let good = encode(&state);
        for foreign in [
            String::new(),
            "hello\n".into(),
            good.replace(" 5 ", " 6 "),
            good.trim_end().to_string(),
            good.replace(MAGIC, "other-magic"),
            format!("{good}{good}"),
        ] {
            assert_eq!(decode(&foreign), None, "{foreign:?}");
        }
    }

    #[test]
    fn a_corrupt_or_foreign_file_is_replaced_and_the_file_is_private() {
        let dir = tempfile::tempdir().unwrap();
        let file = HostFile::new(Some(dir.path()), "k");
        std::fs::write(file.path(), b"\xff\xfe not ours").unwrap();
        let seen = file
            .update(|state| {
                (
                    PaceState {
                        next_slot: 9,
                        ..state
                    },
                    state,
                )
            })
            .unwrap();
        assert_eq!(
            seen,
            PaceState::default(),
            "the foreign file was not trusted"
        );
        let again = file.update(|state| (state, state)).unwrap();
        assert_eq!(again.next_slot, 9);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(file.path()).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        // A link in the file's place is replaced by a file of ours, and its target left alone.
        #[cfg(unix)]
        {
            let target = dir.path().join("elsewhere");
            std::fs::write(&target, "keep").unwrap();
            std::fs::remove_file(file.path()).unwrap();
            std::os::unix::fs::symlink(&target, file.path()).unwrap();
            let seen = file.update(|state| (state, state)).unwrap();
            assert_eq!(seen, PaceState::default());
            assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
            assert!(std::fs::symlink_metadata(file.path()).unwrap().is_file());
        }
    }

    #[cfg(unix)]
    #[test]
    fn the_directory_is_made_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let open = dir.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
        let file = HostFile::new(Some(&open), "k");
        file.update(|state| (state, ())).unwrap();
        let mode = std::fs::metadata(&open).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        let fresh = dir.path().join("a").join("b");
        HostFile::new(Some(&fresh), "k")
            .update(|state| (state, ()))
            .unwrap();
        assert_eq!(
            std::fs::metadata(&fresh).unwrap().permissions().mode() & 0o777,
            0o700
        );
        assert!(default_dir().ends_with("cloud-sdk/rate-limit"));
    }
}
