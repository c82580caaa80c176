//! `cargo xtask semver <rev>`: `cargo semver-checks` on every library crate against the release at a
//! git revision (`v0.1.0`), from rustdoc JSON built here.
//!
//! `cargo semver-checks --workspace --baseline-rev` builds each crate twice, each time with its
//! dependencies in a target directory of its own: ten builds of the whole tree, about 6 minutes on
//! two cores. Here both sides share one target directory (the public-API task's), so the
//! dependencies are built once and only our crates twice, and cargo-semver-checks only compares
//! (`--baseline-rustdoc`, `--current-rustdoc`). Each side is built with the features the public-API
//! snapshot uses (those of them the baseline declares). What rustdoc JSON cannot show, a cargo
//! feature removed, is left to review of the manifests.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

use crate::public_api::{CRATES, rustdoc_json};

/// Checks every library crate against `baseline` (a git revision); the crates that broke semver.
pub fn check_all(root: &Path, baseline: &str) -> Result<Vec<String>> {
    let target = root.join("target").join("public-api");
    let work = root.join("target").join("semver");
    let sources = work.join("baseline-src");
    extract(root, baseline, &sources)?;
    let declared = declared_features(&sources)?;

    let mut broken = Vec::new();
    for (krate, features) in CRATES {
        let Some(baseline_features) = declared.iter().find(|(name, _)| name == krate) else {
            println!("{krate}: not in {baseline}, nothing to compare");
            continue;
        };
        let baseline_features: Vec<&str> = features
            .iter()
            .copied()
            .filter(|f| baseline_features.1.iter().any(|known| known == f))
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
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .current_dir(root)
            .args(["semver-checks", "check-release"])
            .arg("--baseline-rustdoc")
            .arg(&old)
            .arg("--current-rustdoc")
            .arg(&current)
            .status()
            .context(
                "cannot run cargo semver-checks (cargo install --locked cargo-semver-checks)",
            )?;
        if !status.success() {
            broken.push(krate.to_string());
        }
    }
    Ok(broken)
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

/// Each package of the workspace at `root` with the features its manifest declares.
fn declared_features(root: &Path) -> Result<Vec<(String, Vec<String>)>> {
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
            Some((name, features))
        })
        .collect())
}
