//! Metrics a platform team can graph (cargo feature `metrics`): OpenTelemetry instruments recorded
//! on every call and every attempt, with attributes named by OpenTelemetry's HTTP semantic
//! conventions where one exists, and never a secret.
//!
//! | instrument | kind | unit | what |
//! |---|---|---|---|
//! | `http.client.request.duration` | histogram | s | one attempt: from sending to the answer read (the semantic conventions' instrument) |
//! | `cloud_api.call.duration` | histogram | s | one call: its attempts, the waits between them and the rate limit's waits for retries |
//! | `cloud_api.rate_limit.wait` | histogram | s | a wait on the client-side rate limit before an attempt |
//! | `cloud_api.requests` | counter | `{call}` | calls, by how they ended |
//! | `cloud_api.attempts` | counter | `{attempt}` | attempts (the first one and each retry) |
//! | `cloud_api.throttled` | counter | `{attempt}` | attempts answered 429 |
//! | `cloud_api.retries` | counter | `{retry}` | retries |
//! | `cloud_api.outcome_unknown` | counter | `{call}` | calls that ended with an unknown outcome |
//!
//! Attributes: `cloud_api.operation` (the spec's `operationId`), `http.request.method`,
//! `url.template` (the spec's path), `server.address` and `server.port` (of the API URL, so that
//! staging and production stay apart), `http.response.status_code` when an answer came, and
//! `error.type` when the call or attempt failed: the status code for an error answer, else
//! `connect` (no connection: nothing sent), `timeout`, `request` (lost after sending), `body`,
//! `decode`, `validation`, `withheld` (the client's send check refused it: nothing sent) or
//! `_OTHER`. The histograms have explicit buckets in seconds: the
//! semantic conventions' advisory ones ([`ATTEMPT_BUCKETS`]), extended to ten minutes for the call
//! and the rate limit's waits ([`CALL_BUCKETS`]).

use std::time::Duration;

use crate::error::{Error, TransportKind};
use crate::operation::Operation;

/// The buckets of `http.client.request.duration`, in seconds: the HTTP semantic conventions'
/// advisory boundaries.
#[cfg(feature = "metrics")]
pub const ATTEMPT_BUCKETS: [f64; 14] = [
    0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
];

/// The buckets of `cloud_api.call.duration` and `cloud_api.rate_limit.wait`, in seconds: the
/// advisory ones, then up to ten minutes (retries, and waits on a shared limit, last longer).
#[cfg(feature = "metrics")]
pub const CALL_BUCKETS: [f64; 19] = [
    0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 30.0, 60.0,
    120.0, 300.0, 600.0,
];

/// The `error.type` of a failed call or attempt (see the [module](self) docs); `None` for success.
pub(crate) fn error_type(error: &Error) -> String {
    match error {
        Error::Api(api) => api.status.to_string(),
        Error::Transport(transport) => match transport.kind {
            TransportKind::Connect => "connect",
            TransportKind::Timeout => "timeout",
            TransportKind::Request => "request",
            TransportKind::Body => "body",
        }
        .into(),
        Error::Timeout { .. } => "timeout".into(),
        Error::Decode(_) => "decode".into(),
        Error::Validation(_) => "validation".into(),
        Error::Withheld { .. } => "withheld".into(),
        _ => "_OTHER".into(),
    }
}

/// The status of a call's end: the success's, the error's, or none.
pub(crate) fn final_status<T>(
    result: &Result<T, Error>,
    success: impl Fn(&T) -> u16,
) -> Option<u16> {
    match result {
        Ok(value) => Some(success(value)),
        Err(error) => error.status(),
    }
}

#[cfg(feature = "metrics")]
mod recorded {
    use opentelemetry::KeyValue;
    use opentelemetry::metrics::{Counter, Histogram, Meter};

    use super::*;

