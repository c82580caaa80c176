//! `cargo xtask compile-time`: writes the [`downstream`](crate::downstream) crates into a temporary
//! directory, fetches their dependencies (`cargo fetch`), then builds each one cold in a fresh target
//! directory of its own, offline, and prints the seconds and the share of the peer crate's time.
//!
//! Builds run with `CARGO_INCREMENTAL=0` (a dependency from a registry never builds incrementally; a
//! path dependency would) and without a `RUSTC_WRAPPER` (a compiler cache would make them warm).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, bail};

use crate::downstream::{ALL, Downstream};

/// What to do.
#[derive(Debug, Default, Clone)]
pub struct Options {
    /// Write and fetch only; build nothing.
    pub dry_run: bool,
    /// Build only these crates (the peer's time is then missing unless named too).
    pub only: Vec<String>,
    /// Where to write the crates; a new temporary directory when `None`.
    pub dir: Option<PathBuf>,
    /// Keep the directory afterwards.
    pub keep: bool,
}

/// One cold build.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// The crate built.
    pub downstream: Downstream,
    /// Wall-clock seconds of the cargo command.
    pub seconds: f64,
}

/// What a run measured.
#[derive(Debug, Clone, Default)]
pub struct Measurement {
    /// One cold build per crate, in the order built (none in a dry run).
    pub timings: Vec<Timing>,
    /// The version of the peer crate that the registry resolved, when it was among the crates.
    pub peer_version: Option<String>,
}

/// Writes, fetches and builds the crates of `options` for the workspace at `root`.
pub fn run(root: &Path, options: &Options) -> anyhow::Result<Measurement> {
    for name in &options.only {
        if !ALL.iter().any(|d| d.name == name) {
            let names: Vec<&str> = ALL.iter().map(|d| d.name).collect();
            bail!("no downstream crate {name:?}; there are {names:?}");
        }
    }
    let chosen: Vec<Downstream> = ALL
        .into_iter()
        .filter(|d| options.only.is_empty() || options.only.iter().any(|n| n == d.name))
        .collect();
    let dir = match &options.dir {
        Some(dir) => dir.clone(),
        None => std::env::temp_dir().join(format!("api-compile-time-{}", std::process::id())),
    };
    eprintln!("crates in {}", dir.display());
    for downstream in &chosen {
        let crate_dir = dir.join(downstream.name);
        downstream
            .write(&crate_dir, root)
            .with_context(|| format!("cannot write {}", crate_dir.display()))?;
        eprintln!("fetching the dependencies of {}", downstream.name);
        cargo(&crate_dir, &["fetch"], None)?;
    }
    let peer_version = chosen
        .iter()
        .find(|d| d.peer)
        .and_then(|d| peer_version(&dir.join(d.name)));
    let mut timings = Vec::new();
    if !options.dry_run {
        for downstream in &chosen {
            let crate_dir = dir.join(downstream.name);
            let target = crate_dir.join("target");
            if target.exists() {
                std::fs::remove_dir_all(&target)?;
            }
            eprintln!("building {} cold", downstream.name);
            let mut args = downstream.command.to_vec();
            args.push("--offline");
            let started = Instant::now();
            cargo(&crate_dir, &args, Some(&target))?;
            let seconds = started.elapsed().as_secs_f64();
            eprintln!("  {seconds:.1} s");
            timings.push(Timing {
                downstream: *downstream,
                seconds,
            });
        }
    }
    if !options.keep && options.dir.is_none() {
        std::fs::remove_dir_all(&dir).ok();
    }
    Ok(Measurement {
        timings,
        peer_version,
    })
}

/// Runs `cargo args` in `dir`; with `target`, in that fresh target directory, not incrementally and
/// without a compiler wrapper.
fn cargo(dir: &Path, args: &[&str], target: Option<&Path>) -> anyhow::Result<()> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command.current_dir(dir).args(args);
    command
        .env_remove("RUSTC_WRAPPER")
        .env_remove("CARGO_BUILD_RUSTC_WRAPPER")
        .env_remove("CARGO_TARGET_DIR");
    if let Some(target) = target {
        command
            .env("CARGO_TARGET_DIR", target)
            .env("CARGO_INCREMENTAL", "0");
    }
    let output = command
        .output()
        .with_context(|| format!("cannot run cargo in {}", dir.display()))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(30).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        bail!(
            "`cargo {}` failed in {}:\n{}",
            args.join(" "),
            dir.display(),
            tail.join("\n")
        );
    }
    Ok(())
}

