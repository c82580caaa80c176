//! The emulator as a production, database-backed server answers, over real HTTP: created pipes in
//! canonical forms (`--canonical`), a second pipe with the name of a live one (`--duplicate-names`,
//! or `duplicate_names` in the seed's `[server]` table), and a raw overlay that makes one pipe's
//! `getPipe` answer undecodable (`PUT /_emulator/pipes/{id}/raw`, `Emulator::set_raw_overlay`).

mod support;

use std::process::Child;

use api_emulator::{DEFAULT_SEED, Emulator, EmulatorOptions, PipeId};
use serde_json::{Value, json};
use support::{admin, port, request, spawn};

const CONTROL: &str = "Bearer emulator-control-token";

/// The binary, killed when the test ends however it ends.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the binary without rate limits, with `extra` arguments.
fn start(extra: &[&str]) -> (Running, u16) {
    let port = port();
    let listen = format!("127.0.0.1:{port}");
    let mut args = vec!["--listen", &listen, "--no-rate-limit"];
    args.extend_from_slice(extra);
    (Running(spawn(&args, port)), port)
}

/// A request; the status and the body as JSON (`null` when there is none).
fn call(
    port: u16,
    method: &str,
    path: &str,
    authorization: &str,
    body: Option<&Value>,
) -> (u16, Value) {
    let body = body.map(Value::to_string);
    let (status, rest) = request(port, method, path, authorization, body.as_deref());
    let text = rest
        .split_once("\r\n\r\n")
        .map(|(_, body)| body)
        .unwrap_or_default();
    (status, serde_json::from_str(text).unwrap_or(Value::Null))
}

/// The body text of a request's answer, as the bytes came.
fn raw_body(port: u16, path: &str, authorization: &str) -> String {
    let (_, rest) = request(port, "GET", path, authorization, None);
    rest.split_once("\r\n\r\n")
        .map(|(_, body)| body.to_string())
        .unwrap_or_default()
}

/// A Kafka create request as a client would write it, nothing in canonical form.
fn kafka_pipe(name: &str) -> Value {
    json!({
        "name": name,
        "source": {"kafka": {
            "brokers": "b-1:9092",
            "topics": "orders, refunds ,returns",
            "caCertificate": "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
            "schemaRegistry": {"url": "https://registry", "caCertificate": "pem\n\n"},
            "reversePrivateEndpointIds": ["5b1e8c7d-2f3a-4b6c-9d0e-1f2a3b4c5d6e"],
            "credentials": {"username": "u", "password": "p"},
        }},
        "destination": {"database": "default", "table": "orders", "managedTable": true, "columns": [
            {"name": "amount", "type": "decimal(18,2)"},
            {"name": "at", "type": "DateTime64(3,'UTC')"},
            {"name": "note", "type": "nullable(String)"},
            {"name": "tags", "type": "Map(String,Array( Nullable(UInt8)))"},
        ]},
        "fieldMappings": [
            {"sourceField": "amount", "destinationField": "amount"},
            {"sourceField": "at", "destinationField": "at"},
            {"sourceField": "note", "destinationField": "note"},
            {"sourceField": "tags", "destinationField": "tags"},
        ],
    })
}

/// An object storage create request with its compression in lower case.
fn object_storage_pipe(name: &str) -> Value {
    json!({
        "name": name,
        "source": {"objectStorage": {"url": "https://bucket/*.json.gz", "compression": "gzip"}},
        "destination": {"database": "default", "table": "events", "managedTable": true,
                        "columns": [{"name": "id", "type": "uint64"}]},
        "fieldMappings": [{"sourceField": "id", "destinationField": "id"}],
    })
}

/// Checks the canonical forms of the pipe of [`kafka_pipe`] as answered.
#[track_caller]
fn assert_canonical_kafka(pipe: &Value) {
    let types: Vec<&str> = pipe["destination"]["columns"]
        .as_array()
        .expect("columns")
        .iter()
        .filter_map(|c| c["type"].as_str())
        .collect();
    assert_eq!(
        types,
        [
            "Decimal(18, 2)",
            "DateTime64(3, 'UTC')",
            "Nullable(String)",
            "Map(String, Array(Nullable(UInt8)))"
        ],
        "{pipe}"
    );
    let kafka = &pipe["source"]["kafka"];
    assert_eq!(kafka["topics"], "orders,refunds,returns");
    assert_eq!(
        kafka["caCertificate"],
        "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"
    );
    assert_eq!(kafka["schemaRegistry"]["caCertificate"], "pem");
    assert_eq!(
        kafka["reversePrivateEndpointIds"],
        json!(["5B1E8C7D-2F3A-4B6C-9D0E-1F2A3B4C5D6E"])
    );
}

