//! Every Rust sample of the guide (`guide/examples/`, included into its chapters) compiled and run
//! against the emulator, and each checked for what it claims to do.

use std::time::Duration;

use api_emulator::{Emulator, EmulatorOptions, Fault, FaultRule, OperationId};
use api_mgmt::{
    Client, Credentials, NewPipe,
    pipes::{Destination, KafkaSource, PipeId, PipeState, Scaling},
};

#[path = "../../../guide/examples/declared_apply.rs"]
mod declared_apply;
#[path = "../../../guide/examples/domain_values.rs"]
mod domain_values;
#[path = "../../../guide/examples/emulator_in_tests.rs"]
mod emulator_in_tests;
#[path = "../../../guide/examples/fault_rules.rs"]
mod fault_rules;
#[path = "../../../guide/examples/first_program.rs"]
mod first_program;
#[path = "../../../guide/examples/host_store.rs"]
mod host_store;
#[path = "../../../guide/examples/metrics.rs"]
mod metrics;
#[path = "../../../guide/examples/transport.rs"]
mod transport;
#[path = "../../../guide/examples/unknown_outcome.rs"]
mod unknown_outcome;
#[path = "../../../guide/examples/wait_for_condition.rs"]
mod wait_for_condition;

async fn emulator() -> Emulator {
    Emulator::start(EmulatorOptions::for_tests())
        .await
        .expect("the emulator starts")
}

fn client_of(emulator: &Emulator) -> Client {
    let (key_id, key_secret) = emulator.admin_key();
    Client::builder(emulator.base_url())
        .credentials(Credentials::basic(key_id, key_secret))
        .build()
        .expect("a client")
}

fn orders(replicas: u32) -> NewPipe {
    named("orders", replicas)
}

fn named(name: &str, replicas: u32) -> NewPipe {
    NewPipe::builder(name)
        .source(KafkaSource::new("b-1.kafka:9098", "orders").credentials("reader", "s3cret"))
        .destination(
            Destination::new("default")
                .table("orders")
                .managed_table(true),
        )
        .mapped_column("id", "id", "UInt64")
        .scaling(Scaling::default().replicas(replicas))
        .build()
        .expect("a valid pipe")
}

fn pipe_id(id: impl std::fmt::Display) -> PipeId {
    id.to_string().parse().expect("a pipe id")
}

#[tokio::test]
async fn the_first_program_starts_the_service_and_makes_a_running_pipe() {
    let emulator = emulator().await;
    let stopped = emulator.service_id("stopped").expect("a stopped service");
    first_program::first_program(
        emulator.base_url(),
        emulator.admin_key(),
        emulator.organization_id(),
        stopped,
    )
    .await
    .expect("the program runs");
    let pipes = emulator.pipes();
    assert_eq!(pipes.len(), 1);
    assert_eq!(
        (pipes[0].name.as_str(), pipes[0].service_id),
        ("orders", stopped)
    );
    assert_eq!(pipes[0].state.to_string(), "Running");
}

#[tokio::test]
async fn the_condition_waits_until_the_pipe_runs_on_two_replicas() {
    let emulator = emulator().await;
    let client = client_of(&emulator);
    let service = client.service(
        emulator.organization_id(),
        emulator.service_id("running").unwrap(),
    );
    let created = service.pipes().create(&orders(1)).await.unwrap();
    let pipe = service.pipe(created.id);
    // Scaled to 2 a moment later, as a console edit would.
    let id = created.id;
    let emulator = std::sync::Arc::new(emulator);
    let scaler = {
        let emulator = emulator.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            emulator
                .patch_pipe(
                    id.to_string().parse().unwrap(),
                    &serde_json::json!({"scaling": {"replicas": 2}}),
                )
                .expect("the patch applies");
        })
    };
    let started = std::time::Instant::now();
    tokio::time::timeout(
        Duration::from_secs(30),
        wait_for_condition::wait_until_scaled(&pipe),
    )
    .await
    .expect("the wait ends once the pipe is scaled, not at its 10-minute timeout")
    .expect("the wait ends");
    // It waited for the edit: not done before it, and the pipe as the condition says.
    assert!(scaler.is_finished(), "the wait ended before the edit");
    assert!(started.elapsed() >= Duration::from_millis(300));
    scaler.await.unwrap();
    let read = pipe.get().await.unwrap();
    assert_eq!(
        (read.state.clone(), read.scaling.replicas),
        (PipeState::Running, Some(2))
    );
}

