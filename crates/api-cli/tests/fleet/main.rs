//! Many processes, one key: eight `cloudctl` processes pace themselves together through the host
//! store (and through Redis), so the emulator, limiting the key to 20 requests per 2 s, answers no
//! 429 while taking no more than a tenth longer than bursts of 20 every 2 s would; a process
//! configured far lower delays only itself; the process store draws 429s; configured for twice the
//! server's limit, they learn it, with one 429 per block the server imposes after the first; a
//! process killed with SIGKILL while it holds a slot, or the state file's lock, stalls the others
//! by no more than that.
//!
//! A test binary of its own: the served rate, and the 429s of the process store, depend on how fast
//! processes start, so the machine's load must be the fleet's own while they are measured (cargo
//! runs test binaries one after another). A fleet that bursts at the key's rhythm runs alone; the
//! other tests that measure a rate or time a stall run beside each other (each takes little CPU);
//! the declared-pipe tests, whose claims are about what is written and never about how fast, run
//! beside each other, never beside a timed test.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::Duration;

use api_emulator::{EmulatorOptions, LogEntry, OperationId};

use support::Cloud;

#[allow(dead_code)] // the e2e tests' helpers; the fleet uses a few
#[path = "../e2e/support.rs"]
mod support;

mod guide_sessions;
#[path = "../e2e/sessions.rs"]
mod sessions;

use api_test_support::{pgbouncer, postgres_server, redis_server, tcp_proxy};
#[path = "served.rs"]
mod served_log;
mod shared_state;

/// The emulator's limit, and cloudctl's.
const LIMIT: &str = "20/2s";
/// One request every 2 s / 20, 2% slower.
const INTERVAL: Duration = Duration::from_millis(102);

/// What kind of test runs now, and how many of it: a fleet that bursts runs alone; timed tests
/// (a rate measured or a stall timed by a few processes; little CPU) beside each other; busy ones
/// (fleets of processes whose claims hold at any speed) beside each other; never two kinds at once.
static RUNNING: Mutex<(Option<Kind>, usize)> = Mutex::new((None, 0));
/// Signalled when the last test of a kind ends.
static TURN: Condvar = Condvar::new();

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Alone,
    Timed,
    Busy,
}

/// A test's admission: held while it runs.
struct Admitted;

impl Drop for Admitted {
    fn drop(&mut self) {
        let mut running = RUNNING.lock().unwrap_or_else(PoisonError::into_inner);
        running.1 -= 1;
        if running.1 == 0 {
            running.0 = None;
            TURN.notify_all();
        }
    }
}

/// Waits until the tests that run allow one of `kind` beside them.
fn admit(kind: Kind) -> Admitted {
    let mut running = RUNNING.lock().unwrap_or_else(PoisonError::into_inner);
    while running
        .0
        .is_some_and(|now| now != kind || kind == Kind::Alone)
    {
        running = TURN.wait(running).unwrap_or_else(PoisonError::into_inner);
    }
    *running = (Some(kind), running.1 + 1);
    Admitted
}

/// Held by a test whose fleet bursts at the key's rhythm while it runs: no other test runs (a
/// burst's processes starting at once, beside another fleet's, delayed calls past the margin the
/// limiter keeps: one 429 seen in a hundred calls).
fn alone() -> Admitted {
    admit(Kind::Alone)
}

/// Held by a test that measures a rate or times a stall with a few processes while it runs: it
/// runs beside others like it (together they keep a core a tenth busy), never beside a bursting
/// fleet or a [`busy`] test.
fn timed() -> Admitted {
    admit(Kind::Timed)
}

/// Held by a test whose claims hold at any speed while it runs: it runs beside others like it,
/// never beside a timed one.
fn busy() -> Admitted {
    admit(Kind::Busy)
}

fn limited() -> Cloud {
    Cloud::with(EmulatorOptions::for_tests().management_rate_limit(20, 2))
}

