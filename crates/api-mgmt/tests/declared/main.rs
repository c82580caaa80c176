//! The SDK's declared pipes against the emulator, through the library: what a plan finds and what
//! an apply does.

#![cfg(feature = "declared")]

mod apply;
mod plan;
#[cfg(feature = "state-postgres")]
mod postgres_store;
mod saved;
mod support;
