//! Declared pipes applied from many hosts through one shared state, in Redis and in PostgreSQL
//! (each test runs on both): each `cloudctl`
//! process has a home, XDG directories and a working directory of its own (as a CI runner with a
//! fresh disk would), against an emulator that creates a second pipe with a live pipe's name
//! rather than refuse it (as a production server may).
//!
//! - A holder stopped (SIGSTOP) past its lease, continued after another took the service over,
//!   writes nothing: the fencing test.
//! - The fleet: 8 processes, 14 rounds of a changing directory (6 through PgBouncer), holders
//!   killed and others stopped past their lease; no name ever has two pipes, no pipe is left that the state does not record,
//!   one more apply converges and the next plan is no change, and a killed holder's lease is taken
//!   over within its TTL and 5 s.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use api_emulator::{EmulatorOptions, Fault, FaultRule, OperationId};
use serde_json::Value;

use super::postgres_server::PostgresServer;
use super::redis_server::RedisServer;
use super::support::Cloud;
use super::tcp_proxy::TcpProxy;

/// A real server of one engine, and what the tests read or do behind the store's back.
trait Server {
    /// The store's URL.
    fn url(&self) -> String;
    /// The recorded state's JSON as the server keeps it (empty when none).
    fn raw_state(&self) -> String;
    /// Who holds the lease now, as the server keeps it.
    fn holder(&self) -> Option<String>;
    /// Loses every service's state, as production stores do: `FLUSHDB` (a restart without
    /// persistence) in Redis, the rows deleted in PostgreSQL (a restore from before the first
    /// apply).
    fn lose_everything(&self);
    /// Loses the one service's state alone: its keys deleted (an eviction) in Redis, its row's
    /// state emptied in PostgreSQL.
    fn lose_the_state(&self);
    /// The store's URL naming another database than the one applied to, where there is one to
    /// name (Redis's database 5).
    fn other_database(&self) -> Option<String>;
}

impl Server for RedisServer {
    fn url(&self) -> String {
        self.url.clone()
    }

    fn raw_state(&self) -> String {
        let keys = self.command(&["KEYS", "{cloud-sdk:state:*}:state"]);
        keys.lines()
            .find(|k| !k.is_empty())
            .map(|key| self.command(&["GET", key]))
            .unwrap_or_default()
    }

    fn holder(&self) -> Option<String> {
        let keys = self.command(&["KEYS", "{cloud-sdk:state:*}:lease"]);
        let key = keys.lines().find(|k| !k.is_empty())?;
        Some(self.command(&["HGET", key, "holder"])).filter(|h| !h.is_empty())
    }

    fn lose_everything(&self) {
        self.command(&["FLUSHDB"]);
    }

    fn lose_the_state(&self) {
        let keys = self.command(&["KEYS", "{cloud-sdk:state:*}:*"]);
        for key in keys.lines().filter(|k| !k.is_empty()) {
            self.command(&["DEL", key]);
        }
    }

    fn other_database(&self) -> Option<String> {
        Some(format!("{}/5", self.url.trim_end_matches('/')))
    }
}

impl Server for PostgresServer {
    fn url(&self) -> String {
        self.url.clone()
    }

    fn raw_state(&self) -> String {
        if !has_table(self) {
            return String::new();
        }
        self.sql("SELECT coalesce(state, '') FROM cloud_sdk_state")
    }

    fn holder(&self) -> Option<String> {
        if !has_table(self) {
            return None;
        }
        let holder =
            self.sql("SELECT coalesce(holder, '') FROM cloud_sdk_state WHERE expires_at > now()");
        Some(holder).filter(|h| !h.is_empty())
    }

    fn lose_everything(&self) {
        self.sql("DELETE FROM cloud_sdk_state");
    }

    fn lose_the_state(&self) {
        self.sql("UPDATE cloud_sdk_state SET state = NULL");
    }

    fn other_database(&self) -> Option<String> {
        None
    }
}

/// Whether the store's table exists yet (the first lease makes it).
fn has_table(server: &PostgresServer) -> bool {
    server.sql("SELECT to_regclass('cloud_sdk_state') IS NOT NULL") == "t"
}

/// A PostgreSQL reached through PgBouncer in transaction mode: what the tests read or do behind the
/// store's back goes to the server itself.
struct Pooled {
    server: PostgresServer,
    bouncer: super::pgbouncer::PgBouncer,
}

impl Server for Pooled {
    fn url(&self) -> String {
        self.bouncer.url.clone()
    }

    fn raw_state(&self) -> String {
        self.server.raw_state()
    }

    fn holder(&self) -> Option<String> {
        self.server.holder()
    }

    fn lose_everything(&self) {
        self.server.lose_everything();
    }

    fn lose_the_state(&self) {
        self.server.lose_the_state();
    }

    fn other_database(&self) -> Option<String> {
        None
    }
}

