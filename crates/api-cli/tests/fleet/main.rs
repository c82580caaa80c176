//! Many processes, one key: eight `cloudctl` processes pace themselves together through the host
//! store (and through Redis), so the emulator, limiting the key to 20 requests per 2 s, answers no
//! 429 while serving at least 95% of that; the process store draws 429s; a process killed with
//! SIGKILL stalls the others by no more than its own slot.
//!
//! A test binary of its own, its tests one at a time: the served rate, and the 429s of the process
//! store, depend on how fast processes start, so the machine's load must be the fleet's own (cargo
//! runs test binaries one after another).

use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use api_emulator::{EmulatorOptions, LogEntry, OperationId};

use support::Cloud;

#[allow(dead_code)] // the e2e tests' helpers; the fleet uses a few
#[path = "../e2e/support.rs"]
mod support;

#[path = "../../../../tests/tests/support/redis_server.rs"]
mod redis_server;
#[path = "../../../../tests/tests/support/served.rs"]
mod served_log;

/// The emulator's limit, and cloudctl's.
const LIMIT: &str = "20/2s";
/// One request every 2 s / 20, 2% slower.
const INTERVAL: Duration = Duration::from_millis(102);

/// Held by each test while it runs: one fleet at a time.
fn alone() -> MutexGuard<'static, ()> {
    static FLEET: Mutex<()> = Mutex::new(());
    FLEET.lock().unwrap_or_else(PoisonError::into_inner)
}

fn limited() -> Cloud {
    Cloud::with(EmulatorOptions::for_tests().management_rate_limit(20, 2))
}

/// `workers` threads, each running `calls` `cloudctl endpoint list` processes one after another,
/// with the limit in `store`; every run's exit code.
fn fleet(cloud: &Cloud, store: &str, workers: usize, calls: usize) -> Vec<i32> {
    let commands: Vec<Vec<Command>> = (0..workers)
        .map(|_| (0..calls).map(|_| command(cloud, store)).collect())
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
    let mut command = cloud.process();
    command
        .args(["endpoint", "list", "-o", "json"])
        .env("CLOUD_RATE_LIMIT", LIMIT)
        .env("CLOUD_RATE_LIMIT_STORE", store)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    command
}

/// The list requests the emulator served, in time order.
fn served_lists(log: &[LogEntry]) -> Vec<&LogEntry> {
    served_log::served(log, OperationId::ListReversePrivateEndpoints)
}

fn throttled(log: &[LogEntry]) -> usize {
    log.iter().filter(|e| e.status == 429).count()
}

fn shares_the_limit(cloud: &Cloud, store: &str) {
    let codes = fleet(cloud, store, 8, 10);
    assert!(codes.iter().all(|code| *code == 0), "{store}: {codes:?}");
    let log = cloud.requests();
    assert_eq!(throttled(&log), 0, "{store}: no 429");
    let served = served_lists(&log);
    assert_eq!(served.len(), 80);
    // 20 per 2 s: 10 a second.
    let fraction = served_log::fraction(&served, 10.0);
    assert!(
        (0.95..=1.0).contains(&fraction),
        "{store}: served {fraction:.3} of the limit"
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
    shares_the_limit(&limited(), &redis.url);
}

#[test]
fn paced_per_process_the_same_fleet_draws_429s() {
    let _alone = alone();
    let cloud = limited();
    fleet(&cloud, "process", 8, 4);
    assert!(
        throttled(&cloud.requests()) > 0,
        "each process alone keeps to the limit, together they do not"
    );
}

#[test]
fn a_process_killed_with_sigkill_stalls_the_others_by_one_slot_at_most() {
    let _alone = alone();
    let cloud = limited();
    // The victim starts among three others and is killed while it waits for its slot.
    let victim_command = command(&cloud, "host");
    let others = std::thread::scope(|scope| {
        let others = scope.spawn(|| fleet(&cloud, "host", 3, 8));
        std::thread::sleep(Duration::from_millis(600));
        let mut victim_command = victim_command;
        let mut victim = victim_command.spawn().expect("cloudctl starts");
        std::thread::sleep(Duration::from_millis(150));
        victim.kill().expect("SIGKILL");
        let _ = victim.wait();
        others.join().unwrap()
    });
    assert!(others.iter().all(|code| *code == 0), "{others:?}");
    let log = cloud.requests();
    assert_eq!(throttled(&log), 0);
    let served = served_lists(&log);
    let longest = served_log::longest_pause(&served);
    // One pacing interval, plus the slot the killed process held, plus scheduling on a shared
    // machine.
    assert!(
        longest <= INTERVAL * 2 + Duration::from_millis(250),
        "a stall of {longest:?}"
    );
    // The others finish on time: the calls served at the pace, plus the one slot the killed
    // process took with it (and scheduling).
    let span = (served[served.len() - 1].at - served[0].at)
        .to_std()
        .unwrap();
    let calls = u32::try_from(served.len()).unwrap();
    assert!(
        span <= INTERVAL * calls + Duration::from_millis(500),
        "{calls} calls took {span:?}"
    );
}

#[test]
fn a_wait_on_the_shared_limit_is_said_in_human_mode_only() {
    let _alone = alone();
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
