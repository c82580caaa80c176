//! The fleet benchmark: 1, 8 and 32 processes (this binary, as `fleet-worker`) share one API key
//! against the emulator binary started with a rate limit, with each store of the SDK's limiter
//! (process, host, Redis when a server is installed). It reports the rate the emulator served as a
//! fraction of the limit, the 429s it answered, and, in a second run per store, the longest pause
//! between two served requests after one of four workers is killed with SIGKILL. Then eight
//! processes configured for twice the limit the emulator enforces, for a minute, per shared store:
//! the share of the server's limit served, the 429s, and the 429s per real block (a run of 429s
//! between two served requests: the one that finds the block, and those sent into it).

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use api_emulator::{LogEntry, OperationId, Seed};

use crate::clients::Failure;

pub(crate) use api_test_support::redis_server;
/// The fleet tests of cloudctl read the request log with the same module.
#[path = "../../crates/api-cli/tests/fleet/served.rs"]
mod served_log;

use served_log::{after_first_block, blocks, fraction, longest_pause, served};

/// How big a fleet run is.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Plan {
    /// Requests per second the emulator allows the key (a window of one second).
    pub limit: u32,
    /// How long each run lasts.
    pub seconds: u64,
    /// The process counts.
    pub processes: &'static [usize],
    /// How long the runs against a server at half the clients' limit last.
    pub below_seconds: u64,
    /// How long the runs against a server at a tenth of it last.
    pub tenth_seconds: u64,
}

impl Plan {
    /// The benchmarks' figures.
    pub(crate) const FULL: Plan = Plan {
        limit: 20,
        seconds: 8,
        processes: &[1, 8, 32],
        below_seconds: 60,
        tenth_seconds: 240,
    };
    /// A few seconds, to see that it runs.
    pub(crate) const QUICK: Plan = Plan {
        limit: 20,
        seconds: 2,
        processes: &[1, 4],
        below_seconds: 6,
        tenth_seconds: 6,
    };

    /// The pacing interval of the SDK for this limit (one second over the limit, 2% slower).
    pub(crate) fn interval(&self) -> Duration {
        Duration::from_secs(1) / self.limit * 102 / 100
    }
}

/// One run's figures.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    /// `process`, `host` or `redis`.
    pub store: &'static str,
    /// Processes sharing the key.
    pub processes: usize,
    /// Served requests per second over the limit.
    pub fraction: f64,
    /// 429 answers.
    pub throttled: usize,
}

/// A run of eight processes configured above the server's limit.
#[derive(Debug, Clone)]
pub(crate) struct Below {
    /// The processes' limit, as `CLOUD_RATE_LIMIT`.
    pub configured: String,
    /// The server's limit, requests per second.
    pub server: u32,
    /// `host` or `redis`.
    pub store: &'static str,
    /// Served requests per second over the server's limit.
    pub fraction: f64,
    /// 429 answers.
    pub throttled: usize,
    /// 429 answers after the first block.
    pub after_first: usize,
    /// Real blocks: runs of 429s between two served requests.
    pub blocks: usize,
    /// How long the run lasted.
    pub seconds: u64,
}

/// A SIGKILL run's figure.
#[derive(Debug, Clone)]
pub(crate) struct Stall {
    /// The store.
    pub store: &'static str,
    /// The longest pause between two served requests after the kill.
    pub longest: Duration,
}

/// Runs every store and process count of `plan`.
pub(crate) fn run(plan: Plan) -> Result<(Vec<Row>, Vec<Stall>), Failure> {
    let redis = redis_server::RedisServer::start("the fleet benchmark");
    let stores = stores(&redis);
    let mut rows = Vec::new();
    let mut stalls = Vec::new();
    for (store, value) in &stores {
        for &processes in plan.processes {
            eprintln!("measuring: {processes} process(es), {store} store");
            let emulator = EmulatorProcess::start(plan.limit)?;
            let limit = format!("{}/1s", plan.limit);
            let log = fleet_log(
                &redis,
                &emulator,
                (store, value),
                processes,
                &limit,
                plan.seconds,
            )?;
            let served = served(&log, OperationId::ListReversePrivateEndpoints);
            rows.push(Row {
                store,
                processes,
                fraction: fraction(&served, f64::from(plan.limit)),
                throttled: log.iter().filter(|e| e.status == 429).count(),
            });
        }
        if *store != "process" {
            eprintln!("measuring: a SIGKILL among 4 processes, {store} store");
            stalls.push(Stall {
                store,
                longest: sigkill_run(plan, value)?,
            });
        }
    }
    Ok((rows, stalls))
}

