//! Metrics a platform team can graph (cargo feature `metrics`): OpenTelemetry instruments recorded
//! on every call, with the operation id and the status class as attributes, and never a secret.
//!
//! | instrument | kind | unit | what |
//! |---|---|---|---|
//! | `cloud_api.requests` | counter | | calls, by their final status class |
//! | `cloud_api.attempts` | counter | | attempts (the first one and each retry), by status class |
//! | `cloud_api.throttled` | counter | | attempts answered 429 |
//! | `cloud_api.retries` | counter | | retries |
//! | `cloud_api.outcome_unknown` | counter | | calls that ended with an unknown outcome |
//! | `cloud_api.rate_limit.wait` | histogram | s | time waited on the client-side rate limit |
//! | `cloud_api.call.duration` | histogram | s | call latency, retries and waits included |
//!
//! Attributes: `operation` (the spec's `operationId`) and `status_class` (`2xx`, `4xx`, `5xx`, or
//! `none` when no answer came).

use std::time::Duration;

use crate::error::Error;
use crate::operation::Operation;

/// `2xx`, `4xx`, `5xx`, ..., or `none`.
#[cfg_attr(not(feature = "metrics"), allow(dead_code))]
pub(crate) fn status_class(status: Option<u16>) -> &'static str {
    match status.map(|status| status / 100) {
        Some(1) => "1xx",
        Some(2) => "2xx",
        Some(3) => "3xx",
        Some(4) => "4xx",
        Some(5) => "5xx",
        _ => "none",
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
    }

    impl Metrics {
        /// The instruments, from `meter`.
        pub(crate) fn new(meter: &Meter) -> Self {
            let counter = |name: &'static str, description: &'static str| {
                meter
                    .u64_counter(name)
                    .with_description(description)
                    .build()
            };
            let seconds = |name: &'static str, description: &'static str| {
                meter
                    .f64_histogram(name)
                    .with_unit("s")
                    .with_description(description)
                    .build()
            };
            Self {
                requests: counter("cloud_api.requests", "Calls, by their final status class"),
                attempts: counter("cloud_api.attempts", "Attempts, retries included"),
                throttled: counter("cloud_api.throttled", "Attempts answered 429"),
                retries: counter("cloud_api.retries", "Retries"),
                outcome_unknown: counter(
                    "cloud_api.outcome_unknown",
                    "Calls that may have been applied without an answer saying so",
                ),
                limiter_wait: seconds(
                    "cloud_api.rate_limit.wait",
                    "Time waited on the client-side rate limit",
                ),
                latency: seconds("cloud_api.call.duration", "Call latency, retries included"),
            }
        }

        /// One attempt answered with `status` (`None`: no answer).
        pub(crate) fn attempt(&self, op: &Operation, status: Option<u16>) {
            let attributes = attributes(op, status);
            self.attempts.add(1, &attributes);
            if status == Some(429) {
                self.throttled.add(1, &attributes);
            }
        }

        /// A wait on the rate limit before an attempt of `op`.
        pub(crate) fn limiter_wait(&self, op: &Operation, wait: Duration) {
            self.limiter_wait
                .record(wait.as_secs_f64(), &[KeyValue::new("operation", op.id)]);
        }

        /// A call that ended with `status` after `attempts` attempts and `elapsed`.
        pub(crate) fn call(
            &self,
            op: &Operation,
            status: Option<u16>,
            attempts: u32,
            elapsed: Duration,
            outcome_unknown: bool,
        ) {
            let attributes = attributes(op, status);
            self.requests.add(1, &attributes);
            self.latency.record(elapsed.as_secs_f64(), &attributes);
            self.retries
                .add(u64::from(attempts.saturating_sub(1)), &attributes);
            if outcome_unknown {
                self.outcome_unknown.add(1, &attributes);
            }
        }
    }

    fn attributes(op: &Operation, status: Option<u16>) -> [KeyValue; 2] {
        [
            KeyValue::new("operation", op.id),
            KeyValue::new("status_class", status_class(status)),
        ]
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
    pub(crate) fn attempt(&self, _op: &Operation, _status: Option<u16>) {}

    pub(crate) fn limiter_wait(&self, _op: &Operation, _wait: Duration) {}

    pub(crate) fn call(
        &self,
        _op: &Operation,
        _status: Option<u16>,
        _attempts: u32,
        _elapsed: Duration,
        _outcome_unknown: bool,
    ) {
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "metrics")]
    #[test]
    fn every_instrument_records_what_its_name_says() {
        use opentelemetry::metrics::MeterProvider;
        use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
        use opentelemetry_sdk::metrics::{
            InMemoryMetricExporter, PeriodicReader, SdkMeterProvider,
        };

        let exporter = InMemoryMetricExporter::default();
        let provider = SdkMeterProvider::builder()
            .with_reader(PeriodicReader::builder(exporter.clone()).build())
            .build();
        let metrics = Metrics::new(&provider.meter("test"));
        let op = Operation {
            id: "createPipe",
            method: "POST",
            path: "/p",
            idempotency: crate::Idempotency::NotIdempotent,
            reconcile: None,
        };
        metrics.attempt(&op, Some(429));
        metrics.attempt(&op, Some(500));
        metrics.attempt(&op, Some(500));
        metrics.limiter_wait(&op, Duration::from_millis(250));
        metrics.call(&op, Some(500), 2, Duration::from_secs(1), true);
        metrics.call(&op, Some(201), 1, Duration::from_secs(1), false);
        provider.force_flush().unwrap();
        let mut seen = std::collections::BTreeMap::new();
        for resource in exporter.get_finished_metrics().unwrap() {
            for scope in resource.scope_metrics() {
                for metric in scope.metrics() {
                    let total = match metric.data() {
                        AggregatedMetrics::U64(MetricData::Sum(sum)) => {
                            sum.data_points().map(|p| p.value() as f64).sum::<f64>()
                        }
                        AggregatedMetrics::F64(MetricData::Histogram(h)) => {
                            h.data_points().map(|p| p.sum()).sum::<f64>()
                        }
                        _ => f64::NAN,
                    };
                    seen.insert(metric.name().to_string(), total);
                }
            }
        }
        let expected = [
            ("cloud_api.attempts", 3.0),
            ("cloud_api.throttled", 1.0),
            ("cloud_api.requests", 2.0),
            ("cloud_api.retries", 1.0),
            ("cloud_api.outcome_unknown", 1.0),
            ("cloud_api.rate_limit.wait", 0.25),
            ("cloud_api.call.duration", 2.0),
        ];
        for (name, value) in expected {
            assert_eq!(seen.get(name), Some(&value), "{name}: {seen:?}");
        }
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

    #[test]
    fn status_classes() {
        assert_eq!(status_class(Some(200)), "2xx");
        assert_eq!(status_class(Some(429)), "4xx");
        assert_eq!(status_class(Some(503)), "5xx");
        assert_eq!(status_class(Some(101)), "1xx");
        assert_eq!(status_class(Some(302)), "3xx");
        assert_eq!(status_class(Some(700)), "none");
        assert_eq!(status_class(None), "none");
    }
}
