//! Record, replay, check: a session recorded through `api-emulator record`'s proxy in front of the
//! emulator (with a 429, a gateway's 504 page and a hangup among the answers) gives the same results
//! through the SDK when the cassette is replayed; the cassette holds no secret in any form; a request
//! that was not recorded is refused naming what was asked; a cassette with production's quirks is
//! checked finding by finding.

use crate::support;

use std::net::SocketAddr;
use std::path::Path;

use api_emulator::{
    Cassette, Emulator, EmulatorOptions, Fault, FaultRule, OperationId, RecordOptions, Recorder,
    Replay, check::FindingKind,
};
use api_mgmt::{Credentials, ServiceHandle};
use api_test_support::encodings::{echoing, html_decoded, leaked_piece};
use proptest::prelude::*;
use support::emulated::kafka_pipe;

const PASSWORD: &str = "kafka-password";

fn loopback() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 0))
}

/// An observability bearer token (the upstreams of these tests take any).
const TOKEN: &str = "0d8f3a4e-1c2b-4d5e-8f60-718293a4b5c6";

/// A recording proxy in front of `upstream` (for both APIs), writing to `cassette`.
async fn recording_of(upstream: String, cassette: &Path) -> Recorder {
    Recorder::start(RecordOptions {
        upstream,
        observability_upstream: None,
        cassette: cassette.to_path_buf(),
        listen: loopback(),
    })
    .await
    .unwrap()
}

/// A recording proxy in front of `emulator`, writing to `cassette`.
async fn recording(emulator: &Emulator, cassette: &Path) -> Recorder {
    recording_of(emulator.base_url().to_string(), cassette).await
}

