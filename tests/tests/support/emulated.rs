//! Helpers for end-to-end tests against the real emulator, started in-process on a free port.

use std::time::Duration;

use api_emulator::{Emulator, EmulatorOptions, Fault, FaultRule, Method, Timing};
use api_mgmt::{
    Credentials, NewPipe, ServiceHandle, WaitOptions,
    client::RetryPolicy,
    pipes::{Destination, KafkaSource},
};

/// The control endpoints over HTTP.
pub async fn control(
    emulator: &Emulator,
    method: reqwest::Method,
    path: &str,
    body: Option<serde_json::Value>,
) -> (u16, serde_json::Value) {
    let mut request = api_mgmt::client::http_client_builder()
        .build()
        .unwrap()
        .request(method, format!("{}{path}", emulator.base_url()))
        .bearer_auth(emulator.control_token());
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.expect("the control endpoint answers");
    let status = response.status().as_u16();
    let text = response.text().await.unwrap_or_default();
    (
        status,
        serde_json::from_str(&text).unwrap_or(serde_json::Value::Null),
    )
}

/// Starts an emulator with instant transitions and no rate limits.
pub async fn start() -> Emulator {
    start_with(EmulatorOptions::for_tests()).await
}

/// Starts an emulator with these options.
pub async fn start_with(options: EmulatorOptions) -> Emulator {
    Emulator::start(options).await.expect("the emulator starts")
}

/// Short, non-zero transitions, to watch the state machines move.
pub fn short_timing() -> Timing {
    Timing {
        service_transition_ms: 150,
        pipe_provisioning_ms: 150,
        pipe_phase_ms: 150,
        pipe_delete_ms: 150,
    }
}

/// A management client with the emulator's admin key and fast retries.
pub fn mgmt(emulator: &Emulator) -> api_mgmt::Client {
    let (id, secret) = emulator.admin_key();
    mgmt_with(emulator, id, secret)
}

/// A management client with the given key and fast retries.
pub fn mgmt_with(emulator: &Emulator, key_id: &str, secret: &str) -> api_mgmt::Client {
    api_mgmt::Client::builder(emulator.base_url())
        .credentials(Credentials::basic(key_id, secret))
        .retry(super::fast_retries())
        .build()
        .expect("client")
}

/// An observability client with the emulator's first token.
pub fn obs(emulator: &Emulator) -> api_obs::Client {
    api_obs::Client::builder(emulator.base_url())
        .credentials(api_obs::Credentials::bearer(emulator.observability_token()))
        .retry(super::fast_retries())
        .build()
        .expect("client")
}

/// The running service of the seed.
pub fn running_service(emulator: &Emulator, client: &api_mgmt::Client) -> ServiceHandle {
    client.service(
        emulator.organization_id(),
        emulator.service_id("running").expect("a running service"),
    )
}

/// The stopped service of the seed.
pub fn stopped_service(emulator: &Emulator, client: &api_mgmt::Client) -> ServiceHandle {
    client.service(
        emulator.organization_id(),
        emulator.service_id("stopped").expect("a stopped service"),
    )
}

/// A valid Kafka pipe called `name`.
pub fn kafka_pipe(name: &str) -> NewPipe {
    NewPipe::builder(name)
        .source(
            KafkaSource::new("b-1.kafka.emulator.local:9098", "orders")
                .credentials("reader", "kafka-password"),
        )
        .destination(
            Destination::new("default")
                .table(name)
                .managed_table(true)
                .column("id", "UInt64"),
        )
        .field_mapping("id", "id")
        .build()
        .expect("a valid pipe")
}

/// Fast polling for waiters.
pub fn fast_wait() -> WaitOptions {
    WaitOptions::default()
        .interval(Duration::from_millis(20), Duration::from_millis(50))
        .timeout(Duration::from_secs(10))
}

/// Arms a fault on `method path` with these faults, in order.
pub fn inject(emulator: &Emulator, method: &str, path: &str, faults: Vec<Fault>) {
    let method = Method::from_bytes(method.as_bytes()).expect("an HTTP method");
    let rule = faults
        .into_iter()
        .fold(FaultRule::on(method, path), FaultRule::then);
    emulator.inject(rule).expect("a valid fault rule");
}

/// A status-only fault.
pub fn status(code: u16) -> Fault {
    Fault::status(code)
}

/// How many requests with `method` to a path starting with `prefix` the emulator has seen.
pub fn seen(emulator: &Emulator, method: &str, prefix: &str) -> usize {
    emulator
        .requests()
        .iter()
        .filter(|r| r.method == method && r.path.starts_with(prefix))
        .count()
}

/// Retries off.
pub fn no_retries() -> RetryPolicy {
    RetryPolicy::disabled()
}
