use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use api_raw::management::types as raw;

use super::*;
use crate::decode::Path;
use crate::error::ApiError;
use crate::management::{PipeState, ServiceCommand, ServiceState};
use crate::response::ResponseMeta;

const PIPE: &str = "0f9e8d7c-6b5a-4f3e-9d2c-1b0a9f8e7d6c";
const SERVICE: &str = "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d";

fn meta() -> ResponseMeta {
    ResponseMeta {
        status: 200,
        headers: Default::default(),
        request_id: None,
        attempts: 1,
    }
}

fn a_pipe(state: &str) -> Pipe {
    let raw: raw::Pipe = serde_json::from_value(serde_json::json!({
        "id": PIPE, "serviceId": SERVICE, "name": "p", "state": state,
    }))
    .unwrap();
    Pipe::decode(raw, Path::Root("result")).unwrap()
}

fn pipe(state: &str) -> Result<Response<Pipe>> {
    Ok(Response::new(a_pipe(state), meta()))
}

fn service(state: &str) -> Result<Response<Service>> {
    let raw: raw::Service =
        serde_json::from_value(serde_json::json!({"id": SERVICE, "name": "s", "state": state}))
            .unwrap();
    Ok(Response::new(
        Service::decode(raw, Path::Root("result")).unwrap(),
        meta(),
    ))
}

fn api_error<T>(operation: &'static str, status: u16, code: &str) -> Result<T> {
    Err(Error::from(
        ApiError::new(operation, status)
            .with_code(code)
            .with_message("scripted"),
    ))
}

fn not_found() -> Result<Response<Pipe>> {
    api_error("getPipe", 404, "NOT_FOUND")
}

fn fast() -> WaitOptions {
    WaitOptions::default()
        .interval(Duration::from_millis(1), Duration::from_millis(2))
        .timeout(Duration::from_secs(5))
}

async fn run(
    script: Vec<Result<Response<Pipe>>>,
    target: WaitFor<Pipe>,
    options: WaitOptions,
) -> (Result<Pipe>, usize) {
    let script = Mutex::new(VecDeque::from(script));
    let polls = AtomicUsize::new(0);
    let result = wait_for_pipe(
        || {
            polls.fetch_add(1, Ordering::Relaxed);
            let next = script
                .lock()
                .unwrap()
                .pop_front()
                .unwrap_or_else(|| pipe("Provisioning"));
            async move { next }
        },
        &target,
        None,
        &options,
    )
    .await;
    (result, polls.into_inner())
}

#[tokio::test]
async fn reaches_running_after_provisioning() {
    let (result, polls) = run(
        vec![pipe("Provisioning"), pipe("Provisioning"), pipe("Running")],
        WaitFor::pipe_state(PipeState::Running),
        fast(),
    )
    .await;
    assert_eq!(result.unwrap().state, PipeState::Running);
    assert_eq!(polls, 3);
}

#[tokio::test]
async fn fails_fast_on_states_that_cannot_reach_running() {
    for dead_end in ["Failed", "InternalError", "Completed"] {
        let script = vec![pipe("Provisioning"), pipe(dead_end), pipe("Running")];
        let (result, polls) = run(script, WaitFor::pipe_state(PipeState::Running), fast()).await;
        let err = result.unwrap_err();
        assert!(
            matches!(&err, Error::Wait(WaitError::PipeFailed { pipe, .. }) if pipe.state.as_str() == dead_end),
            "{err}"
        );
        assert_eq!(polls, 2, "{dead_end}");
        assert!(
            err.to_string().contains(&format!(
                "is {dead_end}, from which it cannot reach Running"
            )),
            "{err}"
        );
    }
    // Waiting for the failure itself is fine.
    let (result, _) = run(
        vec![pipe("Failed")],
        WaitFor::pipe_state(PipeState::Failed),
        fast(),
    )
    .await;
    assert_eq!(result.unwrap().state, PipeState::Failed);
}