/// `GET path` through `recorder`, with the bearer token.
fn get_through(recorder: &Recorder, path: &str) -> reqwest::RequestBuilder {
    reqwest::Client::new()
        .get(format!("{}{path}", recorder.base_url()))
        .bearer_auth(TOKEN)
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

/// Every string a cassette file holds, as a reader of it would see it: JSON escapes decoded (the
/// file's, and those of a JSON text kept inside a string), and HTML references decoded too.
fn readable_strings(file: &str) -> Vec<String> {
    fn walk(value: &serde_json::Value, out: &mut Vec<String>, depth: u8) {
        match value {
            serde_json::Value::String(text) => {
                out.push(html_decoded(text));
                out.push(text.clone());
                if depth < 2
                    && let Ok(inner) = serde_json::from_str::<serde_json::Value>(text)
                {
                    walk(&inner, out, depth + 1);
                }
            }
            serde_json::Value::Array(items) => items.iter().for_each(|v| walk(v, out, depth)),
            serde_json::Value::Object(members) => {
                for (name, v) in members {
                    out.push(name.clone());
                    walk(v, out, depth);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    for line in file.lines() {
        let value: serde_json::Value = serde_json::from_str(line).expect("every line reads");
        walk(&value, &mut out, 0);
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

    /// A secret sent in a create and echoed back, by the create's answer, by a later answer of
    /// another operation, and even by an answer before it was ever sent (each under no secret name,
    /// each encoded its own way): no piece of it is in the cassette, read as a person would.
    #[test]
    fn no_piece_of_a_secret_reaches_the_cassette(
        secret in "[A-Za-z0-9&<>/\"\\\\é😀#%+!*=:;,.?|~^ ]{8,24}",
        picks in proptest::collection::vec(any::<u8>(), 24),
        kinds in proptest::collection::vec(any::<u8>(), 3),
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let file = runtime.block_on(async {
            let emulator = Emulator::start(EmulatorOptions::for_tests()).await.unwrap();
            let echo = |operation: OperationId, kind: u8| {
                let (status, content_type, body) = echoing(&secret, &picks, kind);
                FaultRule::operation(operation)
                    .then(Fault::body(status, body).header("content-type", content_type).times(1))
            };
            // Before the create sends it, after it, and in the create's own answer.
            emulator.inject(echo(OperationId::ListReversePrivateEndpoints, kinds[0])).unwrap();
            emulator.inject(echo(OperationId::CreatePipe, kinds[1])).unwrap();
            emulator.inject(echo(OperationId::GetPipe, kinds[2])).unwrap();
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("secret.jsonl");
            let recorder = recording(&emulator, &path).await;
            let service = service_at(&recorder.base_url(), &emulator);
            let _ = service.reverse_private_endpoints().await;
            let pipe = api_mgmt::NewPipe::builder("p")
                .source(api_mgmt::pipes::KafkaSource::new("b:9092", "t").credentials("reader", secret.as_str()))
                .destination(api_mgmt::pipes::Destination::new("d").table("t").managed_table(true))
                .mapped_column("id", "id", "UInt64")
                .build()
                .unwrap();
            let _ = service.pipes().create(&pipe).await;
            let _ = service.pipe("00000000-0000-4000-8000-000000000000".parse().unwrap()).get().await;
            recorder.shutdown().await;
            std::fs::read_to_string(&path).unwrap()
        });
        for text in std::iter::once(file.clone()).chain(readable_strings(&file)) {
            let leaked = leaked_piece(&secret, 6, &text);
            prop_assert!(leaked.is_none(), "{leaked:?} of {secret:?} in {text}\n(the cassette: {file})");
        }
        prop_assert!(file.lines().count() >= 4, "{file}");
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

/// An upstream of its own: `GET /api/v2/dashboards` answers 1 MiB of dashboards, compressed when the
/// request accepts gzip (the bytes are a stand-in: nothing decodes them); `GET /api/v2/alerts/{id}`
/// answers compressed whatever it was asked.
async fn compressing_upstream() -> String {
    use axum::http::{HeaderMap, header};
    let gzip = || {
        (
            [(header::CONTENT_ENCODING, "gzip")],
            vec![0x1f_u8, 0x8b, 0x08, 0x00, 0x42, 0x42],
        )
    };
    let dashboards = move |headers: HeaderMap| async move {
        let accepts_gzip = headers
            .get(header::ACCEPT_ENCODING)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.contains("gzip"));
        if accepts_gzip {
            return axum::response::IntoResponse::into_response(gzip());
        }
        let dashboard =
            serde_json::json!({"id": "66a1f0c2d4e5f60718293a42", "name": "d", "tiles": []});
        let data = vec![dashboard; 20_000];
        axum::response::IntoResponse::into_response(axum::Json(serde_json::json!({ "data": data })))
    };
    let app = axum::Router::new()
        .route("/api/v2/dashboards", axum::routing::get(dashboards))
        .route(
            "/api/v2/alerts/{id}",
            axum::routing::get(move || async move { gzip() }),
        );
    let listener = tokio::net::TcpListener::bind(loopback()).await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

#[tokio::test]
async fn large_bodies_are_kept_plain_and_what_cannot_be_kept_is_said_by_replay_and_check() {
    let upstream = compressing_upstream().await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bodies.jsonl");
    let recorder = recording_of(upstream, &path).await;
    let get = |path: &str| {
        get_through(&recorder, path)
            .header("accept-encoding", "gzip, br")
            .send()
    };
    let dashboards = get("/api/v2/dashboards").await.unwrap();
    assert_eq!(
        dashboards.headers().get("content-encoding"),
        None,
        "asked plain"
    );
    assert!(dashboards.bytes().await.unwrap().len() > 1_000_000);
    let compressed = get("/api/v2/alerts/66a1f0c2d4e5f60718293a40")
        .await
        .unwrap();
    assert_eq!(
        compressed.headers()["content-encoding"],
        "gzip",
        "forwarded as it came"
    );
    recorder.shutdown().await;

    let cassette = Cassette::read(&path).unwrap();
    let kept = cassette.exchanges[0]
        .response_body
        .as_ref()
        .expect("kept whole");
    assert_eq!(kept["data"].as_array().map(Vec::len), Some(20_000));
    let unkept = cassette.exchanges[1]
        .response_unkept
        .as_ref()
        .expect("said unkept");
    assert_eq!(
        (unkept.bytes, unkept.why.as_str()),
        (6, "compressed (gzip)")
    );

    // check: the body that was not kept is a finding of its own, not a false "not JSON".
    let findings = api_emulator::check::check(&cassette);
    let shown: Vec<String> = findings.iter().map(ToString::to_string).collect();
    assert_eq!(findings.len(), 1, "{shown:#?}");
    assert_eq!(findings[0].kind, FindingKind::BodyNotKept);
    assert!(
        shown[0].starts_with("exchange 2 (getAlert)")
            && shown[0].contains("6 bytes, not kept: compressed (gzip)"),
        "{shown:#?}"
    );

    // replay: said at start, and a request that gets it is told why, not given a body never recorded.
    let replay = Replay::from_file(&path).await.unwrap();
    assert_eq!(
        replay.report().unkept,
        ["exchange 2 (getAlert): the response body: 6 bytes, not kept: compressed (gzip)"]
    );
    let replayed = reqwest::Client::new()
        .get(format!(
            "{}/api/v2/alerts/66a1f0c2d4e5f60718293a40",
            replay.base_url()
        ))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(replayed.status(), 400);
    let said = replayed.text().await.unwrap();
    assert!(
        said.contains("NOT_KEPT") && said.contains("compressed (gzip)"),
        "{said}"
    );
    assert_eq!(replay.report().unmatched.len(), 1);
    replay.shutdown().await;
}

/// An upstream whose every answer is a chunked `200` of `mib` MiB (no `Content-Length`), written
/// by hand so that nothing of it is held in memory.
async fn chunked_upstream(mib: usize) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind(loopback()).await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut request = [0u8; 4096];
                let _ = socket.read(&mut request).await;
                let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                            transfer-encoding: chunked\r\n\r\n";
                let chunk = vec![b' '; 1 << 20];
                let mut sent = socket.write_all(head.as_bytes()).await;
                for _ in 0..mib {
                    if sent.is_err() {
                        return;
                    }
                    sent = async {
                        socket.write_all(b"100000\r\n").await?;
                        socket.write_all(&chunk).await?;
                        socket.write_all(b"\r\n").await
                    }
                    .await;
                }
                let _ = socket.write_all(b"0\r\n\r\n").await;
            });
        }
    });
    url
}

/// The proxy reads an answer up to 64 MiB (eight times what a cassette keeps): a longer one is
/// neither held whole nor forwarded. The client sees the connection close, as on a lost upstream;
/// the cassette says what came and why it is not there.
#[tokio::test]
async fn an_answer_past_the_proxys_bound_is_not_held_whole_nor_forwarded() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("large.jsonl");
    let recorder = recording_of(chunked_upstream(65).await, &path).await;
    let answer = get_through(&recorder, "/api/v2/dashboards").send().await;
    let closed = match answer {
        Err(e) => e.is_request() || e.is_connect() || e.to_string().contains("connection"),
        Ok(answer) => answer.status() == 502,
    };
    assert!(closed, "not forwarded");
    recorder.shutdown().await;
    let cassette = Cassette::read(&path).unwrap();
    let unkept = cassette.exchanges[0]
        .response_unkept
        .as_ref()
        .expect("said unkept");
    // What arrived before the proxy stopped reading: past the bound, and no more than was sent.
    assert!(
        unkept.bytes > 64 << 20
            && unkept.bytes <= 65 << 20
            && unkept.why == "larger than 64 MiB: not forwarded",
        "{unkept:?}"
    );
    assert_eq!(
        cassette.exchanges[0].status, 0,
        "replayed as the hangup it was"
    );
}

/// The proxy forwards a request body up to the API's own limit, 2 MiB (the emulator behind it
/// answers: here, that the body is no pipe), and refuses a larger one itself.
#[tokio::test]
async fn request_bodies_up_to_the_apis_limit_are_forwarded_and_larger_ones_refused() {
    let emulator = Emulator::start(EmulatorOptions::for_tests()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let recorder = recording(&emulator, &dir.path().join("bodies.jsonl")).await;
    let (id, secret) = emulator.admin_key();
    let url = format!(
        "{}/v1/organizations/{}/services/{}/pipes",
        recorder.base_url(),
        emulator.organization_id(),
        emulator.service_id("running").unwrap()
    );
    let client = reqwest::Client::new();
    let post = |len: usize| {
        client
            .post(&url)
            .basic_auth(id, Some(secret))
            .header("content-type", "application/json")
            .body(vec![b' '; len])
            .send()
    };
    let limit = 2 * 1024 * 1024;
    let forwarded = post(limit).await.unwrap();
    let status = forwarded.status();
    let text = forwarded.text().await.unwrap();
    assert_eq!(status, 400, "the emulator's answer: {text}");
    assert!(
        text.contains("requestId"),
        "the emulator's error body: {text}"
    );
    let refused = post(limit + 1).await.unwrap();
    assert_eq!(refused.status(), 413);
    recorder.shutdown().await;
}

/// An upstream that answers every request `after` it came with `head` (header lines) and `body`,
/// telling `arrived` when one came.
async fn upstream(
    after: std::time::Duration,
    head: &'static str,
    body: &'static str,
    arrived: Option<tokio::sync::mpsc::UnboundedSender<()>>,
) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind(loopback()).await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let arrived = arrived.clone();
            tokio::spawn(async move {
                let mut request = [0u8; 4096];
                let _ = socket.read(&mut request).await;
                if let Some(arrived) = arrived {
                    let _ = arrived.send(());
                }
                tokio::time::sleep(after).await;
                let answer = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n{head}\
                     content-length: {}\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(answer.as_bytes()).await;
            });
        }
    });
    url
}

