//! End to end: the emulator as a test harness — the request log, scripted faults (by operation,
//! counted, hangups, applied), typed access to its state, and deterministic mode.

use crate::support;

use std::io::{Read, Write};
use std::time::Duration;

use api_emulator::{
    EmulatorOptions, Fault, FaultRule, Method, OperationId, PipeState, REDACTED, ServiceState,
};
use api_mgmt::{Error, client::RetryPolicy};
use support::emulated::{
    control, kafka_pipe, mgmt, no_retries, running_service, start, start_with,
};

#[tokio::test]
async fn the_request_log_shows_operation_redacted_body_status_and_request_id() {
    let emulator = start().await;
    let client = mgmt(&emulator);
    let service = running_service(&emulator, &client);
    let created = service.pipes().create(&kafka_pipe("logged")).await.unwrap();
    let _ = service.pipe(created.id).get().await.unwrap();
    let _ = service.pipe(created.id).settings().await.unwrap();

    let log = emulator.requests();
    assert_eq!(log.count_of(OperationId::CreatePipe), 1);
    assert_eq!(log.count_of(OperationId::GetPipe), 1);
    assert_eq!(log.count_of(OperationId::DeletePipe), 0);
    let create = log
        .last_of(OperationId::CreatePipe)
        .expect("the create is logged");
    assert_eq!((create.method.as_str(), create.status), ("POST", 200));
    assert_eq!(Some(&create.request_id), created.meta().request_id.as_ref());
    let body = create.body.as_ref().expect("the body is logged");
    assert_eq!(body["name"], "logged");
    assert_eq!(body["source"]["kafka"]["credentials"]["username"], "reader");
    assert_eq!(body["source"]["kafka"]["credentials"]["password"], REDACTED);
    assert_eq!(create.headers["authorization"], REDACTED);
    assert!(
        create.headers["user-agent"].contains("api-"),
        "{:?}",
        create.headers
    );

    // The same over HTTP, and nothing secret anywhere in it.
    let (status, entries) =
        control(&emulator, reqwest::Method::GET, "/_emulator/requests", None).await;
    assert_eq!(status, 200);
    let text = entries.to_string();
    let (_, key_secret) = emulator.admin_key();
    for secret in ["kafka-password", key_secret] {
        assert!(!text.contains(secret), "{secret} leaked into the log");
    }
    let first = &entries[0];
    assert_eq!(first["operationId"], "createPipe");
    assert_eq!(
        first["body"]["source"]["kafka"]["credentials"]["password"],
        REDACTED
    );
    assert_eq!(first["requestId"], create.request_id.as_str());

    // A request no operation matches.
    let unknown = api_mgmt::client::http_client_builder()
        .build()
        .unwrap()
        .get(format!("{}/v1/nowhere", emulator.base_url()))
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), 404);
    let last = emulator.requests().last().cloned().expect("logged");
    assert_eq!(
        (last.operation_id, last.status, last.body),
        (None, 404, None)
    );
    emulator.clear_requests();
    assert!(emulator.requests().is_empty());
}

#[tokio::test]
async fn faults_by_operation_counted_and_permanent() {
    let emulator = start().await;
    let client = mgmt(&emulator);
    let service = running_service(&emulator, &client);
    emulator
        .inject(
            FaultRule::operation(OperationId::ListReversePrivateEndpoints)
                .then(Fault::status(503).times(2)),
        )
        .unwrap();
    let listed = service.reverse_private_endpoints().await.unwrap();
    assert_eq!(listed.meta().attempts, 3, "two 503s, then the answer");
    let statuses: Vec<u16> = emulator
        .requests()
        .of(OperationId::ListReversePrivateEndpoints)
        .iter()
        .map(|e| e.status)
        .collect();
    assert_eq!(statuses, [503, 503, 200]);
    assert!(
        emulator
            .requests()
            .of(OperationId::ListReversePrivateEndpoints)[0]
            .faulted
    );

    emulator
        .inject(
            FaultRule::operation(OperationId::GetPipeSettings).then(Fault::status(500).always()),
        )
        .unwrap();
    let created = service.pipes().create(&kafka_pipe("always")).await.unwrap();
    let quiet = client.with_retry(no_retries());
    let handle = quiet
        .service(service.organization_id(), service.id())
        .pipe(created.id);
    for _ in 0..3 {
        assert_eq!(handle.settings().await.unwrap_err().status(), Some(500));
    }
    assert!(handle.get().await.is_ok(), "other operations are untouched");
    emulator.clear_faults();
    assert!(handle.settings().await.is_ok());

    let refused = emulator.inject(FaultRule::operation(OperationId::GetPipe));
    assert!(
        refused
            .unwrap_err()
            .to_string()
            .contains("at least one action")
    );
}