#[tokio::test]
async fn a_create_of_unknown_outcome_is_reported_and_not_sent_again() {
    let emulator = emulator().await;
    let client = client_of(&emulator);
    let service = client.service(
        emulator.organization_id(),
        emulator.service_id("running").unwrap(),
    );
    emulator
        .inject(FaultRule::operation(OperationId::CreatePipe).then(Fault::status(504).applied()))
        .unwrap();
    let error = unknown_outcome::create_once(&service, &orders(1), &[])
        .await
        .expect_err("the outcome is unknown");
    assert!(error.is_outcome_unknown(), "{error}");
    assert_eq!(
        emulator.requests().of(OperationId::CreatePipe).len(),
        1,
        "sent once"
    );
    let made = pipe_id(emulator.pipes()[0].id);
    // With the pipe it made among the known ones, the sample finds it; a clean create succeeds.
    emulator
        .inject(FaultRule::operation(OperationId::CreatePipe).then(Fault::status(504).applied()))
        .unwrap();
    let again = unknown_outcome::create_once(&service, &named("events", 1), &[made]).await;
    assert!(again.is_err_and(|e| e.is_outcome_unknown()));
    unknown_outcome::create_once(&service, &named("returns", 1), &[])
        .await
        .expect("created");
    assert_eq!(emulator.pipes().len(), 3);
}

#[tokio::test]
async fn the_transport_sample_builds_both_clients_and_the_own_one_calls() {
    let emulator = emulator().await;
    let ca = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../crates/api-mgmt/tests/fixtures/tls/ca.pem"
    ))
    .expect("the test CA");
    let (_behind_proxy, on_own) = transport::clients(emulator.base_url(), emulator.admin_key(), ca)
        .expect("both clients build");
    let service = on_own.service(
        emulator.organization_id(),
        emulator.service_id("running").unwrap(),
    );
    let endpoints = service
        .reverse_private_endpoints()
        .await
        .expect("a call on the own client");
    assert_eq!(endpoints.len(), 2);
}

