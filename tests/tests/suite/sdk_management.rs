//! The management facade over real HTTP against a scripted server: what is sent and what comes back.

use crate::support;

use api_mgmt::{
    NewPipe,
    pipes::{Destination, KafkaSource, ObjectStorageSource, PipeState, Scaling},
    services::{ReversePrivateEndpointStatus, ServiceState},
};
use support::{KEY_ID, KEY_SECRET, ORG, PIPE, Reply, SERVICE, ScriptServer, service};

const BASIC: &str = "Basic a2V5LWlkLTAwMDE6bWdtdC1rZXktc2VjcmV0LXMzY3IzdA==";

fn base() -> String {
    format!("/v1/organizations/{ORG}/services/{SERVICE}")
}

fn kafka_pipe() -> NewPipe {
    NewPipe::builder("orders-stream")
        .source(
            KafkaSource::new("b-1.orders.kafka.example:9098", "orders")
                .consumer_group("pipe-orders")
                .credentials("reader", "kafka-password-1"),
        )
        .destination(
            Destination::new("default")
                .table("orders")
                .managed_table(true)
                .column("order_id", "UInt64")
                .column("created_at", "DateTime64(3)")
                .role("pipe_writer"),
        )
        .field_mapping("id", "order_id")
        .field_mapping("ts", "created_at")
        .scaling(Scaling::new().replicas(2))
        .validate_samples(true)
        .build()
        .expect("valid pipe")
}

#[tokio::test]
async fn the_basic_credentials_and_user_agent_are_sent() {
    use base64::Engine;
    let server = ScriptServer::start(vec![Reply::fixture("update_service_state")]).await;
    service(&server.mgmt()).start().await.unwrap();
    let request = &server.requests()[0];
    let encoded = request.headers["authorization"]
        .strip_prefix("Basic ")
        .expect("Basic auth");
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .expect("base64");
    assert_eq!(
        String::from_utf8(decoded).unwrap(),
        format!("{KEY_ID}:{KEY_SECRET}")
    );
    assert_eq!(request.headers["authorization"], BASIC);
    assert_eq!(
        request.headers["user-agent"],
        concat!("api-mgmt/", env!("CARGO_PKG_VERSION"))
    );
}

#[tokio::test]
async fn start_and_stop_send_the_command_and_unwrap_the_service() {
    let server = ScriptServer::start(vec![
        Reply::fixture("update_service_state"),
        Reply::fixture("update_service_state"),
    ])
    .await;
    let client = server.mgmt();
    let started = service(&client).start().await.unwrap();
    assert_eq!(started.state, Some(ServiceState::Starting));
    assert_eq!(started.name, "analytics-prod");
    assert_eq!(started.meta().status, 200);
    assert_eq!(
        started.meta().request_id.as_deref(),
        Some("3f0c5e2a-8d41-4b7e-9a6c-1e2f3a4b5c6d"),
        "from the envelope"
    );
    service(&client).stop().await.unwrap();
    let requests = server.requests();
    assert_eq!(
        (requests[0].method.as_str(), requests[0].path.as_str()),
        ("PATCH", format!("{}/state", base()).as_str())
    );
    assert_eq!(requests[0].json(), serde_json::json!({"command": "start"}));
    assert_eq!(requests[0].headers["content-type"], "application/json");
    assert_eq!(requests[1].json(), serde_json::json!({"command": "stop"}));
}

