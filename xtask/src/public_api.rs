//! `cargo xtask public-api`: the public API of each library crate as text, one item per line with
//! its signature, kept as insta snapshots (`xtask/snapshots/`), so that a change to what users can
//! name shows in review.
//!
//! The text comes from rustdoc's JSON, read by the `public-api` crate (the library behind
//! `cargo public-api`). The JSON is built by a pinned toolchain, [`RUSTDOC_TOOLCHAIN`] (through
//! `rustup run`, with `RUSTC_BOOTSTRAP=1` as `cargo-semver-checks` builds it on a stable
//! toolchain), into a target directory of its own: the `public-api` version reads that toolchain's
//! format (57), so a new stable release cannot change what this step and the semver step read.
//! Moving the pin is a change of its own, with the `public-api` and `cargo-semver-checks` versions
//! that read the new format.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::public_names;

/// The library crates users depend on, with every feature that adds public items (docs.rs builds
/// with all of them; the TLS backends add none, and `rustls-aws-lc` would cost a C build here).
pub const CRATES: [(&str, &[&str]); 5] = [
    ("api-raw", &["management", "observability", "schema"]),
    (
        "api-core",
        &[
            "management",
            "observability",
            "rustls-ring",
            "redis",
            "metrics",
        ],
    ),
    (
        "api-mgmt",
        &[
            "redis",
            "metrics",
            "declared",
            "state-redis",
            "state-postgres",
        ],
    ),
    ("api-obs", &["redis", "metrics"]),
    ("api-emulator", &[]),
];

/// The public API of `krate` with `features`, one item per line, sorted.
pub fn public_api(root: &Path, krate: &str, features: &[&str]) -> Result<String> {
    text_of(&json_of(root, krate, features)?)
}

/// The rustdoc JSON of `krate` with `features`, built in the public-API target directory.
fn json_of(root: &Path, krate: &str, features: &[&str]) -> Result<PathBuf> {
    rustdoc_json(
        root,
        &root.join("target").join("public-api"),
        krate,
        features,
    )
}

/// The public API in the rustdoc JSON at `json`, one item per line, sorted.
fn text_of(json: &Path) -> Result<String> {
    // Blanket impls (`impl<T> Instrument for T`) say nothing of ours; auto traits (`Send`, `Sync`)
    // do, and stay.
    let api = public_api::Builder::from_rustdoc_json(json)
        .omit_blanket_impls(true)
        .build()
        .with_context(|| {
            format!(
                "cannot read {} (rustdoc JSON of another format than public-api {} reads?)",
                json.display(),
                "0.52.1"
            )
        })?;
    Ok(api.to_string())
}

/// What [`snapshot_all`] found.
#[derive(Debug, Default)]
pub struct Checked {
    /// The crates whose public API differs from its snapshot.
    pub changed: Vec<String>,
    /// Where a facade breaks the rule of its names ([`crate::public_names`]).
    pub names: Vec<String>,
}

/// Checks (or, outside CI, records) the snapshot of every crate, and the facades' names.
pub fn snapshot_all(root: &Path) -> Result<Checked> {
    let mut checked = Checked::default();
    for (krate, features) in CRATES {
        let json = json_of(root, krate, features)?;
        let text = text_of(&json)?;
        if public_names::FACADES.contains(&krate) {
            checked
                .names
                .extend(public_names::PublicNames::from_file(&json)?.problems(krate));
        }
        let mut settings = insta::Settings::clone_current();
        settings.set_snapshot_path(root.join("xtask").join("snapshots"));
        settings.set_prepend_module_to_snapshot(false);
        settings.set_description(format!(
            "the public API of {krate} with the features {features:?}"
        ));
        settings.set_omit_expression(true);
        let matched = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            settings.bind(|| insta::assert_snapshot!(format!("public_api__{krate}"), text));
        }));
        if matched.is_err() {
            checked.changed.push(krate.to_string());
        }
    }
    Ok(checked)
}

/// The toolchain that builds the rustdoc JSON of the public-API and semver steps (`.ci/run`
/// installs it): its JSON format (57) is the one the `public-api` crate and `cargo-semver-checks`
/// read.
pub const RUSTDOC_TOOLCHAIN: &str = "1.95.0";

/// Builds the rustdoc JSON of `krate` (in the workspace at `root`) with `features` into `target`,
/// with [`RUSTDOC_TOOLCHAIN`], and returns its path (`target/doc/<crate>.json`, overwritten by the
/// next build of that crate).
pub fn rustdoc_json(root: &Path, target: &Path, krate: &str, features: &[&str]) -> Result<PathBuf> {
    let mut command = Command::new("rustup");
    command
        .current_dir(root)
        .env("RUSTC_BOOTSTRAP", "1")
        // The toolchain of `cargo xtask` itself, which cargo passes down, is not the pinned one.
        .env_remove("CARGO")
        .env_remove("RUSTC")
        .env_remove("RUSTDOC")
        .env_remove("RUSTUP_TOOLCHAIN")
        .args(["run", RUSTDOC_TOOLCHAIN, "cargo"])
        .args(["rustdoc", "--quiet", "--locked", "--lib", "-p", krate])
        .arg("--target-dir")
        .arg(target);
    if !features.is_empty() {
        command.args(["--features", &features.join(",")]);
    }
    command.args(["--", "-Z", "unstable-options", "--output-format", "json"]);
    let status = command.status().with_context(|| {
        format!(
            "cannot run `rustup run {RUSTDOC_TOOLCHAIN} cargo rustdoc` for {krate} (rustup toolchain \
             install {RUSTDOC_TOOLCHAIN} --profile minimal)"
        )
    })?;
    if !status.success() {
        bail!(
            "cargo rustdoc for {krate} in {} failed ({status})",
            root.display()
        );
    }
    Ok(target
        .join("doc")
        .join(format!("{}.json", krate.replace('-', "_"))))
}
