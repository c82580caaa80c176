//! The Redis / Valkey engine of [`SharedStateStore`](super::SharedStateStore): three keys per
//! service, in one hash slot (so a cluster runs each script on one node), each step one Lua script.
//!
//! - `{cloud-sdk:state:<digest>}:fence`: the fencing number, only ever incremented, never expiring;
//! - `…:lease`: a hash (`fence`, `holder`, `since`) that expires with the lease's TTL;
//! - `…:state` and `…:probe`: the recorded state's JSON, and the self-check's slot.

use std::sync::Mutex;
use std::time::Duration;

use api_core::Secret;
use api_core::redact::Redactor;

use super::{Engine, LeaseHolder, Slot, Taken};

/// How long connecting may take (TCP, TLS, authentication).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long one script may take on an open connection.
const TIMEOUT: Duration = Duration::from_secs(5);

/// Takes the lease when none is live. `KEYS`: fence, lease. `ARGV`: holder, TTL in ms.
/// Returns `{fence, holder, since, pttl}`, `fence` 0 when another holds it.
const ACQUIRE: &str = r"
if redis.call('EXISTS', KEYS[2]) == 1 then
  local h = redis.call('HMGET', KEYS[2], 'holder', 'since')
  return {0, h[1] or '', tonumber(h[2]) or 0, redis.call('PTTL', KEYS[2])}
end
local fence = redis.call('INCR', KEYS[1])
local since = tonumber(redis.call('TIME')[1])
redis.call('HSET', KEYS[2], 'fence', fence, 'holder', ARGV[1], 'since', since)
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return {fence, ARGV[1], since, tonumber(ARGV[2])}
";

/// Extends the lease when `fence` is still the latest (taking it again if it lapsed untaken).
/// `KEYS`: fence, lease. `ARGV`: fence, holder, TTL in ms. Returns 1, or 0 when another took it.
const RENEW: &str = r"
if tonumber(redis.call('GET', KEYS[1]) or '0') ~= tonumber(ARGV[1]) then return 0 end
if redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('HSET', KEYS[2], 'fence', ARGV[1], 'holder', ARGV[2], 'since', tonumber(redis.call('TIME')[1]))
end
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return 1
";

/// Ends the lease when `fence` is still the latest. `KEYS`: fence, lease. `ARGV`: fence.
const RELEASE: &str = r"
if tonumber(redis.call('GET', KEYS[1]) or '0') == tonumber(ARGV[1]) then
  redis.call('DEL', KEYS[2])
end
return 1
";

/// Ends the lease whoever holds it and moves the fencing number on. `KEYS`: fence, lease.
/// Returns `{held, holder, since, pttl}`.
const FORCE_RELEASE: &str = r"
local held = redis.call('EXISTS', KEYS[2])
local h = redis.call('HMGET', KEYS[2], 'holder', 'since')
local pttl = redis.call('PTTL', KEYS[2])
redis.call('DEL', KEYS[2])
redis.call('INCR', KEYS[1])
return {held, h[1] or '', tonumber(h[2]) or 0, pttl}
";

/// Writes a slot when `fence` is the latest. `KEYS`: fence, slot. `ARGV`: fence, text.
/// Returns 1, or 0 (nothing written) when a later lease exists.
const WRITE: &str = r"
if tonumber(redis.call('GET', KEYS[1]) or '0') ~= tonumber(ARGV[1]) then return 0 end
redis.call('SET', KEYS[2], ARGV[2])
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
    connection: Mutex<Option<redis::Connection>>,
    /// The renewals' own connection: a slow save never holds a renewal back.
    renewal: Mutex<Option<redis::Connection>>,
}