    /// The instruments of one client.
    #[derive(Debug, Clone)]
    pub(crate) struct Metrics {
        requests: Counter<u64>,
        attempts: Counter<u64>,
        throttled: Counter<u64>,
        retries: Counter<u64>,
        outcome_unknown: Counter<u64>,
        limiter_wait: Histogram<f64>,
        latency: Histogram<f64>,
        attempt_duration: Histogram<f64>,
        /// `server.address` and `server.port` of the API URL.
        server: [KeyValue; 2],
    }

    impl Metrics {
        /// The instruments, from `meter`, for the API at `base_url`.
        pub(crate) fn new(meter: &Meter, base_url: &str) -> Self {
            let counter = |name: &'static str, unit: &'static str, description: &'static str| {
                meter
                    .u64_counter(name)
                    .with_unit(unit)
                    .with_description(description)
                    .build()
            };
            let seconds = |name: &'static str, buckets: &[f64], description: &'static str| {
                meter
                    .f64_histogram(name)
                    .with_unit("s")
                    .with_boundaries(buckets.to_vec())
                    .with_description(description)
                    .build()
            };
            let url = url::Url::parse(base_url).ok();
            let address = url
                .as_ref()
                .and_then(|url| url.host_str().map(str::to_string))
                .unwrap_or_default();
            let port = url
                .as_ref()
                .and_then(url::Url::port_or_known_default)
                .map_or(0, i64::from);
            Self {
                requests: counter("cloud_api.requests", "{call}", "Calls, by how they ended"),
                attempts: counter(
                    "cloud_api.attempts",
                    "{attempt}",
                    "Attempts, retries included",
                ),
                throttled: counter("cloud_api.throttled", "{attempt}", "Attempts answered 429"),
                retries: counter("cloud_api.retries", "{retry}", "Retries"),
                outcome_unknown: counter(
                    "cloud_api.outcome_unknown",
                    "{call}",
                    "Calls that may have been applied without an answer saying so",
                ),
                limiter_wait: seconds(
                    "cloud_api.rate_limit.wait",
                    &CALL_BUCKETS,
                    "Time waited on the client-side rate limit",
                ),
                latency: seconds(
                    "cloud_api.call.duration",
                    &CALL_BUCKETS,
                    "Call latency, retries included",
                ),
                attempt_duration: seconds(
                    "http.client.request.duration",
                    &ATTEMPT_BUCKETS,
                    "Duration of HTTP client requests",
                ),
                server: [
                    KeyValue::new("server.address", address),
                    KeyValue::new("server.port", port),
                ],
            }
        }

        /// One attempt that took `duration` and was answered with `status` (`None`: no answer),
        /// failing with `error` (`None`: a success).
        pub(crate) fn attempt(
            &self,
            op: &Operation,
            status: Option<u16>,
            error: Option<&Error>,
            duration: Duration,
        ) {
            let attributes = self.attributes(op, status, error);
            self.attempts.add(1, &attributes);
            self.attempt_duration
                .record(duration.as_secs_f64(), &attributes);
            if status == Some(429) {
                self.throttled.add(1, &attributes);
            }
        }

        /// A wait on the rate limit before an attempt of `op`.
        pub(crate) fn limiter_wait(&self, op: &Operation, wait: Duration) {
            let [address, port] = self.server.clone();
            self.limiter_wait.record(
                wait.as_secs_f64(),
                &[KeyValue::new("cloud_api.operation", op.id), address, port],
            );
        }

        /// A call that ended with `status` (and `error`) after `attempts` attempts and `elapsed`.
        pub(crate) fn call(
            &self,
            op: &Operation,
            status: Option<u16>,
            error: Option<&Error>,
            attempts: u32,
            elapsed: Duration,
        ) {
            let attributes = self.attributes(op, status, error);
            self.requests.add(1, &attributes);
            self.latency.record(elapsed.as_secs_f64(), &attributes);
            self.retries
                .add(u64::from(attempts.saturating_sub(1)), &attributes);
            if error.is_some_and(Error::is_outcome_unknown) {
                self.outcome_unknown.add(1, &attributes);
            }
        }