/// `workers` threads, each running `calls` `cloudctl endpoint list` processes one after another,
/// with the limit in `store`; every run's exit code.
fn fleet(cloud: &Cloud, store: &str, workers: usize, calls: usize) -> Vec<i32> {
    fleet_of(workers, calls, || command(cloud, store))
}

/// `workers` threads, each running `calls` commands made by `make` one after another; every run's
/// exit code.
fn fleet_of(workers: usize, calls: usize, make: impl Fn() -> Command) -> Vec<i32> {
    let commands: Vec<Vec<Command>> = (0..workers)
        .map(|_| (0..calls).map(|_| make()).collect())
        .collect();
    std::thread::scope(|scope| {
        let running: Vec<_> = commands
            .into_iter()
            .map(|mut runs| {
                scope.spawn(move || {
                    runs.iter_mut()
                        .map(|run| {
                            run.output()
                                .map_or(-1, |out| out.status.code().unwrap_or(-1))
                        })
                        .collect::<Vec<i32>>()
                })
            })
            .collect();
        running
            .into_iter()
            .flat_map(|worker| worker.join().unwrap())
            .collect()
    })
}

fn command(cloud: &Cloud, store: &str) -> Command {
    command_at(cloud, store, LIMIT)
}

fn command_at(cloud: &Cloud, store: &str, limit: &str) -> Command {
    let mut command = cloud.process();
    command
        .args(["endpoint", "list", "-o", "json"])
        .env("CLOUD_RATE_LIMIT", limit)
        .env("CLOUD_RATE_LIMIT_STORE", store)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    command
}

/// A command with a home, runtime and cache directory of its own: a host state file there would
/// pace it alone.
fn alone_at_home(mut command: Command, home: &Path) -> Command {
    command
        .env("HOME", home)
        .env("XDG_RUNTIME_DIR", home)
        .env("XDG_CACHE_HOME", home);
    command
}

/// The host store's state directory of the fleet's processes (their home's cache directory).
fn state_dir(cloud: &Cloud) -> std::path::PathBuf {
    cloud
        .home()
        .join(".cache")
        .join("cloud-sdk")
        .join("rate-limit")
}

/// The list requests the emulator served, in time order.
fn served_lists(log: &[LogEntry]) -> Vec<&LogEntry> {
    served_log::served(log, OperationId::ListReversePrivateEndpoints)
}

fn throttled(log: &[LogEntry]) -> usize {
    log.iter().filter(|e| e.status == 429).count()
}

fn shares_the_limit(cloud: &Cloud, store: &str) {
    shares_the_limit_with(cloud, store, || command(cloud, store));
}

fn shares_the_limit_with(cloud: &Cloud, store: &str, make: impl Fn() -> Command) {
    let codes = fleet_of(8, 10, make);
    assert!(codes.iter().all(|code| *code == 0), "{store}: {codes:?}");
    let log = cloud.requests();
    assert_eq!(throttled(&log), 0, "{store}: no 429");
    let served = served_lists(&log);
    assert_eq!(served.len(), 80);
    // Bursts of 20 every 2 s: 80 calls in three windows and a bit, no sooner.
    let fraction = served_log::fraction_of_floor(&served, 20, Duration::from_secs(2));
    // The key's budget used whole: each window's 20 go at its start, not paced evenly across it.
    // The emulator served no more than 20 in a window (no 429 above), so each 20 in time order are
    // one window's. The fleet has at most 8 processes waiting at a window's start; the other 12
    // of its burst start after those end, so a burst spreads over a few process runs: measured,
    // 0.1 s to 0.2 s, and up to 0.6 s with two suites at once on 2 cores (the whole run then at
    // 0.88 of the floor, against 0.93 alone). Evenly paced, each 20 spread over 1.94 s (19 gaps
    // of 102 ms), and more on a loaded machine, never less: the bound tells the two apart
    // whatever the load.
    let spreads: Vec<Duration> = served
        .chunks(20)
        .map(|burst| {
            (burst[burst.len() - 1].at - burst[0].at)
                .to_std()
                .unwrap_or_default()
        })
        .collect();
    eprintln!("{store}: bursts of 20 spread over {spreads:?}, {fraction:.3} of the floor");
    assert!(
        spreads
            .iter()
            .all(|spread| *spread <= Duration::from_millis(1500)),
        "{store}: a window's 20 spread over more than 1.5 s ({spreads:?}): paced, not bursting"
    );
    assert!(
        fraction <= 1.0,
        "{store}: served at {fraction:.3} of the floor the key allows"
    );
}