/// Sends one raw HTTP/1.1 request and returns every byte the server sent before closing.
fn raw_exchange(address: std::net::SocketAddr, request: &str) -> Vec<u8> {
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    answer
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hangup_sends_nothing_and_an_applied_fault_stores_the_create() {
    let emulator = start().await;
    let client = mgmt(&emulator).with_retry(no_retries());
    let service = running_service(&emulator, &client);

    // Not a single byte: what curl calls an empty reply.
    emulator
        .inject(FaultRule::on(Method::GET, "/api/v2/dashboards").then(Fault::hangup()))
        .unwrap();
    let address = emulator.address();
    let answer = tokio::task::spawn_blocking(move || {
        raw_exchange(
            address,
            "GET /api/v2/dashboards HTTP/1.1\r\nHost: emulator\r\n\r\n",
        )
    })
    .await
    .unwrap();
    assert!(answer.is_empty(), "{}", String::from_utf8_lossy(&answer));
    assert_eq!(
        emulator
            .requests()
            .last_of(OperationId::ListDashboards)
            .unwrap()
            .status,
        0
    );

    // A hangup on a create that is not applied: the client cannot know, and nothing was stored.
    emulator
        .inject(FaultRule::operation(OperationId::CreatePipe).then(Fault::hangup()))
        .unwrap();
    let err = service
        .pipes()
        .create(&kafka_pipe("skipped"))
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::Transport(_)) && err.is_outcome_unknown(),
        "{err}"
    );
    assert!(emulator.pipes().iter().all(|p| p.name != "skipped"));

    // Applied: stored, then hung up; and stored, then answered 504.
    emulator
        .inject(
            FaultRule::operation(OperationId::CreatePipe)
                .then(Fault::hangup().applied())
                .then(Fault::status(504).applied()),
        )
        .unwrap();
    let err = service
        .pipes()
        .create(&kafka_pipe("hung-up"))
        .await
        .unwrap_err();
    assert!(err.is_outcome_unknown(), "{err}");
    let err = service
        .pipes()
        .create(&kafka_pipe("gateway"))
        .await
        .unwrap_err();
    assert!(
        err.is_outcome_unknown() && err.status() == Some(504),
        "{err}"
    );
    let (status, pipes) = control(&emulator, reqwest::Method::GET, "/_emulator/pipes", None).await;
    assert_eq!(status, 200);
    let names: Vec<&str> = pipes
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert_eq!(names, ["hung-up", "gateway"], "both creates took effect");
    assert_eq!(
        pipes[0]["pipe"]["source"]["kafka"]["brokers"],
        "b-1.kafka.emulator.local:9098"
    );
    assert!(!pipes.to_string().contains("kafka-password"));
}