#[test]
fn canonical_answers_every_rewrite_on_create_and_on_every_get() {
    let (basic, service) = admin();
    let (_emulator, port) = start(&["--instant", "--canonical"]);
    let pipes = format!("{service}/pipes");

    let (status, created) = call(port, "POST", &pipes, &basic, Some(&kafka_pipe("orders")));
    assert_eq!(status, 200, "{created}");
    assert_canonical_kafka(&created["result"]);
    let id = created["result"]["id"].as_str().expect("an id").to_string();
    for _ in 0..2 {
        let (status, read) = call(port, "GET", &format!("{pipes}/{id}"), &basic, None);
        assert_eq!(status, 200, "{read}");
        assert_canonical_kafka(&read["result"]);
    }

    let (status, created) = call(
        port,
        "POST",
        &pipes,
        &basic,
        Some(&object_storage_pipe("events")),
    );
    assert_eq!(status, 200, "{created}");
    let object_id = created["result"]["id"].as_str().expect("an id").to_string();
    let (_, read) = call(port, "GET", &format!("{pipes}/{object_id}"), &basic, None);
    for answer in [&created, &read] {
        assert_eq!(
            answer["result"]["source"]["objectStorage"]["compression"],
            "GZIP"
        );
        assert_eq!(
            answer["result"]["destination"]["columns"][0]["type"],
            "UInt64"
        );
    }

    // A console edit (drift) is stored as written.
    let edit = json!({"destination": {"columns": [{"name": "id", "type": "uint64"}]},
                      "source": {"objectStorage": {"compression": "zstd"}}});
    let (status, edited) = call(
        port,
        "PATCH",
        &format!("/_emulator/pipes/{object_id}"),
        CONTROL,
        Some(&edit),
    );
    assert_eq!(status, 200, "{edited}");
    let (_, read) = call(port, "GET", &format!("{pipes}/{object_id}"), &basic, None);
    assert_eq!(
        read["result"]["destination"]["columns"][0]["type"],
        "uint64"
    );
    assert_eq!(
        read["result"]["source"]["objectStorage"]["compression"],
        "zstd"
    );
}

#[test]
fn without_canonical_a_pipe_is_answered_as_sent() {
    let (basic, service) = admin();
    let (_emulator, port) = start(&["--instant"]);
    let (status, created) = call(
        port,
        "POST",
        &format!("{service}/pipes"),
        &basic,
        Some(&kafka_pipe("orders")),
    );
    assert_eq!(status, 200, "{created}");
    let sent = kafka_pipe("orders");
    assert_eq!(
        created["result"]["destination"]["columns"],
        sent["destination"]["columns"]
    );
    assert_eq!(
        created["result"]["source"]["kafka"]["topics"],
        "orders, refunds ,returns"
    );
}

