//! Helpers of the SDK's own test suites, shared by its crates' tests and published so that each
//! crate's tests compile from its package alone. Not part of the SDK's API.
//!
//! - [`redis_server`], [`postgres_server`]: real servers on free loopback ports, stopped when
//!   dropped.
//! - [`session`]: a shell session run as a person would type it, each exit code checked.
//! - [`encodings`]: secrets as servers may write them back.
//! - [`large_body`]: a large, valid pipe create request.
//! - [`captured_log`]: a log writer whose text a test reads.
//! - [`tcp_proxy`]: a TCP proxy a test can cut, in front of a real server.
//! - [`pgbouncer`]: a PgBouncer in transaction mode in front of a test's PostgreSQL.
//! - [`plan_calls`]: the calls an apply sent that changed the server, against a plan's list.
//! - [`ports`]: free loopback ports that no other test's listener is given meanwhile.

#![deny(missing_docs)]

pub mod captured_log;
pub mod encodings;
pub mod large_body;
pub mod pgbouncer;
pub mod plan_calls;
pub mod ports;
pub mod postgres_server;
pub mod redis_server;
#[cfg(unix)]
pub mod session;
pub mod tcp_proxy;
