//! The Redis / Valkey engine of [`SharedStateStore`](super::SharedStateStore): four keys per
//! service, in one hash slot (so a cluster runs each script on one node), each step one Lua script.
//!
//! - `{cloud-sdk:state:<digest>}:fence`: a hash of the fencing number (`n`, only ever incremented),
//!   the keys' epoch (`epoch`, random, set when the keys are first made: were the keys lost, an
//!   eviction, a restart without persistence, the numbers would start again under another epoch),
//!   the latest lease's random id (`lease`: were the hash written back to older values, a snapshot
//!   restored, a number issued twice is still one holder's) and the layout's version (`layout`);
//! - `…:lease`: a hash (`fence`, `holder`, `since`) that expires with the lease's TTL;
//! - `…:state` and `…:probe`: the recorded state's JSON, and the self-check's slot.

use std::sync::Mutex;
use std::time::Duration;

use api_core::Secret;

use super::{CALL_LIMIT, Engine, LeaseHolder, Slot, Taken, attempt_limit, redacted};

/// Whether `ARGV[1]` (number), `ARGV[2]` (epoch) and `ARGV[3]` (lease id) are the latest lease's:
/// the common head of the scripts that need it. `KEYS[1]`: fence.
const IS_LATEST: &str = r"
local latest = redis.call('HMGET', KEYS[1], 'n', 'epoch', 'lease')
local is_latest = tonumber(latest[1] or '0') == tonumber(ARGV[1]) and latest[2] == ARGV[2]
  and latest[3] == ARGV[3]
";

/// Takes the lease when none is live. `KEYS`: fence, lease. `ARGV`: holder, TTL in ms, a fresh
/// epoch (used when the keys are new), the lease's id, this SDK's layout. Returns `{fence, epoch,
/// holder, since, pttl}`, `fence` 0 when another holds it, -1 (the layout as the epoch) when the
/// keys are of a newer layout.
const ACQUIRE: &str = r"
local layout = tonumber(redis.call('HGET', KEYS[1], 'layout') or '0') or 0
if layout > tonumber(ARGV[5]) then return {-1, tostring(layout), '', 0, 0} end
if redis.call('EXISTS', KEYS[2]) == 1 then
  local h = redis.call('HMGET', KEYS[2], 'holder', 'since')
  return {0, '', h[1] or '', tonumber(h[2]) or 0, redis.call('PTTL', KEYS[2])}
end
redis.call('HSETNX', KEYS[1], 'epoch', ARGV[3])
redis.call('HSET', KEYS[1], 'lease', ARGV[4], 'layout', ARGV[5])
local fence = redis.call('HINCRBY', KEYS[1], 'n', 1)
local epoch = redis.call('HGET', KEYS[1], 'epoch')
local since = tonumber(redis.call('TIME')[1])
redis.call('HSET', KEYS[2], 'fence', fence, 'holder', ARGV[1], 'since', since)
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return {fence, epoch, ARGV[1], since, tonumber(ARGV[2])}
";

/// Extends the lease when it is still the latest (taking it again if it lapsed untaken).
/// `KEYS`: fence, lease. `ARGV`: fence, epoch, lease id, holder, TTL in ms. Returns 1, or 0 when
/// another took it.
const RENEW: &str = r"
if not is_latest then return 0 end
if redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('HSET', KEYS[2], 'fence', ARGV[1], 'holder', ARGV[4], 'since', tonumber(redis.call('TIME')[1]))
end
redis.call('PEXPIRE', KEYS[2], ARGV[5])
return 1
";

/// Ends the lease when it is still the latest. `KEYS`: fence, lease. `ARGV`: fence, epoch, lease
/// id.
const RELEASE: &str = r"
if is_latest then redis.call('DEL', KEYS[2]) end
return 1
";

/// Ends the lease whoever holds it and moves the fencing number on (and clears the latest lease's
/// id). `KEYS`: fence, lease. Returns `{held, holder, since, pttl}`.
const FORCE_RELEASE: &str = r"
local held = redis.call('EXISTS', KEYS[2])
local h = redis.call('HMGET', KEYS[2], 'holder', 'since')
local pttl = redis.call('PTTL', KEYS[2])
redis.call('DEL', KEYS[2])
redis.call('HINCRBY', KEYS[1], 'n', 1)
redis.call('HSET', KEYS[1], 'lease', '')
return {held, h[1] or '', tonumber(h[2]) or 0, pttl}
";

