//! Files private to their owner, and replaced atomically: the one writer of the workspace's files
//! that may hold secrets or a shared state (the host store of the rate limit, the declared pipes'
//! state file, the emulator's cassettes and data file).
//!
//! - [`open`]: a file created `0600` on Unix, and an existing one open to its group or others made
//!   `0600`.
//! - [`sync_created`]: a file just created made durable in its directory.
//! - [`replace`]: new contents that a crash cannot tear: a private temporary file beside the old
//!   one, written and synced, renamed over it, then the directory synced (on Unix), so that the
//!   rename itself survives a power loss; a crash leaves the old file or the new one, never a mix
//!   and never the old one back after the new was reported written.

use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Opens `path` with `options`, creating it private to its owner (`0600` on Unix); an existing file
/// open to its group or others is made `0600`.
pub fn open(options: &mut OpenOptions, path: &Path) -> std::io::Result<File> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        let file = options.mode(0o600).open(path)?;
        if file.metadata()?.permissions().mode() & 0o077 != 0 {
            file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        }
        Ok(file)
    }
    #[cfg(not(unix))]
    options.open(path)
}

/// Replaces the contents of `path` with `bytes`, atomically and durably (see the [module](self)):
/// the temporary file is `path` with `.<process id>.<count>.tmp` added, made new (never a file or
/// link already there: another one's name is taken instead), and removed again when a step fails.
/// An error names the step and the file it failed on.
pub fn replace(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let step = |what: &str, at: &Path, e: std::io::Error| {
        std::io::Error::new(e.kind(), format!("cannot {what} {}: {e}", at.display()))
    };
    let (temporary, mut file) = new_beside(path).map_err(|e| step("write beside", path, e))?;
    let written = file.write_all(bytes).and_then(|()| file.sync_all());
    drop(file);
    if let Err(e) = written {
        let _ = std::fs::remove_file(&temporary);
        return Err(step("write", &temporary, e));
    }
    if let Err(e) = std::fs::rename(&temporary, path) {
        let _ = std::fs::remove_file(&temporary);
        return Err(step("rename a file over", path, e));
    }
    sync_directory(&directory_of(path)).map_err(|e| step("sync", &directory_of(path), e))
}

/// Makes the entry of `path`, a file just created, durable in its directory (syncs the
/// directory, on Unix): a power loss after this cannot lose the file's name.
pub fn sync_created(path: &Path) -> std::io::Result<()> {
    let dir = directory_of(path);
    sync_directory(&dir)
        .map_err(|e| std::io::Error::new(e.kind(), format!("cannot sync {}: {e}", dir.display())))
}

/// A private file made new beside `path` (`create_new`: a file or a link already at the name is
/// never opened), named after `path`, this process and a count of this process's own.
fn new_beside(path: &Path) -> std::io::Result<(PathBuf, File)> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let mut tries = 0;
    loop {
        let mut name = path.file_name().unwrap_or_default().to_os_string();
        let count = COUNT.fetch_add(1, Ordering::Relaxed);
        name.push(format!(".{}.{count}.tmp", std::process::id()));
        let temporary = path.with_file_name(name);
        match open(OpenOptions::new().write(true).create_new(true), &temporary) {
            Ok(file) => return Ok((temporary, file)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && tries < 16 => tries += 1,
            Err(e) => return Err(e),
        }
    }
}

/// The directory `path` is in (`.` for a bare file name).
fn directory_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Makes the directory's entries durable (a rename in it); a no-op where a directory cannot be
/// opened as a file (Windows).
fn sync_directory(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    fn mode(path: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn a_replaced_file_is_private_whole_and_leaves_nothing_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        std::fs::write(&path, "old").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
        replace(&path, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        #[cfg(unix)]
        assert_eq!(mode(&path), 0o600);
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        assert_eq!(names, ["state.json"]);
    }

    #[test]
    fn a_created_file_is_synced_in_its_directory_and_a_missing_one_is_said() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("cassette.jsonl");
        std::fs::write(&file, "x").unwrap();
        sync_created(&file).unwrap();
        let gone = dir.path().join("gone").join("cassette.jsonl");
        let error = sync_created(&gone).unwrap_err();
        assert!(
            error
                .to_string()
                .contains(&dir.path().join("gone").display().to_string()),
            "{error}"
        );
    }

    #[test]
    fn a_failed_replace_names_its_step_and_keeps_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        // A directory where the file should be: the rename over it fails.
        let path = dir.path().join("taken");
        std::fs::create_dir(&path).unwrap();
        std::fs::write(path.join("inside"), "x").unwrap();
        let err = replace(&path, b"new").unwrap_err().to_string();
        assert!(err.starts_with("cannot rename a file over"), "{err}");
        assert!(path.join("inside").exists());
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "the temporary file is removed");
        let missing = dir.path().join("no-such-dir").join("file");
        let err = replace(&missing, b"x").unwrap_err().to_string();
        assert!(err.starts_with("cannot write beside"), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn a_link_planted_at_a_temporary_name_is_never_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cassette.jsonl");
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep me").unwrap();
        // Links at the names a replace of this process may take (and at the one it used to).
        let pid = std::process::id();
        let mut planted: Vec<_> = (0..64u64)
            .map(|n| dir.path().join(format!("cassette.jsonl.{pid}.{n}.tmp")))
            .collect();
        planted.push(dir.path().join(format!("cassette.jsonl.{pid}.tmp")));
        for link in &planted {
            std::os::unix::fs::symlink(&victim, link).unwrap();
        }
        let _ = replace(&path, b"new");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
    }

    #[cfg(unix)]
    #[test]
    fn open_makes_a_new_or_an_open_file_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let new = dir.path().join("new");
        open(OpenOptions::new().write(true).create(true), &new).unwrap();
        assert_eq!(mode(&new), 0o600);
        let shared = dir.path().join("shared");
        std::fs::write(&shared, "x").unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o664)).unwrap();
        open(OpenOptions::new().read(true), &shared).unwrap();
        assert_eq!(mode(&shared), 0o600);
    }
}
