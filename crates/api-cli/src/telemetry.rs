//! cloudctl's traces: with `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`)
//! set, every span of the run (the command's, and under it the SDK's calls, attempts and waits) is
//! exported through OTLP over HTTP/protobuf, and flushed before the process exits. Without it
//! nothing is exported, and the run's only subscriber says the declared state's warnings on
//! stderr ([`crate::warnings`]).
//!
//! The standard variables apply: `OTEL_EXPORTER_OTLP_PROTOCOL` and `..._TRACES_PROTOCOL`
//! (`http/protobuf`, the only protocol cloudctl speaks), `OTEL_EXPORTER_OTLP_HEADERS`,
//! `OTEL_EXPORTER_OTLP_TIMEOUT`, `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES` (`service.name`
//! is `cloudctl` when neither names it), `OTEL_SDK_DISABLED=true`, `OTEL_TRACES_EXPORTER` (`otlp`,
//! the default, or `none`; another exporter is said and nothing is exported) and
//! `OTEL_PROPAGATORS` (the requests carry `traceparent` when the list is unset or names
//! `tracecontext`). A failure to export is said on stderr in human output (JSON output keeps
//! stderr for the error object), and never changes the exit code. The export at the exit waits
//! for the collector at most `OTEL_EXPORTER_OTLP_TRACES_TIMEOUT` or `OTEL_EXPORTER_OTLP_TIMEOUT`
//! (milliseconds; 10 s by default), whatever the batch processor's own delays.

use std::time::Duration;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::Layer as _;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt as _;

use crate::output::write_stderr;
use crate::warnings::StderrWarnings;

/// What `OTEL_*` asks of a run, read from `env`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// No endpoint, or export turned off: nothing is installed.
    Off,
    /// Something cloudctl does not do (a protocol, an exporter), named by its variable: said,
    /// nothing exported.
    Unsupported {
        variable: &'static str,
        value: String,
    },
    /// Export through OTLP/HTTP with protobuf; `service_name` when no variable names one.
    Export { service_name: Option<&'static str> },
}