/// Writes a slot when the lease is the latest. `KEYS`: fence, slot. `ARGV`: fence, epoch, lease
/// id, text. Returns 1, or 0 (nothing written) when another lease exists.
const WRITE: &str = r"
if not is_latest then return 0 end
redis.call('SET', KEYS[2], ARGV[4])
return 1
";

/// One service's keys in one Redis; a connection kept open, opened again after a failure.
pub(crate) struct RedisEngine {
    client: redis::Client,
    url: Secret,
    fence: String,
    lease: String,
    state: String,
    probe: String,
    /// The keys' epoch, as the last lease taken here found it.
    epoch: Mutex<String>,
    connection: Mutex<Option<redis::Connection>>,
    /// The renewals' own connection: a slow save never holds a renewal back.
    renewal: Mutex<Option<redis::Connection>>,
}

impl RedisEngine {
    /// Opens the connection now, so that a wrong URL, password or host fails at once.
    pub(crate) fn connect(url: &Secret, digest: &str) -> Result<Self, String> {
        let lower = url.expose().to_ascii_lowercase();
        if lower.starts_with("rediss://") || lower.starts_with("valkeys://") {
            // `rediss://` goes through rustls.
            super::ensure_ring_provider();
        }
        // A plain connection to another machine sends the password and the state in clear: only
        // when the URL says so (`plaintext=true`).
        let (rest, plaintext) = super::take_query_parameter(url.expose(), "plaintext");
        let client = redis::Client::open(rest.as_str())
            .map_err(|e| redacted(url, &format!("not a usable Redis URL: {e}")))?;
        if let redis::ConnectionAddr::Tcp(host, _) = client.get_connection_info().addr()
            && !super::is_loopback(host)
            && plaintext.as_deref() != Some("true")
        {
            return Err(redacted(
                url,
                &format!(
                    "a plain redis:// connection to {host} would send the password and the state \
                     in clear; use rediss:// (TLS), or add plaintext=true to the URL's query to say \
                     a plain connection is intended (a private network)"
                ),
            ));
        }
        let base = format!("{{cloud-sdk:state:{digest}}}");
        let engine = Self {
            client,
            url: url.clone(),
            fence: format!("{base}:fence"),
            lease: format!("{base}:lease"),
            state: format!("{base}:state"),
            probe: format!("{base}:probe"),
            epoch: Mutex::new(String::new()),
            connection: Mutex::new(None),
            renewal: Mutex::new(None),
        };
        let connection = engine.open(CALL_LIMIT)?;
        *engine.connection.lock().unwrap_or_else(|p| p.into_inner()) = Some(connection);
        Ok(engine)
    }

    /// A new connection: connecting (TCP, TLS, authentication) and then each script on it may
    /// take `limit` at most.
    fn open(&self, limit: Duration) -> Result<redis::Connection, String> {
        let connection = self
            .client
            .get_connection_with_timeout(limit)
            .map_err(|e| redacted(&self.url, &format!("cannot connect: {e}")))?;
        connection
            .set_read_timeout(Some(limit))
            .and_then(|()| connection.set_write_timeout(Some(limit)))
            .map_err(|e| redacted(&self.url, &format!("cannot set its timeouts: {e}")))?;
        Ok(connection)
    }

    /// Runs `script` on the open connection (opened again, and the script run again, once when
    /// the connection was found broken: every script but [`ACQUIRE`] and [`FORCE_RELEASE`] can run
    /// twice to the same effect).
    fn run<T: redis::FromRedisValue>(
        &self,
        script: &str,
        keys: &[&str],
        args: &[&str],
    ) -> Result<T, String> {
        self.run_on(&self.connection, CALL_LIMIT, script, keys, args)
    }

    fn run_on<T: redis::FromRedisValue>(
        &self,
        connection: &Mutex<Option<redis::Connection>>,
        limit: Duration,
        script: &str,
        keys: &[&str],
        args: &[&str],
    ) -> Result<T, String> {
        let once = script == ACQUIRE || script == FORCE_RELEASE;
        let script = if [RENEW, RELEASE, WRITE].contains(&script) {
            redis::Script::new(&format!("{IS_LATEST}{script}"))
        } else {
            redis::Script::new(script)
        };
        let mut invocation = script.prepare_invoke();
        for key in keys {
            invocation.key(*key);
        }
        for arg in args {
            invocation.arg(*arg);
        }
        let mut slot = connection.lock().unwrap_or_else(|p| p.into_inner());
        for attempt in 0..2 {
            let connection = match slot.as_mut() {
                Some(connection) => connection,
                None => slot.insert(self.open(limit)?),
            };
            match invocation.invoke::<T>(connection) {
                Ok(answer) => return Ok(answer),
                // A connection that broke (a restart, an idle timeout) is opened again once; a
                // script error or a timeout is the answer.
                Err(e)
                    if attempt == 0
                        && !once
                        && (e.is_connection_dropped() || e.is_io_error())
                        && !e.is_timeout() =>
                {
                    *slot = None;
                }
                Err(e) => {
                    *slot = None;
                    return Err(redacted(&self.url, &e.to_string()));
                }
            }
        }
        Err("the connection failed twice".into())
    }