/// Eight runners apply one directory round after round while the lease's holder is killed or stopped
/// past its lease: with the state in Redis, in PostgreSQL, and in PostgreSQL through PgBouncer in
/// transaction mode (where any session state, an advisory lock, a named prepared statement or a
/// `SET`, would break: each step is one statement of its own). The three fleets run at once, each
/// in a thread named for its store: most of each is waiting for leases to lapse, and their claims
/// are about what is written, never about how fast.
#[test]
fn eight_runners_apply_one_directory_with_kills_and_pauses() {
    let _busy = super::busy();
    let test = "eight_runners_apply_one_directory_with_kills_and_pauses";
    std::thread::scope(|scope| {
        let fleets = [
            std::thread::Builder::new()
                .name("redis".into())
                .spawn_scoped(scope, || {
                    if let Some(server) = RedisServer::start(test) {
                        eight_runners(&server, ROUNDS);
                    }
                }),
            std::thread::Builder::new()
                .name("postgres".into())
                .spawn_scoped(scope, || {
                    if let Some(server) = PostgresServer::start(test) {
                        eight_runners(&server, ROUNDS);
                    }
                }),
            std::thread::Builder::new()
                .name("pgbouncer".into())
                .spawn_scoped(scope, || {
                    let pooled = format!("{test}_through_pgbouncer");
                    let Some(server) = PostgresServer::start(&pooled) else {
                        return;
                    };
                    let Some(bouncer) = super::pgbouncer::PgBouncer::start(&pooled, &server) else {
                        return;
                    };
                    eight_runners(&Pooled { server, bouncer }, POOLED_ROUNDS);
                }),
        ];
        // Each fleet to its end, then the names of those that failed (each printed its panic,
        // named by its thread).
        let failed: Vec<String> = fleets
            .into_iter()
            .map(|fleet| fleet.expect("a thread starts"))
            .filter_map(|fleet| {
                let name = fleet.thread().name().unwrap_or_default().to_string();
                fleet.join().is_err().then_some(name)
            })
            .collect();
        assert!(
            failed.is_empty(),
            "the fleets that failed: {failed:?} (their panics above)"
        );
    });
}

/// Runs each check against a Redis and against a PostgreSQL, as two tests.
macro_rules! on_both {
    ($($name:ident),* $(,)?) => {
        mod redis {
            $(
                #[test]
                fn $name() {
                    let _busy = super::super::busy();
                    if let Some(server) = super::RedisServer::start(stringify!($name)) {
                        super::$name(&server);
                    }
                }
            )*
        }
        mod postgres {
            $(
                #[test]
                fn $name() {
                    let _busy = super::super::busy();
                    if let Some(server) = super::PostgresServer::start(stringify!($name)) {
                        super::$name(&server);
                    }
                }
            )*
        }
    };
}

on_both!(
    a_holder_stopped_past_its_lease_writes_nothing_once_another_took_over,
    a_state_pushed_to_the_store_and_back_and_a_lease_ended_by_hand,
    a_store_without_the_state_is_refused_before_any_call,
    a_runner_cut_off_from_its_store_sends_nothing_past_its_lease,
    a_call_whose_turn_comes_past_the_lease_is_not_sent,
    a_store_cut_for_a_moment_loses_no_create_in_flight,
);

/// The lease's TTL the processes are given.
const TTL: Duration = Duration::from_secs(1);

/// A pipe file of `name` with `replicas` replicas (its password from the environment).
fn pipe_file(name: &str, replicas: u32) -> String {
    format!(
        "name: {name}
source:
  kafka:
    brokers: b-1.kafka.emulator.local:9098
    topics: {name}
    credentials: {{username: reader, password: {{env: KAFKA_PASSWORD}}}}
destination:
  database: default
  table: {name}
  managedTable: true
  columns:
    - {{name: id, type: UInt64}}
fieldMappings:
  - {{sourceField: id, destinationField: id}}
scaling: {{replicas: {replicas}}}
"
    )
}

/// One runner: a home of its own and its copy of the directory.
struct Runner {
    home: tempfile::TempDir,
}

impl Runner {
    fn new() -> Self {
        Self {
            home: tempfile::tempdir().unwrap(),
        }
    }

    fn dir(&self) -> PathBuf {
        self.home.path().join("pipes")
    }

    /// Replaces its directory with `files` (name, replicas).
    fn checkout(&self, files: &[(String, u32)]) {
        let dir = self.dir();
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for (name, replicas) in files {
            std::fs::write(dir.join(format!("{name}.yaml")), pipe_file(name, *replicas)).unwrap();
        }
    }

    /// `cloudctl args` as this runner, with the state in `server`.
    fn command(&self, cloud: &Cloud, server: &impl Server, args: &[&str]) -> Command {
        let mut command = cloud.process();
        let home = self.home.path();
        command
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("XDG_STATE_HOME", home.join(".state"))
            .env("XDG_CACHE_HOME", home.join(".cache"))
            .env("XDG_RUNTIME_DIR", home)
            .env("CLOUD_STATE", server.url())
            .current_dir(home)
            .args(args);
        command
    }

    fn spawn_apply(&self, cloud: &Cloud, server: &impl Server) -> Child {
        start(self.apply_through(cloud, server, &server.url(), "2", "1s"))
    }

