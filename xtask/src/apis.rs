//! The APIs the workspace generates clients for.

use std::path::{Path, PathBuf};

/// One OpenAPI document and the generated module it becomes.
#[derive(Debug, Clone, Copy)]
pub struct Api {
    /// Short name, also the module name and the cargo feature of `api-raw`.
    pub name: &'static str,
    /// The spec, relative to the workspace root.
    pub spec: &'static str,
    /// The generated file, relative to the workspace root.
    pub output: &'static str,
    /// The copy of the spec that `api-raw` ships (`api_raw::spec`), relative to the workspace root:
    /// a package holds only its own files.
    pub spec_copy: &'static str,
}

/// Every API of the workspace, in generation order.
pub const APIS: [Api; 2] = [
    Api {
        name: "management",
        spec: "spec/management.yaml",
        output: "crates/api-raw/src/generated/management.rs",
        spec_copy: "crates/api-raw/src/generated/management.yaml",
    },
    Api {
        name: "observability",
        spec: "spec/observability.yaml",
        output: "crates/api-raw/src/generated/observability.rs",
        spec_copy: "crates/api-raw/src/generated/observability.yaml",
    },
];

/// The directory that holds every generated file.
pub const GENERATED_DIR: &str = "crates/api-raw/src/generated";

/// The workspace root: `$XTASK_WORKSPACE_ROOT` when set (tests use it to work on a copy), else the
/// parent of this crate's directory.
pub fn workspace_root() -> PathBuf {
    if let Some(root) = std::env::var_os("XTASK_WORKSPACE_ROOT") {
        return PathBuf::from(root);
    }
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest_dir.parent().unwrap_or(manifest_dir).to_path_buf()
}