#[tokio::test]
async fn two_host_store_clients_share_a_429_as_two_processes_would() {
    let emulator = emulator().await;
    let (a, b) = (
        host_store::shared_limit_client(emulator.base_url(), emulator.admin_key()).unwrap(),
        host_store::shared_limit_client(emulator.base_url(), emulator.admin_key()).unwrap(),
    );
    let running = |client: &Client| {
        client.service(
            emulator.organization_id(),
            emulator.service_id("running").unwrap(),
        )
    };
    emulator
        .inject(
            FaultRule::operation(OperationId::ListReversePrivateEndpoints)
                .then(Fault::status(429).header("Retry-After", "1")),
        )
        .unwrap();
    let first = running(&a);
    let throttled = tokio::spawn(async move { first.reverse_private_endpoints().await });
    let looking = std::time::Instant::now();
    let at_429 = loop {
        if let Some(entry) = emulator.requests().iter().find(|e| e.status == 429) {
            break entry.at;
        }
        assert!(looking.elapsed() < Duration::from_secs(30), "no 429 came");
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    running(&b)
        .reverse_private_endpoints()
        .await
        .expect("the other client's call");
    throttled.await.unwrap().expect("served after the wait");
    let first_served = emulator
        .requests()
        .iter()
        .filter(|e| e.status == 200 && e.at > at_429)
        .map(|e| e.at)
        .min()
        .unwrap();
    assert!(
        (first_served - at_429).to_std().unwrap() >= Duration::from_millis(900),
        "the other client waited out the 429's second"
    );
}

#[tokio::test]
async fn the_metered_client_records_its_calls() {
    use opentelemetry_sdk::metrics::InMemoryMetricExporter;

    let emulator = emulator().await;
    let exporter = InMemoryMetricExporter::default();
    let (client, provider) =
        metrics::metered_client(emulator.base_url(), emulator.admin_key(), exporter.clone())
            .expect("a client");
    let service = client.service(
        emulator.organization_id(),
        emulator.service_id("running").unwrap(),
    );
    service.reverse_private_endpoints().await.unwrap();
    provider.force_flush().unwrap();
    let names: Vec<String> = exporter
        .get_finished_metrics()
        .unwrap()
        .iter()
        .flat_map(|r| {
            r.scope_metrics()
                .flat_map(|s| s.metrics().map(|m| m.name().to_string()))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        names.iter().any(|n| n == "http.client.request.duration"),
        "{names:?}"
    );
}

#[tokio::test]
async fn the_emulator_sample_gives_a_working_client() {
    let (emulator, client) = emulator_in_tests::emulator_and_client().await.unwrap();
    let service = client.service(
        emulator.organization_id(),
        emulator.service_id("running").unwrap(),
    );
    assert_eq!(service.reverse_private_endpoints().await.unwrap().len(), 2);
}

#[tokio::test]
async fn the_fault_rules_do_what_their_comments_say() {
    let emulator = emulator().await;
    let (rule, throttled) = fault_rules::fault_rules();
    emulator.inject(rule).unwrap();
    let client = client_of(&emulator);
    let service = client.service(
        emulator.organization_id(),
        emulator.service_id("running").unwrap(),
    );
    // 503: a create is not repeated (its outcome is unknown); the hangup stores the pipe.
    let first = service.pipes().create(&orders(1)).await.expect_err("a 503");
    assert_eq!(first.status(), Some(503));
    assert!(emulator.pipes().is_empty());
    let second = service
        .pipes()
        .create(&named("events", 1))
        .await
        .expect_err("a hangup");
    assert!(
        second.is_outcome_unknown() && second.status().is_none(),
        "{second}"
    );
    assert_eq!(emulator.pipes().len(), 1, "stored before the hangup");
    // Two 429s, then the create goes through (the SDK waits out each).
    emulator.inject(throttled).unwrap();
    service
        .pipes()
        .create(&named("returns", 1))
        .await
        .expect("created after two 429s");
    let statuses: Vec<u16> = emulator
        .requests()
        .of(OperationId::CreatePipe)
        .iter()
        .map(|r| r.status)
        .collect();
    assert_eq!(&statuses[2..], [429, 429, 200]);
}

#[test]
fn the_domain_values_sample_checks_its_condition() {
    domain_values::condition_from_fixtures();
}

#[tokio::test]
async fn the_declared_sample_applies_then_has_nothing_to_do() {
    let emulator = emulator().await;
    let client = client_of(&emulator);
    let service = client.service(
        emulator.organization_id(),
        emulator.service_id("running").unwrap(),
    );
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    declared_apply::apply_orders(&service, orders(1), &state)
        .await
        .expect("applied");
    assert_eq!(emulator.pipes().len(), 1);
    declared_apply::apply_orders(&service, orders(1), &state)
        .await
        .expect("applied again");
    assert_eq!(emulator.pipes().len(), 1, "nothing to do the second time");
    declared_apply::apply_orders(&service, orders(2), &state)
        .await
        .expect("a replace");
    let live: Vec<_> = emulator
        .pipes()
        .into_iter()
        .filter(|p| !p.deleted)
        .collect();
    assert_eq!(live.len(), 1);
    let read = service.pipe(pipe_id(live[0].id)).get().await.unwrap();
    assert_eq!(read.scaling.replicas, Some(2));
}