    /// `cloudctl apply` of its directory with its state at `store` (a proxy's URL), `parallelism`
    /// calls at a time and a lease of `ttl`; its standard error kept.
    fn apply_through(
        &self,
        cloud: &Cloud,
        server: &impl Server,
        store: &str,
        parallelism: &str,
        ttl: &str,
    ) -> Command {
        let dir = self.dir();
        let mut command = self.command(
            cloud,
            server,
            &[
                "apply",
                "-f",
                dir.to_str().unwrap(),
                "--yes",
                "-o",
                "json",
                "--parallelism",
                parallelism,
                "--lease-ttl",
                ttl,
            ],
        );
        command
            .env("CLOUD_STATE", store)
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        command
    }

    /// Sets the service's state up in the store (`cloudctl state init`).
    fn init(&self, cloud: &Cloud, server: &impl Server) {
        let (code, made, stderr) = self.run(cloud, server, &["state", "init"]);
        assert_eq!(code, 0, "state init: {stderr}");
        assert_eq!(made["serial"], 1, "{made}");
    }

    /// Runs `cloudctl args` (with `-f DIR`, the lease's TTL and JSON output) to its end.
    fn run(&self, cloud: &Cloud, server: &impl Server, args: &[&str]) -> (i32, Value, String) {
        let dir = self.dir();
        let mut all: Vec<&str> = args.to_vec();
        all.extend([
            "-f",
            dir.to_str().unwrap(),
            "-o",
            "json",
            "--lease-ttl",
            "1s",
        ]);
        let output = self
            .command(cloud, server, &all)
            .output()
            .expect("cloudctl runs");
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(
            !stdout.contains(super::support::KAFKA_PASSWORD)
                && !stderr.contains(super::support::KAFKA_PASSWORD),
            "a secret was printed"
        );
        (
            output.status.code().unwrap_or(-1),
            serde_json::from_str(&stdout).unwrap_or(Value::Null),
            stderr,
        )
    }
}

fn signal(child: &Child, signal: &str) {
    let status = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill {signal} {}", child.id());
}

