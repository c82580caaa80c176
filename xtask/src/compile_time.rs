//! `cargo xtask compile-time`: writes the [`downstream`](crate::downstream) crates into a temporary
//! directory, fetches their dependencies (`cargo fetch`), then builds each one cold in a fresh target
//! directory of its own, offline, and prints the seconds and the share of the peer crate's time.
//!
//! With `--rounds N` every crate is built N times, in rounds whose order rotates; a crate's seconds are
//! the median of its rounds and its share the median of its per-round shares of the peer's time, so a
//! slow spell of a shared machine moves both sides of a ratio. CPU seconds (the builds' user + system
//! time, from `/proc/self/stat`) are printed beside the wall-clock ones: on a busy machine they move
//! less.
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
    /// How many times each crate is built (at least 1).
    pub rounds: usize,
}

/// One cold build.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// The crate built.
    pub downstream: Downstream,
    /// Which round (0-based).
    pub round: usize,
    /// Wall-clock seconds of the cargo command.
    pub seconds: f64,
    /// CPU seconds (user + system) of the cargo command and the compilers it ran, when known.
    pub cpu_seconds: Option<f64>,
}

/// What a run measured.
#[derive(Debug, Clone, Default)]
pub struct Measurement {
    /// One cold build per crate and round, in the order built (none in a dry run).
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
    let rounds = if options.dry_run {
        0
    } else {
        options.rounds.max(1)
    };
    for round in 0..rounds {
        // Rotate the order: no crate always builds first, on a machine still cooling from the last.
        let mut order = chosen.clone();
        order.rotate_left(round % chosen.len().max(1));
        for downstream in order {
            let crate_dir = dir.join(downstream.name);
            let target = crate_dir.join("target");
            if target.exists() {
                std::fs::remove_dir_all(&target)?;
            }
            eprintln!(
                "round {}/{rounds}: building {} cold",
                round + 1,
                downstream.name
            );
            let mut args = downstream.command.to_vec();
            args.push("--offline");
            let cpu_before = children_cpu_seconds();
            let started = Instant::now();
            cargo(&crate_dir, &args, Some(&target))?;
            let seconds = started.elapsed().as_secs_f64();
            let cpu_seconds = cpu_before
                .zip(children_cpu_seconds())
                .map(|(before, after)| after - before);
            eprintln!(
                "  {seconds:.1} s ({} CPU)",
                cpu_seconds.map_or("?".into(), |c| format!("{c:.1} s"))
            );
            timings.push(Timing {
                downstream,
                round,
                seconds,
                cpu_seconds,
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

/// The user + system CPU seconds of this process's waited-for children (and theirs), from
/// `/proc/self/stat` (`cutime`, `cstime`, in the kernel's USER_HZ of 100 ticks a second).
fn children_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name may hold spaces; the fields after it are plain numbers.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    // After the name: state is field 3 of proc(5); cutime and cstime are fields 16 and 17.
    let ticks = |n: usize| fields.get(n - 3)?.parse::<f64>().ok();
    Some((ticks(16)? + ticks(17)?) / 100.0)
}

fn median(mut values: Vec<f64>) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(values[n / 2]),
        _ => Some((values[n / 2 - 1] + values[n / 2]) / 2.0),
    }
}

/// The table: median seconds (wall and CPU), the median per-round share of the peer's time, and the
/// issue's target where there is one.
pub fn report(timings: &[Timing]) -> String {
    let peer_in = |round: usize| {
        timings
            .iter()
            .find(|t| t.downstream.peer && t.round == round)
    };
    let mut crates: Vec<Downstream> = Vec::new();
    for timing in timings {
        if !crates.iter().any(|d| d.name == timing.downstream.name) {
            crates.push(timing.downstream);
        }
    }
    crates.sort_by_key(|d| ALL.iter().position(|a| a.name == d.name));
    let rounds = timings.iter().map(|t| t.round + 1).max().unwrap_or(0);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| downstream crate (one call, debug, cold; median of {rounds} {}) | seconds | of the peer's time | CPU seconds | of the peer's CPU | target |",
        if rounds == 1 { "round" } else { "rounds" }
    );
    out.push_str("|---|---|---|---|---|---|\n");
    for downstream in crates {
        let own: Vec<&Timing> = timings
            .iter()
            .filter(|t| t.downstream.name == downstream.name)
            .collect();
        let seconds = median(own.iter().map(|t| t.seconds).collect()).unwrap_or(0.0);
        let cpu = median(own.iter().filter_map(|t| t.cpu_seconds).collect());
        let share = median(
            own.iter()
                .filter_map(|t| Some(t.seconds / peer_in(t.round)?.seconds))
                .collect(),
        );
        let cpu_share = median(
            own.iter()
                .filter_map(|t| Some(t.cpu_seconds? / peer_in(t.round)?.cpu_seconds?))
                .collect(),
        );
        let percent = |s: Option<f64>| s.map_or("-".to_string(), |s| format!("{:.0}%", s * 100.0));
        let target = match (downstream.target, share) {
            (Some(at_most), Some(share)) => {
                let verdict = if share <= at_most { "met" } else { "NOT met" };
                format!("<= {:.0}%: {verdict}", at_most * 100.0)
            }
            (Some(at_most), None) => format!("<= {:.0}%", at_most * 100.0),
            (None, _) => String::new(),
        };
        let _ = writeln!(
            out,
            "| {} | {seconds:.1} | {} | {} | {} | {target} |",
            downstream.label,
            percent(share),
            cpu.map_or("-".to_string(), |c| format!("{c:.1}")),
            percent(cpu_share),
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

    fn timing(index: usize, round: usize, seconds: f64) -> Timing {
        Timing {
            downstream: ALL[index],
            round,
            seconds,
            cpu_seconds: Some(seconds * 1.5),
        }
    }

    #[test]
    fn shares_are_of_the_peers_time_with_their_targets() {
        let table = report(&[timing(0, 0, 60.0), timing(1, 0, 27.0), timing(2, 0, 36.0)]);
        assert!(
            table.contains("| peer: `clickhouse-cloud-api` | 60.0 | 100% | 90.0 | 100% |  |"),
            "{table}"
        );
        assert!(
            table.contains("| only `api-obs` | 27.0 | 45% | 40.5 | 45% | <= 47%: met |"),
            "{table}"
        );
        assert!(
            table.contains("| only `api-mgmt` | 36.0 | 60% | 54.0 | 60% | <= 55%: NOT met |"),
            "{table}"
        );
    }

    #[test]
    fn rounds_give_medians_of_times_and_of_per_round_shares() {
        // The peer is slow in round 1: the share of that round is its own, not against another
        // round's peer.
        let table = report(&[
            timing(0, 0, 60.0),
            timing(1, 0, 30.0),
            timing(1, 1, 40.0),
            timing(0, 1, 100.0),
            timing(0, 2, 62.0),
            timing(1, 2, 31.0),
        ]);
        assert!(table.contains("median of 3 rounds"), "{table}");
        assert!(
            table.contains("| peer: `clickhouse-cloud-api` | 62.0 | 100% |"),
            "{table}"
        );
        // Shares 50%, 40%, 50%: the median is 50%; the seconds' median is 31.0.
        assert!(table.contains("| only `api-obs` | 31.0 | 50% |"), "{table}");
    }

    #[test]
    fn without_the_peer_there_is_no_share() {
        let table = report(&[timing(1, 0, 27.0)]);
        assert!(
            table.contains("| only `api-obs` | 27.0 | - | 40.5 | - | <= 47% |"),
            "{table}"
        );
    }

    #[test]
    fn this_process_knows_its_childrens_cpu_time() {
        let before = children_cpu_seconds().expect("Linux /proc");
        let status = Command::new("sh")
            .args(["-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"])
            .status()
            .unwrap();
        assert!(status.success());
        assert!(children_cpu_seconds().unwrap() > before);
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
