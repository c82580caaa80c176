//! The workspace's tests in one binary: one link and one run for what was 28 binaries, whose tests
//! run beside each other. Each module is what a test binary of its own was (its name is the test's
//! first path segment: `cargo test -p api-tests --test suite e2e_waiters`).
//!
//! Four stay binaries of their own, beside this one: `sdk_otel`, `sdk_tracing`, `redaction` and
//! `sdk_secrets` read what `tracing` emits, and `tracing` caches each callsite's interest
//! process-wide, so a test without a subscriber running beside them could hide their events; and
//! `guide_testing_with_the_emulator`, the guide's sample of a user's test file, is one as a user's
//! would be.

#[path = "../support/mod.rs"]
mod support;

mod cassettes;
mod decode_domain;
mod decode_management;
mod decode_observability;
mod domain_serde;
mod e2e_emulator_bounds;
mod e2e_errors;
mod e2e_faults;
mod e2e_harness;
mod e2e_numbers;
mod e2e_operations;
mod e2e_scale;
mod e2e_shared_limit;
mod e2e_soak;
mod e2e_waiters;
mod feature_isolation;
mod guide;
mod readme_commands;
mod sdk_connect_timeout;
mod sdk_error_bodies;
mod sdk_management;
mod sdk_metrics;
mod sdk_observability;
mod sdk_resilience;
mod sdk_waiters;
mod secrets;
mod shared_state;
mod spec_conformance;
