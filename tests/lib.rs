//! Workspace-level test package; the tests live in `tests/tests/`, their fixtures in `tests/fixtures/`.
