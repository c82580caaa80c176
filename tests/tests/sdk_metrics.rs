//! The SDK's OpenTelemetry metrics (api-core's `metrics` feature), read back through the SDK's
//! in-memory exporter: requests, attempts, 429s, retries, unknown outcomes, rate limit waits and
//! latency, by operation and status class, and nothing secret in any attribute.

mod support;

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

#[tokio::test]
async fn every_call_is_counted_by_operation_and_status_class() {
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
        .rate_limit(api_mgmt::RateLimit::new(100, Duration::from_secs(1)).unwrap())
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
    let get_2xx = "operation=getPipe,status_class=2xx";
    let get_4xx = "operation=getPipe,status_class=4xx";
    let create_5xx = "operation=createPipe,status_class=5xx";
    assert_eq!(get("cloud_api.requests", get_2xx), 1.0);
    assert_eq!(get("cloud_api.attempts", get_4xx), 1.0);
    assert_eq!(get("cloud_api.attempts", get_2xx), 1.0);
    assert_eq!(get("cloud_api.throttled", get_4xx), 1.0);
    assert_eq!(get("cloud_api.retries", get_2xx), 1.0);
    assert_eq!(get("cloud_api.requests", create_5xx), 1.0);
    assert_eq!(get("cloud_api.outcome_unknown", create_5xx), 1.0);
    assert_eq!(
        get("cloud_api.call.duration", get_2xx),
        1.0,
        "one latency sample"
    );
    assert_eq!(
        get("cloud_api.rate_limit.wait", "operation=getPipe"),
        2.0,
        "a wait before each attempt"
    );
    assert_eq!(
        get("cloud_api.rate_limit.wait", "operation=createPipe"),
        1.0
    );
    let everything = format!("{points:?}");
    support::secrets::assert_clean("the metrics", &everything);
}