/// Shutting the recorder down waits for the exchanges in flight: each is answered, and in the
/// cassette, when `shutdown` returns.
#[tokio::test]
async fn shutdown_finishes_and_writes_the_exchanges_in_flight() {
    let (arrived, mut arrivals) = tokio::sync::mpsc::unbounded_channel();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("in-flight.jsonl");
    let half_a_second = std::time::Duration::from_millis(500);
    let slow = upstream(half_a_second, "", r#"{"data":[]}"#, Some(arrived)).await;
    let recorder = recording_of(slow, &path).await;
    let request = get_through(&recorder, "/api/v2/dashboards");
    let call = tokio::spawn(async move { request.send().await.map(|answer| answer.status()) });
    // The request is in flight: the upstream has it, and answers in half a second.
    arrivals.recv().await.unwrap();
    recorder.shutdown().await;
    let cassette = Cassette::read(&path).unwrap();
    assert_eq!(
        cassette.exchanges.len(),
        1,
        "written before shutdown returned"
    );
    assert_eq!(cassette.exchanges[0].status, 200);
    assert_eq!(call.await.unwrap().unwrap(), 200, "and answered");
}

/// A recorder in front of both APIs sends each request to its own API's upstream, and forwards the
/// answer's headers but those of the connection.
#[tokio::test]
async fn each_api_s_requests_go_to_its_upstream_with_the_answer_s_own_headers() {
    let now = std::time::Duration::ZERO;
    let head = "x-request-id: r-1\r\nkeep-alive: timeout=5\r\n";
    let dir = tempfile::tempdir().unwrap();
    let recorder = Recorder::start(RecordOptions {
        upstream: upstream(now, head, r#"{"api":"management"}"#, None).await,
        observability_upstream: Some(upstream(now, head, r#"{"api":"observability"}"#, None).await),
        cassette: dir.path().join("two.jsonl"),
        listen: loopback(),
    })
    .await
    .unwrap();
    for (path, api) in [
        ("/api/v2/dashboards", "observability"),
        ("/v1/organizations/o/services/s/pipes", "management"),
    ] {
        let answer = get_through(&recorder, path).send().await.unwrap();
        assert_eq!(answer.headers()["x-request-id"], "r-1", "{path}");
        assert!(!answer.headers().contains_key("keep-alive"), "{path}");
        let body: serde_json::Value = answer.json().await.unwrap();
        assert_eq!(body["api"], api, "{path}");
    }
    recorder.shutdown().await;
}

/// An answer under the proxy's bound that comes in many chunks is forwarded whole.
#[tokio::test]
async fn a_chunked_answer_under_the_bound_is_forwarded_whole() {
    let dir = tempfile::tempdir().unwrap();
    let recorder = recording_of(chunked_upstream(3).await, &dir.path().join("chunked.jsonl")).await;
    let answer = get_through(&recorder, "/api/v2/dashboards")
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    assert_eq!(answer.bytes().await.unwrap().len(), 3 << 20);
    recorder.shutdown().await;
}

/// A replay's report, in Rust and at its control endpoint (behind the replay's control token), names
/// each recorded exchange by its place from 1 and says which went unused; once `shutdown` returns,
/// the replay no longer takes a connection.
#[tokio::test]
async fn the_replay_reports_each_exchange_at_its_control_endpoint_and_stops_at_shutdown() {
    let emulator = Emulator::start(EmulatorOptions::for_tests()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("three.jsonl");
    let recorder = recording(&emulator, &path).await;
    let service = service_at(&recorder.base_url(), &emulator);
    service.reverse_private_endpoints().await.unwrap();
    let created = service.pipes().create(&kafka_pipe("orders")).await.unwrap();
    service.pipe(created.id).get().await.unwrap();
    recorder.shutdown().await;

    // Only the first exchange is asked again.
    let replay = replay_on_a_port_of_its_own(&path).await;
    service_at(&replay.base_url(), &emulator)
        .reverse_private_endpoints()
        .await
        .unwrap();
    let report = replay.report();
    let service_path = format!(
        "/v1/organizations/{}/services/{}",
        emulator.organization_id(),
        emulator.service_id("running").unwrap()
    );
    let told: Vec<_> = report
        .exchanges
        .iter()
        .map(|e| (e.number, e.operation_id, e.request.clone(), e.used))
        .collect();
    assert_eq!(
        told,
        [
            (
                1,
                Some(OperationId::ListReversePrivateEndpoints),
                format!("GET {service_path}/pipesReversePrivateEndpoints"),
                true
            ),
            (
                2,
                Some(OperationId::CreatePipe),
                format!("POST {service_path}/pipes"),
                false
            ),
            (
                3,
                Some(OperationId::GetPipe),
                format!("GET {service_path}/pipes/{}", created.id),
                false
            ),
        ]
    );
    let unused: Vec<usize> = report.unused().iter().map(|e| e.number).collect();
    assert_eq!(unused, [2, 3]);

    // The same report at the control endpoint, for the control token only.
    let control = format!("{}/_emulator/cassette", replay.base_url());
    let http = reqwest::Client::new();
    let answer = http
        .get(&control)
        .bearer_auth(replay.control_token())
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    let body: serde_json::Value = answer.json().await.unwrap();
    assert_eq!(body, serde_json::to_value(&report).unwrap());
    assert_eq!(body["exchanges"][2]["number"], 3);
    for refused in [http.get(&control), http.get(&control).bearer_auth("xyzzy")] {
        assert_eq!(refused.send().await.unwrap().status(), 401);
    }

    let address: SocketAddr = replay
        .base_url()
        .trim_start_matches("http://")
        .parse()
        .unwrap();
    replay.shutdown().await;
    // Blocking connects, made without yielding to this test's runtime, where the replay's server
    // runs: a replay that only began to stop (its task not yet run) would take every one. They are
    // tried for a while because a process another test starts at that moment may hold a copy of
    // the listening socket until it runs its program, which closes it. (A fresh-clone CI run
    // failed this test once with a single connect, on a port the kernel picked.)
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    let refused = loop {
        match std::net::TcpStream::connect_timeout(&address, std::time::Duration::from_secs(1)) {
            Ok(_) => assert!(
                std::time::Instant::now() < deadline,
                "{address} still takes connections"
            ),
            Err(e) => break e,
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    assert_eq!(
        refused.kind(),
        std::io::ErrorKind::ConnectionRefused,
        "{address}: {refused}"
    );
}

/// A replay of the cassette at `path` on a port that no other test's listener is given once the
/// replay lets it go ([`api_test_support::ports`]).
async fn replay_on_a_port_of_its_own(path: &Path) -> Replay {
    let listen = SocketAddr::from(([127, 0, 0, 1], api_test_support::ports::free_port()));
    Replay::start(Cassette::read(path).unwrap(), listen)
        .await
        .unwrap()
}

/// A request no operation of the spec matches is replayed by its method and path, and a text body
/// must be the one recorded: another method on a recorded path, or another text, is refused.
#[tokio::test]
async fn requests_of_no_operation_replay_by_method_and_path_and_text_bodies_as_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.jsonl");
    let now = std::time::Duration::ZERO;
    let recorder = recording_of(upstream(now, "", r#"{"ok":true}"#, None).await, &path).await;
    let http = reqwest::Client::new();
    let send = |url: String, method: &str, at: &str, body: &'static str| {
        http.request(method.parse().unwrap(), format!("{url}{at}"))
            .bearer_auth(TOKEN)
            .body(body)
            .send()
    };
    for (method, at, body) in [
        ("GET", "/v1/elsewhere", ""),
        ("GET", "/v1/other", ""),
        ("PUT", "/v1/notes", "first draft"),
    ] {
        let answer = send(recorder.base_url(), method, at, body).await.unwrap();
        assert_eq!(answer.status(), 200, "{method} {at}");
    }
    recorder.shutdown().await;
    let cassette = Cassette::read(&path).unwrap();
    assert!(cassette.exchanges.iter().all(|e| e.operation_id.is_none()));
    assert_eq!(
        cassette.exchanges[2].request_text.as_deref(),
        Some("first draft")
    );

    let replay = Replay::from_file(&path).await.unwrap();
    let url = replay.base_url();
    // Another method on a recorded path, another text: refused, saying why.
    for (method, at, body, why) in [
        (
            "POST",
            "/v1/elsewhere",
            "",
            "no recorded answer for POST /v1/elsewhere: the cassette has no exchange of that operation",
        ),
        (
            "PUT",
            "/v1/notes",
            "second draft",
            "the nearest, exchange 3, differs: the body's text",
        ),
    ] {
        let refused = send(url.clone(), method, at, body).await.unwrap();
        assert_eq!(refused.status(), 400, "{method} {at}");
        let said = refused.text().await.unwrap();
        assert!(said.contains(why), "{said}");
    }
    // The recorded requests, in another order.
    for (method, at, body) in [
        ("GET", "/v1/other", ""),
        ("PUT", "/v1/notes", "first draft"),
        ("GET", "/v1/elsewhere", ""),
    ] {
        let answer = send(url.clone(), method, at, body).await.unwrap();
        assert_eq!(answer.status(), 200, "{method} {at}");
        assert_eq!(answer.text().await.unwrap(), r#"{"ok":true}"#);
    }
    let report = replay.report();
    assert!(report.unused().is_empty(), "{report:?}");
    assert_eq!(report.unmatched.len(), 2, "{report:?}");
    replay.shutdown().await;
}
