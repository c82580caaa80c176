//! The Redis store: the pacing rule as one Lua script, run atomically by Redis or Valkey on a hash
//! per API URL and key that expires on its own; times are the Redis server's clock, in
//! microseconds. When Redis cannot be reached the host store paces instead, said once in
//! `tracing`, and Redis is tried again after [`RETRY_AFTER`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use api_raw::support::Secret;
use redis::aio::MultiplexedConnection;

use super::pacing::{MAX_SLOWDOWN, Pace, RECOVERY_WINDOWS};
use super::store::Host;

/// How long one Redis exchange (connecting included) may take before the host store paces instead.
const TIMEOUT: Duration = Duration::from_millis(500);

/// How long after a failure Redis is left alone.
const RETRY_AFTER: Duration = Duration::from_secs(30);

/// The pacing rule of `pacing.rs`, on the Redis server's clock (microseconds: Lua numbers are
/// doubles, exact to 2^53). `ARGV`: `reserve` or `throttle`, the interval, the window, the wait of a
/// 429, the time (0 for the server's clock), the most slowdown, the recovery windows. Returns the
/// wait in microseconds.
const SCRIPT: &str = r"
local now = tonumber(ARGV[5])
if now == 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local interval, window = tonumber(ARGV[2]), tonumber(ARGV[3])
local most, windows = tonumber(ARGV[6]), tonumber(ARGV[7])
local s = redis.call('HMGET', KEYS[1], 'next', 'blocked', 'slowdown', 'throttled')
local nxt, blocked = tonumber(s[1]) or 0, tonumber(s[2]) or 0
local slow, at = tonumber(s[3]) or 1, tonumber(s[4]) or 0
local recovery = math.max(window * windows, 1)
local longest = window * windows + interval * most * 64 + 3600000000
if slow ~= slow or nxt - now > longest or blocked - now > longest or at > now + longest then
  nxt, blocked, slow, at = 0, 0, 1, 0
end
local set = math.min(math.max(slow, 1), most)
local factor = 1
if set > 1 then
  local since = math.max(now - at, 0)
  factor = 1 + (set - 1) * (1 - math.min(since / recovery, 1))
end
local wait = 0
if ARGV[1] == 'reserve' then
  local slot = math.max(nxt, now, blocked)
  nxt = slot + math.floor(interval * factor)
  wait = slot - now
else
  blocked = math.max(blocked, now + tonumber(ARGV[4]))
  slow = math.min(factor * 2, most)
  at = now
end
redis.call('HSET', KEYS[1], 'next', string.format('%d', nxt), 'blocked', string.format('%d', blocked),
  'slowdown', tostring(slow), 'throttled', string.format('%d', at))
redis.call('PEXPIRE', KEYS[1], math.max(math.ceil((math.max(nxt, blocked) - now + recovery) / 1000), 1000))
return wait
";

/// `rediss://` goes through rustls, which takes the process's crypto provider: the one installed
/// already (by the application, or the SDK's own TLS), else ring. Without it, whatever TLS backend
/// the SDK was built with (native-tls, or both rustls providers), connecting would panic.
fn ensure_crypto_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Fails only when another thread installed one just now, which is as good.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

/// One limit's state in Redis.
pub(crate) struct RedisStore {
    client: Option<redis::Client>,
    key: String,
    script: redis::Script,
    connection: tokio::sync::Mutex<Option<MultiplexedConnection>>,
    /// Until when Redis is left alone after a failure.
    resting: Mutex<Option<Instant>>,
    fallback: Arc<Host>,
    warned: AtomicBool,
}

impl RedisStore {
    pub(crate) fn new(url: &Secret, key: &str, fallback: Host) -> Self {
        if url.expose().starts_with("rediss://") {
            ensure_crypto_provider();
        }
        Self {
            client: redis::Client::open(url.expose()).ok(),
            key: key.to_string(),
            script: redis::Script::new(SCRIPT),
            connection: tokio::sync::Mutex::new(None),
            resting: Mutex::new(None),
            fallback: Arc::new(fallback),
            warned: AtomicBool::new(false),
        }
    }

    /// Reserves a slot in Redis: the wait in nanoseconds.
    pub(crate) async fn reserve(&self, pace: Pace) -> u64 {
        match self.run("reserve", pace, 0, 0).await {
            Some(micros) => micros.saturating_mul(1000),
            None => self.fallback.reserve(pace).await,
        }
    }

    /// Records a 429 that asked to wait `wait` nanoseconds.
    pub(crate) async fn throttled(&self, pace: Pace, wait: u64) {
        if self.run("throttle", pace, wait / 1000, 0).await.is_none() {
            self.fallback.throttled(pace, wait).await;
        }
    }

    /// Runs the script for `operation` at `now` microseconds (0: the server's clock); `None` when
    /// Redis could not answer in time.
    pub(crate) async fn run(
        &self,
        operation: &str,
        pace: Pace,
        wait: u64,
        now: u64,
    ) -> Option<u64> {
        if self
            .resting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some_and(|until| Instant::now() < until)
        {
            return None;
        }
        let result = tokio::time::timeout(TIMEOUT, self.exchange(operation, pace, wait, now)).await;
        match result {
            Ok(Ok(micros)) => Some(micros),
            Ok(Err(e)) => self.failed(&e.to_string()).await,
            Err(_) => self.failed("no answer in time").await,
        }
    }

