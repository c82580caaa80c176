// Cargo.toml: api-mgmt = { ..., features = ["metrics"] }, opentelemetry, opentelemetry_sdk and
// the exporter of your metrics backend (here the in-memory one, as in the tests).
use api_mgmt::{Client, Credentials};
use opentelemetry::metrics::MeterProvider;
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};

/// A client whose calls are recorded by `exporter`'s meter provider.
pub fn metered_client(
    api_url: &str,
    (key_id, key_secret): (&str, &str),
    exporter: InMemoryMetricExporter,
) -> Result<(Client, SdkMeterProvider), api_mgmt::Error> {
    let provider = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(exporter).build())
        .build();
    // Or opentelemetry::global::set_meter_provider(provider.clone()) before building clients.
    let client = Client::builder(api_url)
        .credentials(Credentials::basic(key_id, key_secret))
        .meter(provider.meter("my-service"))
        .build()?;
    Ok((client, provider))
}
