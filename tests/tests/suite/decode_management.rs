//! Decoding realistic management responses into the generated types, one test per operation.
//!
//! The snapshots show the typed result (open enums keep unknown values as `Other`, quantities are
//! normalised, secrets are redacted); the assertions check what must hold whatever the snapshot says.

use api_raw::management::types::{
    EmptyEnvelope, ManagementError, PipeEnvelope, PipeSettingsEnvelope, PrivateEndpointEnvelope,
    ReversePrivateEndpointListEnvelope, ServiceEnvelope,
};
use api_raw::support::{
    Compression, MskAuthentication, PipeState, ReversePrivateEndpointStatus,
    ReversePrivateEndpointType, ServiceEndpointProtocol, ServiceState,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

fn fixture(name: &str) -> String {
    let path = format!("{}/fixtures/{name}.json", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"))
}

fn decode<T: DeserializeOwned>(name: &str) -> T {
    serde_json::from_str(&fixture(name)).unwrap_or_else(|e| panic!("{name} does not decode: {e}"))
}

/// Re-serialises a decoded value to JSON, the way the SDK would send it back.
fn reencode<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).expect("a decoded value serialises")
}

#[test]
fn update_service_state() {
    let envelope: ServiceEnvelope = decode("update_service_state");
    assert_eq!(envelope.status, Some(200.0), "status 200.0 decodes");
    let service = envelope.result.as_ref().expect("result");
    assert_eq!(service.state, Some(ServiceState::Starting));
    let protocols: Vec<_> = service
        .endpoints
        .iter()
        .flatten()
        .filter_map(|e| e.protocol.clone())
        .collect();
    assert_eq!(
        protocols,
        [
            ServiceEndpointProtocol::Https,
            ServiceEndpointProtocol::Mysql,
            ServiceEndpointProtocol::from("grpc")
        ]
    );
    assert!(
        service.available_private_endpoint_ids.is_none(),
        "null array decodes as None"
    );
    assert_eq!(
        reencode(&envelope)["result"]["endpoints"][2]["protocol"],
        "grpc"
    );
    insta::assert_debug_snapshot!(envelope);
}

#[test]
fn create_pipe_kafka() {
    let envelope: PipeEnvelope = decode("create_pipe_kafka");
    let pipe = envelope.result.as_ref().expect("result");
    assert_eq!(pipe.state, Some(PipeState::from("Hibernating")));
    let scaling = pipe.scaling.as_ref().expect("scaling");
    assert_eq!(scaling.replica_cpu_millicores.map(|c| c.get()), Some(500));
    assert_eq!(scaling.replica_memory_gb.map(|m| m.get()), Some(2.0));
    let json = reencode(&envelope);
    assert_eq!(
        json["result"]["state"], "Hibernating",
        "an unknown state survives re-serialisation"
    );
    assert_eq!(json["result"]["scaling"]["replicaCpuMillicores"], 500);
    assert!(
        json["result"]["source"]["kafka"]
            .get("authentication")
            .is_none(),
        "unknown fields are dropped"
    );
    insta::assert_debug_snapshot!(envelope);
}

#[test]
fn get_pipe_object_storage() {
    let envelope: PipeEnvelope = decode("get_pipe_object_storage");
    let pipe = envelope.result.as_ref().expect("result");
    assert_eq!(pipe.state, Some(PipeState::Completed));
    let source = pipe
        .source
        .as_ref()
        .and_then(|s| s.object_storage.as_ref())
        .expect("objectStorage");
    assert_eq!(source.compression, Some(Compression::from("snappy")));
    let debug = format!("{envelope:?}");
    assert!(
        !debug.contains("AccountKey"),
        "the connection string never shows in Debug: {debug}"
    );
    assert!(debug.contains("Secret([REDACTED])"));
    assert!(
        source
            .connection_string
            .as_ref()
            .map(|s| s.expose().contains("AccountKey="))
            .unwrap_or(false),
        "the connection string is still readable on purpose"
    );
    insta::assert_debug_snapshot!(envelope);
}

