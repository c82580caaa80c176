// Cargo.toml: api-mgmt = { ..., features = ["otel"] } (for `traceparent` on the wire), tracing,
// tracing-subscriber, tracing-opentelemetry 0.34, opentelemetry 0.33, opentelemetry_sdk 0.33 and
// the exporter of your backend (opentelemetry-otlp for a collector; the tests pass the in-memory one).
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanExporter};
use tracing_subscriber::layer::SubscriberExt as _;

/// Sends the spans of this thread (every call, attempt, rate-limit wait, backoff and waiter of the
/// SDK, and your own) to `exporter`. A program calls `set_global_default` instead; either way, shut
/// the provider down before the process exits, which exports what is left.
pub fn trace_to(
    exporter: impl SpanExporter + 'static,
) -> (SdkTracerProvider, tracing::subscriber::DefaultGuard) {
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .build();
    let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("my-tool"));
    let guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(layer));
    (provider, guard)
}