/// Reads the standard variables. An empty variable counts as unset, as the exporter reads it.
pub fn plan(env: &dyn Fn(&str) -> Option<String>) -> Plan {
    let set = |name: &str| env(name).filter(|value| !value.is_empty());
    let list = |name: &str| -> Option<Vec<String>> {
        set(name).map(|v| {
            v.split(',')
                .map(|item| item.trim().to_ascii_lowercase())
                .collect()
        })
    };
    let endpoint =
        set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").or_else(|| set("OTEL_EXPORTER_OTLP_ENDPOINT"));
    let disabled = set("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
    if endpoint.is_none() || disabled {
        return Plan::Off;
    }
    if let Some(exporters) = list("OTEL_TRACES_EXPORTER") {
        if exporters.iter().all(|e| e == "none") {
            return Plan::Off;
        }
        if !exporters.iter().any(|e| e == "otlp") {
            return Plan::Unsupported {
                variable: "OTEL_TRACES_EXPORTER",
                value: exporters.join(","),
            };
        }
    }
    for variable in [
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
        "OTEL_EXPORTER_OTLP_PROTOCOL",
    ] {
        if let Some(protocol) = set(variable) {
            if protocol.trim() != "http/protobuf" {
                return Plan::Unsupported {
                    variable,
                    value: protocol.trim().to_string(),
                };
            }
            break;
        }
    }
    let named = set("OTEL_SERVICE_NAME").is_some()
        || set("OTEL_RESOURCE_ATTRIBUTES").is_some_and(|attributes| {
            attributes.split(',').any(|pair| {
                pair.split_once('=')
                    .is_some_and(|(k, _)| k.trim() == "service.name")
            })
        });
    Plan::Export {
        service_name: (!named).then_some("cloudctl"),
    }
}

/// Whether the requests carry the W3C trace context: `OTEL_PROPAGATORS` unset (its default is
/// `tracecontext,baggage`) or naming `tracecontext`.
pub fn propagate(env: &dyn Fn(&str) -> Option<String>) -> bool {
    match env("OTEL_PROPAGATORS").filter(|v| !v.trim().is_empty()) {
        None => true,
        Some(list) => list
            .split(',')
            .any(|p| p.trim().eq_ignore_ascii_case("tracecontext")),
    }
}

/// The installed export, flushed by [`Telemetry::finish`].
pub struct Telemetry {
    provider: SdkTracerProvider,
    /// Whether warnings may go to stderr (not in JSON output).
    say: bool,
    /// How long the exit waits for the last export.
    timeout: Duration,
}

/// The export's time limit when no variable sets one (OTLP's default).
const DEFAULT_EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// The export's time limit the environment sets, in milliseconds (the traces' own variable first).
fn export_timeout(env: &dyn Fn(&str) -> Option<String>) -> Duration {
    [
        "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
        "OTEL_EXPORTER_OTLP_TIMEOUT",
    ]
    .into_iter()
    .find_map(|name| env(name)?.trim().parse::<u64>().ok())
    .map_or(DEFAULT_EXPORT_TIMEOUT, Duration::from_millis)
}

/// Installs the run's subscriber: the declared state's warnings on stderr
/// ([`StderrWarnings`]), and the export the environment asks for. `None` when it asks for none
/// (or it cannot be built: said on stderr in human output, and the command runs untraced).
pub fn install(env: &dyn Fn(&str) -> Option<String>, json: bool) -> Option<Telemetry> {
    let provider = provider(env, json);
    // The SDK's spans and events (a retry's, a poll's) and the command's; not the HTTP stack's.
    let targets = Targets::new()
        .with_target("cloudctl", LevelFilter::INFO)
        .with_target("api_core", LevelFilter::DEBUG)
        .with_target("api_mgmt", LevelFilter::INFO)
        .with_target("api_obs", LevelFilter::INFO);
    let export = provider.as_ref().map(|provider| {
        tracing_opentelemetry::layer()
            .with_tracer(provider.tracer("cloudctl"))
            .with_filter(targets)
    });
    let subscriber = tracing_subscriber::registry()
        .with(StderrWarnings::new(json).with_filter(StderrWarnings::targets()))
        .with(export);
    if tracing::subscriber::set_global_default(subscriber).is_err() {
        return None;
    }
    provider.map(|provider| Telemetry {
        provider,
        say: !json,
        timeout: export_timeout(env),
    })
}

/// The export the environment asks for, when it can be built.
fn provider(env: &dyn Fn(&str) -> Option<String>, json: bool) -> Option<SdkTracerProvider> {
    let say = |text: String| {
        if !json {
            write_stderr(&text);
        }
    };
    let service_name = match plan(env) {
        Plan::Off => return None,
        Plan::Unsupported { variable, value } => {
            say(format!(
                "warning: {variable}={value} is not supported by cloudctl (it exports OTLP over \
                 http/protobuf only): no traces are exported"
            ));
            return None;
        }
        Plan::Export { service_name } => service_name,
    };
    // The headers (a collector's token) are secrets of this run: no output shows them.
    for name in [
        "OTEL_EXPORTER_OTLP_HEADERS",
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    ] {
        for pair in env(name).unwrap_or_default().split(',') {
            if let Some((_, value)) = pair.split_once('=') {
                crate::output::keep_secret(value.trim());
            }
        }
    }
    // The exporter's HTTP client is reqwest's, on rustls: the SDK's client builder installs the
    // process's crypto provider (unless one is installed already), as reqwest needs.
    let _ = api_mgmt::client::http_client_builder();
    let exporter = match opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
        .build()
    {
        Ok(exporter) => exporter,
        Err(e) => {
            say(format!(
                "warning: the OTLP exporter cannot be built ({e}): no traces are exported"
            ));
            return None;
        }
    };
    let mut resource = Resource::builder().with_attribute(opentelemetry::KeyValue::new(
        "service.version",
        env!("CARGO_PKG_VERSION"),
    ));
    if let Some(name) = service_name {
        resource = resource.with_service_name(name);
    }
    Some(
        SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource.build())
            .build(),
    )
}

impl Telemetry {
    /// Exports what is left, then stops the exporter, waiting for it as long as the export's time
    /// limit allows and no longer (the SDK's own flush gives up after 5 s, its shutdown after 5 s
    /// more: a collector given 30 s would lose the run's spans at 10). A failed or unfinished
    /// export is said on stderr in human output (redacted: the headers' values are secrets of the
    /// run).
    pub fn finish(self) {
        let (done, finished) = std::sync::mpsc::channel();
        let (provider, timeout) = (self.provider, self.timeout);
        // On a thread of its own: one that outlives the limit ends with the process.
        std::thread::spawn(move || {
            let started = std::time::Instant::now();
            // `force_flush` answers with the export's result (`shutdown` does not), but waits 5 s
            // at most; the shutdown then waits out the rest of the limit for an export under way.
            let flushed = provider.force_flush();
            let left = timeout.saturating_sub(started.elapsed());
            let stopped = provider.shutdown_with_timeout(left.max(Duration::from_millis(1)));
            // Only the flush's own 5 s ran out (the provider reports a processor's timeout
            // inside its own error, `errs: [Err(Timeout(5s))]`): the shutdown says whether the
            // export under way ended in time.
            let result = match flushed {
                Err(e) if e.to_string().contains("Timeout(") => stopped,
                flushed => flushed.and(stopped),
            };
            let _ = done.send(result.map_err(|e| e.to_string()));
        });
        let problem = match finished.recv_timeout(timeout + Duration::from_millis(200)) {
            Ok(Ok(())) => return,
            Ok(Err(e)) => e,
            Err(_) => format!(
                "the collector did not take them within {timeout:?} (OTEL_EXPORTER_OTLP_TIMEOUT)"
            ),
        };
        if self.say {
            write_stderr(&format!(
                "warning: the traces could not all be exported: {problem}"
            ));
        }
    }
}