#[tokio::test]
async fn create_pipe_sends_request_only_fields_and_unwraps_the_pipe() {
    let server = ScriptServer::start(vec![
        Reply::fixture("create_pipe_kafka").header("x-request-id", "hdr-req-1"),
    ])
    .await;
    let pipe = service(&server.mgmt())
        .pipes()
        .create(&kafka_pipe())
        .await
        .unwrap();
    assert_eq!(pipe.name, "orders-stream");
    assert_eq!(pipe.state, PipeState::from("Hibernating"));
    assert_eq!(pipe.id.to_string(), PIPE);
    assert_eq!(
        pipe.meta().request_id.as_deref(),
        Some("hdr-req-1"),
        "the header wins over the envelope"
    );

    let request = &server.requests()[0];
    assert_eq!(
        (request.method.as_str(), request.path.as_str()),
        ("POST", format!("{}/pipes", base()).as_str())
    );
    let body = request.json();
    assert_eq!(body["name"], "orders-stream");
    assert_eq!(body["source"]["kafka"]["credentials"]["username"], "reader");
    assert_eq!(
        body["source"]["kafka"]["credentials"]["password"],
        "kafka-password-1"
    );
    assert_eq!(body["source"]["validateSamples"], true);
    assert_eq!(
        body["destination"]["roles"],
        serde_json::json!(["pipe_writer"])
    );
    assert_eq!(body["fieldMappings"].as_array().map(Vec::len), Some(2));
    assert_eq!(body["scaling"]["replicas"], 2);
    assert!(
        body["source"].get("objectStorage").is_none(),
        "exactly one source kind"
    );
}

#[tokio::test]
async fn get_pipe_settings_and_delete_use_the_pipe_path() {
    let server = ScriptServer::start(vec![
        Reply::fixture("get_pipe_object_storage"),
        Reply::fixture("get_pipe_settings"),
        Reply::fixture("delete_pipe"),
        Reply::json(200, ""),
    ])
    .await;
    let pipe = service(&server.mgmt()).pipe(PIPE.parse().unwrap());
    let read = pipe.get().await.unwrap();
    assert_eq!(read.state, PipeState::Completed);
    let settings = pipe.settings().await.unwrap();
    assert_eq!(settings.object_storage_max_file_count, Some(1000));
    let deleted = pipe.delete().await.unwrap();
    assert_eq!(
        deleted.meta().request_id.as_deref(),
        Some("6e7f8091-0213-4c4d-9e5f-607182930415")
    );
    pipe.delete()
        .await
        .expect("an empty delete body is tolerated");

    let requests = server.requests();
    let pipe_path = format!("{}/pipes/{PIPE}", base());
    let seen: Vec<(&str, &str)> = requests
        .iter()
        .map(|r| (r.method.as_str(), r.path.as_str()))
        .collect();
    let settings_path = format!("{pipe_path}/settings");
    assert_eq!(
        seen,
        [
            ("GET", pipe_path.as_str()),
            ("GET", settings_path.as_str()),
            ("DELETE", pipe_path.as_str()),
            ("DELETE", pipe_path.as_str())
        ]
    );
    assert!(requests.iter().all(|r| r.headers["authorization"] == BASIC));
}

#[tokio::test]
async fn delete_if_exists_treats_a_missing_pipe_as_done() {
    let server = ScriptServer::start(vec![
        Reply::mgmt_error(404, "NOT_FOUND", "pipe not found"),
        Reply::fixture("delete_pipe"),
    ])
    .await;
    let pipe = service(&server.mgmt()).pipe(PIPE.parse().unwrap());
    assert!(!pipe.delete_if_exists().await.unwrap());
    assert!(pipe.delete_if_exists().await.unwrap());
}

#[tokio::test]
async fn reverse_private_endpoints_and_private_endpoint_registration() {
    let server = ScriptServer::start(vec![
        Reply::fixture("list_reverse_private_endpoints"),
        Reply::fixture("create_private_endpoint"),
    ])
    .await;
    let svc = service(&server.mgmt());
    let endpoints = svc.reverse_private_endpoints().await.unwrap();
    assert_eq!(endpoints.len(), 2);
    assert_eq!(endpoints[0].status, ReversePrivateEndpointStatus::Ready);
    assert_eq!(
        endpoints[1].status,
        ReversePrivateEndpointStatus::from("Quarantined")
    );
    let registered = svc
        .create_private_endpoint("vpce-0123456789abcdef0", "CI runners")
        .await
        .unwrap();
    assert_eq!(registered.id, "vpce-0123456789abcdef0");

    let requests = server.requests();
    assert_eq!(requests[0].method, "GET");
    assert_eq!(
        requests[0].path,
        format!("{}/pipesReversePrivateEndpoints", base())
    );
    assert_eq!(requests[1].method, "POST");
    assert_eq!(requests[1].path, format!("{}/privateEndpoint", base()));
    assert_eq!(
        requests[1].json(),
        serde_json::json!({"id": "vpce-0123456789abcdef0", "description": "CI runners"})
    );
}