/// The table: seconds, share of the peer's time, and the target where there is one.
pub fn report(timings: &[Timing]) -> String {
    let peer = timings
        .iter()
        .find(|t| t.downstream.peer)
        .map(|t| t.seconds);
    let mut out = String::new();
    out.push_str(
        "| downstream crate (one call, debug, cold) | seconds | of the peer's time | target |\n",
    );
    out.push_str("|---|---|---|---|\n");
    for timing in timings {
        let share = peer.map(|p| timing.seconds / p);
        let share_text = share.map_or("-".to_string(), |s| format!("{:.0}%", s * 100.0));
        let target = match (timing.downstream.target, share) {
            (Some(at_most), Some(share)) => {
                let verdict = if share <= at_most { "met" } else { "NOT met" };
                format!("<= {:.0}%: {verdict}", at_most * 100.0)
            }
            (Some(at_most), None) => format!("<= {:.0}%", at_most * 100.0),
            (None, _) => String::new(),
        };
        let _ = writeln!(
            out,
            "| {} | {:.1} | {share_text} | {target} |",
            timing.downstream.label, timing.seconds
        );
    }
    out
}

/// The resolved version of the peer crate in its lock file, once fetched into `dir`.
pub fn peer_version(dir: &Path) -> Option<String> {
    let lock = std::fs::read_to_string(dir.join("Cargo.lock")).ok()?;
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line == "name = \"clickhouse-cloud-api\"" {
            let version = lines.next()?.strip_prefix("version = \"")?;
            return Some(version.trim_end_matches('"').to_string());
        }
    }
    None
}

/// `git describe`-like words for the workspace at `root`: the commit, and whether it has changes.
pub fn workspace_commit(root: &Path) -> String {
    let git = |args: &[&str]| {
        Command::new("git")
            .current_dir(root)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    match git(&["rev-parse", "--short=10", "HEAD"]) {
        Some(commit) => match git(&["status", "--porcelain"]) {
            Some(changes) if !changes.is_empty() => format!("{commit} with uncommitted changes"),
            _ => commit,
        },
        None => "an unknown commit".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timing(index: usize, seconds: f64) -> Timing {
        Timing {
            downstream: ALL[index],
            seconds,
        }
    }

    #[test]
    fn shares_are_of_the_peers_time_with_their_targets() {
        let table = report(&[timing(0, 60.0), timing(1, 27.0), timing(2, 36.0)]);
        assert!(
            table.contains("| peer: `clickhouse-cloud-api` | 60.0 | 100% |  |"),
            "{table}"
        );
        assert!(
            table.contains("| only `api-obs` | 27.0 | 45% | <= 50%: met |"),
            "{table}"
        );
        assert!(
            table.contains("| only `api-mgmt` | 36.0 | 60% | <= 55%: NOT met |"),
            "{table}"
        );
    }

    #[test]
    fn without_the_peer_there_is_no_share() {
        let table = report(&[timing(1, 27.0)]);
        assert!(
            table.contains("| only `api-obs` | 27.0 | - | <= 50% |"),
            "{table}"
        );
    }

    #[test]
    fn the_peer_version_comes_from_its_lock_file() {
        let dir = tempfile::tempdir().unwrap();
        let lock = "[[package]]\nname = \"clickhouse-cloud-api\"\nversion = \"0.5.0\"\n";
        std::fs::write(dir.path().join("Cargo.lock"), lock).unwrap();
        assert_eq!(peer_version(dir.path()).as_deref(), Some("0.5.0"));
        assert_eq!(peer_version(Path::new("/nonexistent")), None);
    }

    #[test]
    fn an_unknown_crate_is_refused_before_anything_is_written() {
        let options = Options {
            only: vec!["nothing".to_string()],
            dir: Some(PathBuf::from("/nonexistent/never-written")),
            ..Options::default()
        };
        let error = run(Path::new("."), &options).unwrap_err().to_string();
        assert!(error.contains("no downstream crate \"nothing\""), "{error}");
    }
}