#[test]
fn eight_processes_share_one_key_through_the_host_store() {
    let _alone = alone();
    shares_the_limit(&limited(), "host");
}

#[test]
fn eight_processes_share_one_key_through_redis() {
    let _alone = alone();
    let Some(redis) =
        redis_server::RedisServer::start("eight_processes_share_one_key_through_redis")
    else {
        return;
    };
    let cloud = limited();
    // Every process has a home of its own: had one fallen back to a host file, it would pace alone
    // and the emulator would answer 429s.
    let homes: Vec<tempfile::TempDir> = (0..80).map(|_| tempfile::tempdir().unwrap()).collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    shares_the_limit_with(&cloud, &redis.url, || {
        let home = &homes[next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)];
        alone_at_home(command(&cloud, &redis.url), home.path())
    });
    for home in &homes {
        assert!(
            !home.path().join("cloud-sdk").exists(),
            "no process fell back to a host file"
        );
    }
    let key = format!(
        "cloud-sdk:rate-limit:{}:{}",
        cloud.base_url(),
        cloud.key_id()
    );
    let ttl = redis.pttl(&key);
    assert!(
        ttl > 0,
        "the limit's key is in Redis, expiring on its own: {ttl}"
    );
}

/// Eight processes configured for twice the limit the server enforces (20 against 10 per 2 s):
/// the first block draws a 429 for each call in flight when the limit was reached (the processes
/// send their bursts together), and no more than one per process; after it, the first 429 of each
/// block the server imposes holds every booked call back (one 429 per block, not one per
/// process), and the pace learns the lower limit.
#[test]
fn configured_above_the_servers_limit_the_fleet_learns_it_with_one_429_per_block() {
    let _alone = alone();
    let cloud = Cloud::with(EmulatorOptions::for_tests().management_rate_limit(10, 2));
    let codes = fleet_of(8, 8, || command_at(&cloud, "host", "20/2s"));
    assert!(codes.iter().all(|code| *code == 0), "{codes:?}");
    let log = cloud.requests();
    let served = served_lists(&log);
    assert_eq!(served.len(), 64);
    let (throttled, blocks) = (throttled(&log), served_log::blocks(&log));
    assert!(blocks >= 1, "the server's limit was reached");
    let after = served_log::after_first_block(&log);
    let first = throttled - after;
    assert!(
        first <= 8,
        "{first} 429s in the first block, from 8 processes"
    );
    let per_block = after as f64 / (blocks - 1).max(1) as f64;
    assert!(
        per_block <= 1.5,
        "{after} 429s in {} blocks after the first: calls booked before a 429 went into the block",
        blocks - 1
    );
    // Learned: the 429s stop after the first few blocks (a configured pace would draw one every
    // window, 5 in the 13 s the run lasts).
    assert!(blocks <= 4, "{blocks} blocks");
    let fraction = served_log::fraction(&served, 5.0);
    eprintln!("{throttled} 429s in {blocks} blocks, {fraction:.3} of the server's limit served");
    assert!(
        fraction >= 0.7,
        "served {fraction:.3} of the server's limit"
    );
}

#[test]
fn paced_per_process_the_same_fleet_draws_429s() {
    let _timed = timed();
    let cloud = limited();
    fleet(&cloud, "process", 8, 4);
    assert!(
        throttled(&cloud.requests()) > 0,
        "each process alone keeps to the limit, together they do not"
    );
}