        fn attributes(
            &self,
            op: &Operation,
            status: Option<u16>,
            error: Option<&Error>,
        ) -> Vec<KeyValue> {
            let mut attributes = Vec::with_capacity(7);
            attributes.push(KeyValue::new("cloud_api.operation", op.id));
            attributes.push(KeyValue::new("http.request.method", op.method));
            attributes.push(KeyValue::new("url.template", op.path));
            attributes.extend(self.server.iter().cloned());
            if let Some(status) = status {
                attributes.push(KeyValue::new(
                    "http.response.status_code",
                    i64::from(status),
                ));
            }
            if let Some(error) = error {
                attributes.push(KeyValue::new("error.type", error_type(error)));
            }
            attributes
        }
    }
}

#[cfg(feature = "metrics")]
pub(crate) use recorded::Metrics;

/// Without the `metrics` feature: nothing is recorded, and nothing of it is compiled.
#[cfg(not(feature = "metrics"))]
#[derive(Debug, Clone)]
pub(crate) struct Metrics;

#[cfg(not(feature = "metrics"))]
impl Metrics {
    pub(crate) fn attempt(
        &self,
        _op: &Operation,
        _status: Option<u16>,
        _error: Option<&Error>,
        _duration: Duration,
    ) {
    }

    pub(crate) fn limiter_wait(&self, _op: &Operation, _wait: Duration) {}

