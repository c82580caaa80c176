//! The SDK's OpenTelemetry metrics (api-core's `metrics` feature), read back through the SDK's
//! in-memory exporter: requests, attempts, 429s, retries, unknown outcomes, rate limit waits and
//! latency per call and per attempt, with the HTTP semantic conventions' attributes (status code,
//! error type, server address), and nothing secret in any attribute.

use crate::support;

use std::collections::BTreeMap;
use std::time::Duration;

use opentelemetry::metrics::MeterProvider;
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use support::{KEY_ID, KEY_SECRET, PIPE, Reply, ScriptServer, fast_retries, service};

/// Every data point: (instrument, sorted attributes) -> (sum or count).
fn points(exporter: &InMemoryMetricExporter) -> BTreeMap<(String, String), f64> {
    let mut points = BTreeMap::new();
    for resource in exporter.get_finished_metrics().expect("metrics") {
        for scope in resource.scope_metrics() {
            for metric in scope.metrics() {
                let mut add = |attributes: Vec<String>, value: f64| {
                    let mut attributes = attributes;
                    attributes.sort();
                    points.insert((metric.name().to_string(), attributes.join(",")), value);
                };
                let text = |kv: &opentelemetry::KeyValue| format!("{}={}", kv.key, kv.value);
                match metric.data() {
                    AggregatedMetrics::U64(MetricData::Sum(sum)) => {
                        for point in sum.data_points() {
                            add(point.attributes().map(text).collect(), point.value() as f64);
                        }
                    }
                    AggregatedMetrics::F64(MetricData::Histogram(histogram)) => {
                        for point in histogram.data_points() {
                            add(point.attributes().map(text).collect(), point.count() as f64);
                        }
                    }
                    other => panic!("unexpected data {other:?}"),
                }
            }
        }
    }
    points
}

/// The attributes of a point of `op` (`method` on the spec's `path`) against `server`, answered
/// `status`, failing as `error`: sorted, as [`points`] keys them.
fn attributes(
    server: &str,
    op: &str,
    method: &str,
    path: &str,
    status: Option<u16>,
    error: Option<&str>,
) -> String {
    let url = url::Url::parse(server).unwrap();
    let mut attributes = vec![
        format!("cloud_api.operation={op}"),
        format!("http.request.method={method}"),
        format!("url.template={path}"),
        format!("server.address={}", url.host_str().unwrap()),
        format!("server.port={}", url.port_or_known_default().unwrap()),
    ];
    attributes.extend(status.map(|status| format!("http.response.status_code={status}")));
    attributes.extend(error.map(|error| format!("error.type={error}")));
    attributes.sort();
    attributes.join(",")
}

const PIPE_PATH: &str = "/v1/organizations/{organizationId}/services/{serviceId}/pipes/{pipeId}";
const PIPES_PATH: &str = "/v1/organizations/{organizationId}/services/{serviceId}/pipes";