#[tokio::test]
async fn conditions_compose() {
    let running = |p: &Pipe| p.state == PipeState::Running;
    let named_p = |p: &Pipe| p.name == "p";
    let stopped = |p: &Pipe| p.state == PipeState::Stopped;
    assert!(running.and(named_p).matches(&a_pipe("Running")));
    assert!(!running.and(named_p.not()).matches(&a_pipe("Running")));
    assert!(running.or(stopped).matches(&a_pipe("Stopped")));
    assert!(!running.or(stopped).matches(&a_pipe("Paused")));

    let target = WaitFor::condition("running or stopped", running.or(stopped))
        .fail_if(|p: &Pipe| p.state == PipeState::Degraded);
    let (result, polls) = run(
        vec![pipe("Provisioning"), pipe("Stopped")],
        target.clone(),
        fast(),
    )
    .await;
    assert_eq!(result.unwrap().state, PipeState::Stopped);
    assert_eq!(polls, 2);
    let (result, _) = run(vec![pipe("Degraded")], target, fast()).await;
    assert!(matches!(
        result.unwrap_err(),
        Error::Wait(WaitError::PipeFailed { .. })
    ));
}

#[tokio::test]
async fn tolerates_early_not_found_but_not_too_many() {
    let (result, _) = run(
        vec![not_found(), not_found(), pipe("Running")],
        WaitFor::pipe_steady(),
        fast(),
    )
    .await;
    assert_eq!(result.unwrap().state, PipeState::Running);
    let (result, polls) = run(
        vec![not_found(), not_found()],
        WaitFor::pipe_steady(),
        fast().tolerated_not_found(1),
    )
    .await;
    assert!(result.unwrap_err().is_not_found());
    assert_eq!(polls, 2);
}

#[tokio::test]
async fn gone_waits_for_a_not_found() {
    let script = Mutex::new(VecDeque::from(vec![
        pipe("Running"),
        pipe("Stopping"),
        not_found(),
    ]));
    let polls = AtomicUsize::new(0);
    wait_for_pipe_gone(
        || {
            polls.fetch_add(1, Ordering::Relaxed);
            let next = script.lock().unwrap().pop_front().unwrap();
            async move { next }
        },
        &fast(),
    )
    .await
    .unwrap();
    assert_eq!(polls.into_inner(), 3);
}

#[tokio::test]
async fn a_pipe_that_vanishes_while_waiting_for_a_state_is_reported() {
    let (result, _) = run(
        vec![pipe("Provisioning"), not_found()],
        WaitFor::pipe_state(PipeState::Running),
        fast(),
    )
    .await;
    let err = result.unwrap_err();
    assert!(
        matches!(&err, Error::Wait(WaitError::PipeGone { last_seen: Some(p), .. }) if p.state == PipeState::Provisioning),
        "{err}"
    );
}

#[tokio::test]
async fn timeout_returns_the_last_seen_pipe_and_is_a_timeout() {
    let options = fast().timeout(Duration::from_millis(40));
    let (result, _) = run(vec![], WaitFor::pipe_state(PipeState::Running), options).await;
    let err = result.unwrap_err();
    assert!(err.is_timeout(), "{err}");
    let Error::Wait(wait) = &err else {
        panic!("{err}")
    };
    assert_eq!(
        wait.last_seen_pipe().map(|p| &p.state),
        Some(&PipeState::Provisioning)
    );
    assert!(
        err.to_string().contains("last seen in state Provisioning"),
        "{err}"
    );
}

