//! The Redis store: the pacing rule as one Lua script, run atomically by Redis or Valkey on a hash
//! per API URL and key that expires on its own; times are the Redis server's clock, in
//! microseconds (its wall clock: a step back is absorbed by the rule, a step forward only shortens
//! the waits). When Redis cannot be reached the host store paces instead (the limiter's
//! [`Fallback`](super::fallback::Fallback) says so), and Redis is tried again after [`RETRY_AFTER`]. The connection is multiplexed: every reservation of a busy
//! process is in flight at once on it, none waits for another's answer.

use std::time::Duration;

use redis::aio::MultiplexedConnection;

use super::booking::{Booked, StoreKind};
use super::config::RedisUrl;
use super::pacing::{
    ABOVE_WINDOWS, BELOW_THE_TROUBLE, BLOCK_WINDOWS, DECREASE, LOG_CAP, MAX_QUEUE,
    MAX_SHARED_BLOCK_NS, MAX_SLOWDOWN, Pace, RECOVERY_WINDOWS, Ticket,
};
use super::store::{Answer, Op, Store};

/// How long one Redis exchange (a script run on an open connection) may take before the host store
/// paces instead.
const TIMEOUT: Duration = Duration::from_millis(500);

/// How long opening the connection may take (TCP, TLS for `rediss://`, authentication: several
/// round trips), apart from [`TIMEOUT`]: a short-lived process against a Redis 100 ms away
/// connects, then runs its scripts in Redis rather than falling back on its first call.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// How long after a failure Redis is left alone.
pub(crate) const RETRY_AFTER: Duration = Duration::from_secs(30);