#[tokio::test]
async fn services_and_pipes_are_readable_and_settable_with_typed_ids() {
    let emulator = start().await;
    let client = mgmt(&emulator);
    let service = running_service(&emulator, &client);
    assert_eq!(service.organization_id(), emulator.organization_id());
    let running = emulator.service_id(ServiceState::Running).unwrap();
    assert_eq!(running, service.id());
    let view = emulator
        .services()
        .into_iter()
        .find(|s| s.id == running)
        .unwrap();
    assert_eq!(
        (view.organization_id, view.state.clone()),
        (emulator.organization_id(), ServiceState::Running)
    );
    assert_eq!(view.service["id"], running.to_string());

    let created = service.pipes().create(&kafka_pipe("typed")).await.unwrap();
    let pipes = emulator.pipes();
    assert_eq!(pipes.len(), 1);
    assert_eq!(
        (pipes[0].id, pipes[0].service_id, pipes[0].state.clone()),
        (created.id, running, PipeState::Running)
    );

    assert!(
        emulator
            .force_pipe_state(created.id, Some(PipeState::Failed))
            .unwrap()
    );
    assert_eq!(
        service.pipe(created.id).get().await.unwrap().state,
        PipeState::Failed
    );
    assert!(emulator.force_pipe_state(created.id, None).unwrap());
    assert_eq!(
        service.pipe(created.id).get().await.unwrap().state,
        PipeState::Running
    );
    assert!(
        !emulator
            .force_pipe_state(
                "0f9e8d7c-6b5a-4f3e-9d2c-1b0a9f8e7d6c".parse().unwrap(),
                None
            )
            .unwrap()
    );

    // A service put in `stopped` over HTTP: its pipes cannot be created (424) until it starts.
    let (status, _) = control(
        &emulator,
        reqwest::Method::PUT,
        &format!("/_emulator/services/{running}/state"),
        Some(serde_json::json!({"state": "stopped"})),
    )
    .await;
    assert_eq!(status, 204);
    assert_eq!(
        service.get().await.unwrap().state,
        Some(ServiceState::Stopped)
    );
    let err = service
        .pipes()
        .create(&kafka_pipe("refused"))
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(424), "{err}");
    let (status, services) =
        control(&emulator, reqwest::Method::GET, "/_emulator/services", None).await;
    assert_eq!(status, 200);
    assert!(
        services
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["id"] == running.to_string() && s["state"] == "stopped")
    );

    let anonymous = api_mgmt::client::http_client_builder()
        .build()
        .unwrap()
        .get(format!("{}/_emulator/pipes", emulator.base_url()))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), 401, "the control token is needed");
}

/// Runs one scripted session over raw HTTP against a fresh deterministic emulator and returns every
/// answer: status, request id header and body, byte for byte.
async fn deterministic_session(seed: u64) -> Vec<String> {
    let emulator = start_with(EmulatorOptions::for_tests().deterministic(seed)).await;
    let (key_id, key_secret) = emulator.admin_key();
    let organization = emulator.organization_id();
    let service = emulator.service_id("running").unwrap();
    let http = api_mgmt::client::http_client_builder().build().unwrap();
    let base = format!(
        "{}/v1/organizations/{organization}/services/{service}",
        emulator.base_url()
    );
    let pipe = serde_json::json!({
        "name": "snapshot",
        "source": {"kafka": {"brokers": "b:9092", "topics": "t", "format": "JSONEachRow", "authentication": "PLAIN",
                              "credentials": {"username": "u", "password": "p"}}},
        "destination": {"database": "default", "table": "t", "managedTable": true, "columns": [{"name": "id", "type": "UInt64"}]},
        "fieldMappings": [{"sourceField": "id", "destinationField": "id"}]
    });
    let mut answers = Vec::new();
    let record = |response: reqwest::Response| async move {
        let head = format!(
            "{} {:?}",
            response.status(),
            response.headers().get("x-request-id")
        );
        format!("{head} {}", response.text().await.unwrap())
    };
    let created = http
        .post(format!("{base}/pipes"))
        .basic_auth(key_id, Some(key_secret))
        .json(&pipe)
        .send()
        .await
        .unwrap();
    let created = record(created).await;
    let id = created
        .split("\"id\":\"")
        .nth(1)
        .and_then(|rest| rest.get(..36))
        .unwrap()
        .to_string();
    answers.push(created);
    for path in [
        format!("/pipes/{id}"),
        format!("/pipes/{id}/settings"),
        "/pipesReversePrivateEndpoints".to_string(),
    ] {
        let response = http
            .get(format!("{base}{path}"))
            .basic_auth(key_id, Some(key_secret))
            .send()
            .await
            .unwrap();
        answers.push(record(response).await);
    }
    let stop = http
        .patch(format!("{base}/state"))
        .basic_auth(key_id, Some(key_secret))
        .json(&serde_json::json!({"command": "stop"}))
        .send()
        .await
        .unwrap();
    answers.push(record(stop).await);
    // The log too, but for the headers (`host` names the port, which differs).
    for mut entry in emulator.requests() {
        entry.headers.clear();
        answers.push(serde_json::to_string(&entry).unwrap());
    }
    answers
}

