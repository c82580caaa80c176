//! `cloudctl service start|stop`, with the emulator's real 2 s transitions and with instant ones.

use std::time::{Duration, Instant};

use api_emulator::{EmulatorOptions, OperationId};

use crate::support::Cloud;

#[test]
fn stop_then_start_and_wait_with_real_transitions() {
    // The emulator's default timing: every service transition takes 2 s.
    let cloud = Cloud::with(EmulatorOptions::new().rate_limits(false));

    let stopping = cloud
        .cloudctl(&["service", "stop", "-o", "json"])
        .expect(0)
        .json();
    assert_eq!(stopping["state"], "stopping");
    assert_eq!(stopping["id"], cloud.service("running"));

    // Too short a wait times out (exit 6) and says what it saw.
    let short = cloud
        .cloudctl(&[
            "service",
            "start",
            "--wait",
            "--timeout",
            "300ms",
            "-o",
            "json",
        ])
        .expect(6)
        .error();
    assert_eq!(short["code"], "WAIT_TIMEOUT");
    assert!(
        short["hint"]
            .as_str()
            .unwrap()
            .contains("cloudctl service start --wait --timeout"),
        "{short}"
    );

    let started = Instant::now();
    let running = cloud
        .cloudctl(&["service", "start", "--wait", "-o", "json"])
        .expect(0)
        .json();
    assert_eq!(running["state"], "running");
    assert!(
        started.elapsed() >= Duration::from_millis(500),
        "the start waited for the stop to finish, then for the start: {:?}",
        started.elapsed()
    );

    let state_calls: Vec<u16> = cloud
        .requests()
        .iter()
        .filter(|r| r.operation_id == Some(OperationId::UpdateServiceState))
        .map(|r| r.status)
        .collect();
    assert!(
        state_calls.contains(&409),
        "the start met the stopping service and waited it out: {state_calls:?}"
    );
    assert_eq!(state_calls.last(), Some(&200));
}

#[test]
fn service_commands_in_both_output_modes() {
    let cloud = Cloud::start();
    let stopped = cloud
        .cloudctl(&["service", "stop", "--wait", "-o", "human"])
        .expect(0);
    assert!(
        stopped.stdout.contains("State         stopped"),
        "{}",
        stopped.stdout
    );
    assert!(
        stopped.stdout.contains("analytics-prod"),
        "{}",
        stopped.stdout
    );
    assert!(!stopped.stdout.contains("Some(") && !stopped.stdout.contains("None"));

    let started = cloud
        .cloudctl(&["service", "start", "-o", "json"])
        .expect(0)
        .json();
    assert_eq!(started["name"], "analytics-prod");
    assert!(
        started["endpoints"]
            .as_array()
            .is_some_and(|e| !e.is_empty()),
        "{started}"
    );

    // Without -o, a pipe (not a terminal) gets JSON.
    let default = cloud.cloudctl(&["service", "start"]).expect(0).json();
    assert_eq!(default["state"], "running");
}

/// Against a server that refuses the state command without a command (as production may), a wait
/// reads the service by sending its own command: one refused read per run, then the command.
#[test]
fn waits_work_against_a_server_that_requires_the_command() {
    let mut timing = api_emulator::Timing::INSTANT;
    timing.service_transition_ms = 600;
    let cloud = Cloud::with(
        EmulatorOptions::for_tests()
            .timing(timing)
            .require_state_command(),
    );
    cloud.cloudctl(&["service", "stop", "-o", "json"]).expect(0);
    // The start meets the stop under way: refused with 409, then read by the start itself.
    let running = cloud
        .cloudctl(&["service", "start", "--wait", "-o", "json"])
        .expect(0)
        .json();
    assert_eq!(running["state"], "running");
    let stopped = cloud
        .cloudctl(&["service", "stop", "--wait", "-o", "json"])
        .expect(0)
        .json();
    assert_eq!(stopped["state"], "stopped");

    let calls: Vec<(bool, u16)> = cloud
        .requests()
        .iter()
        .filter(|r| r.operation_id == Some(OperationId::UpdateServiceState))
        .map(|r| {
            let commanded = r.body.as_ref().is_some_and(|b| b.get("command").is_some());
            (commanded, r.status)
        })
        .collect();
    let refused_reads = calls.iter().filter(|(commanded, _)| !commanded).count();
    assert_eq!(
        refused_reads, 2,
        "one refused read per run that waits: {calls:?}"
    );
    assert!(
        calls
            .iter()
            .all(|(commanded, status)| *commanded || *status == 400),
        "every read without a command was refused: {calls:?}"
    );
    assert!(
        calls.contains(&(true, 409)),
        "the start met the stop: {calls:?}"
    );
}

/// A poll interval cloudctl cannot use is refused before anything is sent, naming the setting and
/// where it came from.
#[test]
fn a_poll_interval_out_of_range_is_refused_before_any_call() {
    let cloud = Cloud::start();
    let refused = cloud.run(
        cloud
            .command()
            .env("CLOUD_POLL_INTERVAL", "1ms")
            .args(["service", "stop", "--wait", "-o", "json"]),
    );
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(
        refused.stderr.contains(
            "poll_interval (from env CLOUD_POLL_INTERVAL): invalid poll interval \\\"1ms\\\""
        ),
        "{}",
        refused.stderr
    );
    assert!(cloud.requests().is_empty(), "nothing was sent");
}