#[tokio::test]
async fn every_call_and_attempt_is_counted_with_the_semantic_conventions_attributes() {
    let exporter = InMemoryMetricExporter::default();
    let provider = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(exporter.clone()).build())
        .build();
    let server = ScriptServer::start(vec![
        Reply::mgmt_error(429, "TOO_MANY_REQUESTS", "slow down").header("X-RateLimit-Reset", "0"),
        Reply::fixture("get_pipe_kinesis"),
        Reply::mgmt_error(500, "INTERNAL_ERROR", "stored, then failed"),
    ])
    .await;
    let client = api_mgmt::Client::builder(&server.url)
        .credentials(api_mgmt::Credentials::basic(KEY_ID, KEY_SECRET))
        .retry(fast_retries())
        .rate_limit(api_mgmt::rate_limit::RateLimit::new(100, Duration::from_secs(1)).unwrap())
        .meter(provider.meter("sdk-test"))
        .build()
        .unwrap();
    let service = service(&client);
    service.pipe(PIPE.parse().unwrap()).get().await.unwrap();
    let pipe = support::secrets::pipes_with_every_secret().remove(0);
    let unknown = service.pipes().create(&pipe).await.unwrap_err();
    assert!(unknown.is_outcome_unknown());
    provider.force_flush().unwrap();

    let points = points(&exporter);
    let get = |name: &str, attributes: &str| {
        points
            .get(&(name.to_string(), attributes.to_string()))
            .copied()
            .unwrap_or_else(|| panic!("no {name} {{{attributes}}} in {points:#?}"))
    };
    let get_ok = attributes(&server.url, "getPipe", "GET", PIPE_PATH, Some(200), None);
    let get_429 = attributes(
        &server.url,
        "getPipe",
        "GET",
        PIPE_PATH,
        Some(429),
        Some("429"),
    );
    let create_500 = attributes(
        &server.url,
        "createPipe",
        "POST",
        PIPES_PATH,
        Some(500),
        Some("500"),
    );
    assert_eq!(get("cloud_api.requests", &get_ok), 1.0);
    assert_eq!(get("cloud_api.attempts", &get_429), 1.0);
    assert_eq!(get("cloud_api.attempts", &get_ok), 1.0);
    assert_eq!(get("cloud_api.throttled", &get_429), 1.0);
    assert_eq!(get("cloud_api.retries", &get_ok), 1.0);
    assert_eq!(get("cloud_api.requests", &create_500), 1.0);
    assert_eq!(get("cloud_api.outcome_unknown", &create_500), 1.0);
    assert_eq!(
        get("cloud_api.call.duration", &get_ok),
        1.0,
        "one latency sample per call"
    );
    // One duration per attempt, beside the call's.
    assert_eq!(get("http.client.request.duration", &get_429), 1.0);
    assert_eq!(get("http.client.request.duration", &get_ok), 1.0);
    assert_eq!(get("http.client.request.duration", &create_500), 1.0);
    let url = url::Url::parse(&server.url).unwrap();
    let waits = |op: &str| {
        let mut attributes = [
            format!("cloud_api.operation={op}"),
            format!("server.address={}", url.host_str().unwrap()),
            format!("server.port={}", url.port().unwrap()),
        ];
        attributes.sort();
        attributes.join(",")
    };
    assert_eq!(
        get("cloud_api.rate_limit.wait", &waits("getPipe")),
        2.0,
        "a wait before each attempt"
    );
    assert_eq!(get("cloud_api.rate_limit.wait", &waits("createPipe")), 1.0);
    let everything = format!("{points:?}");
    support::secrets::assert_clean("the metrics", &everything);
}

/// A connection refused and an attempt that times out are told apart by `error.type`, and two
/// API URLs by `server.address`.
#[tokio::test]
async fn error_type_tells_a_refused_connection_from_a_timeout() {
    let exporter = InMemoryMetricExporter::default();
    let provider = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(exporter.clone()).build())
        .build();
    // Nothing listens there, and no other test's listener is given the port meanwhile.
    let refused_url = format!("http://127.0.0.1:{}", api_test_support::ports::free_port());
    let silent = ScriptServer::start(vec![
        Reply::fixture("get_pipe_kinesis").delay(Duration::from_secs(5)),
    ])
    .await;
    // The silent server is reached by name: another server.address than the refused one's.
    let silent_url = silent.url.replace("127.0.0.1", "localhost");
    for url in [&refused_url, &silent_url] {
        let client = api_mgmt::Client::builder(url.as_str())
            .credentials(api_mgmt::Credentials::basic(KEY_ID, KEY_SECRET))
            .retry(api_mgmt::client::RetryPolicy::disabled())
            .attempt_timeout(Duration::from_millis(300))
            .meter(provider.meter("sdk-test"))
            .build()
            .unwrap();
        service(&client)
            .pipe(PIPE.parse().unwrap())
            .get()
            .await
            .unwrap_err();
    }
    provider.force_flush().unwrap();
    let points = points(&exporter);
    let attempt = |url: &str, error: &str| {
        let key = (
            "http.client.request.duration".to_string(),
            attributes(url, "getPipe", "GET", PIPE_PATH, None, Some(error)),
        );
        points.get(&key).copied()
    };
    assert_eq!(attempt(&refused_url, "connect"), Some(1.0), "{points:#?}");
    assert_eq!(attempt(&silent_url, "timeout"), Some(1.0), "{points:#?}");
}
