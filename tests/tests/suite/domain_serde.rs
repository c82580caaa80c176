//! Domain values from the API's own JSON, without HTTP: `serde_json::from_value::<Pipe>` and friends
//! go through the same decoding as a call (the generated types' tolerant reading, then required
//! identity, typed ids, quantities), with the JSON path in the error. Only `api_mgmt` and `api_obs`
//! are used here, as a downstream crate would.

use api_mgmt::{
    Pipe, PipeSource, Service,
    pipes::{Destination, PipeSettings, PipeState, Scaling},
    services::{PrivateEndpoint, ReversePrivateEndpoint},
};
use api_obs::{Alert, Dashboard};
use proptest::prelude::*;
use serde_json::{Value, json};

/// A fixture's envelope member (`result` or `data`).
fn member(name: &str, key: &str) -> Value {
    let path = format!("{}/fixtures/{name}.json", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let envelope: Value = serde_json::from_str(&text).unwrap();
    envelope[key].clone()
}

#[test]
fn every_domain_type_builds_from_the_apis_json() {
    for fixture in [
        "get_pipe_kinesis",
        "get_pipe_object_storage",
        "get_pipe_postgres",
        "create_pipe_kafka",
    ] {
        let pipe: Pipe = serde_json::from_value(member(fixture, "result"))
            .unwrap_or_else(|e| panic!("{fixture}: {e}"));
        assert!(!pipe.name.is_empty(), "{fixture}");
    }
    let service: Service =
        serde_json::from_value(member("update_service_state", "result")).unwrap();
    assert!(!service.name.is_empty());
    let endpoints: Vec<ReversePrivateEndpoint> =
        serde_json::from_value(member("list_reverse_private_endpoints", "result")).unwrap();
    assert!(!endpoints.is_empty());
    let registered: PrivateEndpoint =
        serde_json::from_value(member("create_private_endpoint", "result")).unwrap();
    assert!(!registered.id.is_empty());
    let alert: Alert = serde_json::from_value(member("get_alert", "data")).unwrap();
    assert_eq!(alert.id.as_str().len(), 24);
    let dashboards: Vec<Dashboard> =
        serde_json::from_value(member("list_dashboards", "data")).unwrap();
    assert!(!dashboards.is_empty());
    let settings: PipeSettings =
        serde_json::from_value(member("get_pipe_settings", "result")).unwrap();
    assert!(settings != PipeSettings::default());
}

#[test]
fn a_source_kind_and_a_tile_build_on_their_own() {
    use api_mgmt::pipes::source::{Kafka, Kinesis, ObjectStorage, Postgres};
    for (fixture, kind) in [
        ("create_pipe_kafka", "kafka"),
        ("get_pipe_object_storage", "objectStorage"),
        ("get_pipe_kinesis", "kinesis"),
        ("get_pipe_postgres", "postgres"),
    ] {
        let json = member(fixture, "result");
        let pipe: Pipe = serde_json::from_value(json.clone()).unwrap();
        let part = json["source"][kind].clone();
        let alone = match kind {
            "kafka" => PipeSource::Kafka(serde_json::from_value::<Kafka>(part).unwrap()),
            "objectStorage" => {
                PipeSource::ObjectStorage(serde_json::from_value::<ObjectStorage>(part).unwrap())
            }
            "kinesis" => PipeSource::Kinesis(serde_json::from_value::<Kinesis>(part).unwrap()),
            _ => PipeSource::Postgres(serde_json::from_value::<Postgres>(part).unwrap()),
        };
        assert_eq!(alone, pipe.source, "{fixture}");
    }
    let data = member("list_dashboards", "data");
    let dashboards: Vec<Dashboard> = serde_json::from_value(data.clone()).unwrap();
    let tile: api_obs::dashboards::Tile =
        serde_json::from_value(data[0]["tiles"][1].clone()).unwrap();
    assert_eq!(tile, dashboards[0].tiles[1]);
    let no_id = serde_json::from_value::<api_obs::dashboards::Tile>(json!({"name": "t"}))
        .unwrap_err()
        .to_string();
    assert!(no_id.contains("`id`: required"), "{no_id}");
}

#[test]
fn the_same_tolerance_and_the_same_rules_as_a_call() {
    let pipe: Pipe = serde_json::from_value(json!({
        "id": "3f0c5e2a-8d41-4b7e-9a6c-1e2f3a4b5c6d",
        "serviceId": "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d",
        "name": "orders",
        "state": "Hibernating",
        "scaling": {"replicas": 2, "replicaCpuMillicores": "500m", "replicaMemoryGb": "2Gi"},
        "source": {"kafka": {"brokers": "b:9092", "topics": "orders"}},
        "destination": null,
        "somethingNew": {"x": 1}
    }))
    .unwrap();
    assert!(matches!(pipe.state, PipeState::Other(_)));
    assert_eq!(pipe.scaling.replicas, Some(2));
    assert_eq!(pipe.scaling.replica_cpu.map(|cpu| cpu.get()), Some(500));
    assert!(matches!(pipe.source, PipeSource::Kafka(_)));
    assert_eq!(pipe.destination, Destination::default());

    let missing =
        serde_json::from_value::<Pipe>(json!({"id": "3f0c5e2a-8d41-4b7e-9a6c-1e2f3a4b5c6d"}))
            .unwrap_err()
            .to_string();
    assert!(missing.contains("`serviceId`: required"), "{missing}");
    let negative = serde_json::from_value::<Scaling>(json!({"replicaMemoryGb": -1}))
        .unwrap_err()
        .to_string();
    assert!(negative.contains("negative memory amount"), "{negative}");
    let huge = serde_json::from_value::<Scaling>(json!({"replicas": 99_999_999_999_i64}))
        .unwrap_err()
        .to_string();
    assert!(
        huge.contains("`replicas`: 99999999999 is out of range"),
        "{huge}"
    );
    let bad_id = serde_json::from_value::<Vec<Dashboard>>(
        json!([{"id": "66a1f0c2d4e5f60718293a42"}, {"id": "nope"}]),
    )
    .unwrap_err()
    .to_string();
    assert!(
        bad_id.contains("`id`") && bad_id.contains("dashboard id"),
        "{bad_id}"
    );
    // Errors of the wire shape itself name their path too.
    let not_a_uuid = serde_json::from_value::<Service>(json!({"id": "x"}))
        .unwrap_err()
        .to_string();
    assert!(not_a_uuid.starts_with("`id`: "), "{not_a_uuid}");
    let wrong_type = serde_json::from_value::<Pipe>(json!({
        "id": "5f0c9e0b-6c1c-4f31-9d52-1d3f4e0a7b21",
        "serviceId": "5f0c9e0b-6c1c-4f31-9d52-1d3f4e0a7b22",
        "destination": {"database": 7},
    }))
    .unwrap_err()
    .to_string();
    assert!(
        wrong_type.starts_with("`destination.database`: "),
        "{wrong_type}"
    );
}

#[test]
fn serde_output_reads_back_as_the_same_value_but_for_secrets() {
    for fixture in [
        "get_pipe_kinesis",
        "get_pipe_object_storage",
        "get_pipe_postgres",
        "create_pipe_kafka",
    ] {
        let pipe: Pipe = serde_json::from_value(member(fixture, "result")).unwrap();
        let written = serde_json::to_value(&pipe).unwrap();
        let back: Pipe = serde_json::from_value(written.clone())
            .unwrap_or_else(|e| panic!("{fixture}: {e}\n{written:#}"));
        if written.to_string().contains("[REDACTED]") {
            // A secret (a connection string) comes back as the text "[REDACTED]".
            assert_eq!(back.id, pipe.id, "{fixture}");
            assert_eq!(back.destination, pipe.destination, "{fixture}");
            assert_eq!(back.scaling, pipe.scaling, "{fixture}");
            assert_eq!(back.settings, pipe.settings, "{fixture}");
        } else {
            assert_eq!(back, pipe, "{fixture}");
        }
    }
    let service: Service =
        serde_json::from_value(member("update_service_state", "result")).unwrap();
    let back: Service = serde_json::from_value(serde_json::to_value(&service).unwrap()).unwrap();
    assert_eq!(back, service);
    let alert: Alert = serde_json::from_value(member("get_alert", "data")).unwrap();
    let back: Alert = serde_json::from_value(serde_json::to_value(&alert).unwrap()).unwrap();
    assert_eq!(back, alert);
    let dashboards: Vec<Dashboard> =
        serde_json::from_value(member("list_dashboards", "data")).unwrap();
    let back: Vec<Dashboard> =
        serde_json::from_value(serde_json::to_value(&dashboards).unwrap()).unwrap();
    assert_eq!(back, dashboards);
    let endpoints: Vec<ReversePrivateEndpoint> =
        serde_json::from_value(member("list_reverse_private_endpoints", "result")).unwrap();
    let back: Vec<ReversePrivateEndpoint> =
        serde_json::from_value(serde_json::to_value(&endpoints).unwrap()).unwrap();
    assert_eq!(back, endpoints);
}

fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| json!(f)),
        "[a-zA-Z0-9:-]{0,40}".prop_map(Value::from),
        Just(json!("3f0c5e2a-8d41-4b7e-9a6c-1e2f3a4b5c6d")),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map(
                prop_oneof![
                    Just("id".to_string()),
                    Just("serviceId".to_string()),
                    Just("source".to_string()),
                    Just("kafka".to_string()),
                    Just("scaling".to_string()),
                    Just("replicas".to_string()),
                    Just("state".to_string()),
                    "[a-z]{1,8}",
                ],
                inner,
                0..6
            )
            .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn any_json_decodes_or_says_why_without_panicking(value in any_json()) {
        let failures = [
            serde_json::from_value::<Pipe>(value.clone()).err().map(|e| e.to_string()),
            serde_json::from_value::<Service>(value.clone()).err().map(|e| e.to_string()),
            serde_json::from_value::<Alert>(value.clone()).err().map(|e| e.to_string()),
            serde_json::from_value::<Dashboard>(value.clone()).err().map(|e| e.to_string()),
            serde_json::from_value::<ReversePrivateEndpoint>(value).err().map(|e| e.to_string()),
        ];
        for message in failures.into_iter().flatten() {
            prop_assert!(!message.is_empty());
        }
    }
}
