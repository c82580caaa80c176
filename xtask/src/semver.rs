//! `cargo xtask semver <rev>`: `cargo semver-checks` on every library crate against the release at a
//! git revision (`v0.2.0`), from rustdoc JSON built here.
//!
//! `cargo semver-checks --workspace --baseline-rev` builds each crate twice, each time with its
//! dependencies in a target directory of its own: ten builds of the whole tree, about 6 minutes on
//! two cores. Here both sides share one target directory (the public-API task's), so the
//! dependencies are built once and only our crates twice, and cargo-semver-checks only compares
//! (`--baseline-rustdoc`, `--current-rustdoc`). Each side is built with the features the public-API
//! snapshot uses (those of them the baseline declares). What rustdoc JSON cannot show, a cargo
//! feature removed, is left to review of the manifests.
//!
//! cargo-semver-checks sees only a crate's own items: a facade's re-export of an `api-core` item
//! that moved or went is invisible to it. Each public path of the baseline that the current crate
//! no longer has is listed here (with where its item is named now, see
//! [`public_names::moved`]), and fails the check unless the version allows a break.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

use crate::public_api::{CRATES, rustdoc_json};
use crate::public_names::{self, PublicNames};

/// Checks every library crate against `baseline` (a git revision); the crates that broke semver.
pub fn check_all(root: &Path, baseline: &str) -> Result<Vec<String>> {
    let target = root.join("target").join("public-api");
    let work = root.join("target").join("semver");
    let sources = work.join("baseline-src");
    extract(root, baseline, &sources)?;
    let declared = declared_features(&sources)?;
    let current_versions = declared_features(root)?;

    let mut broken = Vec::new();
    for (krate, features) in CRATES {
        let Some(before) = declared.iter().find(|package| package.name == krate) else {
            println!("{krate}: not in {baseline}, nothing to compare");
            continue;
        };
        let baseline_features: Vec<&str> = features
            .iter()
            .copied()
            .filter(|f| before.features.iter().any(|known| known == f))
            .collect();
        println!("== {krate} against {baseline}");
        let current = keep(
            &rustdoc_json(root, &target, krate, features)?,
            &work.join("current"),
        )?;
        let old = keep(
            &rustdoc_json(&sources, &target, krate, &baseline_features)?,
            &work.join("baseline"),
        )?;
        let current_version = current_versions
            .iter()
            .find(|package| package.name == krate)
            .map(|package| package.version.as_str())
            .unwrap_or_default();
        let moved = public_names::moved(
            &PublicNames::from_file(&old)?,
            &PublicNames::from_file(&current)?,
        );
        for moved in &moved {
            match moved.to.as_slice() {
                [] => println!("{krate}: removed {}", moved.from),
                to => println!("{krate}: moved {} to {}", moved.from, to.join(", ")),
            }
        }
        let may_break = breaking_allowed(&before.version, current_version);
        if !moved.is_empty() && !may_break {
            // What cargo-semver-checks cannot see: a re-export of another crate's item moved.
            broken.push(krate.to_string());
            continue;
        }
        if may_break {
            // cargo-semver-checks skips every check of a release that may break (its lints need
            // not hold): checked as a minor release instead, it lists what breaks, which this
            // version allows and the CHANGELOG must name.
            println!(
                "{krate} {} -> {current_version} may break: what breaks, for the CHANGELOG",
                before.version
            );
            let reported = semver_checks(root, &old, &current, Some("minor"))?;
            println!(
                "{krate}: {}",
                if reported {
                    "nothing breaks"
                } else {
                    "the breaks above are allowed by the version"
                }
            );
        } else if !semver_checks(root, &old, &current, None)? {
            broken.push(krate.to_string());
        }
    }
    Ok(broken)
}

