//! The host store: the pacing state of one API URL and key in a small file of the user's, read and
//! written under an exclusive OS file lock (`flock`, released by the OS when a process dies, even
//! by SIGKILL), on the host's clock. A file that does not read back as ours is replaced, never
//! trusted. The record has a fixed width and is written over the old one in one write, never
//! truncated first: a process killed while writing leaves the old record or the new one.
//!
//! The host clock's readings mean something only on the boot of the host that took them, so each
//! boot of each host keeps a file of its own, named with its boot (Linux's `boot_id`): hosts that
//! share the directory (a home on NFS) never read or reset each other's records, and a record that
//! names another boot still reads as foreign, never shifted by the difference of two uptimes. The
//! files of boots gone for a week are removed when a new one is made.

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::booking::StoreKind;
use super::clock;
use super::pacing::{LOG_CAP, Log, Pace, PaceState};
use super::store::{Answer, Op, Store};

/// The first word of a state file.
const MAGIC: &str = "cloud-sdk-rate-limit-v4";

/// The width of a record, its newline included.
const RECORD: usize = 2048;

/// How long a process waits for another's file lock before pacing without the file.
pub(crate) const LOCK_WAIT: Duration = Duration::from_secs(2);

/// How long a file of another boot is kept untouched before a new file of the same limit removes
/// it (a host that shares the directory and still paces touches its own at every call).
const STALE: Duration = Duration::from_secs(7 * 24 * 3600);

/// The state file of one limit, on this boot of this host.
#[derive(Debug, Clone)]
pub(crate) struct HostFile {
    path: PathBuf,
    /// The limit's name, which every boot's file of it begins with.
    name: String,
    /// This boot of this host ([`boot`]).
    boot: String,
    /// Whether the directory is the default one, which the SDK keeps private (0700); a caller's
    /// directory is left as it is.
    default_dir: bool,
}

impl HostFile {
    /// The file for `name` (already safe as a file name) in `dir`, or in the default directory.
    pub(crate) fn new(dir: Option<&Path>, name: &str) -> Self {
        Self::of_boot(dir, name, boot())
    }

    /// The file of `name` for the boot `boot`: `NAME.BOOT.state` (`NAME.state` where no boot id is
    /// known).
    fn of_boot(dir: Option<&Path>, name: &str, boot: &str) -> Self {
        let (dir, default_dir) = match dir {
            Some(dir) => (dir.to_path_buf(), false),
            None => (default_dir(), true),
        };
        let file = if boot == "-" {
            format!("{name}.state")
        } else {
            format!("{name}.{boot}.state")
        };
        Self {
            path: dir.join(file),
            name: name.to_string(),
            boot: boot.to_string(),
            default_dir,
        }
    }

    /// The file's path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `change` on the state and the host clock's time under the lock, and writes what it
    /// returns; blocking (a few microseconds of file work, or as long as another process holds the
    /// lock to do the same, at most [`LOCK_WAIT`]).
    pub(crate) fn update<T>(
        &self,
        change: impl FnOnce(PaceState, u64) -> (PaceState, T),
    ) -> std::io::Result<T> {
        if let Some(dir) = self.path.parent() {
            if self.default_dir {
                private_dir(dir)?;
            } else {
                create_dir(dir)?;
            }
        }
        let new = std::fs::symlink_metadata(&self.path).is_err();
        let mut file = open(&self.path)?;
        if new {
            self.sweep();
        }
        lock(&file)?;
        let mut text = String::new();
        // A file that is not UTF-8 text is foreign: read as nothing, then replaced. More than two
        // records' worth is not read.
        let boot = self.boot.as_str();
        let state = match (&file).take(2 * RECORD as u64).read_to_string(&mut text) {
            Ok(_) => decode(&text, boot).unwrap_or_default(),
            Err(_) => PaceState::default(),
        };
        let (state, result) = change(state, clock::host());
        let record = encode(&state, boot);
        write_at_start(&mut file, record.as_bytes())?;
        if file.metadata()?.len() > record.len() as u64 {
            // Only a foreign file is longer; a crash before this leaves our record, then junk
            // after its newline, which `decode` ignores.
            file.set_len(record.len() as u64)?;
        }
        file.unlock()?;
        Ok(result)
    }

