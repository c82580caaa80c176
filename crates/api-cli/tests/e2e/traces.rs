//! cloudctl's traces, exported through OTLP/HTTP to a receiver of the test's own that decodes the
//! protobuf: one trace per run (the command, the create, every poll and every sleep of the wait),
//! flushed before the process exits, the attempt's span id on the wire as `traceparent`, no secret
//! in what is exported, and nothing exported or sent without the endpoint.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use api_emulator::{EmulatorOptions, OperationId, Timing};
use axum::body::Bytes;
use axum::http::HeaderMap;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use opentelemetry_proto::tonic::trace::v1::Span;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use prost::Message;

use crate::support::{Cloud, KAFKA_PIPE};

/// What the receiver was sent: each export's headers and body.
type Received = Arc<Mutex<Vec<(HeaderMap, Vec<u8>)>>>;

/// Starts an OTLP/HTTP receiver on a free loopback port, served by the emulator's runtime.
fn receiver(cloud: &Cloud) -> (String, Received) {
    receiver_at(cloud, "127.0.0.1:0", 200)
}

/// Starts an OTLP/HTTP receiver on `address` that answers `status`.
fn receiver_at(cloud: &Cloud, address: &str, status: u16) -> (String, Received) {
    slow_receiver(cloud, address, status, Duration::ZERO)
}

/// Starts an OTLP/HTTP receiver on `address` that answers `status` `after` each export came (and
/// keeps it then).
fn slow_receiver(cloud: &Cloud, address: &str, status: u16, after: Duration) -> (String, Received) {
    let received = Received::default();
    let kept = Arc::clone(&received);
    let status = axum::http::StatusCode::from_u16(status).expect("a status");
    let app = axum::Router::new().route(
        "/v1/traces",
        axum::routing::post(move |headers: HeaderMap, body: Bytes| {
            let kept = Arc::clone(&kept);
            async move {
                tokio::time::sleep(after).await;
                kept.lock().unwrap().push((headers, body.to_vec()));
                (
                    status,
                    [("content-type", "application/x-protobuf")],
                    Vec::<u8>::new(),
                )
            }
        }),
    );
    let url = cloud.block_on(async {
        let listener = tokio::net::TcpListener::bind(address)
            .await
            .unwrap_or_else(|e| panic!("the receiver cannot listen on {address}: {e}"));
        let url = format!("http://{}", listener.local_addr().expect("an address"));
        tokio::spawn(async move { axum::serve(listener, app).await.ok() });
        url
    });
    (url, received)
}

/// Every span received, with its service name.
fn spans(received: &Received) -> Vec<(String, Span)> {
    let mut spans = Vec::new();
    for (_, body) in received.lock().unwrap().iter() {
        let request = ExportTraceServiceRequest::decode(&body[..]).expect("OTLP protobuf");
        for resource in request.resource_spans {
            let service = resource
                .resource
                .iter()
                .flat_map(|r| r.attributes.iter())
                .find(|kv| kv.key == "service.name")
                .and_then(|kv| text(kv.value.as_ref()?.value.as_ref()?))
                .unwrap_or_default();
            for scope in resource.scope_spans {
                spans.extend(scope.spans.into_iter().map(|s| (service.clone(), s)));
            }
        }
    }
    spans
}

fn text(value: &Value) -> Option<String> {
    match value {
        Value::StringValue(s) => Some(s.clone()),
        Value::IntValue(i) => Some(i.to_string()),
        Value::BoolValue(b) => Some(b.to_string()),
        _ => None,
    }
}

fn attribute(span: &Span, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| text(kv.value.as_ref()?.value.as_ref()?))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn short_transitions() -> EmulatorOptions {
    EmulatorOptions::for_tests().timing(Timing {
        service_transition_ms: 150,
        pipe_provisioning_ms: 300,
        pipe_phase_ms: 150,
        pipe_delete_ms: 150,
    })
}

