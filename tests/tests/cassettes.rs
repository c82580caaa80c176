//! Record, replay, check: a session recorded through `api-emulator record`'s proxy in front of the
//! emulator (with a 429, a gateway's 504 page and a hangup among the answers) gives the same results
//! through the SDK when the cassette is replayed; the cassette holds no secret in any form; a request
//! that was not recorded is refused naming what was asked; a cassette with production's quirks is
//! checked finding by finding.

mod support;

use std::net::SocketAddr;
use std::path::Path;

use api_emulator::{
    Cassette, Emulator, EmulatorOptions, Fault, FaultRule, OperationId, RecordOptions, Recorder,
    Replay, check::FindingKind,
};
use api_mgmt::{Credentials, ServiceHandle};
use proptest::prelude::*;
use support::emulated::kafka_pipe;
use support::encodings::{json_form, leaked_piece};

const PASSWORD: &str = "kafka-password";

fn loopback() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 0))
}

/// A recording proxy in front of `emulator`, writing to `cassette`.
async fn recording(emulator: &Emulator, cassette: &Path) -> Recorder {
    Recorder::start(RecordOptions {
        upstream: emulator.base_url().to_string(),
        observability_upstream: None,
        cassette: cassette.to_path_buf(),
        listen: loopback(),
    })
    .await
    .unwrap()
}

/// A client of the emulator's admin key at `url` (the proxy or the replay), its service.
fn service_at(url: &str, emulator: &Emulator) -> ServiceHandle {
    let (id, secret) = emulator.admin_key();
    let client = api_mgmt::Client::builder(url)
        .credentials(Credentials::basic(id, secret))
        .retry(support::fast_retries())
        .build()
        .unwrap();
    client.service(
        emulator.organization_id(),
        emulator.service_id("running").unwrap(),
    )
}

/// The session, and what each call gave: the domain value's JSON, or the error's class.
async fn session(service: &ServiceHandle) -> Vec<String> {
    let mut results = Vec::new();
    let mut outcome = |result: Result<serde_json::Value, api_mgmt::Error>| {
        results.push(match result {
            Ok(value) => value.to_string(),
            Err(e) => format!(
                "error status={:?} code={:?} unknown={} retryable={}",
                e.status(),
                e.code().map(|c| c.as_str().to_string()),
                e.is_outcome_unknown(),
                e.is_retryable()
            ),
        });
    };
    let created = service.pipes().create(&kafka_pipe("recorded")).await;
    let id = created.as_ref().ok().map(|c| c.id);
    outcome(created.map(|c| serde_json::to_value(&*c).unwrap()));
    let id = id.expect("the create was answered");
    // A 429 and a hangup on the reads, both retried.
    outcome(
        service
            .pipe(id)
            .get()
            .await
            .map(|p| serde_json::to_value(&*p).unwrap()),
    );
    outcome(
        service
            .pipe(id)
            .settings()
            .await
            .map(|s| serde_json::to_value(&*s).unwrap()),
    );
    outcome(
        service
            .reverse_private_endpoints()
            .await
            .map(|e| serde_json::to_value(&*e).unwrap()),
    );
    let missing = "00000000-0000-4000-8000-000000000000".parse().unwrap();
    outcome(
        service
            .pipe(missing)
            .get()
            .await
            .map(|p| serde_json::to_value(&*p).unwrap()),
    );
    // A gateway's page to a second create: its outcome is unknown.
    outcome(
        service
            .pipes()
            .create(&kafka_pipe("behind-a-gateway"))
            .await
            .map(|c| serde_json::to_value(&*c).unwrap()),
    );
    results
}

async fn record(emulator: &Emulator, cassette: &Path) -> Vec<String> {
    emulator
        .inject(
            FaultRule::operation(OperationId::GetPipe)
                .then(Fault::status(429).header("X-RateLimit-Reset", "0")),
        )
        .unwrap();
    emulator
        .inject(FaultRule::operation(OperationId::GetPipeSettings).then(Fault::hangup()))
        .unwrap();
    emulator
        .inject(
            FaultRule::operation(OperationId::CreatePipe)
                .then(Fault::default())
                .then(Fault::gateway_page(504).applied()),
        )
        .unwrap();
    let recorder = recording(emulator, cassette).await;
    let results = session(&service_at(&recorder.base_url(), emulator)).await;
    recorder.shutdown().await;
    results
}

