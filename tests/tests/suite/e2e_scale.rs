//! End to end: rate limiting with the SDK limiter, persistence across an emulator restart, and many
//! concurrent operations from clones of one client.

use crate::support;

use std::collections::HashSet;
use std::time::Duration;

use api_emulator::{EmulatorOptions, Limits};
use api_mgmt::{client::RetryPolicy, pipes::PipeState, rate_limit::RateLimit};
use support::emulated::{kafka_pipe, mgmt, running_service, seen, start, start_with};

fn tight_limits() -> Limits {
    Limits {
        enabled: true,
        management_max: 10,
        management_window_secs: 1,
        observability_max: 100,
        observability_window_secs: 60,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_above_the_limit_completes_with_no_failed_call_when_the_sdk_limiter_is_on() {
    let emulator = start_with(EmulatorOptions::for_tests().limits(tight_limits())).await;
    let (id, secret) = emulator.admin_key();
    let client = api_mgmt::Client::builder(emulator.base_url())
        .credentials(api_mgmt::Credentials::basic(id, secret))
        .rate_limit(RateLimit::new(10, Duration::from_secs(1)).unwrap())
        .retry(support::fast_retries())
        .build()
        .unwrap();
    let mut calls = tokio::task::JoinSet::new();
    for _ in 0..25 {
        let clone = client.clone();
        let service = running_service(&emulator, &clone);
        calls.spawn(async move { service.reverse_private_endpoints().await.map(|_| ()) });
    }
    let mut failures = 0;
    while let Some(result) = calls.join_next().await {
        failures += usize::from(result.unwrap().is_err());
    }
    assert_eq!(
        failures, 0,
        "25 calls at 10 per second with the limiter: no failed call"
    );
    let throttled = emulator
        .requests()
        .iter()
        .filter(|r| r.status == 429)
        .count();
    assert!(
        throttled <= 3,
        "the limiter keeps the batch (almost) clear of 429s: {throttled}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_limiter_and_retries_the_same_batch_collects_429s() {
    let emulator = start_with(EmulatorOptions::for_tests().limits(tight_limits())).await;
    let client = mgmt(&emulator).with_retry(RetryPolicy::disabled());
    let mut calls = tokio::task::JoinSet::new();
    for _ in 0..25 {
        let service = running_service(&emulator, &client);
        calls.spawn(async move { service.reverse_private_endpoints().await.map(|_| ()) });
    }
    let mut limited = 0;
    while let Some(result) = calls.join_next().await {
        if let Err(e) = result.unwrap() {
            assert!(e.is_rate_limited(), "{e}");
            limited += 1;
        }
    }
    assert!(limited >= 10, "most of the burst is refused: {limited}");
}

#[tokio::test]
async fn state_survives_an_emulator_restart_with_the_same_data_dir() {
    let dir = tempfile::tempdir().unwrap();
    let options = || EmulatorOptions::for_tests().data_dir(dir.path());
    let emulator = start_with(options()).await;
    let client = mgmt(&emulator);
    let service = running_service(&emulator, &client);
    let created = service
        .pipes()
        .create(&kafka_pipe("durable"))
        .await
        .unwrap();
    service
        .create_private_endpoint("vpce-durable", "kept")
        .await
        .unwrap();
    service.stop().await.unwrap();
    emulator.shutdown().await;

    let restarted = start_with(options()).await;
    let client = mgmt(&restarted);
    let service = running_service(&restarted, &client);
    let pipe = service.pipe(created.id).get().await.unwrap();
    assert_eq!(
        (pipe.name.as_str(), &pipe.state),
        ("durable", &PipeState::Running)
    );
    assert!(
        service
            .create_private_endpoint("vpce-durable", "again")
            .await
            .unwrap_err()
            .is_conflict()
    );
    let err = service
        .pipes()
        .create(&kafka_pipe("after-stop"))
        .await
        .unwrap_err();
    assert!(
        err.is_service_not_running(),
        "the stopped service stayed stopped: {err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_concurrent_creates_from_clones_lose_and_duplicate_nothing() {
    let emulator = start().await;
    let client = mgmt(&emulator);
    let mut calls = tokio::task::JoinSet::new();
    for i in 0..200 {
        let service = running_service(&emulator, &client.clone());
        calls.spawn(async move {
            service
                .pipes()
                .create(&kafka_pipe(&format!("pipe-{i:03}")))
                .await
                .map(|p| p.id)
        });
    }
    let mut ids = HashSet::new();
    while let Some(result) = calls.join_next().await {
        assert!(ids.insert(result.unwrap().unwrap()), "a duplicate id");
    }
    assert_eq!(ids.len(), 200);
    assert_eq!(
        seen(&emulator, "POST", "/v1/"),
        200,
        "no retry, no duplicate create"
    );

    let service = running_service(&emulator, &client);
    let mut reads = tokio::task::JoinSet::new();
    for id in ids {
        let pipe = service.pipe(id);
        reads.spawn(async move { pipe.get().await.map(|p| p.name.to_string()) });
    }
    let mut names = HashSet::new();
    while let Some(result) = reads.join_next().await {
        names.insert(result.unwrap().unwrap());
    }
    assert_eq!(names.len(), 200, "every acknowledged pipe is there, once");
}