#[tokio::test]
async fn deterministic_mode_gives_byte_identical_answers() {
    let first = deterministic_session(42).await;
    let second = deterministic_session(42).await;
    assert_eq!(first, second);
    assert!(
        first[0].contains("\"createdAt\":\"2026-01-01T00:00:01Z\""),
        "{}",
        first[0]
    );
    let other = deterministic_session(43).await;
    assert_ne!(first[0], other[0], "another seed, other ids");
}

#[tokio::test]
async fn deterministic_time_drives_transitions_one_second_per_request() {
    let emulator = start_with(EmulatorOptions::new().rate_limits(false).deterministic(1)).await;
    let client = mgmt(&emulator).with_retry(RetryPolicy::disabled());
    let service = running_service(&emulator, &client);
    let stopping = service.stop().await.unwrap();
    assert_eq!(stopping.state, Some(ServiceState::Stopping));
    // The default transition takes 2 s: two more requests on the deterministic clock.
    assert_eq!(
        service.get().await.unwrap().state,
        Some(ServiceState::Stopping)
    );
    assert_eq!(
        service.get().await.unwrap().state,
        Some(ServiceState::Stopped)
    );
}

#[tokio::test]
async fn a_pipe_changes_out_of_band_through_a_merge_patch_checked_against_the_pipe_schema() {
    let emulator = start().await;
    let client = mgmt(&emulator);
    let service = running_service(&emulator, &client);
    let created = service.pipes().create(&kafka_pipe("edited")).await.unwrap();
    let path = format!("/_emulator/pipes/{}", created.id);

    let (status, pipe) = control(
        &emulator,
        reqwest::Method::PATCH,
        &path,
        Some(serde_json::json!({"scaling": {"replicas": 3}, "source": {"kafka": {"consumerGroup": null}}, "settings": {"db_max_threads": 16}})),
    )
    .await;
    assert_eq!(status, 200, "{pipe}");
    assert_eq!(pipe["scaling"]["replicas"], 3);
    assert_eq!(
        pipe["scaling"]["replicaCpuMillicores"], 500,
        "the rest is kept"
    );
    let read = service.pipe(created.id).get().await.unwrap();
    assert_eq!(read.scaling.replicas, Some(3), "the API answers the change");
    assert_eq!(read.settings.db_max_threads, Some(16));
    assert!(read.updated_at >= created.updated_at);

    for (patch, expected) in [
        (
            serde_json::json!({"scaling": {"replicas": "three"}}),
            "scaling.replicas: expected an integer",
        ),
        (
            serde_json::json!({"state": "Failed"}),
            "PUT /_emulator/pipes/{pipeId}/state",
        ),
        (
            serde_json::json!({"id": "0f9e8d7c-6b5a-4f3e-9d2c-1b0a9f8e7d6c"}),
            "id cannot be changed",
        ),
        (
            serde_json::json!(["not", "an", "object"]),
            "a merge patch is a JSON object",
        ),
    ] {
        let (status, answer) = control(&emulator, reqwest::Method::PATCH, &path, Some(patch)).await;
        assert_eq!(status, 400, "{answer}");
        let message = answer["message"].as_str().unwrap_or_default();
        assert!(message.contains(expected), "{expected:?} in {message:?}");
    }
    assert_eq!(
        service
            .pipe(created.id)
            .get()
            .await
            .unwrap()
            .scaling
            .replicas,
        Some(3),
        "a refused patch changes nothing"
    );

    let (status, _) = control(
        &emulator,
        reqwest::Method::PATCH,
        "/_emulator/pipes/0f9e8d7c-6b5a-4f3e-9d2c-1b0a9f8e7d6c",
        Some(serde_json::json!({"scaling": {"replicas": 3}})),
    )
    .await;
    assert_eq!(status, 404);
    let anonymous = api_mgmt::client::http_client_builder()
        .build()
        .unwrap()
        .patch(format!("{}{path}", emulator.base_url()))
        .json(&serde_json::json!({"scaling": {"replicas": 4}}))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), 401, "the control token is needed");
}