/// The command's span: named after the command (`cloudctl pipe create`), the root of the run's
/// trace.
pub fn command_span(words: &[&str]) -> tracing::Span {
    let name = std::iter::once("cloudctl")
        .chain(words.iter().copied())
        .collect::<Vec<_>>()
        .join(" ");
    tracing::info_span!(
        target: "cloudctl",
        "cloudctl",
        otel.name = name.as_str(),
        otel.kind = "internal",
        otel.status_code = tracing::field::Empty,
        process.exit.code = tracing::field::Empty,
    )
}

/// Records how the command ended on its span.
pub fn record_exit(span: &tracing::Span, code: u8) {
    span.record("process.exit.code", code);
    span.record("otel.status_code", if code == 0 { "ok" } else { "error" });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan_of(vars: &[(&str, &str)]) -> Plan {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        plan(&|name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
    }

    #[test]
    fn only_an_endpoint_turns_the_export_on() {
        assert_eq!(plan_of(&[]), Plan::Off);
        assert_eq!(plan_of(&[("OTEL_SERVICE_NAME", "x")]), Plan::Off);
        assert_eq!(plan_of(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "")]), Plan::Off);
        let on = Plan::Export {
            service_name: Some("cloudctl"),
        };
        assert_eq!(
            plan_of(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318")]),
            on
        );
        assert_eq!(
            plan_of(&[(
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                "http://c:4318/v1/traces"
            )]),
            on
        );
        assert_eq!(
            plan_of(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
                ("OTEL_SERVICE_NAME", "deploys"),
            ]),
            Plan::Export { service_name: None }
        );
        assert_eq!(
            plan_of(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
                (
                    "OTEL_RESOURCE_ATTRIBUTES",
                    "team=data, service.name=deploys"
                ),
            ]),
            Plan::Export { service_name: None },
            "a service name in the resource attributes is kept"
        );
        assert_eq!(
            plan_of(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
                ("OTEL_TRACES_EXPORTER", "otlp,console"),
            ]),
            on
        );
    }

    #[test]
    fn export_can_be_turned_off_and_other_protocols_are_said() {
        let endpoint = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318");
        let unsupported = |variable, value: &str| Plan::Unsupported {
            variable,
            value: value.to_string(),
        };
        assert_eq!(
            plan_of(&[endpoint, ("OTEL_SDK_DISABLED", "TRUE")]),
            Plan::Off
        );
        assert_eq!(
            plan_of(&[endpoint, ("OTEL_TRACES_EXPORTER", "none")]),
            Plan::Off
        );
        assert_eq!(
            plan_of(&[endpoint, ("OTEL_TRACES_EXPORTER", "zipkin")]),
            unsupported("OTEL_TRACES_EXPORTER", "zipkin")
        );
        assert_eq!(
            plan_of(&[endpoint, ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")]),
            unsupported("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
        );
        // The traces' own variable wins over the general one, either way.
        assert_eq!(
            plan_of(&[
                endpoint,
                ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/json"),
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
            ]),
            unsupported("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/json")
        );
        assert_eq!(
            plan_of(&[
                endpoint,
                ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf"),
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
            ]),
            Plan::Export {
                service_name: Some("cloudctl")
            }
        );
    }

    #[test]
    fn the_exits_wait_for_the_export_is_the_otlp_timeout() {
        let of = |vars: &'static [(&'static str, &'static str)]| {
            export_timeout(&move |name: &str| {
                vars.iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| v.to_string())
            })
        };
        assert_eq!(of(&[]), DEFAULT_EXPORT_TIMEOUT);
        assert_eq!(
            of(&[("OTEL_EXPORTER_OTLP_TIMEOUT", "500")]),
            Duration::from_millis(500)
        );
        assert_eq!(
            of(&[
                ("OTEL_EXPORTER_OTLP_TIMEOUT", "500"),
                ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "250")
            ]),
            Duration::from_millis(250)
        );
        assert_eq!(
            of(&[("OTEL_EXPORTER_OTLP_TIMEOUT", "soon")]),
            DEFAULT_EXPORT_TIMEOUT
        );
    }

    #[test]
    fn propagation_follows_the_propagators_list() {
        assert!(propagate(&|_| None));
        assert!(propagate(&|_| Some(String::new())));
        assert!(propagate(&|_| Some("baggage, TraceContext".to_string())));
        assert!(!propagate(&|_| Some("none".to_string())));
        assert!(!propagate(&|_| Some("b3,jaeger".to_string())));
    }
}
