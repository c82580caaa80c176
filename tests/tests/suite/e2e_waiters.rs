//! End to end: the waiters against the emulator with real transition times, in the cases a real
//! service produces (a start while the service is still stopping, a one-shot pipe, a deadline).

use crate::support;

use std::time::Duration;

use api_emulator::{EmulatorOptions, OperationId, Timing};
use api_mgmt::{
    Error, Pipe, WaitOptions,
    pipes::PipeState,
    services::ServiceState,
    wait::{WaitError, WaitFor},
};
use support::emulated::{kafka_pipe, mgmt, running_service, short_timing, start_with};

fn polling() -> WaitOptions {
    WaitOptions::default()
        .interval(Duration::from_millis(100), Duration::from_millis(400))
        .timeout(Duration::from_secs(30))
}

#[tokio::test]
async fn stop_then_start_and_wait_returns_a_running_service() {
    // Every service transition takes 500 ms: five polls of the waiter each.
    let emulator = start_with(
        EmulatorOptions::new()
            .timing(Timing {
                service_transition_ms: 500,
                ..Timing::default()
            })
            .rate_limits(false),
    )
    .await;
    let client = mgmt(&emulator);
    let service = running_service(&emulator, &client);

    let stopping = service.stop().await.unwrap();
    assert_eq!(stopping.state, Some(ServiceState::Stopping));
    let running = service.start_and_wait(&polling()).await.unwrap();
    assert_eq!(running.state, Some(ServiceState::Running));
    assert_eq!(running.id, service.id());

    let requests = emulator.requests();
    let state_calls = requests.of(OperationId::UpdateServiceState);
    let commands: Vec<(&str, u16)> = state_calls
        .iter()
        .filter_map(|r| {
            let command = r.body.as_ref()?.get("command")?.as_str()?;
            Some((command, r.status))
        })
        .collect();
    assert_eq!(
        commands,
        [("stop", 200), ("start", 409), ("start", 200)],
        "the start met the stopping service and was refused, then sent once more when it was \
         stopped; every other call was a read"
    );
    assert!(
        state_calls.len() > commands.len(),
        "the waiter read the state"
    );
    assert_eq!(state_calls.last().map(|r| r.status), Some(200));

    // And the reverse: stop right after a start.
    service.start().await.unwrap();
    let stopped = service.stop_and_wait(&polling()).await.unwrap();
    assert_eq!(stopped.state, Some(ServiceState::Stopped));
}

#[tokio::test]
async fn create_and_wait_returns_the_running_pipe() {
    let emulator = start_with(EmulatorOptions::for_tests().timing(short_timing())).await;
    let client = mgmt(&emulator);
    let service = running_service(&emulator, &client);
    let pipe = service
        .pipes()
        .create_and_wait(&kafka_pipe("orders"), PipeState::Running, &polling())
        .await
        .unwrap();
    assert_eq!(pipe.state, PipeState::Running);
    assert_eq!(pipe.name, "orders");
    assert_eq!(pipe.service_id, service.id());
    let read = service.pipe(pipe.id).get().await.unwrap().into_inner();
    assert_eq!(read, pipe, "domain values compare equal");
}

#[tokio::test]
async fn a_custom_condition_and_a_deadline() {
    let emulator = start_with(EmulatorOptions::for_tests().timing(Timing {
        pipe_provisioning_ms: 5_000,
        ..short_timing()
    }))
    .await;
    let client = mgmt(&emulator);
    let service = running_service(&emulator, &client);
    let created = service.pipes().create(&kafka_pipe("slow")).await.unwrap();
    let handle = service.pipe(created.id);

    let err = handle
        .wait_until(
            PipeState::Running,
            &polling().timeout(Duration::from_millis(300)),
        )
        .await
        .unwrap_err();
    assert!(err.is_timeout(), "{err}");
    let Error::Wait(wait) = &err else {
        panic!("{err}")
    };
    assert_eq!(
        wait.last_seen_pipe().map(|p| p.state.clone()),
        Some(PipeState::Provisioning)
    );

    let still_provisioning = WaitFor::condition("provisioning", |p: &Pipe| {
        p.state == PipeState::Provisioning
    });
    let seen = handle
        .wait_for(still_provisioning, &polling())
        .await
        .unwrap();
    assert_eq!(seen.id, created.id);
}

#[tokio::test]
async fn a_missing_pipe_reads_as_none_and_a_forced_failure_ends_a_wait() {
    let emulator = start_with(EmulatorOptions::for_tests().timing(short_timing())).await;
    let client = mgmt(&emulator);
    let service = running_service(&emulator, &client);
    let missing = service.pipe("00000000-0000-4000-8000-000000000000".parse().unwrap());
    assert!(missing.get_opt().await.unwrap().is_none());

    let created = service.pipes().create(&kafka_pipe("doomed")).await.unwrap();
    let handle = service.pipe(created.id);
    assert!(handle.get_opt().await.unwrap().is_some());
    let forced = api_mgmt::client::http_client_builder()
        .build()
        .unwrap()
        .put(format!(
            "{}/_emulator/pipes/{}/state",
            emulator.base_url(),
            created.id
        ))
        .bearer_auth(emulator.control_token())
        .json(&serde_json::json!({ "state": "InternalError" }))
        .send()
        .await
        .unwrap();
    assert_eq!(forced.status(), 204);
    let err = handle.wait_until_steady(&polling()).await.unwrap_err();
    assert!(
        matches!(&err, Error::Wait(WaitError::PipeFailed { pipe, .. }) if pipe.state == PipeState::InternalError),
        "{err}"
    );
    assert!(!err.is_timeout());
}

#[tokio::test]
async fn a_state_written_in_another_letter_case_ends_a_wait_as_its_value() {
    let emulator = start_with(EmulatorOptions::for_tests().timing(short_timing())).await;
    let client = mgmt(&emulator);
    let service = running_service(&emulator, &client);
    // A server upgraded to write its states in capitals: `RUNNING` is Running.
    let running = service
        .pipes()
        .create(&kafka_pipe("shouted"))
        .await
        .unwrap();
    emulator
        .set_raw_overlay(running.id, serde_json::json!({"state": "RUNNING"}))
        .unwrap();
    let handle = service.pipe(running.id);
    let pipe = handle
        .wait_until(PipeState::Running, &polling())
        .await
        .unwrap();
    assert_eq!(pipe.state, PipeState::Running);
    // And `FAILED` is a failure, which ends a wait at once.
    let failing = service
        .pipes()
        .create(&kafka_pipe("failing"))
        .await
        .unwrap();
    emulator
        .set_raw_overlay(failing.id, serde_json::json!({"state": "FAILED"}))
        .unwrap();
    let started = std::time::Instant::now();
    let err = service
        .pipe(failing.id)
        .wait_until(PipeState::Running, &polling())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::Wait(WaitError::PipeFailed { pipe, .. }) if pipe.state == PipeState::Failed),
        "{err}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "ended by the failure, not the 30 s timeout"
    );
}