/// The pacing rule of `pacing.rs`, on the Redis server's clock (microseconds: Lua numbers are
/// doubles, exact to 2^53). `ARGV`: `reserve`, `confirm` or `throttle`; the burst, span, interval
/// and window; the wait of a 429 (`throttle`) or the ticket's generation (`confirm`); the time (0
/// for the server's clock); then the rule's constants; last, for `throttle`, the generation the
/// request was sent under and how many slots lay before it (-1: not known); and where the climb
/// after a 429 aims (`BELOW_THE_TROUBLE`). Returns the wait in
/// microseconds (-1: `confirm` says go), the generation, whether a block held the slot (1) and how
/// many slots lay before it.
const SCRIPT: &str = r"
local op = ARGV[1]
local burst, span, interval, window = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local arg, now = tonumber(ARGV[6]), tonumber(ARGV[7])
if now == 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local slowest, windows, above = tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[10])
local decrease, block_windows, max_queue = tonumber(ARGV[11]), tonumber(ARGV[12]), tonumber(ARGV[13])
local max_shared_block, log_cap = tonumber(ARGV[14]), tonumber(ARGV[15])
local sent, sent_before = tonumber(ARGV[16]) or -1, tonumber(ARGV[17]) or -1
local below = tonumber(ARGV[18])
local s = redis.call('HMGET', KEYS[1], 'log', 'floor', 'blocked', 'rate', 'trouble', 'throttled', 'generation', 'seen')
local floor, blocked = tonumber(s[2]) or 0, tonumber(s[3]) or 0
local rate, trouble, at = tonumber(s[4]) or 1, tonumber(s[5]) or 1, tonumber(s[6]) or 0
local gen, seen = tonumber(s[7]) or 0, tonumber(s[8]) or 0
local back = math.max(seen - now, 0)
local log = {}
if s[1] then
  for slot in string.gmatch(s[1], '%d+') do
    local t = math.max(tonumber(slot) - back, 0)
    if t + max_shared_block > now then log[#log + 1] = t end
  end
end
table.sort(log)
while #log > log_cap do table.remove(log, 1) end
floor, blocked, at = math.max(floor - back, 0), math.max(blocked - back, 0), math.max(at - back, 0)
local longest_block = window * block_windows
local latest = math.max(log[#log] or 0, floor)
if rate ~= rate or rate == math.huge or rate == -math.huge or trouble ~= trouble
    or latest - now > interval * slowest * max_queue
    or blocked - now > math.max(longest_block, max_shared_block) or at > now then
  log, floor, blocked, rate, trouble, at, gen = {}, 0, 0, 1, 1, 0, 0
end
local function trouble_of()
  local r = math.max(rate, 1 / slowest)
  if trouble ~= math.huge and trouble ~= -math.huge and trouble >= r then return math.min(trouble, 1) end
  return math.min(r / decrease, 1)
end
local function share()
  if rate >= 1 or rate <= 0 then return 1 end
  local r = math.max(rate, 1 / slowest)
  local tr = trouble_of()
  local climbed = math.max(now - at, 0) / math.max(window * windows, 1)
  local v
  if climbed <= 1 then
    v = tr - (tr - r) * ((1 - climbed) * (1 - climbed))
  else
    v = tr * (1 / decrease) ^ ((climbed - 1) / above)
  end
  return math.min(v, 1)
end
local function place_of(slot)
  local place = 0
  for i = 1, #log do if log[i] <= slot then place = i end end
  return place
end
local function admits(slot, most, w)
  local place = place_of(slot)
  local total = #log + 1
  local function merged(i)
    if i < place then return log[i + 1] elseif i == place then return slot else return log[i] end
  end
  for first = math.max(place - most, 0), place do
    if first + most < total and merged(first + most) - merged(first) < w then return false end
  end
  return true
end
local wait, held, before = 0, 0, 0
local function reserve()
  if blocked > now then held = 1 else held = 0 end
  local sh = share()
  local most, w = burst, span
  if sh < 1 then most, w = 1, math.floor(interval / math.max(sh, 1 / slowest)) end
  local from = math.max(now, blocked, floor)
  if #log == log_cap then from = math.max(from, log[#log]) end
  local slot = nil
  if admits(from, most, w) then slot = from end
  local i = 1
  while slot == nil and i <= #log do
    local c = log[i] + w
    if c > from and admits(c, most, w) then slot = c end
    i = i + 1
  end
  before = 0
  for _, t in ipairs(log) do
    if t > slot - span and t <= slot then before = before + 1 end
  end
  table.insert(log, place_of(slot) + 1, slot)
  if #log > log_cap then
    local dropped = table.remove(log, 1)
    if dropped > now then floor = math.max(floor, dropped) end
  end
  wait = slot - now
end
if op == 'reserve' then
  reserve()
elseif op == 'confirm' then
  if gen == arg then wait = -1 else reserve() end
else
  local sh = share()
  local known = -1
  if sent_before >= 1 then known = (sent_before + 1) / burst end
  local learned = rate > 0 and rate < 1
  if now >= blocked and (sent < 0 or sent == gen) then
    local tr_now = trouble_of()
    local in_a_run = learned and sh < tr_now and now - at < longest_block
    local refused = sh
    if known > 0 then refused = math.min(sh, known) end
    local new_rate = math.max(refused * decrease, 1 / slowest)
    local tr = refused * below
    if in_a_run then
      tr = tr_now
      if known > 0 then tr = math.min(tr, known * below) end
    end
    rate = new_rate
    trouble = math.max(tr, new_rate)
    at = now
  elseif known > 0 and learned and known * below < trouble_of() then
    local new_rate = math.max(math.min(rate, known * decrease), 1 / slowest)
    trouble = math.max(known * below, new_rate)
    rate = new_rate
  end
  blocked = math.max(blocked, now + math.min(arg, longest_block))
  local kept = {}
  for _, t in ipairs(log) do
    if t <= now then kept[#kept + 1] = t end
  end
  log = kept
  floor = math.min(floor, now)
  gen = gen + 1
end
local slots = {}
for i, t in ipairs(log) do slots[i] = string.format('%d', t) end
redis.call('HSET', KEYS[1], 'log', table.concat(slots, ','), 'floor', string.format('%d', floor),
  'blocked', string.format('%d', blocked), 'rate', string.format('%.17g', rate),
  'trouble', string.format('%.17g', trouble), 'throttled', string.format('%d', at),
  'generation', string.format('%d', gen), 'seen', string.format('%d', now))
redis.call('HDEL', KEYS[1], 'next')
local full = at
if rate < 1 and rate > 0 then
  local periods = math.log(1 / math.max(trouble_of(), 1 / slowest)) / math.log(1 / decrease)
  full = at + window * windows * (1 + above * periods)
end
local live = math.max(log[#log] or 0, floor, blocked, full) - now + window * windows
redis.call('PEXPIRE', KEYS[1], math.max(math.ceil(live / 1000), 1000))
return {wait, gen, held, before}
";

/// The script's answer: the wait in microseconds (-1: go), the generation, whether a block held
/// the slot (1, else 0), and how many slots lay in its span before it.
pub(crate) type Reply = (i64, u64, i64, u32);

/// One limit's state in Redis.
pub(crate) struct RedisStore {
    client: Option<redis::Client>,
    url: RedisUrl,
    key: String,
    script: redis::Script,
    connection: tokio::sync::Mutex<Option<MultiplexedConnection>>,
}

impl RedisStore {
    pub(crate) fn new(url: &RedisUrl, key: &str) -> Self {
        if url.expose().starts_with("rediss://") {
            // `rediss://` goes through rustls, whatever TLS backend the SDK was built with.
            crate::tls::ensure_ring_provider();
        }
        Self {
            // Parsed when the store was built; `None` cannot happen, and would fall back.
            client: redis::Client::open(url.expose()).ok(),
            url: url.clone(),
            key: key.to_string(),
            script: redis::Script::new(SCRIPT),
            connection: tokio::sync::Mutex::new(None),
        }
    }

    /// Runs the script for `operation` at `now` microseconds (0: the server's clock), a 429's
    /// request `sent` under a generation (when known): the wait in microseconds, the generation
    /// and whether a block held the slot back (1, else 0); why not, its password redacted, when
    /// Redis could not answer in time.
    pub(crate) async fn run(
        &self,
        operation: &str,
        pace: Pace,
        arg: u64,
        now: u64,
        sent: Option<Ticket>,
    ) -> Result<Reply, String> {
        let connection = match tokio::time::timeout(CONNECT_TIMEOUT, self.connection()).await {
            Ok(Ok(connection)) => connection,
            Ok(Err(e)) => return Err(self.failed(&e.to_string()).await),
            Err(_) => return Err(self.failed("no connection in time").await),
        };
        let result = tokio::time::timeout(
            TIMEOUT,
            self.exchange(connection, operation, pace, arg, now, sent),
        )
        .await;
        match result {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(e)) => Err(self.failed(&e.to_string()).await),
            Err(_) => Err(self.failed("no answer in time").await),
        }
    }

    /// The connection, opened on first use; a clone of it (the same multiplexed connection), so
    /// that the lock is held only to read or set it.
    async fn connection(&self) -> redis::RedisResult<MultiplexedConnection> {
        let mut slot = self.connection.lock().await;
        if let Some(connection) = slot.as_ref() {
            return Ok(connection.clone());
        }
        let client = self.client.as_ref().ok_or_else(|| {
            redis::RedisError::from((redis::ErrorKind::InvalidClientConfig, "not a Redis URL"))
        })?;
        // The crate's own budgets (1 s to connect, 500 ms a request) set to the store's.
        let config = redis::AsyncConnectionConfig::new()
            .set_connection_timeout(Some(CONNECT_TIMEOUT))
            .set_response_timeout(Some(TIMEOUT));
        let connection = client
            .get_multiplexed_async_connection_with_config(&config)
            .await?;
        *slot = Some(connection.clone());
        Ok(connection)
    }

    async fn exchange(
        &self,
        mut connection: MultiplexedConnection,
        operation: &str,
        pace: Pace,
        arg: u64,
        now: u64,
        sent: Option<Ticket>,
    ) -> redis::RedisResult<Reply> {
        self.script
            .key(&self.key)
            .arg(operation)
            .arg(pace.burst)
            .arg(pace.span / 1000)
            .arg(pace.interval / 1000)
            .arg(pace.window / 1000)
            .arg(arg)
            .arg(now)
            .arg(MAX_SLOWDOWN)
            .arg(RECOVERY_WINDOWS)
            .arg(ABOVE_WINDOWS)
            .arg(DECREASE)
            .arg(BLOCK_WINDOWS)
            .arg(MAX_QUEUE)
            .arg(MAX_SHARED_BLOCK_NS / 1000)
            .arg(LOG_CAP)
            .arg(
                sent.and_then(|t| i64::try_from(t.generation).ok())
                    .unwrap_or(-1),
            )
            .arg(sent.map_or(-1, |t| i64::from(t.before)))
            .arg(BELOW_THE_TROUBLE)
            .invoke_async(&mut connection)
            .await
    }

    /// Drops the connection (the next use opens a new one) and says why, its password redacted.
    async fn failed(&self, why: &str) -> String {
        *self.connection.lock().await = None;
        api_raw::support::redact::Redactor::new()
            .url(self.url.expose())
            .text(why)
            .into_owned()
    }
}

impl Store for RedisStore {
    type Error = String;

    async fn update(&self, pace: Pace, op: Op) -> Result<Answer, String> {
        let (operation, arg, sent) = match op.in_store(StoreKind::Redis) {
            Op::Reserve => ("reserve", 0, None),
            Op::Confirm(booked) => ("confirm", booked.ticket.generation, None),
            Op::Throttled { wait, sent } => ("throttle", wait / 1000, sent.map(|b| b.ticket)),
        };
        let (wait, generation, blocked, before) = self.run(operation, pace, arg, 0, sent).await?;
        Ok(match (operation, wait) {
            ("throttle", _) => Answer::Recorded,
            ("confirm", -1) => Answer::Go,
            _ => Answer::Booked(Booked {
                ticket: ticket((wait, generation, blocked, before)),
                store: StoreKind::Redis,
            }),
        })
    }

    fn answering(&self) -> &'static str {
        StoreKind::Redis.name()
    }
}

/// A ticket from the script's answer (microseconds).
fn ticket((wait, generation, blocked, before): Reply) -> Ticket {
    Ticket {
        wait: u64::try_from(wait).unwrap_or(0).saturating_mul(1000),
        generation,
        blocked: blocked == 1,
        before,
    }
}

/// The Redis key for an API URL and key id.
pub(crate) fn key(base_url: &str, key_id: &str) -> String {
    format!("cloud-sdk:rate-limit:{base_url}:{key_id}")
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use proptest::prelude::*;

    use std::sync::Arc;

    use super::*;
    use crate::rate_limit::config::RateLimitStore;
    use crate::rate_limit::fallback::{Fallback, RedisChain, host_chain};
    use crate::rate_limit::observers::{FallbackObserver, FallbackTo, StoreChange};
    use crate::rate_limit::pacing::PaceState;

    use api_test_support::redis_server;

    const MS: u64 = 1_000_000;

    /// The pace of `20/2s`.
    fn twenty_per_2s() -> Pace {
        Pace::new(20, 2_000 * MS)
    }

    fn url(text: &str) -> RedisUrl {
        match RateLimitStore::redis(text).expect("a Redis URL") {
            RateLimitStore::Redis(url) => url,
            other => panic!("{other:?}"),
        }
    }

    /// Redis at `url_text`, and the host store (in a directory of the tests) while it rests, as a
    /// client's limiter has them.
    fn store(url_text: &str, key: &str) -> RedisChain {
        let dir = std::env::temp_dir().join("api-core-redis-tests");
        chain(url_text, key, &dir, None)
    }

    fn chain(
        url_text: &str,
        key: &str,
        dir: &std::path::Path,
        on_change: Option<FallbackObserver>,
    ) -> RedisChain {
        let url = url(url_text);
        Fallback::new(
            RedisStore::new(&url, key),
            host_chain(Some(dir), key, None),
            url.describe(),
            FallbackTo::Host,
            RETRY_AFTER,
            on_change,
        )
    }

    /// The chain's answers as the limiter reads them.
    impl RedisChain {
        async fn reserve(&self, pace: Pace) -> Booked {
            match self.update(pace, Op::Reserve).await {
                Ok(Answer::Booked(booked)) => booked,
                other => panic!("{other:?}"),
            }
        }

        async fn confirm(&self, pace: Pace, booked: Booked) -> Option<Booked> {
            match self.update(pace, Op::Confirm(booked)).await {
                Ok(Answer::Go) => None,
                Ok(Answer::Booked(again)) => Some(again),
                other => panic!("{other:?}"),
            }
        }

        async fn throttled(&self, pace: Pace, wait: u64) {
            let Ok(answer) = self.update(pace, Op::Throttled { wait, sent: None }).await;
            assert_eq!(answer, Answer::Recorded);
        }
    }

    /// The script's answer to `operation` at `now_us` (microseconds of the Redis clock, 0: its own).
    fn ask(
        runtime: &tokio::runtime::Runtime,
        redis: &RedisChain,
        operation: &str,
        pace: Pace,
        arg: u64,
        now_us: u64,
        sent: Option<Ticket>,
    ) -> Reply {
        runtime
            .block_on(redis.primary().run(operation, pace, arg, now_us, sent))
            .expect("Redis answers")
    }

    /// A Redis server for `test` and a runtime to call it from; `None` where the test cannot run.
    fn started(test: &str) -> Option<(redis_server::RedisServer, tokio::runtime::Runtime)> {
        Some((redis_server::RedisServer::start(test)?, runtime()))
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    /// One step of a random run against both twins.
    #[derive(Debug, Clone)]
    enum Step {
        Reserve,
        Confirm(usize),
        /// A 429's wait, and which ticket its request went on (`None`: not known).
        Throttle(u64, Option<usize>),
    }

    /// A block a `10/10s` sharer wrote (40 s, its 4 windows) holds for a `20/2s` one in the script
    /// as in the Rust rule, though it is longer than the reader's own longest block.
    #[test]
    fn the_script_keeps_a_block_another_configuration_wrote() {
        let Some((server, runtime)) =
            started("the_script_keeps_a_block_another_configuration_wrote")
        else {
            return;
        };
        let slow = Pace::new(10, 10_000 * MS);
        let fast = twenty_per_2s();
        let redis = store(&server.url, "test:two-configurations");
        let now_us = 1_700_000_000_000_000u64;
        ask(&runtime, &redis, "throttle", slow, 40_000_000, now_us, None);
        let (wait, _, blocked, _) = ask(
            &runtime,
            &redis,
            "reserve",
            fast,
            0,
            now_us + 1_000_000,
            None,
        );
        assert_eq!((wait, blocked), (39_000_000, 1));
    }

    /// From the floor (300 429s in a row), the script's rate climbs back as the Rust rule's: one
    /// call at a time at the slowest pace, and bursts again once the climb is over, not sooner.
    #[test]
    fn from_the_floor_the_script_climbs_back_as_the_rule() {
        let Some((server, runtime)) = started("from_the_floor_the_script_climbs_back_as_the_rule")
        else {
            return;
        };
        let pace = twenty_per_2s();
        let redis = store(&server.url, "test:floor");
        let mut now_us = 1_700_000_000_000_000u64;
        for _ in 0..300 {
            now_us += 10_000;
            ask(&runtime, &redis, "throttle", pace, 0, now_us, None);
        }
        // Two reservations in a row: the second waits the interval of the rate at that time.
        let gap = |at_us: u64| {
            ask(&runtime, &redis, "reserve", pace, 0, at_us, None);
            let (wait, ..) = ask(&runtime, &redis, "reserve", pace, 0, at_us, None);
            wait
        };
        let window_us = pace.window / 1000;
        let slowest = 102_000 * 64;
        let floor = gap(now_us + 1);
        assert!(floor >= slowest * 999 / 1000, "at the floor: {floor} µs");
        // The run began at the configured rate: the climb aims just under it (RECOVERY_WINDOWS
        // windows), then goes on slowly: the configured rate in 91 windows, bursts again.
        let aim = gap(now_us + window_us * u64::from(RECOVERY_WINDOWS));
        let expected = (102_000.0 / BELOW_THE_TROUBLE) as i64;
        assert!((aim - expected).abs() <= 2, "at the aim: {aim} µs");
        let before = gap(now_us + window_us * 90);
        assert!(before > 102_000, "not sooner than the climb: {before} µs");
        let back = gap(now_us + window_us * 92);
        assert_eq!(back, 0, "bursts again");
    }

    /// The Lua script and the Rust rule give the same waits and generations for any sequence of
    /// reservations, confirmations and 429s at the same times, the clock going back too (Redis
    /// counts microseconds, Rust nanoseconds: within a microsecond a step).
    #[test]
    fn the_script_follows_the_pacing_rule() {
        let Some((server, runtime)) = started("the_script_follows_the_pacing_rule") else {
            return;
        };
        // Two sharers of the key: `20/2s` and `1/3s`.
        let paces = [twenty_per_2s(), Pace::new(1, 3_000 * MS)];
        let config = ProptestConfig {
            cases: 48,
            failure_persistence: None,
            ..ProptestConfig::default()
        };
        let step = prop_oneof![
            4 => Just(Step::Reserve),
            2 => any::<usize>().prop_map(Step::Confirm),
            1 => (0u64..12_000, proptest::option::of(any::<usize>()))
                .prop_map(|(wait, sent)| Step::Throttle(wait, sent)),
        ];
        let case = std::sync::atomic::AtomicU32::new(0);
        proptest!(config, |(steps in proptest::collection::vec((step, 0usize..4, -1_500i64..3_000), 1..40))| {
            let key = format!("test:{}", case.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
            let redis = store(&server.url, &key);
            let mut state = PaceState::default();
            let mut now_ms = 1_700_000_000_000u64;
            let mut tickets: Vec<Ticket> = Vec::new();
            for (i, (step, sharer, advance_ms)) in steps.into_iter().enumerate() {
                // Mostly the fast sharer, now and then the slow one.
                let pace = paces[usize::from(sharer == 0)];
                now_ms = now_ms.saturating_add_signed(advance_ms);
                let now_ns = now_ms * MS;
                let close = |rust: Ticket, lua: Reply| {
                    let difference = (rust.wait / 1000).abs_diff(u64::try_from(lua.0).unwrap_or(u64::MAX));
                    difference <= i as u64 + 1
                        && rust.generation == lua.1
                        && rust.blocked == (lua.2 == 1)
                        && rust.before == lua.3
                };
                match step {
                    Step::Reserve => {
                        let (next, rust) = pace.reserve(state, now_ns);
                        state = next;
                        let lua = ask(&runtime, &redis, "reserve", pace, 0, now_ms * 1000, None);
                        prop_assert!(close(rust, lua), "step {i}: rust {rust:?}, lua {lua:?}");
                        tickets.push(rust);
                    }
                    Step::Confirm(_) if tickets.is_empty() => {}
                    Step::Confirm(n) => {
                        let booked = tickets[n % tickets.len()];
                        let (next, rust) = pace.confirm(state, now_ns, booked);
                        state = next;
                        let lua = ask(&runtime, &redis, "confirm", pace, booked.generation, now_ms * 1000, None);
                        match rust {
                            None => prop_assert_eq!(lua.0, -1, "step {}: go", i),
                            Some(rust) => {
                                prop_assert!(close(rust, lua), "step {i}: rust {rust:?}, lua {lua:?}");
                                tickets.push(rust);
                            }
                        }
                    }
                    Step::Throttle(wait_ms, sent) => {
                        // A 429 to a request sent on one of the tickets booked so far, or of an
                        // unknown one.
                        let sent = sent
                            .filter(|_| !tickets.is_empty())
                            .map(|n| tickets[n % tickets.len()]);
                        state = pace.throttled(state, now_ns, wait_ms * MS, sent);
                        let lua = ask(&runtime, &redis, "throttle", pace, wait_ms * 1000, now_ms * 1000, sent);
                        prop_assert_eq!(lua.1, state.generation);
                    }
                }
            }
        });
    }

    /// A ticket booked before another process's 429 is replaced at its slot, and one booked after
    /// it goes: the store itself, on Redis's clock, as the client uses it.
    #[test]
    fn a_ticket_booked_before_another_process_429_is_replaced() {
        let Some(server) = redis_server::RedisServer::start(
            "a_ticket_booked_before_another_process_429_is_replaced",
        ) else {
            return;
        };
        let runtime = runtime();
        let pace = Pace::new(100, 1_000 * MS);
        let ours = store(&server.url, "stale");
        let theirs = store(&server.url, "stale");
        runtime.block_on(async {
            let booked = ours.reserve(pace).await;
            assert_eq!(ours.confirm(pace, booked).await, None, "no 429 since: go");
            theirs.throttled(pace, 300 * MS).await;
            let again = ours
                .confirm(pace, booked)
                .await
                .expect("a 429 came since the slot was booked: a new one");
            assert_eq!(again.ticket.generation, booked.ticket.generation + 1);
            assert!(again.ticket.wait > 200 * MS, "behind the block: {again:?}");
            assert_eq!(ours.confirm(pace, again).await, None, "the new ticket goes");
            assert!(!ours.is_out(), "all in Redis");
        });
    }

    /// A TCP relay to `target` that holds every chunk from the server `delay` before passing it on
    /// (a Redis that far away), without holding one chunk for another's delay.
    async fn far_away(target: String, delay: Duration) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let server = tokio::net::TcpStream::connect(&target).await.unwrap();
                let (mut client_read, mut client_write) = client.into_split();
                let (mut server_read, mut server_write) = server.into_split();
                tokio::spawn(async move {
                    let _ = tokio::io::copy(&mut client_read, &mut server_write).await;
                });
                let (sender, mut receiver) =
                    tokio::sync::mpsc::unbounded_channel::<(tokio::time::Instant, Vec<u8>)>();
                tokio::spawn(async move {
                    use tokio::io::AsyncReadExt;
                    let mut buffer = vec![0u8; 65_536];
                    while let Ok(n @ 1..) = server_read.read(&mut buffer).await {
                        let due = tokio::time::Instant::now() + delay;
                        if sender.send((due, buffer[..n].to_vec())).is_err() {
                            break;
                        }
                    }
                });
                tokio::spawn(async move {
                    use tokio::io::AsyncWriteExt;
                    while let Some((due, bytes)) = receiver.recv().await {
                        tokio::time::sleep_until(due).await;
                        if client_write.write_all(&bytes).await.is_err() {
                            break;
                        }
                    }
                });
            }
        });
        format!("redis://{address}")
    }

    /// A fresh process against a Redis 150 ms away: connecting and the first script take more than
    /// one exchange's budget together (a round trip or two to connect, up to three for the script),
    /// yet the first call gets Redis's answer, since connecting has its own budget.
    #[test]
    fn a_first_call_to_a_far_redis_connects_and_stays_in_redis() {
        let Some((server, runtime)) =
            started("a_first_call_to_a_far_redis_connects_and_stays_in_redis")
        else {
            return;
        };
        let target = server.url.trim_start_matches("redis://").to_string();
        let pace = Pace::new(1_000_000, 1_000 * MS);
        let (took, warned) = runtime.block_on(async {
            let relayed = far_away(target, Duration::from_millis(150)).await;
            let redis = store(&relayed, "far-first");
            let started = Instant::now();
            redis.reserve(pace).await;
            (started.elapsed(), redis.is_out())
        });
        assert!(!warned, "the first call fell back to the host store");
        assert!(
            took > TIMEOUT,
            "the case needs more than one exchange's budget: {took:?}"
        );
    }

    /// Fifty reservations at once through a Redis 40 ms away all get Redis's answer, in about one
    /// round trip: the connection is shared, not held while a script runs (held, they would queue
    /// for two seconds, time out, and fall back to the host store).
    #[test]
    fn a_busy_process_keeps_every_reservation_in_redis() {
        let Some(server) =
            redis_server::RedisServer::start("a_busy_process_keeps_every_reservation_in_redis")
        else {
            return;
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let target = server.url.trim_start_matches("redis://").to_string();
        let pace = Pace::new(1_000_000, 1_000 * MS);
        let (elapsed, warned, generations) = runtime.block_on(async {
            let relayed = far_away(target, Duration::from_millis(40)).await;
            let redis = Arc::new(store(&relayed, "busy"));
            // The connection is opened first, as a running client's is.
            redis.reserve(pace).await;
            let started = Instant::now();
            let calls: Vec<_> = (0..50)
                .map(|_| {
                    let redis = Arc::clone(&redis);
                    tokio::spawn(
                        async move { redis.primary().run("reserve", pace, 0, 0, None).await },
                    )
                })
                .collect();
            let mut answers = Vec::new();
            for call in calls {
                answers.push(call.await.unwrap());
            }
            (started.elapsed(), redis.is_out(), answers)
        });
        assert!(!warned, "no reservation fell back");
        assert!(generations.iter().all(Result::is_ok), "{generations:?}");
        assert!(elapsed < Duration::from_millis(400), "{elapsed:?}");
    }

    #[test]
    fn keys_expire_and_an_unreachable_redis_falls_back_at_once_and_says_so() {
        let runtime = runtime();
        // One at a time, so that the host store's pace shows in the waits.
        let pace = Pace::new(1, 1_000 * MS);
        // Nothing listens on port 9: the host store paces, without waiting for Redis.
        let told = Arc::new(std::sync::Mutex::new(Vec::<StoreChange>::new()));
        let dir = tempfile::tempdir().unwrap();
        let away = {
            let told = Arc::clone(&told);
            chain(
                "redis://user:pw <secret> '9@127.0.0.1:9",
                "away",
                dir.path(),
                Some(Arc::new(move |change: &StoreChange| {
                    told.lock().unwrap().push(change.clone())
                })),
            )
        };
        let started = Instant::now();
        let waits: Vec<u64> = (0..3)
            .map(|_| runtime.block_on(away.reserve(pace)).ticket.wait)
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
        let told = told.lock().unwrap();
        assert_eq!(told.len(), 1, "said once: {told:?}");
        let StoreChange::FellBack(fallback) = &told[0] else {
            panic!("{told:?}")
        };
        assert_eq!(fallback.instead, FallbackTo::Host);
        let said = told[0].to_string();
        assert!(
            said.contains("redis://[REDACTED]@127.0.0.1:9") && !said.contains("secret"),
            "{said}"
        );

        // A server that takes the connection and never answers: the first call waits the connect
        // budget, the next ones leave Redis alone for a while and pace through the host store at
        // once.
        let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let silent_url = format!("redis://{}", silent.local_addr().unwrap());
        let mute = store(&silent_url, "mute");
        let first = Instant::now();
        runtime.block_on(mute.reserve(pace));
        assert!(first.elapsed() >= CONNECT_TIMEOUT, "{:?}", first.elapsed());
        let rest = Instant::now();
        for _ in 0..3 {
            let booked = runtime.block_on(mute.reserve(pace));
            runtime.block_on(mute.confirm(pace, booked));
            runtime.block_on(mute.throttled(pace, 0));
        }
        assert!(rest.elapsed() < TIMEOUT, "resting: {:?}", rest.elapsed());
        assert!(mute.is_out());
        drop(silent);

        // rediss:// builds its TLS configuration before connecting: with any TLS backend of the
        // SDK, that needs no provider of the caller's and cannot panic.
        let tls = store("rediss://127.0.0.1:9", "tls");
        runtime.block_on(tls.reserve(pace));
        assert!(tls.is_out(), "fell back");
        assert!(rustls::crypto::CryptoProvider::get_default().is_some());

        let Some(server) = redis_server::RedisServer::start("keys_expire") else {
            return;
        };
        let redis = store(&server.url, "expiring");
        runtime.block_on(redis.reserve(pace));
        let recovery_ms = 1_000 * i64::from(RECOVERY_WINDOWS);
        // The climb from the aim (BELOW_THE_TROUBLE) to the configured rate.
        let above_ms =
            (recovery_ms as f64 * f64::from(ABOVE_WINDOWS) * (1.0 / BELOW_THE_TROUBLE).ln()
                / (1.0 / DECREASE).ln()) as i64;
        let ttl = server.pttl("expiring");
        assert!(
            ttl > 0 && ttl <= recovery_ms + 1_000,
            "the key expires on its own: {ttl} ms"
        );
        // After a 429 it lives as long as the learned rate matters (until it is back to the
        // configured one, then the recovery again), and no longer.
        runtime.block_on(redis.throttled(pace, 0));
        let ttl = server.pttl("expiring");
        assert!(
            (recovery_ms + above_ms..=2 * recovery_ms + above_ms + 1_000).contains(&ttl),
            "{ttl} ms"
        );
    }

    #[test]
    fn redis_keys_name_the_url_and_the_key_id() {
        assert_eq!(
            key("https://api.example.com", "key-1"),
            "cloud-sdk:rate-limit:https://api.example.com:key-1"
        );
    }
}
