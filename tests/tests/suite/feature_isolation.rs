//! Each facade compiles only its own API: `cargo tree` shows which features of `api-raw` it turns on.

use std::process::Command;

/// The lines of `cargo tree --locked --prefix none` with `args` besides (`-p package` or
/// `--workspace` among them), run in the workspace. Not
/// `--offline`: with `--all-features` cargo reads the manifest of every optional dependency
/// (`aws-lc-rs`), which a machine whose cargo cache never held it has not downloaded (this test
/// failed so on a new machine); `--locked` fetches what is missing and changes no version.
pub(crate) fn cargo_tree(args: &[&str]) -> String {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let out = Command::new(cargo)
        .args(["tree", "--locked", "--prefix", "none"])
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The `api-raw` features that building `package` alone turns on.
fn raw_features_of(package: &str) -> Vec<String> {
    // What a downstream crate builds: the facade's dev-dependencies (the emulator) are not.
    let tree = cargo_tree(&["-p", package, "-e", "features,normal,build"]);
    let mut features: Vec<String> = tree
        .lines()
        .filter_map(|line| line.strip_prefix("api-raw feature \""))
        .filter_map(|rest| rest.split('"').next())
        .map(str::to_string)
        .collect();
    features.sort();
    features.dedup();
    features
}

/// Nor the schema validator (`schema`), which only the management API's pipe checks use.
#[test]
fn api_obs_does_not_compile_the_management_api() {
    assert_eq!(raw_features_of("api-obs"), ["observability"]);
}

#[test]
fn api_mgmt_does_not_compile_the_observability_api() {
    assert_eq!(raw_features_of("api-mgmt"), ["management", "schema"]);
}

/// Every package the crates published to users build, with every feature on.
fn runtime_packages_of(package: &str) -> Vec<String> {
    let tree = cargo_tree(&[
        "-p",
        package,
        "--all-features",
        "-e",
        "normal,build",
        "--format",
        "{p}",
    ]);
    tree.lines()
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

/// Nothing published parses the spec's YAML at run time: `cargo xtask codegen` generates the
/// schemas, the operation table and the answers (content types, headers) the emulator and its
/// cassette check read, so no YAML parser is in a user's build.
#[test]
fn no_published_crate_builds_a_yaml_parser() {
    for package in [
        "api-raw",
        "api-core",
        "api-mgmt",
        "api-obs",
        "api-emulator",
        "api-cli",
    ] {
        let packages = runtime_packages_of(package);
        assert!(packages.len() > 10, "{package}: {packages:?}");
        let yaml: Vec<&String> = packages
            .iter()
            .filter(|name| name.contains("yaml") || name.contains("norway"))
            .collect();
        assert!(yaml.is_empty(), "{package} builds {yaml:?}");
    }
}