#[test]
fn get_pipe_postgres() {
    let envelope: PipeEnvelope = decode("get_pipe_postgres");
    let pipe = envelope.result.as_ref().expect("result");
    assert_eq!(pipe.state, Some(PipeState::Snapshot));
    let scaling = pipe.scaling.as_ref().expect("scaling");
    assert_eq!(
        scaling.replica_cpu_millicores.map(|c| c.get()),
        Some(1000),
        "\"1\" is one core"
    );
    assert_eq!(
        scaling.replica_memory_gb.map(|m| m.get()),
        Some(0.5),
        "\"512Mi\" is half a GB"
    );
    assert_eq!(pipe.updated_at, None, "an absent field decodes as None");
    insta::assert_debug_snapshot!(envelope);
}

#[test]
fn get_pipe_kinesis() {
    let envelope: PipeEnvelope = decode("get_pipe_kinesis");
    let kinesis = envelope
        .result
        .as_ref()
        .and_then(|p| p.source.as_ref())
        .and_then(|s| s.kinesis.as_ref())
        .expect("kinesis");
    assert_eq!(kinesis.timestamp, Some(1_772_409_600));
    insta::assert_debug_snapshot!(envelope);
}

#[test]
fn get_pipe_settings() {
    let envelope: PipeSettingsEnvelope = decode("get_pipe_settings");
    let settings = envelope.result.as_ref().expect("result");
    assert_eq!(
        settings.object_storage_max_insert_bytes,
        Some(1_073_741_824)
    );
    assert_eq!(settings.db_parallel_view_processing, None);
    insta::assert_debug_snapshot!(envelope);
}

#[test]
fn delete_pipe() {
    let envelope: EmptyEnvelope = decode("delete_pipe");
    assert_eq!(envelope.status, Some(200.0));
    assert!(envelope.request_id.is_some());
    insta::assert_debug_snapshot!(envelope);
}

#[test]
fn list_reverse_private_endpoints() {
    let envelope: ReversePrivateEndpointListEnvelope = decode("list_reverse_private_endpoints");
    let endpoints = envelope.result.as_deref().expect("result");
    assert_eq!(endpoints.len(), 2);
    assert_eq!(
        endpoints[0].type_,
        Some(ReversePrivateEndpointType::MskMultiVpc)
    );
    assert_eq!(
        endpoints[0].msk_authentication,
        Some(MskAuthentication::SaslIam)
    );
    assert_eq!(
        endpoints[0].status,
        Some(ReversePrivateEndpointStatus::Ready)
    );
    assert_eq!(
        endpoints[1].status,
        Some(ReversePrivateEndpointStatus::from("Quarantined"))
    );
    assert_eq!(
        endpoints[1].type_,
        Some(ReversePrivateEndpointType::from("VPC_PEERING"))
    );
    let json = reencode(&envelope);
    assert_eq!(
        json["result"][1]["status"], "Quarantined",
        "an unknown status survives re-serialisation"
    );
    assert_eq!(json["result"][1]["mskAuthentication"], "SASL_OAUTHBEARER");
    insta::assert_debug_snapshot!(envelope);
}

#[test]
fn create_private_endpoint() {
    let envelope: PrivateEndpointEnvelope = decode("create_private_endpoint");
    let endpoint = envelope.result.as_ref().expect("result");
    assert_eq!(endpoint.id.as_deref(), Some("vpce-0123456789abcdef0"));
    insta::assert_debug_snapshot!(envelope);
}

#[test]
fn management_error_envelope() {
    let error: ManagementError = decode("management_error");
    assert_eq!(error.status, Some(424.0));
    assert!(
        error
            .error
            .as_deref()
            .unwrap_or_default()
            .starts_with("FAILED_DEPENDENCY: ")
    );
    insta::assert_debug_snapshot!(error);
}

#[test]
fn every_field_may_be_null_or_absent() {
    let nulls = r#"{"status": null, "requestId": null, "result": {
        "id": null, "serviceId": null, "name": null, "state": null, "scaling": null, "source": null,
        "destination": null, "fieldMappings": null, "settings": null, "createdAt": null, "updatedAt": null}}"#;
    let envelope: PipeEnvelope = serde_json::from_str(nulls).expect("all-null pipe decodes");
    assert!(envelope.result.is_some());
    let empty: ServiceEnvelope = serde_json::from_str("{}").expect("an empty envelope decodes");
    let rewritten: EmptyEnvelope =
        serde_json::from_str(r#"{"status": 200, "requestId": "proxy-7f3a"}"#)
            .expect("any request id decodes");
    assert_eq!(rewritten.request_id.as_deref(), Some("proxy-7f3a"));
    assert!(empty.result.is_none());
}