#[test]
fn a_second_pipe_of_one_name_is_refused_by_default_and_created_with_duplicate_names() {
    let (basic, service) = admin();
    let pipes = format!("{service}/pipes");
    let (_strict, port) = start(&["--instant"]);
    let (status, _) = call(port, "POST", &pipes, &basic, Some(&kafka_pipe("orders")));
    assert_eq!(status, 200);
    let (status, refused) = call(port, "POST", &pipes, &basic, Some(&kafka_pipe("orders")));
    assert_eq!(status, 409, "{refused}");
    assert!(
        refused["error"]
            .as_str()
            .unwrap_or_default()
            .starts_with("CONFLICT"),
        "{refused}"
    );

    // The seed's [server] table, as a user's own seed file says it; a deleted pipe answers for a
    // minute, so that the control list shows it.
    let dir = tempfile::tempdir().unwrap();
    let seed = dir.path().join("seed.toml");
    let mut text = DEFAULT_SEED.to_string();
    for (from, to) in [
        ("duplicate_names = false", "duplicate_names = true"),
        ("pipe_provisioning_ms = 2000", "pipe_provisioning_ms = 0"),
        ("pipe_delete_ms = 2000", "pipe_delete_ms = 60000"),
    ] {
        assert!(text.contains(from), "the built-in seed says {from}");
        text = text.replace(from, to);
    }
    std::fs::write(&seed, text).unwrap();
    let (_lenient, port) = start(&["--seed", seed.to_str().unwrap()]);
    let ids: Vec<String> = (0..2)
        .map(|_| {
            let (status, created) = call(port, "POST", &pipes, &basic, Some(&kafka_pipe("orders")));
            assert_eq!(status, 200, "{created}");
            created["result"]["id"].as_str().expect("an id").to_string()
        })
        .collect();
    assert_ne!(ids[0], ids[1]);
    for id in &ids {
        let (status, read) = call(port, "GET", &format!("{pipes}/{id}"), &basic, None);
        assert_eq!(
            (status, read["result"]["name"].as_str()),
            (200, Some("orders"))
        );
    }

    // The control list tells them apart, and which is being deleted.
    let (status, _) = call(port, "DELETE", &format!("{pipes}/{}", ids[0]), &basic, None);
    assert_eq!(status, 200);
    let (_, listed) = call(port, "GET", "/_emulator/pipes", CONTROL, None);
    let listed: Vec<(String, String, String, bool, bool)> = listed
        .as_array()
        .expect("a list")
        .iter()
        .map(|p| {
            (
                p["id"].as_str().unwrap_or_default().to_string(),
                p["name"].as_str().unwrap_or_default().to_string(),
                p["state"].as_str().unwrap_or_default().to_string(),
                p["deleted"] == json!(true),
                p["deletedAt"].is_string(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        [
            (
                ids[0].clone(),
                "orders".into(),
                "Stopping".into(),
                true,
                true
            ),
            (
                ids[1].clone(),
                "orders".into(),
                "Running".into(),
                false,
                false
            ),
        ]
    );
}

#[test]
fn a_raw_overlay_reaches_every_get_answer_as_written_until_removed() {
    let (basic, service) = admin();
    let (_emulator, port) = start(&["--instant"]);
    let pipes = format!("{service}/pipes");
    let (_, created) = call(port, "POST", &pipes, &basic, Some(&kafka_pipe("orders")));
    let id = created["result"]["id"].as_str().expect("an id").to_string();
    let raw = format!("/_emulator/pipes/{id}/raw");
    let get = format!("{pipes}/{id}");

    let overlay = json!({"scaling": {"replicas": 3.0}});
    assert_eq!(call(port, "PUT", &raw, CONTROL, Some(&overlay)).0, 204);
    for _ in 0..2 {
        let body = raw_body(port, &get, &basic);
        assert!(body.contains(r#""replicas":3.0"#), "{body}");
        assert!(
            body.contains(r#""concurrency":1"#),
            "the rest of the object stays: {body}"
        );
    }
    let (_, listed) = call(port, "GET", "/_emulator/pipes", CONTROL, None);
    assert_eq!(
        listed[0]["pipe"]["scaling"]["replicas"],
        json!(1),
        "the stored pipe is unchanged"
    );

    let three = json!({"scaling": {"replicas": "three"}});
    assert_eq!(call(port, "PUT", &raw, CONTROL, Some(&three)).0, 204);
    let (_, read) = call(port, "GET", &get, &basic, None);
    assert_eq!(read["result"]["scaling"]["replicas"], "three");

    assert_eq!(call(port, "DELETE", &raw, CONTROL, None).0, 204);
    let (_, read) = call(port, "GET", &get, &basic, None);
    assert_eq!(read["result"]["scaling"]["replicas"], json!(1));

    // What the route refuses.
    assert_eq!(
        call(port, "PUT", &raw, "Bearer wrong", Some(&overlay)).0,
        401
    );
    assert_eq!(call(port, "PUT", &raw, CONTROL, Some(&json!([1]))).0, 400);
    let (status, _) = request(port, "PUT", &raw, CONTROL, Some("{not json"));
    assert_eq!(status, 400);
    let unknown = format!("/_emulator/pipes/{}/raw", uuid_like());
    assert_eq!(call(port, "PUT", &unknown, CONTROL, Some(&overlay)).0, 404);
    assert_eq!(
        call(
            port,
            "PUT",
            "/_emulator/pipes/nope/raw",
            CONTROL,
            Some(&overlay)
        )
        .0,
        400
    );
}

/// A UUID no pipe has.
fn uuid_like() -> &'static str {
    "00000000-0000-4000-8000-000000000000"
}

#[tokio::test]
async fn the_options_start_a_production_emulator_and_set_overlays_from_rust() {
    let emulator = Emulator::start(
        EmulatorOptions::for_tests()
            .canonical(true)
            .duplicate_names(true),
    )
    .await
    .expect("the emulator starts");
    assert!(emulator.seed().server.canonical && emulator.seed().server.duplicate_names);
    let (basic, service) = admin();
    let port = emulator.address().port();
    let pipes = format!("{service}/pipes");
    let created = tokio::task::spawn_blocking(move || {
        let ids: Vec<Value> = (0..2)
            .map(|_| call(port, "POST", &pipes, &basic, Some(&kafka_pipe("orders"))).1)
            .collect();
        ids
    })
    .await
    .unwrap();
    for answer in &created {
        assert_canonical_kafka(&answer["result"]);
    }
    let id: PipeId = created[1]["result"]["id"]
        .as_str()
        .and_then(|id| id.parse().ok())
        .expect("a pipe id");
    assert_eq!(
        emulator
            .pipes()
            .iter()
            .filter(|p| p.name == "orders")
            .count(),
        2
    );

    assert!(
        emulator
            .set_raw_overlay(id, json!({"scaling": {"replicas": 3.0}}))
            .unwrap()
    );
    assert!(
        emulator
            .set_raw_overlay(id, json!("not an object"))
            .is_err()
    );
    let missing: PipeId = uuid_like().parse().unwrap();
    assert!(!emulator.set_raw_overlay(missing, json!({})).unwrap());
    let (basic, service) = admin();
    let get = format!("{service}/pipes/{id}");
    let read = {
        let get = get.clone();
        let basic = basic.clone();
        tokio::task::spawn_blocking(move || raw_body(port, &get, &basic))
            .await
            .unwrap()
    };
    assert!(read.contains(r#""replicas":3.0"#), "{read}");
    assert!(emulator.clear_raw_overlay(id));
    assert!(!emulator.clear_raw_overlay(id));
    let read = tokio::task::spawn_blocking(move || raw_body(port, &get, &basic))
        .await
        .unwrap();
    assert!(read.contains(r#""replicas":1"#), "{read}");
    emulator.shutdown().await;
}