#[tokio::test]
async fn a_slow_read_cannot_stretch_the_timeout() {
    let options = fast().timeout(Duration::from_millis(50));
    let started = std::time::Instant::now();
    let result = wait_for_pipe(
        || async {
            tokio::time::sleep(Duration::from_secs(5)).await;
            pipe("Running")
        },
        &WaitFor::pipe_state(PipeState::Running),
        Some(a_pipe("Provisioning")),
        &options,
    )
    .await;
    let err = result.unwrap_err();
    assert!(err.is_timeout(), "{err}");
    assert!(
        err.to_string().contains("last seen in state Provisioning"),
        "{err}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn steady_does_not_accept_failure_or_transitions() {
    let (result, polls) = run(
        vec![pipe("Setup"), pipe("Snapshot"), pipe("Completed")],
        WaitFor::pipe_steady(),
        fast(),
    )
    .await;
    assert_eq!(result.unwrap().state, PipeState::Completed);
    assert_eq!(polls, 3);
    let (result, _) = run(vec![pipe("InternalError")], WaitFor::pipe_steady(), fast()).await;
    assert!(matches!(
        result.unwrap_err(),
        Error::Wait(WaitError::PipeFailed { .. })
    ));
}

#[tokio::test]
async fn no_options_panic_and_a_zero_interval_still_backs_off() {
    let durations = [
        Duration::ZERO,
        Duration::from_nanos(1),
        Duration::from_millis(3),
        Duration::MAX,
    ];
    for timeout in durations {
        for initial in durations {
            for max in durations {
                for tolerated in [0, u32::MAX] {
                    let options = WaitOptions {
                        timeout,
                        initial_interval: initial,
                        max_interval: max,
                        tolerated_not_found: tolerated,
                    };
                    let (result, _) = run(
                        vec![pipe("Running")],
                        WaitFor::pipe_state(PipeState::Running),
                        options.clone(),
                    )
                    .await;
                    assert!(result.is_ok() || timeout == Duration::ZERO, "{options:?}");
                    assert!(options.next_interval(initial) >= MIN_PAUSE);
                    assert!(options.first_interval() >= MIN_PAUSE);
                }
            }
        }
    }
    // A zero interval with a short timeout polls a bounded number of times, not thousands.
    let zero = WaitOptions::default()
        .interval(Duration::ZERO, Duration::ZERO)
        .timeout(Duration::from_millis(100));
    let (result, polls) = run(vec![], WaitFor::pipe_state(PipeState::Running), zero).await;
    assert!(result.unwrap_err().is_timeout());
    assert!(polls <= 15, "{polls} polls in 100 ms");
}

#[test]
fn intervals_grow_by_half_up_to_the_cap() {
    let options = WaitOptions::default();
    assert_eq!(
        options.next_interval(Duration::from_secs(1)),
        Duration::from_millis(1500)
    );
    assert_eq!(
        options.next_interval(Duration::from_secs(8)),
        Duration::from_secs(12)
    );
    assert_eq!(
        options.next_interval(Duration::from_secs(50)),
        Duration::from_secs(60)
    );
    assert_eq!(
        options.next_interval(Duration::MAX),
        Duration::from_secs(60)
    );
}

#[tokio::test]
async fn a_change_of_state_brings_the_first_pace_back() {
    // Polls every 20 ms at first, growing by half to 80 ms while nothing changes; each change of
    // state starts again at 20 ms.
    let options = WaitOptions::default()
        .interval(Duration::from_millis(20), Duration::from_millis(80))
        .timeout(Duration::from_secs(10));
    let unchanged = ["Provisioning"; 6]
        .map(pipe)
        .into_iter()
        .chain([pipe("Running")])
        .collect();
    let started = std::time::Instant::now();
    let (result, _) = run(
        unchanged,
        WaitFor::pipe_state(PipeState::Running),
        options.clone(),
    )
    .await;
    assert!(result.is_ok());
    let growing = started.elapsed();
    let alternating = [
        "Setup", "Snapshot", "Setup", "Snapshot", "Setup", "Snapshot",
    ]
    .map(pipe)
    .into_iter()
    .chain([pipe("Running")])
    .collect();
    let started = std::time::Instant::now();
    let (result, _) = run(
        alternating,
        WaitFor::pipe_state(PipeState::Running),
        options,
    )
    .await;
    assert!(result.is_ok());
    let resetting = started.elapsed();
    // 20 + 30 + 45 + 67 + 80 + 80 = 322 ms against 6 x 20 = 120 ms.
    assert!(growing >= Duration::from_millis(300), "{growing:?}");
    assert!(resetting < Duration::from_millis(250), "{resetting:?}");
}

/// A scripted service: answers to `send` and `observe` in order, then `starting` to both.
struct Script {
    sends: Mutex<VecDeque<Result<Response<Service>>>>,
    observes: Mutex<VecDeque<Result<Response<Service>>>>,
    sent: AtomicUsize,
    observed: AtomicUsize,
}

impl Script {
    fn new(
        sends: Vec<Result<Response<Service>>>,
        observes: Vec<Result<Response<Service>>>,
    ) -> Self {
        Self {
            sends: Mutex::new(sends.into()),
            observes: Mutex::new(observes.into()),
            sent: AtomicUsize::new(0),
            observed: AtomicUsize::new(0),
        }
    }

    /// How many commands and how many reads it answered.
    fn calls(self) -> (usize, usize) {
        (self.sent.into_inner(), self.observed.into_inner())
    }
}

/// Waits with `script` until the service is in `state`, polling fast.
async fn wait_until(script: &Script, state: ServiceState) -> Result<Service> {
    wait_for_service(script, &WaitFor::service_state(state), &fast()).await
}

/// Waits with `script` until the service is running, polling fast.
async fn wait_running(script: &Script) -> Result<Service> {
    wait_until(script, ServiceState::Running).await
}

impl ServiceWait for Script {
    async fn send(&self) -> Result<Response<Service>> {
        self.sent.fetch_add(1, Ordering::Relaxed);
        let next = self.sends.lock().unwrap().pop_front();
        next.unwrap_or_else(|| service("starting"))
    }

    async fn observe(&self) -> Result<Option<Response<Service>>> {
        self.observed.fetch_add(1, Ordering::Relaxed);
        let next = self.observes.lock().unwrap().pop_front();
        next.unwrap_or_else(|| service("starting")).map(Some)
    }
}

#[test]
fn a_command_starts_from_the_state_the_other_leads_to() {
    for command in [ServiceCommand::Start, ServiceCommand::Stop] {
        assert_eq!(ServiceCommand::leading_to(&command.target()), Some(command));
        assert_ne!(command.starts_from(), command.target());
    }
    assert_eq!(ServiceCommand::Start.starts_from(), ServiceState::Stopped);
    assert_eq!(ServiceCommand::Stop.starts_from(), ServiceState::Running);
    assert_eq!(ServiceCommand::leading_to(&ServiceState::Idle), None);
}

#[tokio::test]
async fn a_conflict_while_stopping_is_waited_out_and_the_start_sent_once_stopped() {
    let script = Script::new(
        vec![
            api_error("updateServiceState", 409, "CONFLICT"),
            service("starting"),
        ],
        vec![
            service("stopping"),
            service("stopping"),
            service("stopped"),
            service("running"),
        ],
    );
    let running = wait_running(&script).await.unwrap();
    assert_eq!(running.state, Some(ServiceState::Running));
    assert_eq!(script.calls(), (2, 4), "(commands, reads)");
}

#[tokio::test]
async fn states_that_are_neither_target_nor_dead_end_are_only_read() {
    let between = [
        "provisioning",
        "starting",
        "stopping",
        "idle",
        "awaking",
        "partially_running",
        "degraded",
        "hibernating",
    ];
    for (target, answer) in [
        (ServiceState::Running, "starting"),
        (ServiceState::Stopped, "stopping"),
    ] {
        for state in between {
            let script = Script::new(
                vec![service(answer)],
                vec![service(state), service(state), service(target.as_str())],
            );
            let reached = wait_until(&script, target.clone()).await.unwrap();
            assert_eq!(reached.state.as_ref(), Some(&target));
            assert_eq!(script.calls(), (1, 3), "{state} while waiting for {target}");
        }
    }
    // A service that reports no state at all is read too.
    let stateless = || {
        let raw: raw::Service =
            serde_json::from_value(serde_json::json!({"id": SERVICE, "name": "s"})).unwrap();
        Ok(Response::new(
            Service::decode(raw, Path::Root("result")).unwrap(),
            meta(),
        ))
    };
    let script = Script::new(vec![stateless()], vec![stateless(), service("running")]);
    wait_running(&script).await.unwrap();
    assert_eq!(script.calls(), (1, 2));
}

#[tokio::test]
async fn a_service_back_where_the_command_starts_gets_it_once_more() {
    let script = Script::new(
        vec![service("starting"), service("starting")],
        vec![service("starting"), service("stopped"), service("running")],
    );
    wait_running(&script).await.unwrap();
    assert_eq!(script.calls(), (2, 3), "one more start");

    let script = Script::new(
        vec![service("stopping"), service("stopping")],
        vec![service("running"), service("stopping"), service("stopped")],
    );
    wait_until(&script, ServiceState::Stopped).await.unwrap();
    assert_eq!(script.calls(), (2, 3), "one more stop");
}

#[tokio::test]
async fn the_answer_to_the_command_is_not_a_read() {
    // The command answers with the service at that instant, before it changes: `stopped` there does
    // not mean the start was not taken.
    let script = Script::new(
        vec![service("stopped")],
        vec![service("starting"), service("running")],
    );
    wait_running(&script).await.unwrap();
    assert_eq!(script.calls(), (1, 2));
}

#[tokio::test]
async fn a_condition_of_ones_own_never_sends_the_command_again() {
    let script = Script::new(
        vec![service("starting")],
        vec![service("stopped"), service("stopped"), service("running")],
    );
    let running = WaitFor::condition("running", |s: &Service| {
        s.state == Some(ServiceState::Running)
    });
    wait_for_service(&script, &running, &fast()).await.unwrap();
    assert_eq!(script.calls(), (1, 3));
}

#[tokio::test]
async fn a_service_that_is_failed_or_deleted_fails_fast() {
    for dead_end in ["failed", "terminating", "terminated", "softdeleted"] {
        let script = Script::new(
            vec![api_error("updateServiceState", 409, "CONFLICT")],
            vec![service(dead_end)],
        );
        let err = wait_running(&script).await.unwrap_err();
        assert!(
            matches!(&err, Error::Wait(WaitError::ServiceFailed { service, .. }) if service.state_name() == dead_end),
            "{err}"
        );
    }
    let script = Script::new(vec![service("failed")], vec![]);
    let err = wait_until(&script, ServiceState::Stopped)
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("is failed, from which it cannot reach stopped"),
        "{err}"
    );
}

