//! Pipe and service waiters over real HTTP against a scripted server.

use crate::support;

use std::time::Duration;

use api_mgmt::{Error, WaitOptions, pipes::PipeState, services::ServiceCommand, wait::WaitError};
use support::{PIPE, Reply, SERVICE, ScriptServer, service};

fn pipe_in(state: &str) -> Reply {
    Reply::json(
        200,
        format!(
            r#"{{"status": 200, "result": {{"id": "{PIPE}", "serviceId": "{SERVICE}", "name": "orders", "state": "{state}"}}}}"#
        ),
    )
}

fn service_in(state: &str) -> Reply {
    Reply::json(
        200,
        format!(
            r#"{{"status": 200, "result": {{"id": "{SERVICE}", "name": "analytics", "state": "{state}"}}}}"#
        ),
    )
}

fn fast() -> WaitOptions {
    WaitOptions::default()
        .interval(Duration::from_millis(5), Duration::from_millis(20))
        .timeout(Duration::from_secs(10))
}

#[tokio::test]
async fn a_pipe_that_goes_provisioning_to_running_is_returned_running() {
    let server = ScriptServer::start(vec![
        Reply::mgmt_error(404, "NOT_FOUND", "not yet"),
        pipe_in("Provisioning"),
        pipe_in("Provisioning"),
        pipe_in("Running"),
    ])
    .await;
    let pipe = service(&server.mgmt())
        .pipe(PIPE.parse().unwrap())
        .wait_until(PipeState::Running, &fast())
        .await
        .unwrap();
    assert_eq!(pipe.state, PipeState::Running);
    assert_eq!(server.requests().len(), 4, "an early 404 is tolerated");
}

