//! End to end: every operation of both APIs through the SDK facades against the emulator, and the
//! state machines the waiters follow.

use crate::support;

use std::time::Duration;

use api_emulator::EmulatorOptions;
use api_mgmt::{
    NewPipe,
    pipes::{
        Compression, Destination, KinesisSource, ObjectStorageSource, PipeState, PostgresSource,
        PostgresTableMapping, Scaling, SourceKind,
    },
    services::{ReversePrivateEndpointStatus, ServiceState},
    wait::WaitError,
};
use support::emulated::{
    fast_wait, kafka_pipe, mgmt, obs, running_service, short_timing, start, start_with,
    stopped_service,
};

#[tokio::test]
async fn every_management_operation_round_trips() {
    let emulator = start().await;
    let client = mgmt(&emulator);
    let service = running_service(&emulator, &client);

    let started = service.start().await.unwrap();
    assert_eq!(started.state, Some(ServiceState::Running));
    assert!(started.meta().request_id.is_some());

    let created = service
        .pipes()
        .create(
            &NewPipe::builder("orders")
                .scaling(Scaling::new().replicas(3))
                .validate_samples(true)
                .source(
                    api_mgmt::pipes::KafkaSource::new("b-1:9098", "orders")
                        .credentials("reader", "kafka-password"),
                )
                .destination(
                    Destination::new("default")
                        .table("orders")
                        .managed_table(true)
                        .column("id", "UInt64")
                        .role("w"),
                )
                .field_mapping("id", "id")
                .build()
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(
        created.state,
        PipeState::Provisioning,
        "a new pipe starts in Provisioning"
    );
    assert_eq!(created.source_kind(), Some(SourceKind::Kafka));
    assert_eq!(created.scaling.replicas, Some(3));
    let (key_id, secret) = emulator.admin_key();
    let url = format!(
        "{}/v1/organizations/{}/services/{}/pipes/{}",
        emulator.base_url(),
        emulator.organization_id(),
        service.id(),
        created.id
    );
    let body = api_mgmt::client::http_client_builder()
        .build()
        .unwrap()
        .get(url)
        .basic_auth(key_id, Some(secret))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        body.contains("\"consumerGroup\"") || body.contains("\"brokers\""),
        "the raw answer has the source: {body}"
    );
    for request_only in ["credentials", "kafka-password", "validateSamples", "roles"] {
        assert!(
            !body.contains(request_only),
            "{request_only} must not come back: {body}"
        );
    }

    let pipe = service.pipe(created.id);
    assert_eq!(
        pipe.get().await.unwrap().state,
        PipeState::Running,
        "instant timing"
    );
    let settings = pipe.settings().await.unwrap();
    assert_eq!(
        settings.streaming_max_insert_wait_ms,
        Some(5000),
        "the emulator's defaults"
    );

    let endpoints = service.reverse_private_endpoints().await.unwrap();
    assert_eq!(endpoints.len(), 2);
    assert_eq!(endpoints[0].status, ReversePrivateEndpointStatus::Ready);
    assert_eq!(
        endpoints[0].service_id,
        service.id(),
        "serviceId is filled in"
    );

    let registered = service
        .create_private_endpoint("vpce-0123456789abcdef0", "CI runners")
        .await
        .unwrap();
    assert_eq!(registered.description, "CI runners");

    pipe.delete().await.unwrap();
    pipe.wait_until_gone(&fast_wait()).await.unwrap();
    assert!(pipe.get().await.unwrap_err().is_not_found());
    assert!(!pipe.delete_if_exists().await.unwrap(), "already gone");

    let stopped = service.stop().await.unwrap();
    assert_eq!(stopped.state, Some(ServiceState::Stopping));
}

#[tokio::test]
async fn both_observability_operations_round_trip() {
    let emulator = start().await;
    let client = obs(&emulator);
    let alert = client
        .alert("66a1f0c2d4e5f60718293a4b".parse().unwrap())
        .get()
        .await
        .unwrap();
    assert_eq!(alert.name, "Checkout p99 latency");
    assert_eq!(alert.state, Some(api_obs::alerts::AlertState::Ok));
    assert!(alert.meta().headers.contains_key("ratelimit-remaining"));
    let dashboards = client.dashboards().list().await.unwrap();
    assert_eq!(dashboards.len(), 2);
    assert_eq!(
        dashboards[0].tiles[1].series[0].data_source,
        Some(api_obs::dashboards::SeriesDataSource::Metrics)
    );
}