#[tokio::test]
async fn a_service_timeout_keeps_the_last_seen_service() {
    let script = Script::new(vec![], vec![]);
    let options = fast().timeout(Duration::from_millis(40));
    let err = wait_for_service(
        &script,
        &WaitFor::service_state(ServiceState::Running),
        &options,
    )
    .await
    .unwrap_err();
    assert!(err.is_timeout(), "{err}");
    let Error::Wait(wait) = &err else {
        panic!("{err}")
    };
    assert_eq!(
        wait.last_seen_service().map(Service::state_name),
        Some("starting")
    );
    assert_eq!(script.calls().0, 1, "starting is only read");
    // Other errors end the wait at once.
    let script = Script::new(
        vec![api_error("updateServiceState", 403, "FORBIDDEN")],
        vec![],
    );
    let err = wait_running(&script).await.unwrap_err();
    assert!(err.is_forbidden(), "{err}");
}

#[tokio::test]
async fn a_short_timeout_still_polls_until_the_deadline() {
    // The first pause (1 s) is longer than the whole timeout: the waiter still polls again before
    // giving up, instead of reporting a timeout after a few milliseconds.
    let options = WaitOptions::default().timeout(Duration::from_millis(200));
    let started = std::time::Instant::now();
    let (result, polls) = run(
        vec![pipe("Provisioning"), pipe("Running")],
        WaitFor::pipe_state(PipeState::Running),
        options,
    )
    .await;
    assert_eq!(result.unwrap().state, PipeState::Running);
    assert_eq!(polls, 2);
    assert!(started.elapsed() < Duration::from_millis(200));

    let options = WaitOptions::default().timeout(Duration::from_millis(200));
    let started = std::time::Instant::now();
    let (result, _) = run(vec![], WaitFor::pipe_state(PipeState::Running), options).await;
    assert!(result.unwrap_err().is_timeout());
    assert!(
        started.elapsed() >= Duration::from_millis(90),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn an_error_after_the_pipe_was_seen_keeps_the_pipe() {
    let (result, _) = run(
        vec![pipe("Provisioning"), api_error("getPipe", 403, "FORBIDDEN")],
        WaitFor::pipe_state(PipeState::Running),
        fast(),
    )
    .await;
    let err = result.unwrap_err();
    assert!(err.is_forbidden(), "the cause stays visible: {err}");
    let Error::Wait(wait) = &err else {
        panic!("{err}")
    };
    assert_eq!(
        wait.last_seen_pipe().map(|p| p.id.to_string()).as_deref(),
        Some(PIPE)
    );
}

#[tokio::test]
async fn a_read_error_ends_the_service_wait() {
    for status in [401, 400, 404] {
        let script = Script::new(
            vec![api_error("updateServiceState", 409, "CONFLICT")],
            vec![api_error("updateServiceState", status, "ERROR")],
        );
        let err = wait_running(&script).await.unwrap_err();
        assert_eq!(err.status(), Some(status), "{err}");
        assert_eq!(script.calls(), (1, 1), "nothing is sent blind");
    }
}

/// A command that takes a while to answer.
struct SlowCommand;

impl ServiceWait for SlowCommand {
    async fn send(&self) -> Result<Response<Service>> {
        tokio::time::sleep(Duration::from_millis(150)).await;
        service("starting")
    }

    async fn observe(&self) -> Result<Option<Response<Service>>> {
        service("starting").map(Some)
    }
}

#[tokio::test]
async fn a_command_is_never_cut_short_by_the_wait_timeout() {
    for timeout in [Duration::ZERO, Duration::from_millis(20)] {
        let options = fast().timeout(timeout);
        let err = wait_for_service(
            &SlowCommand,
            &WaitFor::service_state(ServiceState::Running),
            &options,
        )
        .await
        .unwrap_err();
        assert!(err.is_timeout(), "{err}");
        // The command's answer arrived and is the last service seen.
        let Error::Wait(wait) = &err else {
            panic!("not a wait error: {err}")
        };
        let last = wait.last_seen_service();
        assert_eq!(
            last.and_then(|s| s.state.clone()),
            Some(ServiceState::Starting),
            "{timeout:?}"
        );
    }
}

/// A read that tells only that the service is moving (its command refused with 409 while the
/// service finishes the other), twice, then the service running.
struct Moving {
    reads: AtomicUsize,
}

impl ServiceWait for Moving {
    async fn send(&self) -> Result<Response<Service>> {
        service("stopping")
    }

    async fn observe(&self) -> Result<Option<Response<Service>>> {
        match self.reads.fetch_add(1, Ordering::Relaxed) {
            0 | 1 => Ok(None),
            _ => service("running").map(Some),
        }
    }
}

#[tokio::test]
async fn a_read_that_says_only_that_the_service_moves_keeps_the_wait_going() {
    let probe = Moving {
        reads: AtomicUsize::new(0),
    };
    let running = wait_for_service(
        &probe,
        &WaitFor::service_state(ServiceState::Running),
        &fast(),
    )
    .await
    .unwrap();
    assert_eq!(running.state, Some(ServiceState::Running));
    assert_eq!(probe.reads.load(Ordering::Relaxed), 3);
}