    /// Removes the files of this limit of other boots (and the one name of the records before
    /// boots named their files) that nothing touched for [`STALE`]. Best effort: a file another
    /// host removes first, or one that cannot be removed, is left to the next sweep.
    fn sweep(&self) {
        let Some(dir) = self.path.parent() else {
            return;
        };
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let prefix = format!("{}.", self.name);
        for entry in entries.flatten() {
            let path = entry.path();
            let Some(file) = path.file_name().and_then(|f| f.to_str()) else {
                continue;
            };
            let ours = file.starts_with(&prefix) && file.ends_with(".state");
            let stale = entry
                .metadata()
                .and_then(|meta| meta.modified())
                .ok()
                .and_then(|modified| modified.elapsed().ok())
                .is_some_and(|age| age >= STALE);
            if ours && stale && path != self.path {
                let _ = std::fs::remove_file(&path);
            }
        }
    }
}

/// Takes the exclusive lock, waiting at most [`LOCK_WAIT`] for another holder.
fn lock(file: &File) -> std::io::Result<()> {
    let started = Instant::now();
    let mut pause = Duration::from_micros(200);
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(()),
            Err(std::fs::TryLockError::WouldBlock) => {}
            Err(std::fs::TryLockError::Error(e)) => return Err(e),
        }
        if started.elapsed() >= LOCK_WAIT {
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("the state file stayed locked for {LOCK_WAIT:?}"),
            ));
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(5));
    }
}

/// Writes `bytes` over the start of `file` in one write.
fn write_at_start(file: &mut File, bytes: &[u8]) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileExt;
        file.write_all_at(bytes, 0)
    }
    #[cfg(not(unix))]
    {
        use std::io::{Seek, SeekFrom, Write};
        file.seek(SeekFrom::Start(0))?;
        file.write_all(bytes)
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

/// Creates `dir` when it is missing (private to the user on Unix); an existing one is left alone.
fn create_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
    }
    #[cfg(not(unix))]
    std::fs::create_dir_all(dir)
}

/// Creates the default directory private to the user (0700 on Unix), and makes it so when it is
/// not.
fn private_dir(dir: &Path) -> std::io::Result<()> {
    create_dir(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir)?.permissions().mode();
        if mode & 0o077 != 0 {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
        }
    }
    Ok(())
}

/// Opens the state file for reading and writing, creating it private (0600); a link or anything
/// but a regular file in its place is removed first.
fn open(path: &Path) -> std::io::Result<File> {
    if let Ok(meta) = std::fs::symlink_metadata(path)
        && !meta.file_type().is_file()
    {
        std::fs::remove_file(path)?;
    }
    crate::private_file::open(
        OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false),
        path,
    )
}

/// This boot of this host, as the host clock's readings belong to it: Linux's `boot_id` (a random
/// UUID per boot), `-` where there is none (the records of other hosts and boots are then not told
/// from ours, as before).
fn boot() -> &'static str {
    static BOOT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    BOOT.get_or_init(|| {
        let id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap_or_default();
        let id = id.trim();
        // One word of at most 64 hex digits and dashes: anything else is not a boot id.
        let word = !id.is_empty()
            && id.len() <= 64
            && id.chars().all(|c| c.is_ascii_hexdigit() || c == '-');
        if word { id.to_string() } else { "-".into() }
    })
}

/// `MAGIC boot log floor blocked rate trouble throttled generation seen checksum` (the log's
/// slots joined by commas, `-` for none), padded with spaces to [`RECORD`] bytes, then a newline.
fn encode(state: &PaceState, boot: &str) -> String {
    let log = if state.log.slots().is_empty() {
        "-".to_string()
    } else {
        let slots: Vec<String> = state.log.slots().iter().map(u64::to_string).collect();
        slots.join(",")
    };
    let fields = format!(
        "{MAGIC} {boot} {log} {} {} {:e} {:e} {} {} {}",
        state.floor,
        state.blocked_until,
        state.rate,
        state.trouble,
        state.throttled_at,
        state.generation,
        state.seen
    );
    let line = format!("{fields} {:016x}", fnv(fields.as_bytes()));
    format!("{line:<width$}\n", width = RECORD - 1)
}

