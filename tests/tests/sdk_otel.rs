//! The SDK's spans as OpenTelemetry receives them through `tracing-opentelemetry`: one call span,
//! a CLIENT span per attempt to the stable HTTP conventions, rate-limit, backoff and waiter spans
//! that cover the call's wall time, the W3C `traceparent` of the attempt on the wire, and no
//! secret in any span.
//!
//! In a test binary of its own, and every test installs its subscriber: `tracing` caches
//! per-callsite interest process-wide, so a test without one beside these could hide their spans.

mod support;

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use api_mgmt::{pipes::PipeState, rate_limit::RateLimit};
use opentelemetry::trace::{SpanId, SpanKind, Status, TraceId, TracerProvider as _};
use opentelemetry::{KeyValue, Value};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use proptest::prelude::*;
use support::emulated::{self, fast_wait, kafka_pipe, running_service};
use support::secrets::{assert_clean, pipes_with_every_secret};
use support::{KEY_ID, PIPE, Reply, ScriptServer, fast_retries, service};
use tracing_subscriber::layer::SubscriberExt;

/// An in-memory OpenTelemetry exporter behind `tracing-opentelemetry`, the thread's subscriber
/// while it lives.
struct Traced {
    provider: SdkTracerProvider,
    exporter: InMemorySpanExporter,
    _guard: tracing::subscriber::DefaultGuard,
}

fn traced() -> Traced {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("api-tests"));
    let subscriber = tracing_subscriber::registry().with(layer);
    let guard = tracing::subscriber::set_default(subscriber);
    Traced {
        provider,
        exporter,
        _guard: guard,
    }
}

impl Traced {
    /// Every span ended so far.
    fn spans(&self) -> Vec<SpanData> {
        self.provider.force_flush().expect("flushed");
        self.exporter.get_finished_spans().expect("the spans")
    }
}

fn attributes(span: &SpanData) -> BTreeMap<String, Value> {
    span.attributes
        .iter()
        .map(|KeyValue { key, value, .. }| (key.to_string(), value.clone()))
        .collect()
}

fn attribute(span: &SpanData, key: &str) -> Option<String> {
    attributes(span).get(key).map(Value::to_string)
}

fn named<'a>(spans: &'a [SpanData], name: &str) -> Vec<&'a SpanData> {
    let mut found: Vec<&SpanData> = spans.iter().filter(|span| span.name == name).collect();
    found.sort_by_key(|span| span.start_time);
    found
}

fn children<'a>(spans: &'a [SpanData], parent: &SpanData) -> Vec<&'a SpanData> {
    let mut found: Vec<&SpanData> = spans
        .iter()
        .filter(|span| span.parent_span_id == parent.span_context.span_id())
        .collect();
    found.sort_by_key(|span| span.start_time);
    found
}

/// The share of `parent`'s wall time that its children's spans cover (their union).
fn coverage(parent: &SpanData, children: &[&SpanData]) -> f64 {
    let nanos = |time: SystemTime| {
        time.duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos()
    };
    let (start, end) = (nanos(parent.start_time), nanos(parent.end_time));
    let mut intervals: Vec<(u128, u128)> = children
        .iter()
        .map(|span| {
            (
                nanos(span.start_time).max(start),
                nanos(span.end_time).min(end),
            )
        })
        .collect();
    intervals.sort();
    let (mut covered, mut reached) = (0u128, start);
    for (from, to) in intervals {
        let from = from.max(reached);
        if to > from {
            covered += to - from;
            reached = to;
        }
    }
    covered as f64 / (end - start).max(1) as f64
}

/// Everything a span says, as text: its name, attributes, events and their attributes, status.
fn text_of(spans: &[SpanData]) -> String {
    let mut text = String::new();
    for span in spans {
        text.push_str(&format!(
            "{} {:?} {:?}\n",
            span.name, span.attributes, span.status
        ));
        for event in span.events.iter() {
            text.push_str(&format!("  {} {:?}\n", event.name, event.attributes));
        }
    }
    text
}

