//! [`RateLimit`]: a client-side limiter so bulk work runs at the allowed rate, with its state in this
//! process, in a file every process of the user on this host shares, or in Redis for a whole fleet.
//!
//! The modules import downward only, each from those below it (a test holds this):
//!
//! - `limiter`: [`RateLimiter`], and the limiter inside every client, bound to its store;
//! - `fallback`: a store that can fail and the one that paces while it rests;
//! - the stores: `redis`, `host` (the state file), `process`;
//! - `store`: the interface every store answers, and the rule it runs;
//! - `config`: [`RateLimit`] and [`RateLimitStore`], as built or read from the environment;
//! - `observers`: what a limit tells (long waits, store changes);
//! - `booking` (a limiter's slots), `pacing` (the rule: a sliding log of slots and a learned rate),
//!   `clock`, `rest`.

mod booking;
mod clock;
mod config;
mod fallback;
mod host;
mod limiter;
mod observers;
mod pacing;
mod process;
#[cfg(feature = "redis")]
mod redis;
mod rest;
mod store;

#[cfg(test)]
mod layers;

pub(crate) use booking::Booked;
pub use booking::MAX_BOOKED;
pub use config::{RATE_LIMIT_STORE_VAR, RATE_LIMIT_VAR, RateLimit, RateLimitStore, RedisUrl};
pub(crate) use limiter::Limiter;
pub use limiter::RateLimiter;
pub use observers::{
    FallbackObserver, FallbackTo, REPORTED_WAIT, StoreChange, StoreFallback, WaitObserver,
};
pub use pacing::{
    ABOVE_WINDOWS, BLOCK_WINDOWS, DECREASE, MAX_BURST, MAX_QUEUE, MAX_SHARED_BLOCK, MAX_SLOWDOWN,
    RECOVERY_WINDOWS,
};