#[tokio::test]
async fn services_and_pipes_follow_their_state_machines() {
    let emulator = start_with(EmulatorOptions::for_tests().timing(short_timing())).await;
    let client = mgmt(&emulator);
    let stopped = stopped_service(&emulator, &client);

    let refused = stopped
        .pipes()
        .create(&kafka_pipe("too-early"))
        .await
        .unwrap_err();
    assert!(refused.is_service_not_running(), "{refused}");
    assert!(
        refused.to_string().contains("stopped"),
        "the text names the state: {refused}"
    );

    let first = stopped.start().await.unwrap();
    assert_eq!(first.state, Some(ServiceState::Starting));
    let running = stopped.start_and_wait(&fast_wait()).await.unwrap();
    assert_eq!(running.state, Some(ServiceState::Running));

    let kafka = stopped.pipes().create(&kafka_pipe("stream")).await.unwrap();
    let handle = stopped.pipe(kafka.id);
    assert_eq!(handle.get().await.unwrap().state, PipeState::Provisioning);
    assert_eq!(
        handle
            .wait_until(PipeState::Running, &fast_wait())
            .await
            .unwrap()
            .state,
        PipeState::Running
    );

    let one_shot = NewPipe::builder("backfill")
        .source(
            ObjectStorageSource::url("https://bucket.example/events/*.csv.gz")
                .compression(Compression::Gzip)
                .continuous(false),
        )
        .destination(
            Destination::new("default")
                .table("events")
                .managed_table(true)
                .column("c", "String"),
        )
        .field_mapping("c", "c")
        .build()
        .unwrap();
    let created = stopped.pipes().create(&one_shot).await.unwrap();
    let one_shot = stopped.pipe(created.id);
    let steady = one_shot.wait_until_steady(&fast_wait()).await.unwrap();
    assert_eq!(
        steady.state,
        PipeState::Running,
        "Running is already steady"
    );
    let done = one_shot
        .wait_until(PipeState::Completed, &fast_wait())
        .await
        .unwrap();
    assert_eq!(
        done.state,
        PipeState::Completed,
        "a one-shot load ends in Completed"
    );

    let cdc = NewPipe::builder("cdc")
        .source(
            PostgresSource::new("db.example", 5432, "crm")
                .credentials("replicator", "pg-password")
                .table(PostgresTableMapping::new(
                    "public",
                    "customers",
                    "crm_customers",
                )),
        )
        .destination(Destination::new("crm"))
        .build()
        .unwrap();
    let created = stopped.pipes().create(&cdc).await.unwrap();
    let postgres = stopped.pipe(created.id);
    let mut seen = vec![created.state.clone()];
    while seen.last() != Some(&PipeState::Running) {
        let state = postgres.get().await.unwrap().into_inner().state;
        if seen.last() != Some(&state) {
            seen.push(state);
        }
        tokio::time::sleep(Duration::from_millis(15)).await;
    }
    assert_eq!(
        seen,
        [
            PipeState::Provisioning,
            PipeState::Setup,
            PipeState::Snapshot,
            PipeState::Running
        ]
    );

    handle.delete().await.unwrap();
    assert_eq!(
        handle.get().await.unwrap().state,
        PipeState::Stopping,
        "a deleted pipe answers for a while"
    );
    handle.wait_until_gone(&fast_wait()).await.unwrap();

    let stopping = stopped.stop_and_wait(&fast_wait()).await.unwrap();
    assert_eq!(stopping.state, Some(ServiceState::Stopped));
}

#[tokio::test]
async fn a_waiter_fails_fast_when_the_pipe_fails() {
    let emulator = start_with(EmulatorOptions::for_tests().timing(short_timing())).await;
    let client = mgmt(&emulator);
    let service = running_service(&emulator, &client);
    let kinesis = NewPipe::builder("clicks")
        .source(
            KinesisSource::new("clickstream", "eu-west-1")
                .iam_role("arn:aws:iam::123456789012:role/kinesis-reader"),
        )
        .destination(
            Destination::new("web")
                .table("clicks")
                .managed_table(true)
                .column("url", "String"),
        )
        .field_mapping("url", "url")
        .build()
        .unwrap();
    let created = service.pipes().create(&kinesis).await.unwrap();
    let id = created.id;

    let control = api_mgmt::client::http_client_builder().build().unwrap();
    let forced = control
        .put(format!(
            "{}/_emulator/pipes/{id}/state",
            emulator.base_url()
        ))
        .bearer_auth(emulator.control_token())
        .json(&serde_json::json!({ "state": "Failed" }))
        .send()
        .await
        .unwrap();
    assert_eq!(forced.status(), 204);

    let started = std::time::Instant::now();
    let err = service
        .pipe(id)
        .wait_until(PipeState::Running, &fast_wait())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, api_mgmt::Error::Wait(WaitError::PipeFailed { pipe, .. }) if pipe.state == PipeState::Failed),
        "{err}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "fails fast, not at the timeout"
    );
}