/// Waits for `child` (at most `within`), killing it if it does not end; its exit code and
/// standard error.
fn finish(mut child: Child, within: Duration) -> (i32, String) {
    let deadline = Instant::now() + within;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut stderr = String::new();
            if let Some(mut pipe) = child.stderr.take() {
                use std::io::Read as _;
                let _ = pipe.read_to_string(&mut stderr);
            }
            return (status.code().unwrap_or(-1), stderr);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("cloudctl {} did not end within {within:?}", child.id());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The process id in the lease's holder ("process N on HOST"), when a lease is held.
fn lease_holder(server: &impl Server) -> Option<u32> {
    server
        .holder()?
        .strip_prefix("process ")?
        .split(' ')
        .next()?
        .parse()
        .ok()
}

/// Whether a create is waiting for its answer: the state in `server` has its intent (`pending`),
/// and the pipe is on the server already.
fn create_answer_awaited(cloud: &Cloud, server: &impl Server) -> bool {
    let Ok(state) = serde_json::from_str::<Value>(&server.raw_state()) else {
        return false;
    };
    let Some(pending) = state["pending"].as_object().filter(|p| !p.is_empty()) else {
        return false;
    };
    cloud
        .pipes()
        .iter()
        .any(|pipe| !pipe.deleted && pending.contains_key(&pipe.name))
}

/// Fails when two live pipes on the server share a name.
#[track_caller]
fn assert_no_duplicate(cloud: &Cloud, when: &str) {
    let mut names: Vec<String> = cloud
        .pipes()
        .into_iter()
        .filter(|p| !p.deleted)
        .map(|p| p.name)
        .collect();
    names.sort();
    let before = names.len();
    names.dedup();
    assert_eq!(
        before,
        names.len(),
        "{when}: a name has two pipes: {names:?}"
    );
}

/// Brings the service to the directory with one runner: takes the lease as soon as it is free,
/// resolves each pending create from what the server has; then the plan is no change, and every
/// live pipe is one the state records.
fn converge(cloud: &Cloud, server: &impl Server, runner: &Runner, round: usize) {
    let started = Instant::now();
    loop {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "round {round}: no convergence in 30 s"
        );
        let (code, _, stderr) = runner.run(cloud, server, &["apply", "--yes"]);
        match code {
            0 => break,
            1 if stderr.contains("STATE_LOCKED") => std::thread::sleep(Duration::from_millis(100)),
            7 => {
                let (code, state, stderr) = runner.run(cloud, server, &["state", "list"]);
                assert_eq!(code, 0, "{stderr}");
                for pending in state["pending"].as_array().unwrap() {
                    let name = pending["name"].as_str().unwrap();
                    let made: Vec<String> = cloud
                        .pipes()
                        .into_iter()
                        .filter(|p| p.name == name && !p.deleted)
                        .map(|p| p.id.to_string())
                        .collect();
                    assert!(made.len() <= 1, "round {round}: {name} twice: {made:?}");
                    let mut args = vec!["state", "resolve", name];
                    match made.first() {
                        Some(id) => args.extend(["--id", id.as_str()]),
                        None => args.push("--absent"),
                    }
                    let (code, _, stderr) = runner.run(cloud, server, &args);
                    assert_eq!(code, 0, "round {round}: resolve {name}: {stderr}");
                }
            }
            _ => panic!("round {round}: the converging apply exited {code}: {stderr}"),
        }
    }
    let (code, _, stderr) = runner.run(cloud, server, &["plan"]);
    assert_eq!(
        code, 0,
        "round {round}: the plan after convergence: {stderr}"
    );
    let (_, state, _) = runner.run(cloud, server, &["state", "list"]);
    let mut recorded: Vec<String> = state["pipes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap().to_string())
        .collect();
    recorded.sort();
    let mut live: Vec<String> = cloud
        .pipes()
        .into_iter()
        .filter(|p| !p.deleted)
        .map(|p| p.id.to_string())
        .collect();
    live.sort();
    assert_eq!(live, recorded, "round {round}: every live pipe is recorded");
}

fn production_cloud(provisioning: Duration) -> Cloud {
    let mut timing = api_emulator::Timing::INSTANT;
    timing.pipe_provisioning_ms = u64::try_from(provisioning.as_millis()).unwrap();
    Cloud::with(
        EmulatorOptions::for_tests()
            .duplicate_names(true)
            .timing(timing),
    )
}

fn a_holder_stopped_past_its_lease_writes_nothing_once_another_took_over(server: &impl Server) {
    let cloud = production_cloud(Duration::ZERO);
    // Every create takes effect at once and is answered 1.5 s later: the first runner is stopped
    // while it waits for an answer.
    cloud.inject(
        FaultRule::operation(OperationId::CreatePipe)
            .then(Fault::delay(Duration::from_millis(1500)).applied().always()),
    );
    let files: Vec<(String, u32)> = ["orders", "events", "clicks"]
        .iter()
        .map(|n| ((*n).to_string(), 1))
        .collect();
    let (first, second) = (Runner::new(), Runner::new());
    first.checkout(&files);
    second.checkout(&files);
    first.init(&cloud, server);
    let stopped = first.spawn_apply(&cloud, server);
    // Caught waiting for a create's answer (its intent in the state, the pipe on the server), not
    // once a create is answered: the emulator logs a request when it answers it, and a runner
    // stopped between two creates' answers and its next intent had nothing pending, so the second
    // runner rightly created the rest (CI saw it once, under the load of the other fleets).
    let deadline = Instant::now() + Duration::from_secs(20);
    while !create_answer_awaited(&cloud, server) {
        assert!(Instant::now() < deadline, "the first runner never created");
        std::thread::sleep(Duration::from_millis(5));
    }
    signal(&stopped, "-STOP");
    // Past its lease, the second runner takes the service over, and its plan finds the creates the
    // first one had under way pending: it does not create those names again.
    std::thread::sleep(TTL + Duration::from_millis(500));
    cloud.clear_faults();
    let (code, _, stderr) = second.run(&cloud, server, &["apply", "--yes"]);
    assert_eq!(code, 7, "the pending creates block their names: {stderr}");
    let taken_over = server.raw_state();
    assert!(!taken_over.is_empty());
    signal(&stopped, "-CONT");
    let (code, stderr) = finish(stopped, Duration::from_secs(20));
    assert_eq!(
        code, 1,
        "the stopped runner fails at its next write (its creates in flight answer): {stderr}"
    );
    assert!(
        stderr.contains("lease of the service lapsed and another apply took it"),
        "{stderr}"
    );
    assert_eq!(
        server.raw_state(),
        taken_over,
        "the stopped runner wrote nothing"
    );
    assert_no_duplicate(&cloud, "after the stopped runner went on");
    converge(&cloud, server, &second, 0);
    assert_no_duplicate(&cloud, "after convergence");
}

/// The fleet's rounds: 7 kill the lease's holder at work, 7 stop it past its lease.
const ROUNDS: usize = 14;

/// The rounds through PgBouncer: every step of the store (take, renew, write, end, take over a
/// lapsed lease) runs in each, so a few rounds show that none needs a session.
const POOLED_ROUNDS: usize = 6;

/// How long a runner is kept stopped: past its lease.
const STOPPED_FOR: Duration = TTL.saturating_add(Duration::from_millis(300));

/// Sleeps until `since` is [`STOPPED_FOR`] ago.
fn keep_stopped(since: Instant) {
    std::thread::sleep(STOPPED_FOR.saturating_sub(since.elapsed()));
}

fn eight_runners(server: &impl Server, rounds: usize) {
    let cloud = production_cloud(Duration::from_millis(150));
    // Each write takes effect at once and is answered 300 ms later, so that the lease's holder is
    // still at work when it is killed or stopped, whichever store answers faster.
    for operation in [OperationId::CreatePipe, OperationId::DeletePipe] {
        cloud.inject(
            FaultRule::operation(operation)
                .then(Fault::delay(Duration::from_millis(300)).applied().always()),
        );
    }
    let runners: Vec<Runner> = (0..8).map(|_| Runner::new()).collect();
    runners[0].checkout(&[]);
    runners[0].init(&cloud, server);
    let mut rng = fastrand::Rng::with_seed(34);
    let mut files: Vec<(String, u32)> = (0..10).map(|i| (format!("p{i:02}"), 1)).collect();
    let mut next_name = 10;
    let mut takeovers = Vec::new();
    let (mut applied, mut refused, mut fenced, mut blocked) = (0, 0, 0, 0);
    let mut paused_out = 0;
    let mut caught_at_work = 0;
    let mut stopped_holders = Vec::new();
    let mut count = |code: i32, stderr: &str| match code {
        0 => applied += 1,
        7 => blocked += 1,
        1 if stderr.contains("STATE_LOCKED") => refused += 1,
        1 if stderr.contains("STATE_FENCED") || stderr.contains("lease of the service lapsed") => {
            fenced += 1;
        }
        // Continued past its lease between two calls: it sent nothing more.
        11 if stderr.contains("LEASE_LOST") => fenced += 1,
        _ => panic!("an apply exited {code}: {stderr}"),
    };
    for round in 0..rounds {
        // The directory changes: a file added, one removed, or a pipe's replicas changed; in a
        // round that stops the holder, a file added, so that it has a create to be caught in.
        let change = if round % 2 == 1 { 0 } else { rng.usize(0..3) };
        match change {
            0 => {
                files.push((format!("p{next_name:02}"), 1));
                next_name += 1;
            }
            1 if files.len() > 5 => {
                files.remove(rng.usize(0..files.len()));
            }
            _ => {
                let i = rng.usize(0..files.len());
                files[i].1 = files[i].1 % 3 + 1;
            }
        }
        for runner in &runners {
            runner.checkout(&files);
        }
        let mut running: Vec<Option<Child>> = runners
            .iter()
            .map(|r| Some(r.spawn_apply(&cloud, server)))
            .collect();
        std::thread::sleep(Duration::from_millis(rng.u64(50..300)));
        // The lease's holder, still at work, is killed (even rounds) or stopped past its lease
        // (odd rounds); and another runner is stopped.
        let mut stopped_holder = None;
        let looking = Instant::now();
        // A holder to stop is caught waiting for the answer to a create it sent (its intent in the
        // state, the pipe on the server): stopped in its wait for the pipes to run, after its last
        // write, it would have nothing left to send, and its resuming would prove nothing of the
        // fencing. (Stopped between its last look at its lease and the send, a holder would send
        // its create once it goes on: no lease can fence a request the API does not check; the
        // guide's declared-pipes chapter says so.)
        let holder = loop {
            let holder = lease_holder(server).filter(|holder| {
                running
                    .iter_mut()
                    .flatten()
                    .any(|c| c.id() == *holder && matches!(c.try_wait(), Ok(None)))
            });
            let ready =
                holder.is_some() && (round % 2 == 0 || create_answer_awaited(&cloud, server));
            if ready {
                break holder;
            }
            // Up to 10 s: on a loaded machine the holder may take seconds to reach its create.
            if looking.elapsed() > Duration::from_secs(10) {
                break None;
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        if let Some(holder) = holder
            && let Some(slot) = running
                .iter_mut()
                .find(|c| c.as_ref().is_some_and(|c| c.id() == holder))
        {
            let mut child = slot.take().unwrap();
            if round % 2 == 0 {
                let _ = child.kill();
                let _ = child.wait();
                // No one renews its lease now: it lapses after its TTL, and the store is free.
                let killed_at = Instant::now();
                while lease_holder(server) == Some(holder) {
                    assert!(
                        killed_at.elapsed() < TTL + Duration::from_secs(5),
                        "round {round}: the killed holder's lease is still held"
                    );
                    std::thread::sleep(Duration::from_millis(10));
                }
                takeovers.push(killed_at.elapsed());
            } else {
                signal(&child, "-STOP");
                stopped_holder = Some((child, Instant::now()));
            }
        }
        let stop = rng.usize(0..running.len());
        let stopped = running[stop]
            .take()
            .filter(|child| {
                // A runner that has ended already is not stopped.
                Command::new("kill")
                    .args(["-STOP", &child.id().to_string()])
                    .stderr(Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success())
            })
            .map(|child| (child, Instant::now()));
        for child in running.iter_mut().filter_map(Option::take) {
            let (code, stderr) = finish(child, Duration::from_secs(30));
            assert!(
                [0, 1, 7, 11].contains(&code),
                "round {round}: an apply exited {code}: {stderr}"
            );
            if code == 1 {
                assert!(
                    stderr.contains("STATE_LOCKED")
                        || stderr.contains("STATE_FENCED")
                        || stderr.contains("lease of the service lapsed"),
                    "round {round}: {stderr}"
                );
            }
            count(code, &stderr);
        }
        assert_no_duplicate(
            &cloud,
            &format!("round {round}, before the stopped went on"),
        );
        // The stopped holder's lease lapses, and another runner takes the service over while it is
        // stopped; continued, it writes nothing.
        if let Some((child, since)) = stopped_holder {
            keep_stopped(since);
            converge(&cloud, server, &runners[(round + 1) % 8], round);
            let taken_over = server.raw_state();
            signal(&child, "-CONT");
            let (code, stderr) = finish(child, Duration::from_secs(30));
            assert!(
                [1, 11].contains(&code),
                "round {round}: a holder stopped with a create in flight is fenced: {code}: {stderr}"
            );
            count(code, &stderr);
            caught_at_work += 1;
            stopped_holders.push(format!(
                "round {round}: exit {code}, {}",
                stderr.lines().last().unwrap_or_default()
            ));
            assert_eq!(
                server.raw_state(),
                taken_over,
                "round {round}: the stopped holder wrote after another took over"
            );
        }
        if let Some((child, since)) = stopped {
            keep_stopped(since);
            signal(&child, "-CONT");
            let (code, stderr) = finish(child, Duration::from_secs(30));
            assert!(
                [0, 1, 7, 11].contains(&code),
                "round {round}: {code}: {stderr}"
            );
            // Stopped while the others finished (seconds), a runner caught in the middle of
            // connecting to the store finds its connect budget (5 s) spent when it goes on: the
            // store could not be reached in time, it says so, and it wrote nothing.
            if code == 1 && stderr.contains("STATE_STORE_ERROR") && stderr.contains("timed out") {
                paused_out += 1;
            } else {
                count(code, &stderr);
            }
        }
        assert_no_duplicate(&cloud, &format!("round {round}, after the stopped went on"));
        converge(&cloud, server, &runners[round % 8], round);
        assert_no_duplicate(&cloud, &format!("round {round}, converged"));
    }
    // Half the rounds kill the holder, half stop it past its lease (each caught waiting for a
    // create's answer was fenced, above).
    let half = rounds / 2;
    assert!(
        takeovers.len() >= half.div_ceil(2) && caught_at_work >= half.div_ceil(2),
        "at least half the rounds killed a lease holder at work ({} of {half}), and as many \
         stopped one waiting for a create's answer ({caught_at_work} of {half}); the stopped \
         holders: \
         {stopped_holders:#?}",
        takeovers.len()
    );
    eprintln!(
        "fleet: {} holders killed, their leases free after at most {:?}; applies: {applied} \
         done, {refused} refused (lease held), {fenced} stopped by fencing, {blocked} blocked by \
         a pending create, {paused_out} stopped through their connect budget",
        takeovers.len(),
        takeovers.iter().max()
    );
}

fn a_state_pushed_to_the_store_and_back_and_a_lease_ended_by_hand(server: &impl Server) {
    let cloud = production_cloud(Duration::ZERO);
    let runner = Runner::new();
    runner.checkout(&[("orders".into(), 1), ("events".into(), 1)]);
    let dir = runner.dir();
    let file = dir.join(".cloudctl-state.json");
    let file = file.to_str().unwrap();
    // Applied with a state file, then pushed to the store: a runner with nothing on disk sees no change.
    let (code, _, stderr) = runner.run(&cloud, server, &["apply", "--yes", "--state", file]);
    assert_eq!(code, 0, "{stderr}");
    let (code, pushed, stderr) = runner.run(
        &cloud,
        server,
        &["state", "push", "--state", file, "--to", &server.url()],
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(pushed["pipes"], 2);
    let elsewhere = Runner::new();
    elsewhere.checkout(&[("orders".into(), 1), ("events".into(), 1)]);
    let (code, _, stderr) = elsewhere.run(&cloud, server, &["plan"]);
    assert_eq!(code, 0, "no change from the state in the store: {stderr}");
    // A second push would overwrite it: refused.
    let (code, _, stderr) = runner.run(
        &cloud,
        server,
        &["state", "push", "--state", file, "--to", &server.url()],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("already holds a state"), "{stderr}");
    // And back to a file, which must not exist yet.
    let back = elsewhere.home.path().join("state.json");
    let (code, _, stderr) = elsewhere.run(
        &cloud,
        server,
        &["state", "push", "--to", back.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) =
        elsewhere.run(&cloud, server, &["plan", "--state", back.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");

    // A lease held by a process that is stopped: shown, then ended by hand, and its holder fenced.
    cloud.inject(
        FaultRule::operation(OperationId::DeletePipe)
            .then(Fault::delay(Duration::from_secs(2)).always()),
    );
    elsewhere.checkout(&[("orders".into(), 1)]);
    // A lease of a minute: it stays held while the holder is stopped, however slowly the
    // commands below start (a loaded machine once took longer than a 1 s lease to read it).
    let holder = start(elsewhere.apply_through(&cloud, server, &server.url(), "2", "60s"));
    let deadline = Instant::now() + Duration::from_secs(20);
    while lease_holder(server) != Some(holder.id()) {
        assert!(Instant::now() < deadline, "the apply never took the lease");
        std::thread::sleep(Duration::from_millis(10));
    }
    signal(&holder, "-STOP");
    let (code, shown, stderr) = runner.run(&cloud, server, &["state", "unlock"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(shown["held"], true);
    let named = format!("process {} on ", holder.id());
    assert!(
        shown["holder"].as_str().unwrap().starts_with(&named),
        "{shown}"
    );
    assert!(shown["since"].is_string(), "{shown}");
    let (code, ended, stderr) = runner.run(&cloud, server, &["state", "unlock", "--force"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(ended["ended"], true, "{ended}");
    assert_eq!(lease_holder(server), None);
    cloud.clear_faults();
    signal(&holder, "-CONT");
    let (code, stderr) = finish(holder, Duration::from_secs(20));
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("lease of the service lapsed"), "{stderr}");
    // A file's locks cannot be ended by hand: said, not pretended.
    let (code, _, stderr) = runner.run(&cloud, server, &["state", "unlock", "--state", file]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("there is no lease to end"), "{stderr}");
}

fn a_store_without_the_state_is_refused_before_any_call(server: &impl Server) {
    let cloud = production_cloud(Duration::ZERO);
    let runner = Runner::new();
    let files: Vec<(String, u32)> = ["orders", "events", "clicks"]
        .iter()
        .map(|n| ((*n).to_string(), 1))
        .collect();
    runner.checkout(&files);
    // Refused, naming the store, the service and the ways out, before any call to the API.
    let refused = |runner: &Runner, extra: &[&str], when: &str| {
        cloud.clear_requests();
        for command in ["plan", "apply"] {
            let mut args = vec![command];
            if command == "apply" {
                args.push("--yes");
            }
            args.extend(extra);
            let (code, _, stderr) = runner.run(&cloud, server, &args);
            assert_eq!(code, 10, "{when}: {command}: {stderr}");
            assert!(
                stderr.contains("STATE_MISSING")
                    && stderr.contains("holds no state of service")
                    && stderr.contains("state init"),
                "{when}: {command}: {stderr}"
            );
            assert!(!stderr.contains("PASSWORD"), "{stderr}");
        }
        let requests = cloud.requests();
        assert!(
            requests.is_empty(),
            "{when}: no call was made: {:?}",
            requests.iter().map(|r| &r.path).collect::<Vec<_>>()
        );
    };
    refused(&runner, &[], "never set up");
    runner.init(&cloud, server);
    let (code, applied, stderr) = runner.run(&cloud, server, &["apply", "--yes"]);
    assert_eq!(code, 0, "{stderr}");
    let lineage = applied["results"]["state"]["lineage"]
        .as_str()
        .unwrap()
        .to_string();
    let serial = applied["results"]["state"]["serial"].as_u64().unwrap();
    assert!(serial > 3, "every write counts: {applied}");
    let (code, shown, stderr) = runner.run(&cloud, server, &["state", "show"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        (shown["lineage"].as_str(), shown["serial"].as_u64()),
        (Some(lineage.as_str()), Some(serial))
    );
    // A second init finds it, and changes nothing.
    let (code, _, stderr) = runner.run(&cloud, server, &["state", "init"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains(&lineage), "{stderr}");

    if let Some(other) = server.other_database() {
        refused(&runner, &["--state", &other], "another database");
    }
    server.lose_the_state();
    refused(&runner, &[], "the service's state lost");
    server.lose_everything();
    refused(&runner, &[], "the store flushed");
    assert_eq!(
        cloud.pipes().iter().filter(|p| !p.deleted).count(),
        3,
        "no pipe was created a second time"
    );
}

/// Starts `command` (a `cloudctl` of [`Runner::apply_through`]).
fn start(mut command: Command) -> Child {
    command.spawn().expect("cloudctl starts")
}

/// A cloud whose `count` pipes (`prefix` and a number) one runner applied, with its state in
/// `server`: the cloud, a runner of its own (to be cut off), the one that applied them, the names.
fn applied_by_another(
    server: &impl Server,
    prefix: &str,
    count: usize,
) -> (Cloud, Runner, Runner, Vec<(String, u32)>) {
    let cloud = production_cloud(Duration::ZERO);
    let (runner, other) = (Runner::new(), Runner::new());
    let names: Vec<(String, u32)> = (0..count).map(|i| (format!("{prefix}{i}"), 1)).collect();
    other.checkout(&names);
    other.init(&cloud, server);
    let (code, _, stderr) = other.run(&cloud, server, &["apply", "--yes"]);
    assert_eq!(code, 0, "{stderr}");
    (cloud, runner, other, names)
}

fn a_runner_cut_off_from_its_store_sends_nothing_past_its_lease(server: &impl Server) {
    const LEASE: Duration = Duration::from_secs(2);
    let (cloud, cut_off, other, names) = applied_by_another(server, "d", 6);
    // Every delete is answered after a second: the cut-off runner's six deletes, one at a time,
    // would take three times its lease.
    cloud.inject(
        FaultRule::operation(OperationId::DeletePipe)
            .then(Fault::delay(Duration::from_secs(1)).always()),
    );
    cut_off.checkout(&[]);
    let (proxy, through) = TcpProxy::in_front_of(&server.url());
    cloud.clear_requests();
    let running = start(cut_off.apply_through(&cloud, server, &through, "1", "2s"));
    let cut = cut_after_the_first_delete(&cloud, &proxy, Duration::from_secs(20));
    let (code, stderr) = finish(running, Duration::from_secs(30));
    assert_eq!(code, 11, "{stderr}");
    assert!(stderr.contains("LEASE_LOST"), "{stderr}");
    // The lease's trouble was said while it happened, before the run's end.
    let lines: Vec<&str> = stderr.lines().collect();
    let renewal_failed = lines.iter().position(|line| {
        serde_json::from_str::<Value>(line).is_ok_and(|said| {
            said["warning"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("lease could not be renewed"))
        })
    });
    let lost = lines.iter().position(|line| line.contains("LEASE_LOST"));
    assert!(
        renewal_failed.is_some() && renewal_failed < lost,
        "the failed renewal is said on stderr before the end: {stderr}"
    );
    let deletes = deletes_sent(&cloud);
    assert!(
        deletes.len() < names.len(),
        "the deletes past its lease were not sent: {deletes:?}"
    );
    let lapsed = cut + chrono::Duration::from_std(LEASE).unwrap();
    for at in &deletes {
        assert!(
            *at <= lapsed,
            "a delete reached the API at {at}, after the lease the runner could count on \
             (cut at {cut}, lapsed by {lapsed})"
        );
    }
    // Another runner takes the service over once the lease lapses in the store, and finishes.
    cloud.clear_faults();
    other.checkout(&[]);
    converge(&cloud, server, &other, 0);
    assert!(
        cloud.pipes().iter().all(|p| p.deleted),
        "every pipe is gone once the directory is applied"
    );
}

/// When each delete reached the API (the emulator's log).
fn deletes_sent(cloud: &Cloud) -> Vec<chrono::DateTime<chrono::Utc>> {
    cloud
        .requests()
        .iter()
        .filter(|r| r.operation_id == Some(OperationId::DeletePipe))
        .map(|r| r.at)
        .collect()
}

/// Waits (at most `within`) for a delete to reach the API, then cuts `proxy`: the store out of the
/// runner's reach, the API not. When it was cut.
fn cut_after_the_first_delete(
    cloud: &Cloud,
    proxy: &TcpProxy,
    within: Duration,
) -> chrono::DateTime<chrono::Utc> {
    let deadline = Instant::now() + within;
    while deletes_sent(cloud).is_empty() {
        assert!(Instant::now() < deadline, "the runner never deleted");
        std::thread::sleep(Duration::from_millis(10));
    }
    let cut = chrono::Utc::now();
    proxy.cut();
    cut
}

fn a_call_whose_turn_comes_past_the_lease_is_not_sent(server: &impl Server) {
    let (cloud, cut_off, _, _) = applied_by_another(server, "t", 2);
    // One call every 2 s, two at a time: both deletes pass the apply's own check together, and the
    // second's turn comes 2 s after the first's, past the 1 s lease of a runner cut off from its
    // store right after the first.
    cut_off.checkout(&[]);
    let (proxy, through) = TcpProxy::in_front_of(&server.url());
    cloud.clear_requests();
    let mut paced = cut_off.apply_through(&cloud, server, &through, "2", "1s");
    paced.env("CLOUD_RATE_LIMIT", "1/2s");
    let running = start(paced);
    cut_after_the_first_delete(&cloud, &proxy, Duration::from_secs(30));
    let (code, stderr) = finish(running, Duration::from_secs(30));
    assert_eq!(code, 11, "{stderr}");
    assert!(stderr.contains("LEASE_LOST"), "{stderr}");
    assert_eq!(
        deletes_sent(&cloud).len(),
        1,
        "the delete whose turn came past the lease was not sent: {stderr}"
    );
    assert_eq!(
        cloud.pipes().iter().filter(|p| !p.deleted).count(),
        1,
        "its pipe is still there"
    );
}

fn a_store_cut_for_a_moment_loses_no_create_in_flight(server: &impl Server) {
    let cloud = production_cloud(Duration::ZERO);
    let runner = Runner::new();
    let names: Vec<(String, u32)> = (0..3).map(|i| (format!("c{i}"), 1)).collect();
    runner.checkout(&names);
    runner.init(&cloud, server);
    // Every create is answered after 1.5 s: the store is cut while the three are in flight.
    cloud.inject(
        FaultRule::operation(OperationId::CreatePipe)
            .then(Fault::delay(Duration::from_millis(1500)).always()),
    );
    let (proxy, through) = TcpProxy::in_front_of(&server.url());
    let running = start(runner.apply_through(&cloud, server, &through, "3", "6s"));
    // The three intents are recorded just before their creates are sent.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let state: Value = serde_json::from_str(&server.raw_state()).unwrap_or(Value::Null);
        if state["pending"].as_object().is_some_and(|p| p.len() == 3) {
            break;
        }
        assert!(Instant::now() < deadline, "the creates never started");
        std::thread::sleep(Duration::from_millis(10));
    }
    proxy.cut();
    // The creates are answered while the store is out of reach, well within the lease.
    std::thread::sleep(Duration::from_millis(2500));
    proxy.restore();
    let (code, stderr) = finish(running, Duration::from_secs(30));
    assert_eq!(
        code, 0,
        "the creates in flight were recorded once the store answered: {stderr}"
    );
    let state: Value = serde_json::from_str(&server.raw_state()).expect("the state");
    assert_eq!(
        state["pipes"].as_object().map(|p| p.len()),
        Some(3),
        "{state}"
    );
    assert!(
        state["pending"].as_object().is_none_or(|p| p.is_empty()),
        "{state}"
    );
    assert_no_duplicate(&cloud, "after the cut");
    assert_eq!(cloud.pipes().iter().filter(|p| !p.deleted).count(), 3);
    cloud.clear_faults();
    let (code, _, stderr) = runner.run(&cloud, server, &["plan"]);
    assert_eq!(code, 0, "{stderr}");
}