/// The state a file holds, when its first line is ours, whole, and of the boot `boot`.
fn decode(text: &str, boot: &str) -> Option<PaceState> {
    let (line, _) = text.split_once('\n')?;
    let (fields, checksum) = line.trim_end_matches(' ').rsplit_once(' ')?;
    if u64::from_str_radix(checksum, 16).ok()? != fnv(fields.as_bytes()) {
        return None;
    }
    let mut parts = fields.split(' ');
    if parts.next()? != MAGIC || parts.next()? != boot {
        return None;
    }
    let log = match parts.next()? {
        "-" => Vec::new(),
        slots => slots
            .split(',')
            .map(|slot| slot.parse().ok())
            .collect::<Option<Vec<u64>>>()?,
    };
    if log.len() > LOG_CAP {
        return None;
    }
    let state = PaceState {
        log: Log::of(&log),
        floor: parts.next()?.parse().ok()?,
        blocked_until: parts.next()?.parse().ok()?,
        rate: parts.next()?.parse().ok()?,
        trouble: parts.next()?.parse().ok()?,
        throttled_at: parts.next()?.parse().ok()?,
        generation: parts.next()?.parse().ok()?,
        seen: parts.next()?.parse().ok()?,
    };
    parts.next().is_none().then_some(state)
}

/// The host store: the state file, worked on off the async threads, with a bound on the wait (a
/// lock held elsewhere past [`LOCK_WAIT`], a hung mount).
pub(crate) struct HostStore(Arc<HostFile>);

impl HostStore {
    pub(crate) fn new(file: HostFile) -> Self {
        Self(Arc::new(file))
    }

    /// The state file's path.
    #[cfg(test)]
    pub(crate) fn path(&self) -> &std::path::Path {
        self.0.path()
    }
}

impl Store for HostStore {
    type Error = String;

    async fn update(&self, pace: Pace, op: Op) -> Result<Answer, String> {
        let file = Arc::clone(&self.0);
        let work = tokio::task::spawn_blocking(move || {
            file.update(|state, now| pace.apply(StoreKind::Host, state, now, op))
        });
        match tokio::time::timeout(LOCK_WAIT + Duration::from_millis(500), work).await {
            Ok(Ok(Ok(answer))) => Ok(answer),
            Ok(Ok(Err(e))) => Err(e.to_string()),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err("no answer in time".to_string()),
        }
    }

    fn answering(&self) -> &'static str {
        StoreKind::Host.name()
    }
}

/// The state file's name for an API URL and key id: readable, safe in a file name, and distinct
/// per pair (the secret never enters it).
pub(crate) fn state_name(base_url: &str, key_id: &str) -> String {
    let host: String = base_url
        .split("://")
        .nth(1)
        .unwrap_or(base_url)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    format!(
        "{host}-{:016x}",
        fnv(format!("{base_url}\n{key_id}").as_bytes())
    )
}