/// The slower limit of the SIGKILL tests: one request at a time every 510 ms (within the server's
/// 4 per 2 s), so that a process behind two others waits more than a second and says so, and a
/// pause longer than the pace is a stall, not the end of a burst.
const SLOW: &str = "1/500ms";
const SLOW_INTERVAL: Duration = Duration::from_millis(510);

/// The others' pace after a stall: no 429, the longest pause between two served requests, and
/// whether they finished within `allowed` of the pace.
fn longest_pause_after(cloud: &Cloud) -> Duration {
    let log = cloud.requests();
    assert_eq!(throttled(&log), 0);
    served_log::longest_pause(&served_lists(&log))
}

#[test]
fn a_process_killed_while_it_holds_a_slot_stalls_the_others_by_that_slot_at_most() {
    let _timed = timed();
    let cloud = Cloud::with(EmulatorOptions::for_tests().management_rate_limit(4, 2));
    let killed = std::thread::scope(|scope| {
        let others = scope.spawn(|| fleet_of(3, 5, || command_at(&cloud, "host", SLOW)));
        // A victim in human mode says when it waits more than a second for its slot: from then on
        // it provably holds one. One that did not have to wait is let go and another tried.
        let mut killed = false;
        for _ in 0..8 {
            std::thread::sleep(SLOW_INTERVAL);
            let mut victim = cloud.process();
            victim
                .args(["endpoint", "list", "-o", "human"])
                .env("CLOUD_RATE_LIMIT", SLOW)
                .env("CLOUD_RATE_LIMIT_STORE", "host")
                .stdout(Stdio::null())
                .stderr(Stdio::piped());
            let mut victim = victim.spawn().expect("cloudctl starts");
            let stderr = victim.stderr.take().expect("piped");
            let waiting = BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
                .any(|line| {
                    line.contains("waiting") && line.contains("shares with other processes")
                });
            if waiting {
                victim.kill().expect("SIGKILL");
                let _ = victim.wait();
                killed = true;
                break;
            }
            let _ = victim.wait();
        }
        let codes = others.join().unwrap();
        assert!(codes.iter().all(|code| *code == 0), "{codes:?}");
        killed
    });
    assert!(killed, "no victim ever had to wait for its slot");
    let longest = longest_pause_after(&cloud);
    // One pacing interval, plus the slot the killed process held, plus scheduling.
    assert!(
        longest <= SLOW_INTERVAL * 2 + Duration::from_millis(300),
        "a stall of {longest:?}"
    );
}