#[tokio::test]
async fn a_pipe_that_fails_ends_the_wait_at_once() {
    let server = ScriptServer::start(vec![
        pipe_in("Provisioning"),
        pipe_in("Failed"),
        pipe_in("Running"),
    ])
    .await;
    let err = service(&server.mgmt())
        .pipe(PIPE.parse().unwrap())
        .wait_until(PipeState::Running, &fast())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::Wait(WaitError::PipeFailed { pipe, .. }) if pipe.state == PipeState::Failed),
        "{err}"
    );
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn waiting_for_gone_after_delete() {
    let server = ScriptServer::start(vec![
        Reply::fixture("delete_pipe"),
        pipe_in("Stopping"),
        Reply::mgmt_error(404, "NOT_FOUND", "gone"),
    ])
    .await;
    let pipe = service(&server.mgmt()).pipe(PIPE.parse().unwrap());
    pipe.delete().await.unwrap();
    pipe.wait_until_gone(&fast()).await.unwrap();
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn a_timeout_returns_the_last_seen_pipe() {
    let replies = (0..50).map(|_| pipe_in("Provisioning")).collect();
    let server = ScriptServer::start(replies).await;
    let options = fast().timeout(Duration::from_millis(60));
    let err = service(&server.mgmt())
        .pipe(PIPE.parse().unwrap())
        .wait_until_steady(&options)
        .await
        .unwrap_err();
    match err {
        Error::Wait(wait) => assert_eq!(
            wait.last_seen_pipe().map(|p| p.state.clone()),
            Some(PipeState::Provisioning)
        ),
        other => panic!("expected a wait error, got {other}"),
    }
}

/// Runs `start_and_wait` (or `stop_and_wait`) against `replies`, checks that it reached the target,
/// and answers the bodies of the state calls: `{"command": ...}`, or `{}` for a read.
async fn wait_with(command: ServiceCommand, replies: Vec<Reply>) -> Vec<serde_json::Value> {
    let server = ScriptServer::start(replies).await;
    let reached = service(&server.mgmt())
        .command_and_wait(command, &fast())
        .await
        .unwrap();
    assert_eq!(reached.state, Some(command.target()));
    let requests = server.requests();
    assert!(
        requests
            .iter()
            .all(|r| r.method == "PATCH" && r.path.ends_with("/state"))
    );
    requests.iter().map(|r| r.json()).collect()
}

fn sent(command: ServiceCommand) -> serde_json::Value {
    serde_json::json!({ "command": command.to_string() })
}

fn read() -> serde_json::Value {
    serde_json::json!({})
}

const START: ServiceCommand = ServiceCommand::Start;

#[tokio::test]
async fn start_and_wait_sends_start_once_then_reads() {
    let replies = vec![
        service_in("stopped"),
        service_in("starting"),
        service_in("running"),
    ];
    assert_eq!(
        wait_with(START, replies).await,
        [sent(START), read(), read()],
        "the answer to the start is the service before it changed, not a refusal"
    );
}

#[tokio::test]
async fn a_conflict_while_stopping_is_waited_out_and_the_start_sent_again() {
    let replies = vec![
        Reply::mgmt_error(409, "CONFLICT", "service is stopping; cannot start"),
        service_in("stopping"),
        service_in("stopping"),
        service_in("stopped"),
        service_in("starting"),
        service_in("running"),
    ];
    assert_eq!(
        wait_with(START, replies).await,
        [sent(START), read(), read(), read(), sent(START), read()],
        "after the 409 the waiter reads until the stop is over, then starts again"
    );
}

#[tokio::test]
async fn an_unknown_state_keeps_the_wait_going_without_a_command() {
    let replies = vec![
        service_in("starting"),
        service_in("hibernating"),
        service_in("hibernating"),
        service_in("running"),
    ];
    assert_eq!(
        wait_with(START, replies).await,
        [sent(START), read(), read(), read()]
    );
}

#[tokio::test]
async fn degraded_keeps_the_wait_going_without_a_command() {
    for (command, answer) in [
        (ServiceCommand::Start, "starting"),
        (ServiceCommand::Stop, "stopping"),
    ] {
        let replies = vec![
            service_in(answer),
            service_in("degraded"),
            service_in("degraded"),
            service_in(command.target().as_str()),
        ];
        assert_eq!(
            wait_with(command, replies).await,
            [sent(command), read(), read(), read()],
            "{command}"
        );
    }
}

#[tokio::test]
async fn a_service_back_in_stopped_after_a_start_gets_exactly_one_more_start() {
    let replies = vec![
        service_in("starting"),
        service_in("starting"),
        service_in("stopped"),
        service_in("starting"),
        service_in("starting"),
        service_in("running"),
    ];
    assert_eq!(
        wait_with(START, replies).await,
        [sent(START), read(), read(), sent(START), read(), read()]
    );
}

#[tokio::test]
async fn a_failed_service_ends_the_wait_with_the_service() {
    let server = ScriptServer::start(vec![
        Reply::mgmt_error(409, "CONFLICT", "service is failed; cannot start"),
        service_in("failed"),
    ])
    .await;
    let err = service(&server.mgmt())
        .start_and_wait(&fast())
        .await
        .unwrap_err();
    match &err {
        Error::Wait(wait @ WaitError::ServiceFailed { .. }) => {
            assert_eq!(
                wait.last_seen_service().map(|s| s.state_name()),
                Some("failed")
            );
        }
        other => panic!("expected a failed service, got {other}"),
    }
    assert_eq!(server.requests().len(), 2, "no further polls");
}

/// A server that refuses the state command without a command (400), as production may: the
/// waiter learns it once per client and reads by sending its own command, a 409 to that command
/// meaning the service is still moving.
#[tokio::test]
async fn a_server_that_refuses_a_read_without_a_command_is_read_with_the_command_learned_once() {
    let refused = || Reply::mgmt_error(400, "BAD_REQUEST", "command must be start or stop");
    let server = ScriptServer::start(vec![
        // The first wait: start, a read refused, then start as the read.
        service_in("starting"),
        refused(),
        Reply::mgmt_error(409, "CONFLICT", "the service is stopping"),
        service_in("starting"),
        service_in("running"),
        // A second wait of the same client: never a read without a command again.
        service_in("stopping"),
        service_in("stopping"),
        service_in("stopped"),
    ])
    .await;
    let client = server.mgmt();
    let running = service(&client).start_and_wait(&fast()).await.unwrap();
    assert_eq!(running.state_name(), "running");
    let stopped = service(&client.clone())
        .stop_and_wait(&fast())
        .await
        .unwrap();
    assert_eq!(stopped.state_name(), "stopped");

    let bodies: Vec<serde_json::Value> = server.requests().iter().map(|r| r.json()).collect();
    assert_eq!(
        bodies,
        [
            sent(START),
            serde_json::json!({}),
            sent(START),
            sent(START),
            sent(START),
            sent(ServiceCommand::Stop),
            sent(ServiceCommand::Stop),
            sent(ServiceCommand::Stop),
        ],
        "one read without a command, ever"
    );
}