#[test]
fn a_create_and_its_wait_are_exported_as_one_trace_before_cloudctl_exits() {
    let cloud = Cloud::with(short_transitions());
    let (endpoint, received) = receiver(&cloud);
    let file = cloud.file("pipe.yaml", KAFKA_PIPE);
    let created = cloud
        .run(
            cloud
                .command()
                .env("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)
                .env("OTEL_SERVICE_NAME", "deploys")
                .env(
                    "OTEL_EXPORTER_OTLP_HEADERS",
                    "x-collector-token=collector-s3cret-token",
                )
                .args(["pipe", "create", "-f", &file, "--wait", "-o", "json"]),
        )
        .expect(0)
        .json();
    assert_eq!(created["state"], "Running");

    // Read at once: what the process exported, it flushed before it exited.
    let spans = spans(&received);
    assert!(
        !spans.is_empty(),
        "nothing was exported before cloudctl exited"
    );
    assert!(spans.iter().all(|(service, _)| service == "deploys"));
    let headers = received.lock().unwrap()[0].0.clone();
    assert_eq!(headers["x-collector-token"], "collector-s3cret-token");
    let spans: Vec<Span> = spans.into_iter().map(|(_, span)| span).collect();
    let named = |name: &str| -> Vec<&Span> {
        let mut found: Vec<&Span> = spans.iter().filter(|s| s.name == name).collect();
        found.sort_by_key(|s| s.start_time_unix_nano);
        found
    };
    let root = named("cloudctl pipe create");
    assert_eq!(root.len(), 1, "{spans:#?}");
    let root = root[0];
    assert!(
        root.parent_span_id.is_empty(),
        "the command's span is the root"
    );
    assert_eq!(attribute(root, "process.exit.code").as_deref(), Some("0"));
    assert!(
        spans.iter().all(|s| s.trace_id == root.trace_id),
        "one trace: {spans:#?}"
    );
    let create = named("createPipe");
    assert_eq!(create.len(), 1);
    assert_eq!(create[0].parent_span_id, root.span_id);
    let wait = named("wait pipe");
    assert_eq!(wait.len(), 1, "{spans:#?}");
    assert_eq!(wait[0].parent_span_id, root.span_id);
    let under_wait: Vec<&Span> = spans
        .iter()
        .filter(|s| s.parent_span_id == wait[0].span_id)
        .collect();
    let polls = under_wait.iter().filter(|s| s.name == "getPipe").count();
    let sleeps = under_wait.iter().filter(|s| s.name == "wait sleep").count();
    assert!(polls >= 1, "{under_wait:#?}");
    assert!(sleeps >= 1 && sleeps <= polls, "{under_wait:#?}");
    assert_eq!(under_wait.len(), polls + sleeps);
    // Every call has its attempt under it, a CLIENT span.
    for call in spans
        .iter()
        .filter(|s| s.name == "createPipe" || s.name == "getPipe")
    {
        let attempts: Vec<&Span> = spans
            .iter()
            .filter(|s| s.parent_span_id == call.span_id && s.kind == SpanKind::Client as i32)
            .collect();
        assert_eq!(attempts.len(), 1, "{call:#?}");
    }

    // The create's attempt went out with its own span id.
    let create_attempt = spans
        .iter()
        .find(|s| s.parent_span_id == create[0].span_id && s.kind == SpanKind::Client as i32)
        .expect("the create's attempt");
    let logged = cloud
        .requests()
        .into_iter()
        .find(|entry| entry.method == "POST")
        .expect("the create was logged");
    assert_eq!(
        logged.headers.get("traceparent"),
        Some(&format!(
            "00-{}-{}-01",
            hex(&root.trace_id),
            hex(&create_attempt.span_id)
        ))
    );

    // No secret of the run in anything exported (the protobuf's strings are as sent).
    let bytes: Vec<u8> = received
        .lock()
        .unwrap()
        .iter()
        .flat_map(|(_, body)| body.clone())
        .collect();
    let exported = String::from_utf8_lossy(&bytes);
    for secret in cloud
        .secrets()
        .into_iter()
        .chain(["collector-s3cret-token".to_string()])
    {
        assert!(!exported.contains(&secret), "{secret} was exported");
    }
}

#[test]
fn without_an_endpoint_nothing_is_exported_and_no_trace_context_is_sent() {
    let cloud = Cloud::start();
    // On OTLP's default address: an exporter started without the variable would send here.
    let (_, received) = receiver_at(&cloud, "127.0.0.1:4318", 200);
    let id = cloud.create_kafka_pipe();
    assert!(!id.is_empty());
    assert!(received.lock().unwrap().is_empty());
    assert!(
        cloud
            .requests()
            .iter()
            .all(|entry| !entry.headers.contains_key("traceparent"))
    );

    // With an endpoint but OTEL_PROPAGATORS=none: exported, yet no header on the wire.
    let (endpoint, received) = receiver(&cloud);
    cloud.clear_requests();
    cloud
        .run(
            cloud
                .command()
                .env("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)
                .env("OTEL_PROPAGATORS", "none")
                .args(["pipe", "get", &id, "-o", "json"]),
        )
        .expect(0);
    assert!(!spans(&received).is_empty());
    let logged = cloud.requests();
    assert_eq!(logged.len(), 1);
    assert!(
        !logged[0].headers.contains_key("traceparent"),
        "{:?}",
        logged[0].headers
    );
}

#[test]
fn a_collector_that_refuses_the_export_is_said_and_the_exit_code_stays() {
    let cloud = Cloud::start();
    let (endpoint, received) = receiver_at(&cloud, "127.0.0.1:0", 500);
    let run = cloud
        .run(
            cloud
                .command()
                .env("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)
                .args(["service", "start", "-o", "human"]),
        )
        .expect(0);
    assert!(!received.lock().unwrap().is_empty(), "the export was tried");
    assert!(
        run.stderr
            .contains("warning: the traces could not all be exported"),
        "{}",
        run.stderr
    );
    // In JSON output stderr stays for the error object alone.
    let quiet = cloud
        .run(
            cloud
                .command()
                .env("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)
                .args(["service", "start", "-o", "json"]),
        )
        .expect(0);
    assert!(quiet.stderr.is_empty(), "{}", quiet.stderr);
}

#[test]
fn an_unsupported_protocol_is_said_and_the_command_still_runs() {
    let cloud = Cloud::start();
    let (endpoint, received) = receiver(&cloud);
    let run = cloud
        .run(
            cloud
                .command()
                .env("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)
                .env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
                .args(["service", "start", "-o", "human"]),
        )
        .expect(0);
    assert!(
        run.stderr
            .contains("OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported"),
        "{}",
        run.stderr
    );
    assert!(received.lock().unwrap().is_empty());
}

/// Waits for `child` to end (at most `within`): its exit code and how long it took.
fn ended(child: &mut std::process::Child, within: Duration) -> (i32, Duration) {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return (status.code().unwrap_or(-1), started.elapsed());
        }
        assert!(started.elapsed() < within, "still running after {within:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn ctrl_c_during_a_wait_exports_the_command_and_its_wait_before_the_exit() {
    // The pipe provisions for a minute: the wait is polling when the signal comes.
    let mut timing = Timing::INSTANT;
    timing.pipe_provisioning_ms = 60_000;
    let cloud = Cloud::with(EmulatorOptions::for_tests().timing(timing));
    let (endpoint, received) = receiver(&cloud);
    let file = cloud.file("pipe.yaml", KAFKA_PIPE);
    let mut running = cloud
        .process()
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)
        .args(["pipe", "create", "-f", &file, "--wait", "-o", "json"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("cloudctl starts");
    let deadline = Instant::now() + Duration::from_secs(20);
    while cloud
        .requests()
        .iter()
        .all(|entry| entry.operation_id != Some(OperationId::GetPipe))
    {
        assert!(Instant::now() < deadline, "the wait never polled");
        std::thread::sleep(Duration::from_millis(20));
    }
    let sent = std::process::Command::new("kill")
        .args(["-INT", &running.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(sent.success());
    let (code, took) = ended(&mut running, Duration::from_secs(20));
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut running.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(code, 130, "{stderr}");
    assert!(
        took < Duration::from_secs(10),
        "the wait was cut short: {took:?}"
    );
    assert!(stderr.contains("\"INTERRUPTED\""), "{stderr}");

    // Exported before the exit: the command's span with its code, the wait and its polls.
    let spans: Vec<Span> = spans(&received).into_iter().map(|(_, span)| span).collect();
    let root = spans
        .iter()
        .find(|s| s.name == "cloudctl pipe create")
        .unwrap_or_else(|| panic!("no command span: {spans:#?}"));
    assert_eq!(attribute(root, "process.exit.code").as_deref(), Some("130"));
    let wait = spans
        .iter()
        .find(|s| s.name == "wait pipe")
        .unwrap_or_else(|| panic!("no wait span: {spans:#?}"));
    assert_eq!(wait.parent_span_id, root.span_id);
    assert!(
        spans
            .iter()
            .any(|s| s.name == "getPipe" && s.parent_span_id == wait.span_id),
        "{spans:#?}"
    );
}

/// `cloudctl service start` exporting to `endpoint` within `timeout_ms`: its run (exit 0) and how
/// long it took.
fn service_start_exporting(
    cloud: &Cloud,
    endpoint: &str,
    timeout_ms: &str,
) -> (crate::support::Run, Duration) {
    let started = Instant::now();
    let run = cloud
        .run(
            cloud
                .command()
                .env("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
                .env("OTEL_EXPORTER_OTLP_TIMEOUT", timeout_ms)
                .args(["service", "start", "-o", "human"]),
        )
        .expect(0);
    (run, started.elapsed())
}

#[test]
fn a_collector_that_never_answers_delays_the_exit_by_the_otlp_timeout_at_most() {
    let cloud = Cloud::start();
    // Takes the export and answers an hour later.
    let (endpoint, _) = slow_receiver(&cloud, "127.0.0.1:0", 200, Duration::from_secs(3600));
    let (run, took) = service_start_exporting(&cloud, &endpoint, "500");
    assert!(
        took < Duration::from_secs(4),
        "the exit waited {took:?} for a collector given 500 ms"
    );
    assert!(
        run.stderr
            .contains("warning: the traces could not all be exported"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_slow_collector_gets_the_export_within_the_otlp_timeout() {
    let cloud = Cloud::start();
    // Answers each export after 6 s: past the SDK's own 5 s flush, within the 9 s given.
    let (endpoint, received) = slow_receiver(&cloud, "127.0.0.1:0", 200, Duration::from_secs(6));
    let (run, took) = service_start_exporting(&cloud, &endpoint, "9000");
    assert!(
        !run.stderr.contains("could not all be exported"),
        "{}",
        run.stderr
    );
    assert!(
        spans(&received)
            .iter()
            .any(|(_, span)| span.name == "cloudctl service start"),
        "the export arrived before the exit"
    );
    assert!(took < Duration::from_secs(9), "{took:?}");
}