const PIPE_PATH: &str = "/v1/organizations/{organizationId}/services/{serviceId}/pipes/{pipeId}";

#[tokio::test(flavor = "current_thread")]
async fn a_call_answered_503_429_200_has_one_call_span_three_attempts_and_its_waits() {
    let traced = traced();
    let server = ScriptServer::start(vec![
        Reply::mgmt_error(503, "UNAVAILABLE", "busy"),
        Reply::mgmt_error(429, "TOO_MANY_REQUESTS", "slow down"),
        Reply::fixture("create_pipe_kafka").header("x-request-id", "otel-req-3"),
    ])
    .await;
    // 5 calls a second: the second attempt queues behind the first, the third behind the 429's
    // block (one interval, as no Retry-After came). The call lasts some 400 ms, so that 5% of it is
    // more than a scheduler's pause between two spans.
    let client = api_mgmt::Client::builder(&server.url)
        .credentials(api_mgmt::Credentials::basic(KEY_ID, support::KEY_SECRET))
        .retry(fast_retries())
        .rate_limit(RateLimit::new(5, Duration::from_secs(1)).unwrap())
        .build()
        .unwrap();
    let pipe = service(&client).pipe(PIPE.parse().unwrap()).get().await;
    assert!(pipe.is_ok(), "{pipe:?}");

    let spans = traced.spans();
    let calls = named(&spans, "getPipe");
    assert_eq!(calls.len(), 1, "{spans:#?}");
    let call = calls[0];
    assert_eq!(call.span_kind, SpanKind::Internal);
    assert_eq!(
        call.status,
        Status::Unset,
        "a library leaves a success unset"
    );
    assert_eq!(
        attribute(call, "cloud_api.operation").as_deref(),
        Some("getPipe")
    );
    assert_eq!(attribute(call, "cloud_api.pipe_id").as_deref(), Some(PIPE));
    assert_eq!(
        attribute(call, "cloud_api.service_id").as_deref(),
        Some(support::SERVICE)
    );
    assert_eq!(
        attribute(call, "cloud_api.organization_id").as_deref(),
        Some(support::ORG)
    );
    assert_eq!(
        attribute(call, "cloud_api.request_id").as_deref(),
        Some("otel-req-3")
    );
    assert_eq!(attribute(call, "cloud_api.attempts").as_deref(), Some("3"));
    assert_eq!(
        attribute(call, "http.response.status_code").as_deref(),
        Some("200")
    );

    let attempts = named(&spans, &format!("GET {PIPE_PATH}"));
    assert_eq!(attempts.len(), 3, "{spans:#?}");
    let port = url::Url::parse(&server.url)
        .unwrap()
        .port()
        .unwrap()
        .to_string();
    for (attempt, (status, error_type, resend, otel_status)) in attempts.iter().zip([
        ("503", Some("503"), None, Status::error("")),
        ("429", Some("429"), Some("1"), Status::error("")),
        ("200", None, Some("2"), Status::Unset),
    ]) {
        assert_eq!(attempt.span_kind, SpanKind::Client);
        assert_eq!(attempt.parent_span_id, call.span_context.span_id());
        assert_eq!(
            attempt.span_context.trace_id(),
            call.span_context.trace_id()
        );
        assert_eq!(
            attribute(attempt, "http.response.status_code").as_deref(),
            Some(status)
        );
        assert_eq!(attribute(attempt, "error.type").as_deref(), error_type);
        assert_eq!(
            attribute(attempt, "http.request.resend_count").as_deref(),
            resend
        );
        assert_eq!(attempt.status, otel_status);
        assert_eq!(
            attribute(attempt, "http.request.method").as_deref(),
            Some("GET")
        );
        assert_eq!(
            attribute(attempt, "server.address").as_deref(),
            Some("127.0.0.1")
        );
        assert_eq!(
            attribute(attempt, "server.port").as_deref(),
            Some(port.as_str())
        );
        assert_eq!(
            attribute(attempt, "url.template").as_deref(),
            Some(PIPE_PATH)
        );
        let full = attribute(attempt, "url.full").unwrap();
        assert!(
            full.starts_with(&server.url) && full.ends_with(PIPE),
            "{full}"
        );
    }

    let backoffs = named(&spans, "backoff");
    let reasons: Vec<Option<String>> = backoffs
        .iter()
        .map(|span| attribute(span, "cloud_api.backoff.reason"))
        .collect();
    assert_eq!(
        reasons,
        [
            Some("status 503".to_string()),
            Some("status 429".to_string())
        ]
    );
    let waits = named(&spans, "rate limit");
    assert_eq!(waits.len(), 3, "one wait before each attempt: {spans:#?}");
    let blocked: Vec<Option<String>> = waits
        .iter()
        .map(|span| attribute(span, "cloud_api.rate_limit.blocked"))
        .collect();
    assert_eq!(
        blocked,
        ["false", "false", "true"].map(|b| Some(b.to_string())),
        "the third waited for the 429's block"
    );
    assert!(
        waits.iter().all(
            |span| attribute(span, "cloud_api.rate_limit.store").as_deref() == Some("process")
        )
    );
    assert_eq!(
        named(&spans, "rate limit throttled").len(),
        1,
        "the 429 told to the limit"
    );
    let third = waits[2];
    let waited = third.end_time.duration_since(third.start_time).unwrap();
    assert!(waited >= Duration::from_millis(100), "{waited:?}");

    let under_the_call = children(&spans, call);
    assert_eq!(under_the_call.len(), 3 + 3 + 2 + 1, "{under_the_call:#?}");
    let covered = coverage(call, &under_the_call);
    assert!(
        covered >= 0.95,
        "the call's spans cover {covered:.3} of its time"
    );
    assert_clean("the spans", &text_of(&spans));
}

