//! The guide's "Testing code that uses the SDK" (it includes this file): copy it into your own crate's
//! `tests/` (with `api-emulator`, `api-mgmt`, `tokio`, `insta` and `serde_json` as dev-dependencies)
//! and replace `create_orders_pipe` by your own code.

use api_emulator::{Emulator, EmulatorOptions, Fault, FaultRule, OperationId, REDACTED};
use api_mgmt::{
    Client, Credentials, Error, NewPipe, Pipe, ServiceHandle,
    client::RetryPolicy,
    pipes::{Destination, KafkaSource},
};

/// The code under test: creates the orders pipe and reads it back.
async fn create_orders_pipe(service: &ServiceHandle) -> Result<Pipe, Error> {
    let new_pipe = NewPipe::builder("orders")
        .source(KafkaSource::new("b-1.kafka:9098", "orders").credentials("reader", "s3cret"))
        .destination(
            Destination::new("default")
                .table("orders")
                .managed_table(true),
        )
        .mapped_column("id", "id", "UInt64")
        .build()?;
    let created = service.pipes().create(&new_pipe).await?;
    Ok(service.pipe(created.id).get().await?.into_inner())
}

/// A client of the emulator, with short retry pauses so the test is quick.
fn client_of(emulator: &Emulator) -> Client {
    let (key_id, key_secret) = emulator.admin_key();
    Client::builder(emulator.base_url())
        .credentials(Credentials::basic(key_id, key_secret))
        .retry(RetryPolicy::default().initial_backoff(std::time::Duration::from_millis(10)))
        .build()
        .expect("a client")
}

#[tokio::test]
async fn my_code_retries_what_it_may_and_sends_what_it_should() {
    // Instant transitions and no rate limits; ids, request ids and times reproducible from the seed.
    let emulator = Emulator::start(EmulatorOptions::for_tests().deterministic(7))
        .await
        .expect("the emulator starts");
    let client = client_of(&emulator);
    let service = client.service(
        emulator.organization_id(),
        emulator
            .service_id("running")
            .expect("the seed has a running service"),
    );

    // The create is throttled once (a 429 never reached the service: safe to send again), and the
    // read meets a 503 from the gateway (a read is always safe to repeat).
    emulator
        .inject(
            FaultRule::operation(OperationId::CreatePipe)
                .then(Fault::status(429).header("X-RateLimit-Reset", "0")),
        )
        .expect("a valid rule");
    emulator
        .inject(FaultRule::operation(OperationId::GetPipe).then(Fault::status(503)))
        .expect("a valid rule");

    let pipe = create_orders_pipe(&service)
        .await
        .expect("the pipe is created");

    // It retried, once each, and stopped when done.
    let log = emulator.requests();
    let statuses = |operation| -> Vec<u16> { log.of(operation).iter().map(|r| r.status).collect() };
    assert_eq!(statuses(OperationId::CreatePipe), [429, 200]);
    assert_eq!(statuses(OperationId::GetPipe), [503, 200]);

    // What it sent: the fields it meant, and the password only as the log's redaction.
    let sent = log
        .last_of(OperationId::CreatePipe)
        .and_then(|request| request.body.clone())
        .expect("the create had a body");
    assert_eq!(sent["source"]["kafka"]["topics"], "orders");
    assert_eq!(sent["source"]["kafka"]["credentials"]["password"], REDACTED);
    assert_eq!(sent["fieldMappings"][0]["destinationField"], "id");

    // What it created, as a snapshot: identical on every run in deterministic mode.
    insta::assert_json_snapshot!("guide_created_pipe", pipe);
}

#[tokio::test]
async fn my_code_reports_a_create_whose_outcome_is_unknown() {
    let emulator = Emulator::start(EmulatorOptions::for_tests())
        .await
        .expect("the emulator starts");
    let client = client_of(&emulator);
    let service = client.service(
        emulator.organization_id(),
        emulator.service_id("running").expect("a running service"),
    );
    // The service stores the create, then the gateway times out: the answer never comes.
    emulator
        .inject(FaultRule::operation(OperationId::CreatePipe).then(Fault::status(504).applied()))
        .expect("a valid rule");

    let err = create_orders_pipe(&service).await.unwrap_err();
    assert!(err.is_outcome_unknown(), "{err}");
    assert_eq!(
        emulator.requests().count_of(OperationId::CreatePipe),
        1,
        "a create that may have worked is never sent twice"
    );
    let stored: Vec<String> = emulator.pipes().into_iter().map(|p| p.name).collect();
    assert_eq!(
        stored,
        ["orders"],
        "and it did work: check before creating again"
    );
}
