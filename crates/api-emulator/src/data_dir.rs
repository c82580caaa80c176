//! The data directory and its database file, private to their owner. On Unix the directory is
//! created 0700 and the file 0600. An existing directory open to its group or others is made 0700
//! when it is the emulator's own (empty, or holding nothing but the database), and refused, left as
//! it is, when it holds anything else (it may be shared: `.`, `/tmp`); an existing database file
//! open to them is made 0600.

use std::path::{Path, PathBuf};

/// Creates `dir` if it is absent, checks that it is private, and returns the path of `file_name` in
/// it, created (empty) if absent and private either way.
pub fn prepare(dir: &Path, file_name: &str) -> Result<PathBuf, String> {
    create_dir(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    make_dir_private(dir, file_name)?;
    let file = dir.join(file_name);
    create_file(&file).map_err(|e| format!("cannot create {}: {e}", file.display()))?;
    Ok(file)
}

#[cfg(unix)]
fn create_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

#[cfg(unix)]
fn make_dir_private(dir: &Path, file_name: &str) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let cannot = |e: std::io::Error| format!("cannot read {}: {e}", dir.display());
    let mode = std::fs::metadata(dir).map_err(cannot)?.permissions().mode();
    if mode & 0o077 == 0 {
        return Ok(());
    }
    let mut entries = std::fs::read_dir(dir).map_err(cannot)?;
    let own = entries.all(|entry| entry.is_ok_and(|entry| entry.file_name() == file_name));
    if !own {
        return Err(format!(
            "the data directory {dir} is open to its group or others (mode {mode:o}) and holds \
             other files, and the emulator keeps secrets in it: make it private (chmod 700 {dir}) \
             or name an empty or new directory",
            dir = dir.display(),
            mode = mode & 0o777,
        ));
    }
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
        .map_err(|e| format!("cannot make {} private: {e}", dir.display()))
}

#[cfg(unix)]
fn create_file(file: &Path) -> std::io::Result<()> {
    api_core::private_file::open(
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false),
        file,
    )
    .map(drop)
}

#[cfg(not(unix))]
fn create_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}

#[cfg(not(unix))]
fn make_dir_private(_dir: &Path, _file_name: &str) -> Result<(), String> {
    Ok(())
}

#[cfg(not(unix))]
fn create_file(_file: &Path) -> std::io::Result<()> {
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn a_new_directory_and_file_are_private() {
        let parent = tempfile::tempdir().unwrap();
        let dir = parent.path().join("a/b");
        let file = prepare(&dir, "db").unwrap();
        assert_eq!((mode(&dir), mode(&file)), (0o700, 0o600));
        assert_eq!(mode(&parent.path().join("a")), 0o700, "created parents too");
    }

    #[test]
    fn an_open_directory_of_the_emulator_is_made_private_and_a_shared_one_refused() {
        let parent = tempfile::tempdir().unwrap();
        let open = |path: &Path, bits| {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(bits)).unwrap()
        };
        let empty = parent.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        open(&empty, 0o755);
        prepare(&empty, "db").unwrap();
        assert_eq!(
            mode(&empty),
            0o700,
            "an empty directory is the emulator's own"
        );

        // As an older emulator left it: the directory and the file open to others.
        let older = parent.path().join("older");
        std::fs::create_dir(&older).unwrap();
        std::fs::write(older.join("db"), b"").unwrap();
        open(&older, 0o755);
        open(&older.join("db"), 0o644);
        let file = prepare(&older, "db").unwrap();
        assert_eq!((mode(&older), mode(&file)), (0o700, 0o600));

        let shared = parent.path().join("shared");
        std::fs::create_dir(&shared).unwrap();
        std::fs::write(shared.join("notes.txt"), b"").unwrap();
        open(&shared, 0o755);
        let err = prepare(&shared, "db").unwrap_err();
        assert!(
            err.contains("mode 755") && err.contains("chmod 700"),
            "{err}"
        );
        assert_eq!(mode(&shared), 0o755, "left as it was");
        assert!(!shared.join("db").exists(), "nothing written in it");
    }
}