/// The stores measured: process, host, and Redis when a server runs.
fn stores(redis: &Option<redis_server::RedisServer>) -> Vec<(&'static str, String)> {
    let mut stores: Vec<(&'static str, String)> =
        vec![("process", "process".into()), ("host", "host".into())];
    match redis {
        Some(server) => stores.push(("redis", server.url.clone())),
        None => eprintln!("fleet: no redis-server, the Redis store is left out"),
    }
    stores
}

/// Eight processes configured above the limit the emulator enforces, through each shared store:
/// twice it for `plan.below_seconds`, ten times it for `plan.tenth_seconds`.
pub(crate) fn run_below(plan: Plan) -> Result<Vec<Below>, Failure> {
    let redis = redis_server::RedisServer::start("the fleet benchmark");
    let cases = [
        (
            format!("{}/1s", plan.limit),
            plan.limit / 2,
            plan.below_seconds,
        ),
        ("20/2s".to_string(), 1, plan.tenth_seconds),
    ];
    let mut runs = Vec::new();
    for (configured, server, seconds) in cases {
        for (store, value) in stores(&redis) {
            if store == "process" {
                continue;
            }
            eprintln!(
                "measuring: 8 processes at {configured} against a server at {server}/1s for \
                 {seconds} s, {store} store"
            );
            let emulator = EmulatorProcess::start(server)?;
            let log = fleet_log(&redis, &emulator, (store, &value), 8, &configured, seconds)?;
            let served = served(&log, OperationId::ListReversePrivateEndpoints);
            runs.push(Below {
                configured: configured.clone(),
                server,
                store,
                fraction: fraction(&served, f64::from(server)),
                throttled: log.iter().filter(|e| e.status == 429).count(),
                after_first: after_first_block(&log),
                blocks: blocks(&log),
                seconds,
            });
        }
    }
    Ok(runs)
}

/// `processes` workers at `limit` through `store` (its name and value) for `seconds`, each with its
/// home; the emulator's request log once they are done (and, for Redis, checked to be Redis's).
fn fleet_log(
    redis: &Option<redis_server::RedisServer>,
    emulator: &EmulatorProcess,
    (store, value): (&str, &str),
    processes: usize,
    limit: &str,
    seconds: u64,
) -> Result<Vec<LogEntry>, Failure> {
    let homes = Homes::new(store)?;
    let workers: Vec<Child> = (0..processes)
        .map(|i| worker(emulator, value, limit, seconds, homes.get(i)?))
        .collect::<Result<_, _>>()?;
    for mut worker in workers {
        worker.wait()?;
    }
    homes.check_redis(redis, emulator)?;
    emulator.requests()
}

/// The home directories of a run's processes: one shared by all for the host store, one each for
/// Redis (so that a fallback to the host file would pace each process alone, and draw 429s).
struct Homes {
    dirs: Vec<tempfile::TempDir>,
    each: bool,
}

impl Homes {
    fn new(store: &str) -> Result<Self, Failure> {
        let each = store == "redis";
        let count = if each { 32 } else { 1 };
        Ok(Self {
            dirs: (0..count)
                .map(|_| tempfile::tempdir())
                .collect::<Result<_, _>>()?,
            each,
        })
    }

    fn get(&self, process: usize) -> Result<&std::path::Path, Failure> {
        let index = if self.each { process } else { 0 };
        self.dirs
            .get(index)
            .map(tempfile::TempDir::path)
            .ok_or_else(|| Failure::from("more processes than home directories"))
    }

    /// With Redis, that the limit's key is there with a time to live (the store was in use), and
    /// that no process wrote a host state file (none fell back).
    fn check_redis(
        &self,
        redis: &Option<redis_server::RedisServer>,
        emulator: &EmulatorProcess,
    ) -> Result<(), Failure> {
        let (true, Some(server)) = (self.each, redis) else {
            return Ok(());
        };
        let key = Seed::builtin()
            .api_keys
            .first()
            .map(|key| format!("cloud-sdk:rate-limit:{}:{}", emulator.url, key.id))
            .ok_or_else(|| Failure::from("the built-in seed has no API key"))?;
        let ttl = server.pttl(&key);
        if ttl <= 0 {
            return Err(Failure::from(format!(
                "the Redis key {key} has no time to live ({ttl}): Redis was not in use"
            )));
        }
        for dir in &self.dirs {
            if dir.path().join("cloud-sdk").exists() {
                return Err(Failure::from(format!(
                    "a process fell back to the host file in {}",
                    dir.path().display()
                )));
            }
        }
        Ok(())
    }
}

/// Four workers; one is killed with SIGKILL halfway: the longest pause between served requests
/// after that.
fn sigkill_run(plan: Plan, store: &str) -> Result<Duration, Failure> {
    let emulator = EmulatorProcess::start(plan.limit)?;
    let homes = Homes::new(if store.starts_with("redis") {
        "redis"
    } else {
        "host"
    })?;
    let mut workers: Vec<Child> = (0..4)
        .map(|i| {
            // One at a time at the limit's interval: a pause longer than it is the kill's, not the
            // end of a burst.
            let one_at_a_time = format!("1/{}ms", 1000 / plan.limit);
            worker(
                &emulator,
                store,
                &one_at_a_time,
                plan.seconds,
                homes.get(i)?,
            )
        })
        .collect::<Result<_, _>>()?;
    std::thread::sleep(Duration::from_secs(plan.seconds) / 2);
    let killed_at = chrono::Utc::now();
    workers[0].kill()?;
    for mut worker in workers {
        worker.wait()?;
    }
    let log = emulator.requests()?;
    let after: Vec<&LogEntry> = served(&log, OperationId::ListReversePrivateEndpoints)
        .into_iter()
        .filter(|e| e.at >= killed_at)
        .collect();
    Ok(longest_pause(&after))
}

/// The `fleet-worker` process: the settings in its environment (the limit `limit`, `MAX/WINDOW`),
/// calls for `seconds`, with `home` as its home and runtime directory.
fn worker(
    emulator: &EmulatorProcess,
    store: &str,
    limit: &str,
    seconds: u64,
    home: &std::path::Path,
) -> Result<Child, Failure> {
    let seed = Seed::builtin();
    let key = seed
        .api_keys
        .first()
        .ok_or_else(|| Failure::from("the built-in seed has no API key"))?;
    let service = seed
        .services
        .iter()
        .find(|s| {
            s.service
                .state
                .as_ref()
                .is_some_and(api_mgmt::services::ServiceState::is_running)
        })
        .and_then(|s| s.service.id.map(|id| (s.organization, id)))
        .ok_or_else(|| Failure::from("the built-in seed has no running service"))?;
    Ok(Command::new(std::env::current_exe()?)
        .arg("fleet-worker")
        .arg(seconds.to_string())
        .env("CLOUD_API_URL", &emulator.url)
        .env("CLOUD_API_KEY_ID", &key.id)
        .env("CLOUD_API_KEY_SECRET", &key.secret)
        .env("FLEET_ORGANIZATION", service.0.to_string())
        .env("FLEET_SERVICE", service.1.to_string())
        .env("CLOUD_RATE_LIMIT", limit)
        .env("CLOUD_RATE_LIMIT_STORE", store)
        .env("HOME", home)
        .env("XDG_RUNTIME_DIR", home)
        .env("XDG_CACHE_HOME", home)
        .stdout(Stdio::null())
        .spawn()?)
}

/// The worker's body: lists the reverse private endpoints until `seconds` have passed.
pub(crate) async fn work(seconds: u64) -> Result<(), Failure> {
    let client = api_mgmt::Client::from_env()?;
    let organization = std::env::var("FLEET_ORGANIZATION")?.parse()?;
    let service = std::env::var("FLEET_SERVICE")?.parse()?;
    let service = client.service(organization, service);
    let started = Instant::now();
    let length = Duration::from_secs(seconds);
    while started.elapsed() < length {
        // An error (a 429 the retries did not absorb) is part of what is measured, not a failure.
        let _ = service.reverse_private_endpoints().await;
    }
    Ok(())
}

/// The emulator binary, beside this one (`cargo build --release -p api-emulator`), on a free port.
struct EmulatorProcess {
    child: Child,
    url: String,
}

impl EmulatorProcess {
    fn start(limit: u32) -> Result<Self, Failure> {
        let binary = std::env::current_exe()?.with_file_name("api-emulator");
        if !binary.exists() {
            return Err(Failure::from(format!(
                "{} is missing: build it with `cargo build --release -p api-emulator` first",
                binary.display()
            )));
        }
        let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let child = Command::new(binary)
            .args(["--listen", &format!("127.0.0.1:{port}"), "--instant"])
            .args(["--management-rate-limit", &format!("{limit}/1s")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        let emulator = Self {
            child,
            url: format!("http://127.0.0.1:{port}"),
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if Instant::now() > deadline {
                return Err(Failure::from("the emulator binary did not start"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(emulator)
    }

    /// Its request log.
    fn requests(&self) -> Result<Vec<LogEntry>, Failure> {
        let seed = Seed::builtin();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        runtime.block_on(async {
            let response = api_mgmt::client::http_client_builder()
                .build()?
                .get(format!("{}/_emulator/requests", self.url))
                .bearer_auth(&seed.control.token)
                .send()
                .await?;
            Ok(response.json::<Vec<LogEntry>>().await?)
        })
    }
}

impl Drop for EmulatorProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interval_is_the_sdks() {
        assert_eq!(Plan::FULL.interval(), Duration::from_millis(51));
        let limit: api_mgmt::rate_limit::RateLimit = "20/1s".parse().unwrap();
        assert_eq!(limit.interval(), Plan::FULL.interval());
    }
}
