//! End to end: the `cloudctl` binary, run as a process, against the emulator started in each test.
//! Every command in both output modes, every exit code, the pipe file's checks, the request log, real
//! service transitions, and no secret in any output (checked on every run by `support`).

mod cassettes;
mod declared;
mod declared_production;
mod declared_scope;
mod endpoints;
mod errors;
mod guide_sessions;
mod help;
mod observability;
mod pipe_file;
mod pipes;
mod policies;
mod redaction;
mod saved_plans;
mod service;
mod sessions;
mod settings;
mod support;
mod terminal;
mod traces;