    pub(crate) fn call(
        &self,
        _op: &Operation,
        _status: Option<u16>,
        _error: Option<&Error>,
        _attempts: u32,
        _elapsed: Duration,
    ) {
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "metrics")]
    #[test]
    fn every_instrument_records_what_its_name_says_in_its_buckets() {
        use opentelemetry::metrics::MeterProvider;
        use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
        use opentelemetry_sdk::metrics::{
            InMemoryMetricExporter, PeriodicReader, SdkMeterProvider,
        };

        let exporter = InMemoryMetricExporter::default();
        let provider = SdkMeterProvider::builder()
            .with_reader(PeriodicReader::builder(exporter.clone()).build())
            .build();
        let metrics = Metrics::new(&provider.meter("test"), "https://api.example.com/v1");
        let op = Operation {
            id: "createPipe",
            method: "POST",
            path: "/p",
            idempotency: crate::Idempotency::NotIdempotent,
            reconcile: None,
        };
        let failed = Error::from(crate::ApiError::new("createPipe", 500));
        let throttled = Error::from(crate::ApiError::new("createPipe", 429));
        metrics.attempt(&op, Some(429), Some(&throttled), Duration::from_millis(30));
        metrics.attempt(&op, Some(500), Some(&failed), Duration::from_millis(30));
        metrics.attempt(&op, Some(500), Some(&failed), Duration::from_millis(40));
        metrics.limiter_wait(&op, Duration::from_millis(250));
        metrics.call(&op, Some(500), Some(&failed), 2, Duration::from_secs(1));
        metrics.call(&op, Some(201), None, 1, Duration::from_secs(1));
        provider.force_flush().unwrap();
        let mut seen = std::collections::BTreeMap::new();
        let mut units = std::collections::BTreeMap::new();
        let mut bounds = std::collections::BTreeMap::new();
        let mut keyed = std::collections::BTreeMap::new();
        for resource in exporter.get_finished_metrics().unwrap() {
            for scope in resource.scope_metrics() {
                for metric in scope.metrics() {
                    let total = match metric.data() {
                        AggregatedMetrics::U64(MetricData::Sum(sum)) => {
                            for point in sum.data_points() {
                                keyed
                                    .entry(metric.name().to_string())
                                    .or_insert_with(std::collections::BTreeSet::new)
                                    .extend(point.attributes().map(|kv| kv.key.to_string()));
                            }
                            sum.data_points().map(|p| p.value() as f64).sum::<f64>()
                        }
                        AggregatedMetrics::F64(MetricData::Histogram(h)) => {
                            let point = h.data_points().next().unwrap();
                            bounds.insert(
                                metric.name().to_string(),
                                point.bounds().collect::<Vec<f64>>(),
                            );
                            h.data_points().map(|p| p.sum()).sum::<f64>()
                        }
                        _ => f64::NAN,
                    };
                    seen.insert(metric.name().to_string(), total);
                    units.insert(metric.name().to_string(), metric.unit().to_string());
                }
            }
        }
        let expected = [
            ("cloud_api.attempts", 3.0, "{attempt}"),
            ("cloud_api.throttled", 1.0, "{attempt}"),
            ("cloud_api.requests", 2.0, "{call}"),
            ("cloud_api.retries", 1.0, "{retry}"),
            ("cloud_api.outcome_unknown", 1.0, "{call}"),
            ("cloud_api.rate_limit.wait", 0.25, "s"),
            ("cloud_api.call.duration", 2.0, "s"),
            ("http.client.request.duration", 0.1, "s"),
        ];
        for (name, value, unit) in expected {
            let total = seen.get(name).copied().unwrap_or(f64::NAN);
            assert!((total - value).abs() < 1e-9, "{name}: {seen:?}");
            assert_eq!(units.get(name).map(String::as_str), Some(unit), "{name}");
        }
        let keys: Vec<&String> = keyed["cloud_api.requests"].iter().collect();
        assert_eq!(
            keys,
            [
                "cloud_api.operation",
                "error.type",
                "http.request.method",
                "http.response.status_code",
                "server.address",
                "server.port",
                "url.template"
            ]
        );
        assert_eq!(bounds["http.client.request.duration"], ATTEMPT_BUCKETS);
        assert_eq!(bounds["cloud_api.call.duration"], CALL_BUCKETS);
        assert_eq!(bounds["cloud_api.rate_limit.wait"], CALL_BUCKETS);
    }

    #[test]
    fn the_final_status_is_the_successes_or_the_errors() {
        let ok: Result<u16, Error> = Ok(201);
        assert_eq!(final_status(&ok, |s| *s), Some(201));
        let api: Result<u16, Error> = Err(crate::ApiError::new("getPipe", 503).into());
        assert_eq!(final_status(&api, |s| *s), Some(503));
        let none: Result<u16, Error> = Err(crate::ConfigError("x".into()).into());
        assert_eq!(final_status(&none, |s| *s), None);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn error_types_tell_a_status_from_each_kind_of_failure() {
        assert_eq!(
            error_type(&crate::ApiError::new("getPipe", 503).into()),
            "503"
        );
        assert_eq!(error_type(&crate::ConfigError("x".into()).into()), "_OTHER");
        let decode = crate::DecodeError::new("getPipe", "result", "bad");
        assert_eq!(error_type(&decode.into()), "decode");
        let mut problems = crate::Problems::new();
        problems.check(false, "name", "must not be empty");
        let invalid = problems.finish("pipe").unwrap_err();
        assert_eq!(error_type(&invalid.into()), "validation");
        let timeout = Error::Timeout {
            operation: "getPipe",
            attempts: 1,
            elapsed: Duration::from_secs(1),
            limit: Duration::from_secs(1),
            last_error: None,
            outcome_unknown: false,
        };
        assert_eq!(error_type(&timeout), "timeout");
        let withheld = Error::Withheld {
            operation: "createPipe",
            reason: "the lease lapsed".into(),
        };
        assert_eq!(error_type(&withheld), "withheld");
        let url = format!("http://127.0.0.1:{}", api_test_support::ports::free_port());
        let client = crate::http_client_builder().build().unwrap();
        for (kind, said) in [
            (TransportKind::Connect, "connect"),
            (TransportKind::Timeout, "timeout"),
            (TransportKind::Request, "request"),
            (TransportKind::Body, "body"),
        ] {
            let refused = client.get(&url).send().await.unwrap_err();
            let transport = Error::Transport(crate::TransportError {
                operation: "getPipe",
                attempt: 1,
                kind,
                source: refused,
                outcome_unknown: false,
            });
            assert_eq!(error_type(&transport), said);
        }
    }
}