#[tokio::test(flavor = "current_thread")]
async fn the_attempt_span_travels_as_traceparent_unless_turned_off() {
    let traced = traced();
    let emulator = emulated::start().await;
    let client = emulated::mgmt(&emulator);
    let svc = running_service(&emulator, &client);
    svc.pipe(PIPE.parse().unwrap())
        .get_opt()
        .await
        .expect("read");

    let quiet = api_mgmt::Client::builder(emulator.base_url())
        .credentials(api_mgmt::Credentials::basic(
            emulator.admin_key().0,
            emulator.admin_key().1,
        ))
        .trace_propagation(false)
        .build()
        .unwrap();
    running_service(&emulator, &quiet)
        .pipe(PIPE.parse().unwrap())
        .get_opt()
        .await
        .expect("read");

    let spans = traced.spans();
    let attempts: Vec<&SpanData> = spans
        .iter()
        .filter(|span| span.span_kind == SpanKind::Client)
        .collect();
    assert_eq!(attempts.len(), 2, "{spans:#?}");
    let log = emulator.requests();
    let entries: Vec<_> = log.iter().collect();
    assert_eq!(entries.len(), 2);
    let sent = entries[0]
        .headers
        .get("traceparent")
        .expect("the first list carried a traceparent");
    let attempt = attempts
        .iter()
        .min_by_key(|span| span.start_time)
        .unwrap()
        .span_context
        .clone();
    assert_eq!(
        sent,
        &format!("00-{}-{}-01", attempt.trace_id(), attempt.span_id()),
        "the attempt span's own id, sampled"
    );
    assert_ne!(attempt.trace_id(), TraceId::INVALID);
    assert_ne!(attempt.span_id(), SpanId::INVALID);
    assert!(
        !entries[1].headers.contains_key("traceparent"),
        "trace_propagation(false) sends none: {:?}",
        entries[1].headers
    );
}

