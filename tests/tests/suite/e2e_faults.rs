//! End to end: the SDK's retries under faults injected into the emulator.

use crate::support;

use api_emulator::Fault;
use api_mgmt::{Error, pipes::PipeState};
use support::emulated::{inject, kafka_pipe, mgmt, running_service, seen, start, status};

const PIPES: &str = "/v1/organizations/*/services/*/pipes";
const PIPE: &str = "/v1/organizations/*/services/*/pipes/*";

#[tokio::test]
async fn a_get_survives_503s_a_gateway_page_a_dropped_connection_and_a_truncated_body() {
    let emulator = start().await;
    let client = mgmt(&emulator);
    let service = running_service(&emulator, &client);
    let created = service.pipes().create(&kafka_pipe("faulty")).await.unwrap();
    let pipe = service.pipe(created.id);

    inject(&emulator, "GET", PIPE, vec![status(503), status(503)]);
    let read = pipe.get().await.unwrap();
    assert_eq!(
        (read.state.clone(), read.meta().attempts),
        (PipeState::Running, 3)
    );

    let html = Fault::gateway_page(502);
    let dropped = Fault::drop_connection();
    let truncated = Fault::truncate();
    inject(&emulator, "GET", PIPE, vec![html, dropped, truncated]);
    let read = client
        .with_retry(
            api_mgmt::client::RetryPolicy::default()
                .max_attempts(5)
                .initial_backoff(std::time::Duration::from_millis(5)),
        )
        .service(service.organization_id(), service.id())
        .pipe(pipe.id())
        .get()
        .await
        .unwrap();
    assert_eq!(
        read.meta().attempts,
        4,
        "502 page, dropped connection and truncated body were retried"
    );
}

#[tokio::test]
async fn a_create_is_not_retried_after_a_500() {
    let emulator = start().await;
    let client = mgmt(&emulator);
    let service = running_service(&emulator, &client);
    inject(&emulator, "POST", PIPES, vec![status(500)]);
    let err = service
        .pipes()
        .create(&kafka_pipe("once"))
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(500));
    assert_eq!(err.as_api().unwrap().code.as_str(), "INTERNAL_ERROR");
    assert_eq!(
        seen(&emulator, "POST", "/v1/"),
        1,
        "exactly one create reached the server"
    );

    inject(&emulator, "POST", PIPES, vec![Fault::drop_connection()]);
    let err = service
        .pipes()
        .create(&kafka_pipe("lost"))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Transport(_)), "{err}");
    assert!(err.is_outcome_unknown() && !err.is_retryable(), "{err}");
    assert_eq!(
        seen(&emulator, "POST", "/v1/"),
        2,
        "a connection lost after sending is not retried for a create"
    );
}

#[tokio::test]
async fn a_create_is_retried_after_a_429() {
    let emulator = start().await;
    let client = mgmt(&emulator);
    let service = running_service(&emulator, &client);
    let throttled = Fault::status(429).header("X-RateLimit-Reset", "0");
    inject(&emulator, "POST", PIPES, vec![throttled]);
    let pipe = service
        .pipes()
        .create(&kafka_pipe("throttled"))
        .await
        .unwrap();
    assert_eq!(pipe.meta().attempts, 2);
    assert_eq!(seen(&emulator, "POST", "/v1/"), 2);
}

#[tokio::test]
async fn a_malformed_success_body_is_a_decode_error_and_a_delay_hits_the_attempt_timeout() {
    let emulator = start().await;
    let client = mgmt(&emulator);
    let service = running_service(&emulator, &client);
    inject(
        &emulator,
        "GET",
        "/v1/organizations/*/services/*/pipesReversePrivateEndpoints",
        vec![Fault::malformed()],
    );
    match service.reverse_private_endpoints().await.unwrap_err() {
        Error::Decode(e) => assert_eq!(e.operation, "listReversePrivateEndpoints"),
        other => panic!("expected a decode error, got {other}"),
    }

    let slow = Fault::delay(std::time::Duration::from_millis(500));
    inject(
        &emulator,
        "GET",
        "/v1/organizations/*/services/*/pipesReversePrivateEndpoints",
        vec![slow],
    );
    let (id, secret) = emulator.admin_key();
    let impatient = api_mgmt::Client::builder(emulator.base_url())
        .credentials(api_mgmt::Credentials::basic(id, secret))
        .attempt_timeout(std::time::Duration::from_millis(100))
        .retry(support::fast_retries())
        .build()
        .unwrap();
    let endpoints = running_service(&emulator, &impatient)
        .reverse_private_endpoints()
        .await
        .unwrap();
    assert_eq!(
        endpoints.meta().attempts,
        2,
        "the slow attempt timed out and the retry succeeded"
    );
}

#[tokio::test]
async fn a_delay_applied_first_stores_the_create_before_its_slow_answer() {
    let emulator = start().await;
    let client = mgmt(&emulator);
    let service = running_service(&emulator, &client);
    let slow = Fault::delay(std::time::Duration::from_millis(800)).applied();
    inject(&emulator, "POST", PIPES, vec![slow]);
    let pipes = service.pipes();
    let new_pipe = kafka_pipe("slow-answer");
    let create = tokio::spawn(async move { pipes.create(&new_pipe).await });
    // The pipe is stored at once; its answer is still on its way.
    let started = std::time::Instant::now();
    while !emulator.pipes().iter().any(|p| p.name == "slow-answer") {
        assert!(
            started.elapsed() < std::time::Duration::from_millis(600),
            "not stored at once"
        );
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    assert!(!create.is_finished(), "answered before its delay");
    let created = create.await.unwrap().unwrap();
    assert!(started.elapsed() >= std::time::Duration::from_millis(500));
    assert_eq!(created.name, "slow-answer", "the request's own answer");
    assert_eq!(emulator.pipes().len(), 1);
}
