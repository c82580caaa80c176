//! The key's rate limit, shared by every client of a process, of a host or (with Redis) of a fleet:
//! [`RateLimit`] says how, [`RateLimiter`] paces the calls.

pub use api_core::{
    FallbackTo, RATE_LIMIT_STORE_VAR, RATE_LIMIT_VAR, RateLimit, RateLimitStore, RateLimiter,
    RedisUrl, StoreChange, StoreFallback,
};
