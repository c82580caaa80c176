//! Decoding realistic answers of every operation into the domain values users hold: unknown values,
//! absent and `null` members, quantity strings, extra settings, unknown source kinds, missing or
//! malformed identity, and secrets that never show.
//!
//! The snapshots show the domain values as `Debug` prints them; the assertions check what must hold
//! whatever the snapshot says.

use api_core::management::responses;
use api_core::observability::responses as obs_responses;
use api_mgmt::{
    Error, PipeSource, Response,
    client::ResponseMeta,
    error::DecodeError,
    pipes::{CpuMillicores, MemoryGb, PipeState},
    services::ServiceState,
};
use serde::de::DeserializeOwned;

fn meta() -> ResponseMeta {
    ResponseMeta {
        status: 200,
        headers: Default::default(),
        request_id: None,
        attempts: 1,
    }
}

fn fixture(name: &str) -> serde_json::Value {
    let path = format!("{}/fixtures/{name}.json", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The envelope of a JSON value, as the runtime hands it over.
fn envelope<T: DeserializeOwned>(json: serde_json::Value) -> Response<T> {
    Response::new(
        serde_json::from_value(json).expect("the envelope decodes"),
        meta(),
    )
}

fn decode_error(result: Result<impl std::fmt::Debug, Error>) -> DecodeError {
    match result {
        Err(Error::Decode(e)) => e,
        other => panic!("expected a decode error, got {other:?}"),
    }
}

const SECRET: &str = "c2VjcmV0LWFjY291bnQta2V5";

#[test]
fn a_service_reads_without_unwrapping() {
    let service = responses::service(envelope(fixture("update_service_state")))
        .unwrap()
        .into_inner();
    assert_eq!(
        service.id.to_string(),
        "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d"
    );
    assert_eq!(service.state, Some(ServiceState::Starting));
    assert_eq!(service.state_name(), "starting");
    let endpoints: Vec<String> = service.endpoints.iter().map(ToString::to_string).collect();
    assert_eq!(
        endpoints,
        [
            "https://abc123.eu-west-1.example.cloud:8443",
            "mysql://abc123.eu-west-1.example.cloud:3306",
            "grpc://abc123.eu-west-1.example.cloud:9100",
        ],
        "an unknown protocol prints as it came"
    );
    assert_eq!(
        service
            .min_total_memory_gb
            .map(|m| m.to_string())
            .as_deref(),
        Some("24 GB")
    );
    assert!(
        service.available_private_endpoint_ids.is_empty(),
        "null is empty"
    );
    insta::assert_debug_snapshot!(service);
}

#[test]
fn a_kafka_pipe_with_an_unknown_state_and_quantity_strings() {
    let pipe = responses::pipe(
        &api_mgmt::raw::operations::CREATE_PIPE,
        envelope(fixture("create_pipe_kafka")),
    )
    .unwrap()
    .into_inner();
    assert_eq!(pipe.state.to_string(), "Hibernating");
    assert!(pipe.state.is_other());
    assert_eq!(pipe.state, PipeState::from("Hibernating"));
    assert_eq!(pipe.scaling.replica_cpu, Some(CpuMillicores::new(500)));
    assert_eq!(pipe.scaling.replica_memory, Some(MemoryGb::new(2.0)));
    assert_eq!(
        format!(
            "{} / {}",
            pipe.scaling.replica_cpu.unwrap(),
            pipe.scaling.replica_memory.unwrap()
        ),
        "500m / 2 GB"
    );
    assert_eq!(pipe.source.to_string(), "kafka");
    let PipeSource::Kafka(kafka) = &pipe.source else {
        panic!("{:?}", pipe.source)
    };
    assert_eq!(kafka.topics, "orders");
    assert_eq!(
        kafka.offset.map(|t| t.to_rfc3339()).as_deref(),
        Some("2026-03-01T00:00:00+00:00")
    );
    assert_eq!(
        kafka.reverse_private_endpoint_ids[0].to_string(),
        "c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f"
    );
    assert_eq!(pipe.destination.columns[1].column_type, "DateTime64(3)");
    insta::assert_debug_snapshot!(pipe);
}

#[test]
fn every_source_kind_decodes() {
    for (fixture_name, kind) in [
        ("get_pipe_kinesis", "kinesis"),
        ("get_pipe_object_storage", "objectStorage"),
        ("get_pipe_postgres", "postgres"),
    ] {
        let pipe = responses::pipe(
            &api_mgmt::raw::operations::GET_PIPE,
            envelope(fixture(fixture_name)),
        )
        .unwrap_or_else(|e| panic!("{fixture_name}: {e}"));
        assert_eq!(pipe.source.to_string(), kind);
        assert_eq!(
            pipe.source_kind().map(|k| k.to_string()).as_deref(),
            Some(kind)
        );
        insta::assert_debug_snapshot!(fixture_name, pipe.into_inner());
    }
}

#[test]
fn a_connection_string_read_back_never_shows() {
    let pipe = responses::pipe(
        &api_mgmt::raw::operations::GET_PIPE,
        envelope(fixture("get_pipe_object_storage")),
    )
    .unwrap()
    .into_inner();
    let PipeSource::ObjectStorage(source) = &pipe.source else {
        panic!("{:?}", pipe.source)
    };
    assert!(
        source
            .connection_string
            .as_ref()
            .unwrap()
            .expose()
            .contains(SECRET),
        "exposing it is an explicit call"
    );
    let shown = [
        format!("{pipe:?}"),
        format!("{:?}", pipe.source),
        format!("{source:?}"),
        serde_json::to_string(&pipe).unwrap(),
        serde_json::to_string(&pipe.source).unwrap(),
        pipe.source.to_string(),
    ];
    for text in shown {
        assert!(
            !text.contains(SECRET) && !text.contains("AccountKey"),
            "{text}"
        );
    }
    let json = serde_json::to_value(&pipe).unwrap();
    assert_eq!(
        json["source"]["objectStorage"]["connectionString"],
        "[REDACTED]"
    );
    assert_eq!(json["id"], "1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d");
}

#[test]
fn settings_keep_what_the_sdk_does_not_know() {
    let settings = responses::pipe_settings(envelope(fixture("get_pipe_settings")))
        .unwrap()
        .into_inner();
    assert_eq!(settings.streaming_max_insert_wait_ms, Some(5000));
    assert_eq!(settings.db_parallel_view_processing, None, "null is absent");
    assert_eq!(settings.extra["stream_flush_interval_ms"], 750);
    let json = serde_json::to_value(&settings).unwrap();
    assert_eq!(
        json["stream_flush_interval_ms"], 750,
        "written back beside the others"
    );
    assert_eq!(json["db_max_download_threads"], 4);
    insta::assert_debug_snapshot!(settings);
}

#[test]
fn an_unknown_source_kind_keeps_its_json() {
    let mut json = fixture("get_pipe_kinesis");
    json["result"]["source"] = serde_json::json!({
        "kinesis": null,
        "bigquery": {"project": "analytics", "dataset": "events"}
    });
    let pipe = responses::pipe(&api_mgmt::raw::operations::GET_PIPE, envelope(json))
        .unwrap()
        .into_inner();
    assert_eq!(pipe.source.to_string(), "bigquery");
    assert_eq!(pipe.source_kind(), None);
    let PipeSource::Unknown(unknown) = &pipe.source else {
        panic!("{:?}", pipe.source)
    };
    assert_eq!(unknown.kind(), Some("bigquery"));
    assert_eq!(unknown.json()["dataset"], "events");
    assert_eq!(
        unknown.json(),
        &serde_json::json!({"project": "analytics", "dataset": "events"}),
        "the unknown kind's members are all kept"
    );
}

#[test]
fn endpoints_alerts_and_dashboards_read_without_unwrapping() {
    let endpoints =
        responses::reverse_private_endpoints(envelope(fixture("list_reverse_private_endpoints")))
            .unwrap()
            .into_inner();
    assert_eq!(
        endpoints[0]
            .kind
            .as_ref()
            .map(ToString::to_string)
            .as_deref(),
        Some("MSK_MULTI_VPC")
    );
    assert_eq!(endpoints[0].dns_names.len(), 2);
    insta::assert_debug_snapshot!("reverse_private_endpoints", endpoints);

    let registered = responses::private_endpoint(envelope(fixture("create_private_endpoint")))
        .unwrap()
        .into_inner();
    assert!(!registered.id.is_empty());

    let alert = obs_responses::alert(envelope(fixture("get_alert")))
        .unwrap()
        .into_inner();
    assert_eq!(alert.id.to_string(), "66a1f0c2d4e5f60718293a4b");
    assert_eq!(alert.state_name(), "SNOOZED");
    assert_eq!(
        alert.dashboard.as_ref().map(|d| d.to_string()).as_deref(),
        Some("66a1f0c2d4e5f60718293a42")
    );
    insta::assert_debug_snapshot!("alert", alert);

    let dashboards = obs_responses::dashboards(envelope(fixture("list_dashboards")))
        .unwrap()
        .into_inner();
    assert!(
        dashboards
            .iter()
            .all(|d| !d.tiles.is_empty() || d.tags.is_empty())
    );
    insta::assert_debug_snapshot!("dashboards", dashboards);

    // An absent list is empty, not an error.
    let empty = obs_responses::dashboards(envelope(serde_json::json!({}))).unwrap();
    assert!(empty.is_empty());
    let empty =
        responses::reverse_private_endpoints(envelope(serde_json::json!({"status": 200}))).unwrap();
    assert!(empty.is_empty());
}

#[test]
fn missing_or_malformed_identity_is_a_decode_error_with_its_path() {
    let mut json = fixture("create_pipe_kafka");
    json["result"].as_object_mut().unwrap().remove("id");
    let err = decode_error(responses::pipe(
        &api_mgmt::raw::operations::CREATE_PIPE,
        envelope(json),
    ));
    assert_eq!(
        (err.operation, err.path.as_str()),
        ("createPipe", "result.id")
    );

    let mut json = fixture("get_pipe_kinesis");
    json["result"]["serviceId"] = serde_json::Value::Null;
    let err = decode_error(responses::pipe(
        &api_mgmt::raw::operations::GET_PIPE,
        envelope(json),
    ));
    assert_eq!(err.path, "result.serviceId");

    let mut json = fixture("create_pipe_kafka");
    json["result"]["source"]["kafka"]["reversePrivateEndpointIds"] = serde_json::json!(["nope"]);
    let err = decode_error(responses::pipe(
        &api_mgmt::raw::operations::CREATE_PIPE,
        envelope(json),
    ));
    assert_eq!(err.path, "result.source.kafka.reversePrivateEndpointIds[0]");
    assert!(
        err.to_string()
            .contains("invalid reverse private endpoint id \"nope\""),
        "{err}"
    );

    let mut json = fixture("list_reverse_private_endpoints");
    json["result"][1]
        .as_object_mut()
        .unwrap()
        .remove("serviceId");
    let err = decode_error(responses::reverse_private_endpoints(envelope(json)));
    assert_eq!(
        (err.operation, err.path.as_str()),
        ("listReversePrivateEndpoints", "result[1].serviceId")
    );

    let mut json = fixture("update_service_state");
    json["result"].as_object_mut().unwrap().remove("id");
    assert_eq!(
        decode_error(responses::service(envelope(json))).path,
        "result.id"
    );

    let mut json = fixture("update_service_state");
    json["result"]["numReplicas"] = serde_json::json!(2.5);
    let err = decode_error(responses::service(envelope(json)));
    assert_eq!(err.path, "result.numReplicas");

    let mut json = fixture("get_alert");
    json["data"]["id"] = serde_json::json!("not-hex");
    let err = decode_error(obs_responses::alert(envelope(json)));
    assert_eq!((err.operation, err.path.as_str()), ("getAlert", "data.id"));

    let mut json = fixture("list_dashboards");
    json["data"][0]["tiles"][0]
        .as_object_mut()
        .unwrap()
        .remove("id");
    let err = decode_error(obs_responses::dashboards(envelope(json)));
    assert_eq!(err.path, "data[0].tiles[0].id");

    let mut json = fixture("get_pipe_settings");
    json["result"]["db_max_threads"] = serde_json::json!(-1);
    let err = decode_error(responses::pipe_settings(envelope(json)));
    assert_eq!(err.path, "result.db_max_threads");
}

#[test]
fn known_values_always_map_to_their_variant() {
    for value in PipeState::KNOWN {
        let state = PipeState::from(*value);
        assert!(!state.is_other(), "{value}");
        assert_eq!(state.to_string(), *value);
        let decoded: PipeState = serde_json::from_value(serde_json::json!(value)).unwrap();
        assert_eq!(decoded, state);
    }
    assert_eq!(PipeState::from("Running"), PipeState::Running);
    assert_eq!("Running".parse::<PipeState>().unwrap(), PipeState::Running);
    assert_eq!(PipeState::from(String::from("Running")), PipeState::Running);
    for value in api_obs::alerts::AlertThresholdType::KNOWN {
        assert!(
            !api_obs::alerts::AlertThresholdType::from(*value).is_other(),
            "{value}"
        );
    }
    assert_eq!(
        api_obs::alerts::AlertThresholdType::from("above_exclusive"),
        api_obs::alerts::AlertThresholdType::AboveExclusive
    );
    assert_eq!(
        api_mgmt::services::ReversePrivateEndpointType::from("GCP_PSC_SERVICE_ATTACHMENT"),
        api_mgmt::services::ReversePrivateEndpointType::GcpPscServiceAttachment
    );
}
