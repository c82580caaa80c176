//! The answers of the canned server: a service after a state command, a Kafka pipe, 1000 reverse private endpoints and 500 dashboards
//! (about 1 MB), each valid per `spec/` (the unit tests check them against the spec's schemas).

use serde_json::{Value, json};

/// The organization in every management path.
pub const ORGANIZATION: &str = "3f0c5e2a-8d41-4b7e-9a6c-1e2f3a4b5c6d";
/// The service in every management path.
pub const SERVICE: &str = "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d";
/// The pipe that `getPipe` reads.
pub const PIPE: &str = "0f9e8d7c-6b5a-4f3e-9d2c-1b0a9f8e7d6c";
/// How many reverse private endpoints the list has.
pub const ENDPOINTS: usize = 1000;
/// How many dashboards the list has.
pub const DASHBOARDS: usize = 500;

/// `getPipe`: a running Kafka pipe with its destination, mappings and settings (about 2.6 KB).
pub fn pipe() -> Vec<u8> {
    include_bytes!("../fixtures/get_pipe.json").to_vec()
}

/// `updateServiceState` (`start`): the service as it is right after the command (about 1.3 KB).
pub fn service_state() -> Vec<u8> {
    include_bytes!("../fixtures/update_service_state.json").to_vec()
}

/// `listReversePrivateEndpoints`: [`ENDPOINTS`] endpoints of the three kinds, in the envelope.
pub fn reverse_private_endpoints() -> Vec<u8> {
    let items: Vec<Value> = (0..ENDPOINTS).map(reverse_private_endpoint).collect();
    let envelope = json!({
        "status": 200,
        "requestId": "7f809102-1324-4d5e-8f60-718293041526",
        "result": items,
    });
    serde_json::to_vec(&envelope).expect("JSON values serialise")
}

/// `listDashboards`: [`DASHBOARDS`] dashboards of three to six tiles each.
pub fn dashboards() -> Vec<u8> {
    let items: Vec<Value> = (0..DASHBOARDS).map(dashboard).collect();
    serde_json::to_vec(&json!({ "data": items })).expect("JSON values serialise")
}

/// A UUIDv4 text made from `n`, so every run serves the same bytes.
fn uuid(n: usize) -> String {
    format!(
        "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
        0x5c00_0000 + n,
        n % 0x1_0000,
        n % 0x1000,
        (n * 7) % 0x1000,
        0x1a2b_3c4d_5e6f_u64 + n as u64
    )
}

/// A 24-hex-digit object id made from `n`.
fn object_id(prefix: u32, n: usize) -> String {
    format!("{prefix:08x}{n:016x}")
}

fn reverse_private_endpoint(i: usize) -> Value {
    let status = [
        "Ready",
        "Ready",
        "Ready",
        "Provisioning",
        "PendingAcceptance",
    ][i % 5];
    let base = json!({
        "id": uuid(i),
        "serviceId": SERVICE,
        "description": format!("pipe source {i} in the eu-west-1 VPC"),
        "status": status,
        "endpointId": format!("vpce-0a1b2c3d4e{i:07x}"),
    });
    let kind = match i % 3 {
        0 => json!({
            "type": "VPC_ENDPOINT_SERVICE",
            "vpcEndpointServiceName": format!("com.amazonaws.vpce.eu-west-1.vpce-svc-0123{i:09x}"),
            "vpcResourceConfigurationId": null,
            "vpcResourceShareArn": null,
            "mskClusterArn": null,
            "dnsNames": [format!("vpce-0a1b2c3d4e{i:07x}.vpce-svc.eu-west-1.vpce.amazonaws.com")],
            "privateDnsNames": [format!("source-{i}.internal.example")],
        }),
        1 => json!({
            "type": "VPC_RESOURCE",
            "vpcEndpointServiceName": null,
            "vpcResourceConfigurationId": format!("rcfg-0a1b2c3d{i:09x}"),
            "vpcResourceShareArn": format!("arn:aws:ram:eu-west-1:123456789012:resource-share/{}", uuid(i + 50_000)),
            "mskClusterArn": null,
            "dnsNames": [format!("rcfg-{i}.eu-west-1.vpce.amazonaws.com")],
            "privateDnsNames": [],
        }),
        _ => json!({
            "type": "MSK_MULTI_VPC",
            "vpcEndpointServiceName": null,
            "vpcResourceConfigurationId": null,
            "vpcResourceShareArn": null,
            "mskClusterArn": format!("arn:aws:kafka:eu-west-1:123456789012:cluster/orders-{i}/{}-1", uuid(i + 90_000)),
            "mskAuthentication": if i.is_multiple_of(2) { "SASL_IAM" } else { "SASL_SCRAM" },
            "dnsNames": [format!("b-1.orders-{i}.kafka.example"), format!("b-2.orders-{i}.kafka.example")],
            "privateDnsNames": null,
        }),
    };
    merge(base, kind)
}

fn dashboard(i: usize) -> Value {
    let tiles: Vec<Value> = (0..3 + i % 4).map(|t| tile(i, t)).collect();
    json!({
        "id": object_id(0x66a1_f0c2, i),
        "name": format!("Service {i} overview"),
        "tiles": tiles,
        "tags": ["team:payments", format!("service:checkout-{i}")],
    })
}

fn tile(dashboard: usize, t: usize) -> Value {
    let n = dashboard * 16 + t;
    let series: Vec<Value> = (0..1 + t % 2).map(|s| series(n, s)).collect();
    let names = [
        "Requests",
        "Errors",
        "Latency p95",
        "Saturation",
        "Log volume",
        "Top routes",
        "CPU",
        "Memory",
    ];
    json!({
        "id": object_id(0x77b2_0000, n),
        "name": names[t % names.len()],
        "x": (t % 2) * 6, "y": (t / 2) * 3, "w": 6, "h": 3,
        "asRatio": t.is_multiple_of(3),
        "series": series,
    })
}

fn series(n: usize, s: usize) -> Value {
    let agg_fn = ["count", "avg", "max", "sum"][(n + s) % 4];
    if (n + s).is_multiple_of(2) {
        json!({
            "type": "time",
            "dataSource": "events",
            "sourceId": object_id(0x88c3_0000, n % 7),
            "aggFn": agg_fn,
            "field": if s == 0 { Value::Null } else { json!("duration") },
            "where": format!("service:checkout-{n} AND level:error"),
            "whereLanguage": "lucene",
            "groupBy": ["status", "route"],
            "metricName": null,
        })
    } else {
        json!({
            "type": "time",
            "dataSource": "metrics",
            "sourceId": object_id(0x88c3_0000, n % 7),
            "aggFn": "quantile",
            "field": null,
            "where": format!("service.name = 'checkout-{n}'"),
            "whereLanguage": "sql",
            "groupBy": [],
            "metricName": "http.server.request.duration",
            "metricDataType": "histogram",
        })
    }
}

fn merge(mut base: Value, over: Value) -> Value {
    if let (Some(base), Value::Object(over)) = (base.as_object_mut(), over) {
        base.extend(over);
    }
    base
}

#[cfg(test)]
mod tests;