#[tokio::test(flavor = "current_thread")]
async fn without_an_opentelemetry_layer_no_traceparent_is_sent() {
    // Spans are on (a subscriber that records them), but no OpenTelemetry context exists.
    let subscriber = tracing_subscriber::registry()
        .with(tracing_subscriber::fmt::layer().with_writer(std::io::sink));
    let _guard = tracing::subscriber::set_default(subscriber);
    let emulator = emulated::start().await;
    let client = emulated::mgmt(&emulator);
    running_service(&emulator, &client)
        .pipe(PIPE.parse().unwrap())
        .get_opt()
        .await
        .expect("read");
    let log = emulator.requests();
    let entry = log.iter().next().expect("one request");
    assert!(
        !entry.headers.contains_key("traceparent"),
        "{:?}",
        entry.headers
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_create_and_its_wait_are_one_trace_every_poll_and_sleep_in_it() {
    let traced = traced();
    // Provisioning for 600 ms: a dozen polls, and a wait long enough that 5% of it is more than a
    // scheduler's pause between two spans.
    let timing = api_emulator::Timing {
        pipe_provisioning_ms: 600,
        ..emulated::short_timing()
    };
    let emulator =
        emulated::start_with(api_emulator::EmulatorOptions::for_tests().timing(timing)).await;
    let client = emulated::mgmt(&emulator);
    let svc = running_service(&emulator, &client);
    let root = tracing::info_span!("deploy");
    let running = async {
        let pipe = svc
            .pipes()
            .create(&kafka_pipe("otel-orders"))
            .await
            .expect("created");
        svc.pipe(pipe.id)
            .wait_until(PipeState::Running, &fast_wait())
            .await
            .expect("running")
    };
    use tracing::Instrument;
    let pipe = running.instrument(root).await;
    assert_eq!(pipe.state, PipeState::Running);

    let spans = traced.spans();
    let root = named(&spans, "deploy")[0];
    let trace = root.span_context.trace_id();
    assert!(
        spans
            .iter()
            .all(|span| span.span_context.trace_id() == trace),
        "one trace: {spans:#?}"
    );
    let creates = named(&spans, "createPipe");
    assert_eq!(creates.len(), 1);
    assert_eq!(creates[0].parent_span_id, root.span_context.span_id());
    let waits = named(&spans, "wait pipe");
    assert_eq!(waits.len(), 1, "{spans:#?}");
    let wait = waits[0];
    assert_eq!(wait.status, Status::Unset);
    assert_eq!(
        attribute(wait, "cloud_api.wait.target").as_deref(),
        Some("Running")
    );
    let inside = children(&spans, wait);
    let polls = inside.iter().filter(|span| span.name == "getPipe").count();
    let sleeps = inside
        .iter()
        .filter(|span| span.name == "wait sleep")
        .count();
    assert!(polls >= 3, "the pipe took 600 ms to run: {inside:#?}");
    assert_eq!(sleeps, polls - 1, "a sleep between two polls: {inside:#?}");
    assert_eq!(inside.len(), polls + sleeps);
    let covered = coverage(wait, &inside);
    assert!(
        covered >= 0.95,
        "the wait's spans cover {covered:.3} of its time"
    );
    // Each poll has its attempt under it.
    for poll in inside.iter().filter(|span| span.name == "getPipe") {
        assert_eq!(children(&spans, poll).len(), 1);
    }
}

#[tokio::test(flavor = "current_thread")]
async fn no_span_holds_a_secret_of_the_client_or_a_request() {
    let traced = traced();
    let server = ScriptServer::start(vec![
        Reply::text(503, "text/plain", "busy"),
        Reply::fixture("create_pipe_kafka").header("x-request-id", "otel-req-1"),
    ])
    .await;
    let svc = service(&server.mgmt());
    svc.pipe(PIPE.parse().unwrap()).get().await.unwrap();
    // The script is exhausted: every create is answered 500, retried, and fails.
    for pipe in pipes_with_every_secret() {
        let _ = svc.pipes().create(&pipe).await;
    }
    let spans = traced.spans();
    assert!(named(&spans, "createPipe").len() >= 4, "{spans:#?}");
    let text = text_of(&spans);
    assert_clean("the spans", &text);
    assert!(!text.to_lowercase().contains("authorization"), "{text}");
    for form in api_mgmt::redact::basic_forms(KEY_ID, support::KEY_SECRET) {
        assert!(!text.contains(&form), "{form} in {text}");
    }
}

#[tokio::test(flavor = "current_thread")]
async fn an_attempt_cut_short_by_the_operations_time_ends_as_a_timeout() {
    let traced = traced();
    let server = ScriptServer::start(vec![
        Reply::fixture("create_pipe_kafka").delay(Duration::from_secs(5)),
    ])
    .await;
    let client = api_mgmt::Client::builder(&server.url)
        .credentials(api_mgmt::Credentials::basic(KEY_ID, support::KEY_SECRET))
        .retry(api_mgmt::client::RetryPolicy::disabled())
        .attempt_timeout(Duration::from_secs(30))
        .operation_timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let read = service(&client).pipe(PIPE.parse().unwrap()).get().await;
    assert!(read.is_err(), "{read:?}");
    let spans = traced.spans();
    let call = named(&spans, "getPipe")[0];
    assert_eq!(attribute(call, "error.type").as_deref(), Some("timeout"));
    let attempt = named(&spans, &format!("GET {PIPE_PATH}"))[0];
    assert_eq!(attempt.parent_span_id, call.span_context.span_id());
    assert_eq!(attribute(attempt, "error.type").as_deref(), Some("timeout"));
    assert_eq!(attempt.status, Status::error(""));
    // Where it went, though no answer came: from the span's start, and the URL as it was built.
    let port = server.url.rsplit(':').next().unwrap().to_string();
    assert_eq!(
        attribute(attempt, "server.address").as_deref(),
        Some("127.0.0.1")
    );
    assert_eq!(attribute(attempt, "server.port"), Some(port));
    assert!(
        attribute(attempt, "url.full").is_some_and(|url| url.ends_with(&format!("/pipes/{PIPE}"))),
        "{:?}",
        attribute(attempt, "url.full")
    );
    assert_eq!(attribute(call, "cloud_api.pipe_id").as_deref(), Some(PIPE));
}

#[tokio::test(flavor = "current_thread")]
async fn an_attempt_the_caller_drops_ends_as_cancelled() {
    let traced = traced();
    let server = ScriptServer::start(vec![
        Reply::fixture("create_pipe_kafka").delay(Duration::from_secs(5)),
    ])
    .await;
    let client = server.mgmt();
    let pipe = service(&client).pipe(PIPE.parse().unwrap());
    let read = pipe.get();
    // The caller's own timeout, well within the operation's 120 s: not the SDK's timeout.
    let dropped = tokio::time::timeout(Duration::from_millis(200), read).await;
    assert!(dropped.is_err(), "the caller gave up first");
    let spans = traced.spans();
    let attempt = named(&spans, &format!("GET {PIPE_PATH}"));
    assert_eq!(attempt.len(), 1, "{spans:#?}");
    assert_eq!(
        attribute(attempt[0], "error.type").as_deref(),
        Some("cancelled")
    );
    assert_eq!(attempt[0].status, Status::error(""));
    // The call it belonged to did not succeed either.
    let call = named(&spans, "getPipe");
    assert_eq!(call.len(), 1, "{spans:#?}");
    assert_eq!(
        attribute(call[0], "error.type").as_deref(),
        Some("cancelled")
    );
    assert_eq!(call[0].status, Status::error(""));
}

#[tokio::test(flavor = "current_thread")]
async fn a_404_the_caller_expects_is_no_error_of_its_call() {
    let traced = traced();
    let gone = || Reply::mgmt_error(404, "NOT_FOUND", "no such pipe");
    let server = ScriptServer::start(vec![gone(), gone()]).await;
    let client = server.mgmt();
    let pipe = service(&client).pipe(PIPE.parse().unwrap());
    assert!(pipe.get_opt().await.unwrap().is_none());
    assert!(pipe.get().await.unwrap_err().is_not_found());
    let spans = traced.spans();
    let calls = named(&spans, "getPipe");
    assert_eq!(calls.len(), 2, "{spans:#?}");
    // get_opt: a 404 is its answer "none", not a failure; the attempt still says its status.
    assert_eq!(
        attribute(calls[0], "http.response.status_code").as_deref(),
        Some("404")
    );
    assert_eq!(attribute(calls[0], "error.type"), None);
    assert_eq!(calls[0].status, Status::Unset);
    let attempts = named(&spans, &format!("GET {PIPE_PATH}"));
    assert_eq!(attribute(attempts[0], "error.type").as_deref(), Some("404"));
    // get: the same answer is the call's error.
    assert_eq!(attribute(calls[1], "error.type").as_deref(), Some("404"));
    assert_eq!(calls[1].status, Status::error(""));
}

/// The guide's setup (`guide/examples/traces.rs`), in this binary: every test of it installs a
/// subscriber.
#[path = "../../guide/examples/traces.rs"]
mod guide_sample;

#[tokio::test(flavor = "current_thread")]
async fn the_guides_setup_sends_a_call_and_its_attempt_to_the_exporter() {
    let emulator = emulated::start().await;
    let exporter = InMemorySpanExporter::default();
    let (provider, guard) = guide_sample::trace_to(exporter.clone());
    let client = emulated::mgmt(&emulator);
    running_service(&emulator, &client)
        .reverse_private_endpoints()
        .await
        .unwrap();
    drop(guard);
    // What `shutdown` does in a program, without it (the in-memory exporter forgets at shutdown).
    provider.force_flush().expect("the spans are exported");
    let spans = exporter.get_finished_spans().unwrap();
    let call = named(&spans, "listReversePrivateEndpoints");
    assert_eq!(call.len(), 1, "{spans:#?}");
    let attempt: Vec<&SpanData> = children(&spans, call[0])
        .into_iter()
        .filter(|span| span.span_kind == SpanKind::Client)
        .collect();
    assert_eq!(attempt.len(), 1, "{spans:#?}");
    let sent = emulator.requests();
    let traceparent = sent
        .iter()
        .next()
        .and_then(|entry| entry.headers.get("traceparent"));
    assert_eq!(
        traceparent,
        Some(&format!(
            "00-{}-{}-01",
            attempt[0].span_context.trace_id(),
            attempt[0].span_context.span_id()
        ))
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]

    /// A secret of any characters, echoed by the server in its error, planted in the request as a
    /// password and as the key's secret: no six characters of it in any exported span.
    #[test]
    fn no_piece_of_an_arbitrary_secret_reaches_a_span(secret in "[!-~]{10,24}") {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let text = runtime.block_on(async {
            let traced = traced();
            let echo = serde_json::json!({
                "status": 400,
                "error": format!("BAD_REQUEST: password {secret} is not accepted, key {secret}"),
            });
            let server = ScriptServer::start(vec![
                Reply::json(503, echo.to_string()),
                Reply::json(400, echo.to_string()),
            ])
            .await;
            let client = api_mgmt::Client::builder(&server.url)
                .credentials(api_mgmt::Credentials::basic(KEY_ID, secret.as_str()))
                .retry(fast_retries())
                .build()
                .unwrap();
            let pipe = api_mgmt::NewPipe::builder("leak-check")
                .source(
                    api_mgmt::pipes::KafkaSource::new("b-1.kafka.example:9098", "orders")
                        .credentials("reader", secret.as_str()),
                )
                .destination(
                    api_mgmt::pipes::Destination::new("default")
                        .table("leak_check")
                        .managed_table(true)
                        .column("id", "UInt64"),
                )
                .field_mapping("id", "id")
                .build()
                .expect("a valid pipe");
            let created = service(&client).pipes().create(&pipe).await;
            assert!(created.is_err());
            text_of(&traced.spans())
        });
        let chars: Vec<char> = secret.chars().collect();
        for piece in chars.windows(6) {
            let piece: String = piece.iter().collect();
            prop_assert!(!text.contains(&piece), "{piece:?} of {secret:?} in {text}");
        }
    }
}