#[tokio::test]
async fn a_recorded_session_replays_with_the_same_results_and_no_secret() {
    let emulator = Emulator::start(EmulatorOptions::for_tests()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.jsonl");
    let recorded = record(&emulator, &path).await;
    assert!(
        recorded[1].contains("\"name\":\"recorded\""),
        "{recorded:?}"
    );
    assert!(recorded[4].contains("status=Some(404)"), "{recorded:?}");
    assert!(
        recorded[5].contains("status=Some(504)") && recorded[5].contains("unknown=true"),
        "{recorded:?}"
    );

    // No secret of the session in any form.
    let text = std::fs::read_to_string(&path).unwrap();
    let (key_id, key_secret) = emulator.admin_key();
    use base64::Engine;
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("{key_id}:{key_secret}"));
    for secret in [PASSWORD, key_secret, basic.as_str()] {
        assert!(!text.contains(secret), "{secret} is in the cassette");
    }
    assert!(!text.to_ascii_lowercase().contains("authorization"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let cassette = Cassette::read(&path).unwrap();
    assert!(
        cassette.exchanges.iter().any(|e| e.is_hangup()),
        "the hangup is recorded"
    );
    assert!(cassette.exchanges.iter().any(|e| e.status == 429));
    // The emulator's answers, its 429, 404 and gateway page included, are all as the spec says.
    let findings = api_emulator::check::check(&cassette);
    let shown: Vec<String> = findings.iter().map(ToString::to_string).collect();
    assert!(findings.is_empty(), "{shown:#?}");

    // Replayed: the same results, every exchange used.
    let replay = Emulator::replay(&path).await.unwrap();
    let replayed = session(&service_at(&replay.base_url(), &emulator)).await;
    assert_eq!(replayed, recorded);
    let report = replay.report();
    assert!(report.unused().is_empty(), "{report:?}");
    assert!(report.unmatched.is_empty(), "{report:?}");

    // A request that was not recorded is refused, naming what was asked and the nearest one.
    let service = service_at(&replay.base_url(), &emulator);
    let err = service
        .pipes()
        .create(&kafka_pipe("another"))
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(400));
    assert!(
        !err.is_outcome_unknown(),
        "a refusal is known not to have applied"
    );
    let message = err.to_string();
    assert!(
        message.contains("NOT_RECORDED") || message.contains("no recorded answer for createPipe"),
        "{message}"
    );
    assert!(message.contains("createPipe"), "{message}");
    let nearest = replay.report().unmatched.join("\n");
    assert!(
        nearest.contains("every recorded createPipe") || nearest.contains("differs"),
        "{nearest}"
    );
    replay.shutdown().await;
}

#[tokio::test]
async fn the_nearest_exchange_names_the_difference() {
    let emulator = Emulator::start(EmulatorOptions::for_tests()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("one.jsonl");
    let recorder = recording(&emulator, &path).await;
    service_at(&recorder.base_url(), &emulator)
        .pipes()
        .create(&kafka_pipe("orders"))
        .await
        .unwrap();
    recorder.shutdown().await;
    let replay = Replay::from_file(&path).await.unwrap();
    let err = service_at(&replay.base_url(), &emulator)
        .pipes()
        .create(&kafka_pipe("events"))
        .await
        .unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains("exchange 1, differs: the body at `destination.table`")
            || message.contains("exchange 1, differs: the body at `name`"),
        "{message}"
    );
    assert!(
        message.contains("recorded \\\"orders\\\"") || message.contains("recorded \"orders\""),
        "{message}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn no_piece_of_a_secret_reaches_the_cassette(
        secret in "[A-Za-z0-9&<>/\"\\\\é😀#%+!*=:;,.?|~^ ]{8,24}",
        picks in proptest::collection::vec(any::<u8>(), 24),
        echo_in_json in any::<bool>(),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let file = runtime.block_on(async {
            let emulator = Emulator::start(EmulatorOptions::for_tests()).await.unwrap();
            // The upstream echoes the password back, escaped one way or another.
            let echoed: String = secret.chars().zip(picks.iter().cycle()).map(|(c, p)| json_form(c, *p)).collect();
            let body = if echo_in_json {
                format!(r#"{{"status":400,"error":"BAD_REQUEST: password {echoed} is weak","requestId":"r"}}"#)
            } else {
                format!("rejected {secret} at the gateway")
            };
            emulator.inject(FaultRule::operation(OperationId::CreatePipe).then(Fault::body(400, body))).unwrap();
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("secret.jsonl");
            let recorder = recording(&emulator, &path).await;
            let pipe = api_mgmt::NewPipe::builder("p")
                .source(api_mgmt::KafkaSource::new("b:9092", "t").credentials("reader", secret.as_str()))
                .destination(api_mgmt::Destination::new("d").table("t").managed_table(true))
                .mapped_column("id", "id", "UInt64")
                .build()
                .unwrap();
            let _ = service_at(&recorder.base_url(), &emulator).pipes().create(&pipe).await;
            recorder.shutdown().await;
            std::fs::read_to_string(&path).unwrap()
        });
        let leaked = leaked_piece(&secret, 6, &file);
        prop_assert!(leaked.is_none(), "{leaked:?} of {secret:?} in {file}");
        prop_assert!(file.lines().count() == 2, "{file}");
    }
}

#[test]
fn a_cassette_with_productions_quirks_is_checked_quirk_by_quirk() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("quirks.jsonl");
    let pipe = r#"{"id":"3f0c5e2a-8d41-4b7e-9a6c-1e2f3a4b5c6d","serviceId":"a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d","name":"orders","state":"Hibernating","scaling":{"replicas":2,"replicaCpuMillicores":"500m","replicaMemoryGb":"2 GiB"},"destination":{"database":7},"colour":"blue"}"#;
    let lines = [
        r#"{"cassette":1,"recordedAt":"2026-11-23T10:00:00Z","tool":"by hand"}"#.to_string(),
        format!(r#"{{"operationId":"getPipe","method":"GET","path":"/v1/organizations/o/services/s/pipes/p","status":200,"responseBody":{{"status":200.0,"requestId":"r","result":{pipe}}}}}"#),
        r#"{"operationId":"updateServiceState","method":"PATCH","path":"/v1/organizations/o/services/s/state","status":200,"responseBody":{"status":200,"result":{"name":"no id","state":"running"}}}"#.to_string(),
        r#"{"operationId":"getAlert","method":"GET","path":"/api/v2/alerts/x","status":404,"responseText":"not found"}"#.to_string(),
    ];
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let findings = api_emulator::check::check(&Cassette::read(&path).unwrap());
    let shown: Vec<String> = findings.iter().map(ToString::to_string).collect();
    let has = |exchange: usize, path: &str, kind: FindingKind| {
        findings
            .iter()
            .any(|f| f.exchange == exchange && f.path == path && f.kind == kind)
    };
    assert!(
        has(1, "result.state", FindingKind::UnknownValue),
        "{shown:#?}"
    );
    assert!(
        has(1, "result.colour", FindingKind::UnknownMember),
        "{shown:#?}"
    );
    assert!(
        has(1, "result.destination.database", FindingKind::WrongType),
        "{shown:#?}"
    );
    assert!(
        has(
            1,
            "result.scaling.replicaMemoryGb",
            FindingKind::PatternMismatch
        ),
        "{shown:#?}"
    );
    assert!(
        has(1, ".", FindingKind::NotDecodable),
        "the SDK refuses \"2 GiB\": {shown:#?}"
    );
    assert!(
        has(2, ".", FindingKind::NotDecodable),
        "a service without its id: {shown:#?}"
    );
    assert!(
        has(3, ".", FindingKind::UndocumentedAnswer),
        "a text 404 where the spec says JSON: {shown:#?}"
    );
    assert!(
        shown[0].starts_with("exchange 1 (getPipe): `"),
        "{shown:#?}"
    );
}

#[tokio::test]
async fn a_recorded_clean_session_has_no_finding() {
    let emulator = Emulator::start(EmulatorOptions::for_tests()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("clean.jsonl");
    let recorder = recording(&emulator, &path).await;
    let service = service_at(&recorder.base_url(), &emulator);
    let created = service.pipes().create(&kafka_pipe("clean")).await.unwrap();
    service.pipe(created.id).get().await.unwrap();
    service.pipe(created.id).settings().await.unwrap();
    service.reverse_private_endpoints().await.unwrap();
    service.start().await.unwrap();
    recorder.shutdown().await;
    let findings = api_emulator::check::check(&Cassette::read(&path).unwrap());
    let shown: Vec<String> = findings.iter().map(ToString::to_string).collect();
    assert!(findings.is_empty(), "{shown:#?}");
}
