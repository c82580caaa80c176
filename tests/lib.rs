//! Workspace-level test package; the tests live in `tests/tests/` (most in one binary,
//! `tests/tests/suite/`), their fixtures in `tests/fixtures/`.
//!
//! The README's Rust examples are compiled here as doctests, so they cannot drift from the API.

#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