impl RedisEngine {
    /// Opens the connection now, so that a wrong URL, password or host fails at once.
    pub(crate) fn connect(url: &Secret, digest: &str) -> Result<Self, String> {
        let lower = url.expose().to_ascii_lowercase();
        if lower.starts_with("rediss://") || lower.starts_with("valkeys://") {
            ensure_crypto_provider();
        }
        let client = redis::Client::open(url.expose())
            .map_err(|e| redacted(url, &format!("not a usable Redis URL: {e}")))?;
        let base = format!("{{cloud-sdk:state:{digest}}}");
        let engine = Self {
            client,
            url: url.clone(),
            fence: format!("{base}:fence"),
            lease: format!("{base}:lease"),
            state: format!("{base}:state"),
            probe: format!("{base}:probe"),
            connection: Mutex::new(None),
            renewal: Mutex::new(None),
        };
        let connection = engine.open()?;
        *engine.connection.lock().unwrap_or_else(|p| p.into_inner()) = Some(connection);
        Ok(engine)
    }

    fn open(&self) -> Result<redis::Connection, String> {
        let connection = self
            .client
            .get_connection_with_timeout(CONNECT_TIMEOUT)
            .map_err(|e| redacted(&self.url, &format!("cannot connect: {e}")))?;
        connection
            .set_read_timeout(Some(TIMEOUT))
            .and_then(|()| connection.set_write_timeout(Some(TIMEOUT)))
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
        self.run_on(&self.connection, script, keys, args)
    }

    fn run_on<T: redis::FromRedisValue>(
        &self,
        connection: &Mutex<Option<redis::Connection>>,
        script: &str,
        keys: &[&str],
        args: &[&str],
    ) -> Result<T, String> {
        let once = script == ACQUIRE || script == FORCE_RELEASE;
        let script = redis::Script::new(script);
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
                None => slot.insert(self.open()?),
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

impl Engine for RedisEngine {
    fn acquire(&self, holder_text: &str, ttl: Duration) -> Result<Taken, String> {
        let ms = ttl.as_millis().max(1).to_string();
        let (fence, who, since, pttl): (u64, String, i64, i64) =
            self.run(ACQUIRE, &[&self.fence, &self.lease], &[holder_text, &ms])?;
        Ok(if fence == 0 {
            Taken::Held(holder(who, since, pttl))
        } else {
            Taken::Lease(fence)
        })
    }

    fn renew(&self, fence: u64, holder_text: &str, ttl: Duration) -> Result<bool, String> {
        let ms = ttl.as_millis().max(1).to_string();
        let renewed: i64 = self.run_on(
            &self.renewal,
            RENEW,
            &[&self.fence, &self.lease],
            &[&fence.to_string(), holder_text, &ms],
        )?;
        Ok(renewed == 1)
    }

    fn release(&self, fence: u64) -> Result<(), String> {
        let _: i64 = self.run(RELEASE, &[&self.fence, &self.lease], &[&fence.to_string()])?;
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

    fn write(&self, fence: u64, slot: Slot, text: &str) -> Result<bool, String> {
        let written: i64 = self.run(
            WRITE,
            &[&self.fence, self.slot(slot)],
            &[&fence.to_string(), text],
        )?;
        Ok(written == 1)
    }
}

/// `text` with the URL, its password (as written and unescaped) and any other secret redacted.
fn redacted(url: &Secret, text: &str) -> String {
    let mut redactor = Redactor::new().secret(url.expose());
    if let Some(password) = super::password(url.expose()) {
        redactor = redactor.secret(password);
        let unescaped = percent_decoded(password);
        if unescaped != password {
            redactor = redactor.secret(&unescaped);
        }
    }
    redactor.text(text).into_owned()
}

/// `text` with its `%XX` escapes decoded (an invalid one kept as written).
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(high), Some(low)) = (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            )
        {
            out.push(u8::try_from(high * 16 + low).unwrap_or(b'%'));
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `rediss://` goes through rustls, which takes the process's crypto provider: the one installed
/// already, else ring.
fn ensure_crypto_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Fails only when another thread installed one just now, which is as good.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}
