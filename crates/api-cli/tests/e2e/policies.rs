//! The Rego policy examples shipped in `crates/api-cli/policies/`, evaluated with `regorus` (an
//! OPA-compatible interpreter) over plan documents this suite makes against the emulator: each
//! denies what it claims and allows the rest, so the examples cannot rot.

use std::path::Path;

use serde_json::Value;

use crate::declared::directory;
use crate::saved_plans::assert_valid_document;
use crate::support::{Cloud, KAFKA_PIPE, POSTGRES_PIPE};

/// The policies, as the package ships them.
const POLICIES: [(&str, &str); 4] = [
    (
        "kafka_tls.rego",
        include_str!("../../policies/kafka_tls.rego"),
    ),
    (
        "no_cdc_replace.rego",
        include_str!("../../policies/no_cdc_replace.rego"),
    ),
    (
        "max_destructive.rego",
        include_str!("../../policies/max_destructive.rego"),
    ),
    (
        "protected.rego",
        include_str!("../../policies/protected.rego"),
    ),
];

/// What the policies deny of `document` (conftest's `deny` of package `main`), sorted.
fn denied(document: &Value) -> Vec<String> {
    assert_valid_document(document);
    let mut engine = regorus::Engine::new();
    for (name, text) in POLICIES {
        engine
            .add_policy(name.to_string(), text.to_string())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    engine.set_input(regorus::Value::from_json_str(&document.to_string()).expect("JSON"));
    let deny = engine
        .eval_rule("data.main.deny".to_string())
        .expect("deny evaluates");
    let json: Value = serde_json::from_str(&deny.to_json_str().expect("JSON")).expect("JSON");
    let mut messages: Vec<String> = json
        .as_array()
        .map(|set| {
            set.iter()
                .map(|m| m.as_str().expect("a message").to_string())
                .collect()
        })
        .unwrap_or_default();
    messages.sort();
    messages
}

fn planned(cloud: &Cloud, dir: &str) -> Value {
    cloud.cloudctl(&["plan", "-f", dir, "-o", "json"]).json()
}

/// A Kafka pipe over TLS: its brokers' CA, and an https schema registry.
fn tls_kafka(name: &str, registry: &str) -> String {
    KAFKA_PIPE.replace("name: orders", &format!("name: {name}")).replace(
        "    topics: orders\n",
        &format!(
            "    topics: orders\n    caCertificate: \"-----BEGIN CERTIFICATE-----\\nMIIB\\n-----END CERTIFICATE-----\"\n    schemaRegistry: {{url: \"{registry}\"}}\n"
        ),
    )
}

#[test]
fn kafka_pipes_use_tls() {
    let cloud = Cloud::start();
    let dir = directory(
        &cloud,
        "pipes",
        &[
            ("orders.yaml", KAFKA_PIPE),
            (
                "clicks.yaml",
                &tls_kafka("clicks", "http://registry.example:8081"),
            ),
            (
                "audit.yaml",
                &tls_kafka("audit", "https://registry.example"),
            ),
        ],
    );
    assert_eq!(
        denied(&planned(&cloud, &dir)),
        [
            "kafka-tls: clicks: the schema registry is reached over https, not http://registry.example:8081",
            "kafka-tls: orders: a Kafka pipe names its brokers' caCertificate or an iamRole (TLS)",
        ]
    );
    std::fs::remove_file(Path::new(&dir).join("orders.yaml")).unwrap();
    std::fs::remove_file(Path::new(&dir).join("clicks.yaml")).unwrap();
    assert_eq!(denied(&planned(&cloud, &dir)), Vec::<String>::new());
}

#[test]
fn no_replace_of_a_cdc_pipe_and_at_most_three_destroyed_and_never_a_protected_one() {
    let cloud = Cloud::start();
    let pipes: Vec<(String, String)> = ["a", "b", "c", "d"]
        .iter()
        .map(|name| {
            let mut text = tls_kafka(name, "https://registry.example");
            if *name == "d" {
                text.push_str("lifecycle: {protect: true}\n");
            }
            (format!("{name}.yaml"), text)
        })
        .chain([("crm.yaml".to_string(), POSTGRES_PIPE.to_string())])
        .collect();
    let files: Vec<(&str, &str)> = pipes
        .iter()
        .map(|(f, t)| (f.as_str(), t.as_str()))
        .collect();
    let dir = directory(&cloud, "pipes", &files);
    cloud
        .cloudctl(&["apply", "-f", &dir, "--yes", "-o", "json"])
        .expect(0);
    assert_eq!(
        denied(&planned(&cloud, &dir)),
        Vec::<String>::new(),
        "no change"
    );

    // The CDC pipe's file changes: a replace.
    let crm = Path::new(&dir).join("crm.yaml");
    let text = std::fs::read_to_string(&crm).unwrap();
    std::fs::write(
        &crm,
        text.replace(
            "database: crm\n    credentials",
            "database: crm2\n    credentials",
        ),
    )
    .unwrap();
    assert_eq!(
        denied(&planned(&cloud, &dir)),
        ["no-cdc-replace: crm: a replace of a Postgres CDC pipe snapshots every table again"]
    );
    std::fs::write(&crm, text).unwrap();

    // Two deletes: allowed. Four, one of them protected: denied twice.
    for name in ["a", "b"] {
        std::fs::remove_file(Path::new(&dir).join(format!("{name}.yaml"))).unwrap();
    }
    assert_eq!(denied(&planned(&cloud, &dir)), Vec::<String>::new());
    for name in ["c", "d"] {
        std::fs::remove_file(Path::new(&dir).join(format!("{name}.yaml"))).unwrap();
    }
    assert_eq!(
        denied(&planned(&cloud, &dir)),
        [
            "max-destructive: the plan deletes, replaces or recreates 4 pipes, more than 3",
            "protected: d: a delete of a protected pipe deletes it",
        ]
    );
}