/// FNV-1a, 64 bits: a stable name and checksum (not a secret's hash: no secret goes in).
pub(crate) fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> PaceState {
        PaceState {
            log: Log::of(&[5, 9, 11]),
            floor: 1,
            blocked_until: 7,
            rate: 0.75,
            trouble: 0.875,
            throttled_at: 3,
            generation: 2,
            seen: 4,
        }
    }

    #[test]
    fn the_state_round_trips_in_a_fixed_width_and_anything_else_reads_as_nothing() {
        let state = state();
        let boot = "0b3c9d2e-5f6a-4b7c-8d9e-0f1a2b3c4d5e";
        let good = encode(&state, boot);
        assert_eq!(good.len(), RECORD);
        assert_eq!(decode(&good, boot), Some(state));
        let widest = PaceState {
            log: Log::of(&[u64::MAX; LOG_CAP]),
            floor: u64::MAX,
            blocked_until: u64::MAX,
            rate: -f64::MIN_POSITIVE,
            trouble: -f64::MIN_POSITIVE,
            throttled_at: u64::MAX,
            generation: u64::MAX,
            seen: u64::MAX,
        };
        let longest_boot = "f".repeat(64);
        assert_eq!(
            encode(&widest, &longest_boot).len(),
            RECORD,
            "every state fits the width"
        );
        assert_eq!(
            decode(&encode(&widest, &longest_boot), &longest_boot),
            Some(widest)
        );
        // What a write cut short by a crash after the record would leave: the record, then junk.
        assert_eq!(decode(&format!("{good}{good}"), boot), Some(state));
        assert_eq!(
            decode(&format!("{good}tail of an older, longer file"), boot),
            Some(state)
        );
        for foreign in [
            String::new(),
            "hello\n".into(),
            good.replace(" 5,9,11 ", " 6,9,11 "),
            good.replace(" 5,9,11 ", " 5,x,11 "),
            good.trim_end().to_string(),
            good.replace(MAGIC, "other-magic"),
            good.replacen(' ', "  ", 1),
            // The record of version 2, before boots were named.
            good.replace(&format!("{MAGIC} {boot} "), "cloud-sdk-rate-limit-v2 "),
            // Version 3, a queue's next slot where the log is now.
            good.replace(
                &format!("{MAGIC} {boot} 5,9,11 "),
                &format!("cloud-sdk-rate-limit-v3 {boot} 5 "),
            ),
        ] {
            assert_eq!(decode(&foreign, boot), None, "{foreign:?}");
        }
        // Another boot's clock readings (another host's, or this one's before a reboot).
        assert_eq!(decode(&good, "7a1b2c3d-0000-4000-8000-000000000000"), None);
    }

    #[test]
    fn a_record_of_another_boot_is_not_read_as_this_ones() {
        let dir = tempfile::tempdir().unwrap();
        let file = HostFile::new(Some(dir.path()), "k");
        // A sharer on another host (or before a reboot) blocked the key until its clock's 10^15.
        let theirs = PaceState {
            blocked_until: 1_000_000_000_000_000,
            ..state()
        };
        std::fs::write(
            file.path(),
            encode(&theirs, "7a1b2c3d-0000-4000-8000-000000000000"),
        )
        .unwrap();
        let seen = file.update(|state, _| (state, state)).unwrap();
        if boot() == "-" {
            return; // no boot id here: other boots cannot be told (documented)
        }
        assert_eq!(
            seen,
            PaceState::default(),
            "another boot's block is not ours"
        );
        let ours = file
            .update(|state, _| (state, ()))
            .map(|()| std::fs::read_to_string(file.path()).unwrap());
        assert!(
            ours.unwrap().contains(boot()),
            "the record names this boot now"
        );
    }

    const OTHER_HOST: &str = "7a1b2c3d-0000-4000-8000-000000000000";
    const THIS_HOST: &str = "0b3c9d2e-5f6a-4b7c-8d9e-0f1a2b3c4d5e";

    #[test]
    fn hosts_sharing_a_directory_never_reset_each_others_records() {
        let dir = tempfile::tempdir().unwrap();
        let ours = HostFile::of_boot(Some(dir.path()), "k", THIS_HOST);
        let theirs = HostFile::of_boot(Some(dir.path()), "k", OTHER_HOST);
        assert_ne!(ours.path(), theirs.path());
        let set = |file: &HostFile, floor: u64| {
            file.update(|state, _| (PaceState { floor, ..state }, ()))
                .unwrap()
        };
        set(&ours, 9);
        set(&theirs, 4);
        set(&theirs, 5);
        let read = |file: &HostFile| file.update(|state, _| (state, state.floor)).unwrap();
        assert_eq!(read(&ours), 9, "another host's writes left ours alone");
        assert_eq!(read(&theirs), 5);
    }

    #[test]
    fn a_new_file_removes_the_files_of_boots_gone_for_a_week() {
        let dir = tempfile::tempdir().unwrap();
        let aged = |name: &str, age: Duration| {
            let path = dir.path().join(name);
            std::fs::write(&path, "old").unwrap();
            let when = std::time::SystemTime::now() - age;
            File::options()
                .write(true)
                .open(&path)
                .unwrap()
                .set_modified(when)
                .unwrap();
            path
        };
        let week = STALE + Duration::from_secs(60);
        let gone_boot = aged(&format!("k.{OTHER_HOST}.state"), week);
        let before_boots = aged("k.state", week);
        let live_host = aged(
            "k.11111111-2222-4333-8444-555555555555.state",
            Duration::ZERO,
        );
        let other_limit = aged(&format!("kk.{OTHER_HOST}.stat"), week);
        let ours = HostFile::of_boot(Some(dir.path()), "k", THIS_HOST);
        ours.update(|state, _| (state, ())).unwrap();
        assert!(!gone_boot.exists() && !before_boots.exists());
        assert!(live_host.exists(), "a file touched this week stays");
        assert!(other_limit.exists(), "another name is not this limit's");
        assert!(ours.path().exists());
        // An existing file does not sweep again.
        let gone_again = aged(&format!("k.{OTHER_HOST}.state"), week);
        ours.update(|state, _| (state, ())).unwrap();
        assert!(gone_again.exists());
    }

    #[test]
    fn a_corrupt_or_foreign_file_is_replaced_and_the_file_is_private() {
        let dir = tempfile::tempdir().unwrap();
        let file = HostFile::new(Some(dir.path()), "k");
        std::fs::write(
            file.path(),
            b"\xff\xfe not ours, and longer than a record of ours".repeat(9),
        )
        .unwrap();
        let seen = file
            .update(|state, _| (PaceState { floor: 9, ..state }, state))
            .unwrap();
        assert_eq!(
            seen,
            PaceState::default(),
            "the foreign file was not trusted"
        );
        assert_eq!(std::fs::metadata(file.path()).unwrap().len(), RECORD as u64);
        let again = file.update(|state, _| (state, state)).unwrap();
        assert_eq!(again.floor, 9);
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
            let seen = file.update(|state, _| (state, state)).unwrap();
            assert_eq!(seen, PaceState::default());
            assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
            assert!(std::fs::symlink_metadata(file.path()).unwrap().is_file());
        }
    }

    /// The record is written over the old one, never after emptying the file: whoever looks at any
    /// moment (as a crash would freeze it) finds a whole record. With a truncate before the write,
    /// the watcher sees an empty file within a few hundred updates.
    #[test]
    fn the_file_is_never_empty_between_two_records() {
        let dir = tempfile::tempdir().unwrap();
        let file = HostFile::new(Some(dir.path()), "k");
        file.update(|_, _| (state(), ())).unwrap();
        let path = file.path().to_path_buf();
        let done = std::sync::atomic::AtomicBool::new(false);
        let shortest = std::thread::scope(|scope| {
            let watcher = scope.spawn(|| {
                let mut shortest = u64::MAX;
                while !done.load(std::sync::atomic::Ordering::Relaxed) {
                    shortest = shortest.min(std::fs::metadata(&path).unwrap().len());
                }
                shortest
            });
            for n in 0..3_000 {
                file.update(|state, _| {
                    (
                        PaceState {
                            log: Log::of(&[n, n + 1]),
                            ..state
                        },
                        (),
                    )
                })
                .unwrap();
            }
            done.store(true, std::sync::atomic::Ordering::Relaxed);
            watcher.join().unwrap()
        });
        assert_eq!(shortest, RECORD as u64);
    }

    #[test]
    fn a_lock_held_elsewhere_is_waited_for_a_bounded_time() {
        let dir = tempfile::tempdir().unwrap();
        let file = HostFile::new(Some(dir.path()), "k");
        file.update(|state, _| (state, ())).unwrap();
        // Another open file description holds the lock, as a hung process would.
        let holder = File::open(file.path()).unwrap();
        holder.lock().unwrap();
        let started = Instant::now();
        let err = file.update(|state, _| (state, ())).unwrap_err();
        let waited = started.elapsed();
        assert_eq!(err.kind(), std::io::ErrorKind::TimedOut, "{err}");
        assert!(waited >= LOCK_WAIT && waited < LOCK_WAIT * 2, "{waited:?}");
        holder.unlock().unwrap();
        file.update(|state, _| (state, ())).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn only_the_default_directory_is_made_private() {
        use std::os::unix::fs::PermissionsExt;
        let mode = |dir: &Path| std::fs::metadata(dir).unwrap().permissions().mode() & 0o777;
        let dir = tempfile::tempdir().unwrap();
        // A caller's directory keeps its mode.
        let callers = dir.path().join("callers");
        std::fs::create_dir(&callers).unwrap();
        std::fs::set_permissions(&callers, std::fs::Permissions::from_mode(0o755)).unwrap();
        HostFile::new(Some(&callers), "k")
            .update(|s, _| (s, ()))
            .unwrap();
        assert_eq!(mode(&callers), 0o755);
        // A missing one is created, private.
        let fresh = dir.path().join("a").join("b");
        HostFile::new(Some(&fresh), "k")
            .update(|s, _| (s, ()))
            .unwrap();
        assert_eq!(mode(&fresh), 0o700);
        // The default one is made private even when it was not.
        let default = dir.path().join("default");
        std::fs::create_dir(&default).unwrap();
        std::fs::set_permissions(&default, std::fs::Permissions::from_mode(0o755)).unwrap();
        let file = HostFile {
            default_dir: true,
            ..HostFile::new(Some(&default), "k")
        };
        file.update(|s, _| (s, ())).unwrap();
        assert_eq!(mode(&default), 0o700);
        assert!(default_dir().ends_with("cloud-sdk/rate-limit"));
    }

    #[test]
    fn state_names_are_safe_and_per_url_and_key() {
        let a = state_name("https://api.example.com:8443/v1", "key-1");
        assert!(a.starts_with("api.example.com_8443_v1-"), "{a}");
        assert!(
            a.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        );
        assert_ne!(a, state_name("https://api.example.com:8443/v1", "key-2"));
        assert_ne!(a, state_name("https://other.example.com", "key-1"));
        assert_eq!(fnv(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
