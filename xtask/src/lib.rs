//! Developer tasks of the workspace, behind `cargo xtask`.
//!
//! `cargo xtask codegen` reads the OpenAPI documents in `spec/`, generates one progenitor client per API
//! and writes it, formatted with prettyplease, under `crates/api-raw/src/generated/`.
//! `cargo xtask codegen --check` regenerates in memory and fails with a diff when the committed files
//! differ. `cargo xtask surface` prints the reviewable surface that the snapshot tests keep.
//! `cargo xtask compile-time` measures cold builds of throwaway downstream crates against the peer
//! crate's (see [`compile_time`]). `cargo xtask public-api` checks the public API of each library
//! crate against its snapshot (see [`public_api`]) and the facades' names (see [`public_names`]); `cargo xtask semver <rev>` runs cargo-semver-checks
//! on each against a release (see [`semver`]). `cargo xtask links` checks the links of the built
//! guide and of the Markdown front doors (see [`links`]).

pub mod apis;
pub mod codegen;
pub mod compile_time;
pub mod downstream;
pub mod generate;
pub mod links;
pub mod public_api;
pub mod public_names;
pub mod semver;
pub mod spec;
pub mod surface;