#[tokio::test]
async fn three_mistakes_make_one_validation_error_and_an_empty_id_is_refused_before_sending() {
    let server = ScriptServer::start(vec![]).await;
    let result = NewPipe::builder("")
        .source(ObjectStorageSource::url("https://bucket.example/*.csv").iam_role("not-an-arn"))
        .destination(
            Destination::new("default")
                .table("events")
                .managed_table(true)
                .column("c", "String"),
        )
        .field_mapping("c", "c")
        .scaling(Scaling::new().replica_cpu_millicores(5000))
        .build();
    let err = result.unwrap_err();
    assert_eq!(err.problems.len(), 3, "{err}");
    assert!(
        err.has("name")
            && err.has("source.objectStorage.iamRole")
            && err.has("scaling.replicaCpuMillicores")
    );
    let as_sdk_error = api_mgmt::Error::from(err);
    assert!(as_sdk_error.is_invalid_request());

    let empty_id = service(&server.mgmt())
        .create_private_endpoint(" ", "x")
        .await
        .unwrap_err();
    assert!(
        matches!(&empty_id, api_mgmt::Error::Validation(v) if v.has("id")),
        "{empty_id}"
    );
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn an_undecodable_success_keeps_the_answer_headers() {
    let server = ScriptServer::start(vec![
        Reply::json(200, r#"{"status": 200, "result": {"id": "#)
            .header("x-request-id", "rid-broken"),
        Reply::text(200, "application/json", "").header("x-request-id", "rid-empty"),
    ])
    .await;
    let pipe = service(&server.mgmt()).pipe(PIPE.parse().unwrap());
    let err = pipe.get().await.unwrap_err();
    assert!(matches!(err, api_mgmt::Error::Decode(_)), "{err}");
    assert_eq!(err.request_id(), Some("rid-broken"), "{err}");
    assert!(err.to_string().contains("(request id rid-broken)"), "{err}");
    // An empty 200 to a delete is a success, with its status and headers.
    let deleted = pipe.delete().await.unwrap();
    assert_eq!(deleted.meta().status, 200);
    assert_eq!(deleted.meta().request_id.as_deref(), Some("rid-empty"));
}

/// A call's future is what every caller holds (and moves) while the call runs: the generated
/// operation's future and its decoded result live on the heap, so the facade's stays small (it was
/// 5.7 KB before they did; a regression shows up here rather than as copies in a profile).
#[test]
fn a_calls_future_stays_small() {
    let client = api_mgmt::Client::builder("http://127.0.0.1:9")
        .credentials(api_mgmt::Credentials::basic(KEY_ID, KEY_SECRET))
        .build()
        .unwrap();
    let service = service(&client);
    let pipe = service.pipe(PIPE.parse().unwrap());
    let (pipes, new_pipe) = (service.pipes(), kafka_pipe());
    let sizes = [
        ("get", std::mem::size_of_val(&pipe.get())),
        ("settings", std::mem::size_of_val(&pipe.settings())),
        ("delete", std::mem::size_of_val(&pipe.delete())),
        ("create", std::mem::size_of_val(&pipes.create(&new_pipe))),
        (
            "endpoints",
            std::mem::size_of_val(&service.reverse_private_endpoints()),
        ),
        ("start", std::mem::size_of_val(&service.start())),
    ];
    for (call, size) in sizes {
        assert!(size <= 2048, "the future of {call} is {size} bytes");
    }
}