    fn slot(&self, slot: Slot) -> &str {
        match slot {
            Slot::State => &self.state,
            Slot::Probe => &self.probe,
        }
    }
}

/// An answer `{n, holder, since, pttl}` as a holder.
fn holder(holder: String, since: i64, pttl: i64) -> LeaseHolder {
    LeaseHolder {
        holder,
        since,
        expires_in: Duration::from_millis(u64::try_from(pttl).unwrap_or(0)),
    }
}

impl RedisEngine {
    /// The epoch of the keys as the last lease taken here found it.
    fn epoch(&self) -> String {
        self.epoch.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

impl Engine for RedisEngine {
    fn acquire(&self, holder_text: &str, ttl: Duration, lease: &str) -> Result<Taken, String> {
        let ms = ttl.as_millis().max(1).to_string();
        let fresh = uuid::Uuid::new_v4().to_string();
        let (fence, epoch, who, since, pttl): (i64, String, String, i64, i64) = self.run(
            ACQUIRE,
            &[&self.fence, &self.lease],
            &[holder_text, &ms, &fresh, lease, &super::LAYOUT.to_string()],
        )?;
        Ok(match u64::try_from(fence) {
            Err(_) => Taken::NewerLayout(epoch.parse().unwrap_or(0)),
            Ok(0) => Taken::Held(holder(who, since, pttl)),
            Ok(fence) => {
                *self.epoch.lock().unwrap_or_else(|p| p.into_inner()) = epoch;
                Taken::Lease(fence)
            }
        })
    }

    fn renew(
        &self,
        fence: u64,
        lease: &str,
        holder_text: &str,
        ttl: Duration,
    ) -> Result<bool, String> {
        let ms = ttl.as_millis().max(1).to_string();
        // The renewals' own connection, every step of it bounded well under the TTL.
        let renewed: i64 = self.run_on(
            &self.renewal,
            attempt_limit(ttl),
            RENEW,
            &[&self.fence, &self.lease],
            &[&fence.to_string(), &self.epoch(), lease, holder_text, &ms],
        )?;
        Ok(renewed == 1)
    }

    fn release(&self, fence: u64, lease: &str) -> Result<(), String> {
        let _: i64 = self.run(
            RELEASE,
            &[&self.fence, &self.lease],
            &[&fence.to_string(), &self.epoch(), lease],
        )?;
        Ok(())
    }

    fn force_release(&self) -> Result<Option<LeaseHolder>, String> {
        let (held, who, since, pttl): (i64, String, i64, i64) =
            self.run(FORCE_RELEASE, &[&self.fence, &self.lease], &[])?;
        Ok((held == 1).then(|| holder(who, since, pttl)))
    }

    fn holder(&self) -> Result<Option<LeaseHolder>, String> {
        let script = r"
if redis.call('EXISTS', KEYS[1]) == 0 then return {0, '', 0, 0} end
local h = redis.call('HMGET', KEYS[1], 'holder', 'since')
return {1, h[1] or '', tonumber(h[2]) or 0, redis.call('PTTL', KEYS[1])}
";
        let (held, who, since, pttl): (i64, String, i64, i64) =
            self.run(script, &[&self.lease], &[])?;
        Ok((held == 1).then(|| holder(who, since, pttl)))
    }

    fn read(&self, slot: Slot) -> Result<Option<String>, String> {
        self.run("return redis.call('GET', KEYS[1])", &[self.slot(slot)], &[])
    }

    fn write(&self, fence: u64, lease: &str, slot: Slot, text: &str) -> Result<bool, String> {
        let written: i64 = self.run(
            WRITE,
            &[&self.fence, self.slot(slot)],
            &[&fence.to_string(), &self.epoch(), lease, text],
        )?;
        Ok(written == 1)
    }
}