/// Runs cargo-semver-checks on two rustdoc JSON files, with the release type derived from their
/// versions or the one given; whether it passed.
fn semver_checks(
    root: &Path,
    old: &Path,
    current: &Path,
    release_type: Option<&str>,
) -> Result<bool> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .current_dir(root)
        .args(["semver-checks", "check-release"])
        .arg("--baseline-rustdoc")
        .arg(old)
        .arg("--current-rustdoc")
        .arg(current);
    if let Some(release_type) = release_type {
        command.args(["--release-type", release_type]);
    }
    let status = command
        .status()
        .context("cannot run cargo semver-checks (cargo install --locked cargo-semver-checks)")?;
    Ok(status.success())
}

/// Whether going from `baseline` to `current` may break callers: a new major version, or before
/// 1.0 a new minor one (`0.2.x` to `0.3.0`).
pub fn breaking_allowed(baseline: &str, current: &str) -> bool {
    let parts = |version: &str| -> (u64, u64) {
        let mut numbers = version.split('.').map(|n| n.parse::<u64>().unwrap_or(0));
        (numbers.next().unwrap_or(0), numbers.next().unwrap_or(0))
    };
    let (old_major, old_minor) = parts(baseline);
    let (major, minor) = parts(current);
    major > old_major || (major == 0 && old_major == 0 && minor > old_minor)
}

/// Copies a freshly built JSON (which the next build of that crate overwrites) into `dir`.
fn keep(json: &Path, dir: &Path) -> Result<PathBuf> {
    fs::create_dir_all(dir)?;
    let name = json
        .file_name()
        .context("a rustdoc JSON path has a file name")?;
    let kept = dir.join(name);
    fs::copy(json, &kept).with_context(|| format!("cannot copy {}", json.display()))?;
    Ok(kept)
}

/// The tree of `revision` in `dir` (emptied first), from `git archive`.
fn extract(root: &Path, revision: &str, dir: &Path) -> Result<()> {
    if dir.exists() {
        fs::remove_dir_all(dir).with_context(|| format!("cannot empty {}", dir.display()))?;
    }
    fs::create_dir_all(dir)?;
    let mut git = Command::new("git")
        .current_dir(root)
        .args(["archive", "--format=tar", revision])
        .stdout(Stdio::piped())
        .spawn()
        .context("cannot run git archive")?;
    let archive = git.stdout.take().context("git archive's output")?;
    let tar = Command::new("tar")
        .arg("-x")
        .arg("-C")
        .arg(dir)
        .stdin(archive)
        .status()
        .context("cannot run tar")?;
    let git = git.wait()?;
    if !git.success() {
        bail!("git archive {revision} failed ({git}): is the revision there (git fetch --tags)?");
    }
    if !tar.success() {
        bail!("cannot unpack {revision} into {} ({tar})", dir.display());
    }
    Ok(())
}

/// A package of a workspace, as its manifest declares it.
struct Package {
    name: String,
    features: Vec<String>,
    version: String,
}

/// Each package of the workspace at `root` with the features its manifest declares and its version.
fn declared_features(root: &Path) -> Result<Vec<Package>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .current_dir(root)
        .args(["metadata", "--no-deps", "--locked", "--format-version", "1"])
        .output()
        .context("cannot run cargo metadata")?;
    if !output.status.success() {
        bail!(
            "cargo metadata in {} failed: {}",
            root.display(),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout)?;
    let packages = metadata["packages"]
        .as_array()
        .context("cargo metadata lists packages")?;
    Ok(packages
        .iter()
        .filter_map(|package| {
            let name = package["name"].as_str()?.to_string();
            let features = package["features"]
                .as_object()
                .map(|features| features.keys().cloned().collect())
                .unwrap_or_default();
            let version = package["version"].as_str()?.to_string();
            Some(Package {
                name,
                features,
                version,
            })
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::breaking_allowed;

    #[test]
    fn a_new_minor_version_before_1_0_or_a_new_major_may_break() {
        assert!(breaking_allowed("0.2.0", "0.3.0"));
        assert!(breaking_allowed("0.9.3", "1.0.0"));
        assert!(breaking_allowed("1.4.2", "2.0.0"));
        assert!(!breaking_allowed("0.2.0", "0.2.1"));
        assert!(!breaking_allowed("1.4.2", "1.5.0"));
        assert!(!breaking_allowed("0.3.0", "0.3.0"));
    }
}