    async fn exchange(
        &self,
        operation: &str,
        pace: Pace,
        wait: u64,
        now: u64,
    ) -> redis::RedisResult<u64> {
        let mut slot = self.connection.lock().await;
        if slot.is_none() {
            let client = self.client.as_ref().ok_or_else(|| {
                redis::RedisError::from((redis::ErrorKind::InvalidClientConfig, "not a Redis URL"))
            })?;
            *slot = Some(client.get_multiplexed_async_connection().await?);
        }
        let Some(connection) = slot.as_mut() else {
            unreachable!("set above")
        };
        self.script
            .key(&self.key)
            .arg(operation)
            .arg(pace.interval / 1000)
            .arg(pace.window / 1000)
            .arg(wait)
            .arg(now)
            .arg(MAX_SLOWDOWN)
            .arg(RECOVERY_WINDOWS)
            .invoke_async(connection)
            .await
    }

    async fn failed(&self, why: &str) -> Option<u64> {
        *self.connection.lock().await = None;
        *self.resting.lock().unwrap_or_else(PoisonError::into_inner) =
            Some(Instant::now() + RETRY_AFTER);
        if !self.warned.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                error = why,
                "Redis cannot be reached for the shared rate limit; pacing through the host store"
            );
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::rate_limit::pacing::PaceState;

    use super::super::redis_server;

    const MS: u64 = 1_000_000;

    fn store(url: &str, key: &str) -> RedisStore {
        let dir = std::env::temp_dir().join("api-core-redis-tests");
        RedisStore::new(
            &Secret::new(url),
            key,
            Host::new(super::super::host::HostFile::new(Some(&dir), key)),
        )
    }

    /// The Lua script and the Rust rule give the same waits for any sequence of reservations and
    /// 429s at the same times (Redis counts microseconds, Rust nanoseconds: within a microsecond a
    /// step).
    #[test]
    fn the_script_follows_the_pacing_rule() {
        let Some(server) = redis_server::RedisServer::start("the_script_follows_the_pacing_rule")
        else {
            return;
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let pace = Pace {
            interval: 102 * MS,
            window: 2_000 * MS,
        };
        let config = ProptestConfig {
            cases: 48,
            failure_persistence: None,
            ..ProptestConfig::default()
        };
        let case = std::sync::atomic::AtomicU32::new(0);
        proptest!(config, |(steps in proptest::collection::vec((any::<bool>(), 0u64..3_000, 0u64..5_000), 1..14))| {
            let key = format!("test:{}", case.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
            let redis = store(&server.url, &key);
            let mut state = PaceState::default();
            let mut now_ms = 1_700_000_000_000u64;
            for (step, (reserve, advance_ms, wait_ms)) in steps.into_iter().enumerate() {
                now_ms += advance_ms;
                let now_ns = now_ms * MS;
                if reserve {
                    let (next, rust_wait) = pace.reserve(state, now_ns);
                    state = next;
                    let lua_wait = runtime
                        .block_on(redis.run("reserve", pace, 0, now_ms * 1000))
                        .expect("Redis answers");
                    let difference = (rust_wait / 1000).abs_diff(lua_wait);
                    prop_assert!(difference <= step as u64 + 1, "step {step}: rust {rust_wait} ns, lua {lua_wait} us");
                } else {
                    state = pace.throttled(state, now_ns, wait_ms * MS);
                    runtime
                        .block_on(redis.run("throttle", pace, wait_ms * 1000, now_ms * 1000))
                        .expect("Redis answers");
                }
            }
        });
    }

    #[test]
    fn keys_expire_and_an_unreachable_redis_falls_back_at_once() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let pace = Pace {
            interval: 100 * MS,
            window: 1_000 * MS,
        };
        // Nothing listens on port 9: the host store paces, without waiting for Redis.
        let away = store("redis://127.0.0.1:9", "away");
        let started = Instant::now();
        let waits: Vec<u64> = (0..3)
            .map(|_| runtime.block_on(away.reserve(pace)))
            .collect();
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
        assert!(
            waits[1] > 0 && waits[2] > waits[1],
            "paced by the host store: {waits:?}"
        );

        // A server that takes the connection and never answers: the first call waits its 500 ms,
        // the next ones leave Redis alone for a while and pace through the host store at once.
        let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let silent_url = format!("redis://{}", silent.local_addr().unwrap());
        let mute = store(&silent_url, "mute");
        let first = Instant::now();
        runtime.block_on(mute.reserve(pace));
        assert!(first.elapsed() >= TIMEOUT, "{:?}", first.elapsed());
        let rest = Instant::now();
        for _ in 0..3 {
            runtime.block_on(mute.reserve(pace));
            runtime.block_on(mute.throttled(pace, 0));
        }
        assert!(rest.elapsed() < TIMEOUT, "resting: {:?}", rest.elapsed());
        assert!(mute.warned.load(Ordering::Relaxed));
        drop(silent);

        // rediss:// builds its TLS configuration before connecting: with any TLS backend of the
        // SDK, that needs no provider of the caller's and cannot panic.
        let tls = store("rediss://127.0.0.1:9", "tls");
        runtime.block_on(tls.reserve(pace));
        assert!(tls.warned.load(Ordering::Relaxed), "fell back, said once");
        assert!(rustls::crypto::CryptoProvider::get_default().is_some());

        let Some(server) = redis_server::RedisServer::start("keys_expire") else {
            return;
        };
        let redis = store(&server.url, "expiring");
        runtime.block_on(redis.reserve(pace));
        let client = redis::Client::open(server.url.as_str()).unwrap();
        let ttl: i64 = runtime.block_on(async {
            let mut connection = client.get_multiplexed_async_connection().await.unwrap();
            redis::cmd("PTTL")
                .arg("expiring")
                .query_async(&mut connection)
                .await
                .unwrap()
        });
        assert!(
            ttl > 0 && ttl <= 5_000,
            "the key expires on its own: {ttl} ms"
        );
    }
}