#[test]
fn a_process_killed_while_it_holds_the_state_files_lock_stalls_the_others_no_longer() {
    let _timed = timed();
    let cloud = limited();
    // The fleet's first call makes the state file.
    assert_eq!(fleet(&cloud, "host", 1, 1), [0]);
    let file = std::fs::read_dir(state_dir(&cloud))
        .expect("the state directory")
        .map(|entry| entry.unwrap().path())
        .find(|path| path.extension().is_some_and(|e| e == "state"))
        .expect("the state file");
    cloud.clear_requests();
    let held = Duration::from_millis(600);
    std::thread::scope(|scope| {
        // One at a time, every INTERVAL: a pause longer than that is the lock's.
        let others = scope.spawn(|| fleet_of(3, 8, || command_at(&cloud, "host", "1/100ms")));
        // Once the fleet is under way: two of its 24 calls served (at the pace, the rest take 2 s
        // more). Waited for, not slept for: a loaded machine once took longer than the 500 ms
        // slept before to start the processes, the lock was taken and given back before their
        // first call, and no pause between two served calls showed it.
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while served_lists(&cloud.requests()).len() < 2 {
            assert!(
                std::time::Instant::now() < deadline,
                "the fleet had two calls served in no minute"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        // Another process takes the lock (flock(1), without forking: the process holding it is the
        // one killed), and is seen to hold it.
        let mut holder = Command::new("flock")
            .args(["--no-fork", "--exclusive"])
            .arg(&file)
            .args(["sleep", "30"])
            .spawn()
            .expect("flock runs (util-linux)");
        let probe = std::fs::File::open(&file).unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while probe.try_lock().is_ok() {
            probe.unlock().unwrap();
            assert!(
                std::time::Instant::now() < deadline,
                "flock never took the lock"
            );
            std::thread::sleep(Duration::from_millis(2));
        }
        std::thread::sleep(held);
        holder.kill().expect("SIGKILL");
        let _ = holder.wait();
        let codes = others.join().unwrap();
        assert!(codes.iter().all(|code| *code == 0), "{codes:?}");
    });
    let longest = longest_pause_after(&cloud);
    // The others waited for the lock as long as it was held (less than the SDK's bound, so none
    // paced alone: no 429), then went on at the pace.
    assert!(
        longest <= held + INTERVAL * 2 + Duration::from_millis(300),
        "a stall of {longest:?}"
    );
    assert!(
        longest >= held - Duration::from_millis(100),
        "the lock held them: {longest:?}"
    );
}

/// Two processes on one key through the host store, one configured `1/1m`: after its call, the
/// other's five calls go at once (its own `20/2s` allows them), not a minute later.
#[test]
fn a_process_configured_far_lower_delays_only_itself() {
    let _timed = timed();
    let cloud = limited();
    assert_eq!(
        fleet_of(1, 1, || command_at(&cloud, "host", "1/1m")),
        [0],
        "the slow one's call"
    );
    let started = std::time::Instant::now();
    assert_eq!(fleet_of(1, 5, || command(&cloud, "host")), [0; 5]);
    let took = started.elapsed();
    // Its own interval is 102 ms; five calls one after another in processes of their own.
    assert!(
        took < Duration::from_secs(5),
        "the fast one was held back by the slow one's configuration: {took:?}"
    );
    let log = cloud.requests();
    let served = served_lists(&log);
    let longest = served_log::longest_pause(&served[1..]);
    assert!(
        longest < INTERVAL * 10,
        "a wait of {longest:?} between the fast one's calls"
    );
    // The slow one waits its own minute after the key's latest call, and says so.
    let mut slow = cloud.process();
    slow.args(["endpoint", "list", "-o", "human"])
        .env("CLOUD_RATE_LIMIT", "1/1m")
        .env("CLOUD_RATE_LIMIT_STORE", "host")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut slow = slow.spawn().expect("cloudctl starts");
    let stderr = slow.stderr.take().expect("piped");
    let waits = BufReader::new(stderr)
        .lines()
        .map_while(Result::ok)
        .any(|line| line.contains("waiting"));
    let _ = slow.kill();
    let _ = slow.wait();
    assert!(waits, "the slow one went without waiting its minute");
}

#[test]
fn a_wait_on_the_shared_limit_is_said_in_human_mode_only() {
    let _timed = timed();
    let cloud = Cloud::with(EmulatorOptions::for_tests());
    // One call per 2 s, through the host store: each process after the first waits for its slot.
    let run = |mode: &str| {
        let out = cloud
            .process()
            .args(["endpoint", "list", "-o", mode])
            .env("CLOUD_RATE_LIMIT", "1/2s")
            .env("CLOUD_RATE_LIMIT_STORE", "host")
            .output()
            .expect("cloudctl runs");
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let first = run("human");
    assert!(
        !first.contains("waiting"),
        "the first goes at once: {first}"
    );
    let second = run("human");
    assert!(
        second.contains("on the rate limit this API key shares with other processes"),
        "{second}"
    );
    let quiet = run("json");
    assert!(
        !quiet.contains("waiting"),
        "JSON mode says nothing: {quiet}"
    );
}
