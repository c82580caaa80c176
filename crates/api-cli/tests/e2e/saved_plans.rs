//! Saved plans, protected and retained pipes, and a cap on destruction, as a CI job runs them:
//! `plan --out` in review, `apply --plan` on merge, against an emulator whose pipes, state and
//! files move in between. Every document is checked against the JSON Schema in the repository.

use std::collections::BTreeMap;
use std::path::Path;

use api_emulator::PipeState;
use api_test_support::plan_calls::{self, listed_calls};
use serde_json::{Value, json};

use crate::declared::{directory, recorded_id, state, stderr_error};
use crate::support::{Cloud, KAFKA_PIPE};

/// The plan document's JSON Schema, as the repository holds it.
const SCHEMA: &str = api_mgmt::declared::PLAN_DOCUMENT_SCHEMA;

/// Checks `document` against the schema; every error, with where.
#[track_caller]
pub(crate) fn assert_valid_document(document: &Value) {
    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    let schema: Value = serde_json::from_str(SCHEMA).expect("the schema is JSON");
    compiler
        .add_resource("plan-document.schema.json", schema)
        .expect("the schema is taken");
    let index = compiler
        .compile("plan-document.schema.json", &mut schemas)
        .expect("the schema compiles");
    if let Err(error) = schemas.validate(document, index) {
        panic!("the document does not follow its schema: {error:#}\n{document:#}");
    }
}

/// `plan --out FILE -o json`: the run, and the document written, checked against the schema and
/// for every secret the test knows.
fn plan_out(cloud: &Cloud, dir: &str, file: &str) -> (crate::support::Run, Value) {
    let out = cloud.home().join(file);
    let run = cloud.cloudctl(&[
        "plan",
        "-f",
        dir,
        "--out",
        out.to_str().expect("UTF-8"),
        "-o",
        "json",
    ]);
    let text = std::fs::read_to_string(&out).expect("the plan is written");
    for secret in cloud.secrets() {
        assert!(!text.contains(&secret), "a secret in the document:\n{text}");
    }
    let written: Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(written, run.json(), "--out writes what -o json prints");
    assert_valid_document(&written);
    (run, written)
}

fn apply_plan(cloud: &Cloud, dir: &str, file: &str) -> crate::support::Run {
    let path = cloud.home().join(file);
    cloud.cloudctl(&[
        "apply",
        "-f",
        dir,
        "--plan",
        path.to_str().expect("UTF-8"),
        "--yes",
        "-o",
        "json",
    ])
}

/// The calls that changed the server since the log was cleared, `METHOD path`, counted.
fn changing_calls(cloud: &Cloud) -> BTreeMap<String, usize> {
    let requests = cloud.requests();
    plan_calls::changing_calls(
        requests
            .iter()
            .map(|r| (r.method.as_str(), r.path.as_str(), r.body.as_ref())),
    )
}

/// The `error` object a refused run wrote.
fn refused(run: &crate::support::Run, code: i32, error_code: &str) -> Value {
    assert_eq!(
        run.code, code,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    let error = stderr_error(run);
    assert_eq!(error["code"], error_code, "{error}");
    error
}

/// Whether the `error` object's message holds `text`.
fn says(error: &Value, text: &str) -> bool {
    error["message"].as_str().is_some_and(|m| m.contains(text))
}

fn edit(dir: &str, file: &str, from: &str, to: &str) {
    let path = Path::new(dir).join(file);
    let text = std::fs::read_to_string(&path).expect("the file");
    assert!(text.contains(from), "{from:?} in {}", path.display());
    std::fs::write(path, text.replace(from, to)).expect("written");
}

/// A second Kafka pipe, with a declared offset.
const EVENTS_PIPE: &str = "\
name: events
source:
  kafka:
    brokers: b-1.kafka.emulator.local:9098
    topics: events
    offset: {timestamp: 2026-01-01T00:00}
    credentials: {username: reader, password: {env: KAFKA_PASSWORD}}
destination:
  database: default
  table: events
  managedTable: false
  columns:
    - {name: id, type: UInt64}
fieldMappings:
  - {sourceField: id, destinationField: id}
";

#[test]
fn a_saved_plan_applies_exactly_its_calls_and_only_once() {
    let cloud = Cloud::start();
    let dir = directory(&cloud, "pipes", &[("orders.yaml", KAFKA_PIPE)]);
    // Made against no state: applied once, then refused (terraform #24078).
    let (planned, document) = plan_out(&cloud, &dir, "first.json");
    assert_eq!(planned.code, 8);
    assert_eq!(document["state"], json!({"lineage": null, "serial": 0}));
    assert_eq!(document["actions"][0]["action"], "create");
    assert_eq!(document["actions"][0]["cause"], "new");
    assert_eq!(
        document["actions"][0]["after"]["source"]["kafka"]["credentials"]["password"],
        "[REDACTED]"
    );
    cloud.clear_requests();
    apply_plan(&cloud, &dir, "first.json").expect(0);
    assert_eq!(changing_calls(&cloud), listed_calls(&document));
    cloud.clear_requests();
    let again = apply_plan(&cloud, &dir, "first.json");
    let error = refused(&again, 14, "PLAN_STALE");
    assert!(says(&error, "made with no state recorded"), "{error}");
    assert!(
        changing_calls(&cloud).is_empty(),
        "{:?}",
        changing_calls(&cloud)
    );

    // A replace (the file changed), a delete (a file removed) and a create, with the service
    // started: the apply sends exactly the listed calls.
    let orders = recorded_id(&dir, "orders");
    edit(&dir, "orders.yaml", "replicas: 2", "replicas: 3");
    cloud.file("pipes/events.yaml", EVENTS_PIPE);
    cloud.file("pipes/service.yaml", "state: running\n");
    apply_plan(&cloud, &dir, "first.json").expect(14);
    let (_, document) = plan_out(&cloud, &dir, "second.json");
    let kinds: Vec<(&str, &str)> = document["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["action"].as_str().unwrap(), a["name"].as_str().unwrap()))
        .collect();
    assert_eq!(kinds, [("create", "events"), ("replace", "orders")]);
    assert_eq!(
        document["actions"][1]["calls"],
        json!([
            format!(
                "DELETE /v1/organizations/{}/services/{}/pipes/{orders}",
                cloud.organization(),
                cloud.service("running")
            ),
            format!(
                "POST /v1/organizations/{}/services/{}/pipes",
                cloud.organization(),
                cloud.service("running")
            ),
        ])
    );
    assert_eq!(document["actions"][1]["cause"], "declaration");
    assert_eq!(document["summary"]["destructive"], 1);
    cloud.clear_requests();
    apply_plan(&cloud, &dir, "second.json").expect(0);
    assert_eq!(changing_calls(&cloud), listed_calls(&document));
    // Applied: the same document again is refused, naming the serial.
    let error = refused(&apply_plan(&cloud, &dir, "second.json"), 14, "PLAN_STALE");
    assert!(says(&error, "this plan was applied already"), "{error}");
}

#[test]
fn anything_that_moved_after_the_plan_refuses_it_before_any_change() {
    let cloud = Cloud::start();
    let dir = directory(
        &cloud,
        "pipes",
        &[("orders.yaml", KAFKA_PIPE), ("events.yaml", EVENTS_PIPE)],
    );
    apply_plan_free(&cloud, &dir);
    let orders = recorded_id(&dir, "orders");
    edit(&dir, "events.yaml", "topics: events", "topics: events-v2");

    // A console edit of a pipe the plan read.
    plan_out(&cloud, &dir, "plan.json").0.expect(8);
    let serial = state(&dir)["serial"].clone();
    cloud.patch_pipe(&orders, json!({"scaling": {"replicas": 5}}));
    cloud.clear_requests();
    let error = refused(&apply_plan(&cloud, &dir, "plan.json"), 14, "PLAN_STALE");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(&format!("pipe orders {orders}")),
        "{error}"
    );
    assert!(message.contains("changed on the server"), "{error}");
    assert!(
        changing_calls(&cloud).is_empty(),
        "{:?}",
        changing_calls(&cloud)
    );
    assert_eq!(state(&dir)["serial"], serial, "nothing recorded");

    // A pipe gone Failed.
    cloud.patch_pipe(&orders, json!({"scaling": {"replicas": 2}}));
    plan_out(&cloud, &dir, "plan.json").0.expect(8);
    cloud.force_pipe_state(&orders, PipeState::Failed);
    let error = refused(&apply_plan(&cloud, &dir, "plan.json"), 14, "PLAN_STALE");
    assert!(says(&error, "is failed (Failed) now"), "{error}");
    cloud.unforce_pipe_state(&orders);

    // A file edited after the plan, and what a file reads from the environment.
    let audit = EVENTS_PIPE.replace("name: events", "name: audit");
    let dir2 = directory(&cloud, "second", &[("events.yaml", &audit)]);
    apply_plan_free(&cloud, &dir2);
    edit(&dir2, "events.yaml", "topics: events", "topics: events-v2");
    plan_out(&cloud, &dir2, "plan2.json").0.expect(8);
    edit(
        &dir2,
        "events.yaml",
        "topics: events-v2",
        "topics: events-v3",
    );
    cloud.clear_requests();
    let error = refused(&apply_plan(&cloud, &dir2, "plan2.json"), 14, "PLAN_STALE");
    assert!(
        says(&error, "events.yaml) changed since the plan"),
        "{error}"
    );
    assert!(changing_calls(&cloud).is_empty());
    edit(
        &dir2,
        "events.yaml",
        "topics: events-v3",
        "topics: events-v2",
    );
    // As planned again: applied.
    apply_plan(&cloud, &dir2, "plan2.json").expect(0);
    // A secret rotated in the environment after a plan that left the pipe alone: the plan made
    // now replaces it, so the reviewed one is stale (the document holds nothing derived from it).
    plan_out(&cloud, &dir2, "plan3.json").0.expect(0);
    let path = cloud.home().join("plan3.json");
    let rotated = cloud.run(
        cloud
            .command()
            .env("KAFKA_PASSWORD", "rotated-in-between")
            .args([
                "apply",
                "-f",
                &dir2,
                "--plan",
                path.to_str().unwrap(),
                "--yes",
                "-o",
                "json",
            ]),
    );
    let error = refused(&rotated, 14, "PLAN_STALE");
    assert!(says(&error, "the actions"), "{error}");

    // An edited document is refused before anything is read.
    let text = std::fs::read_to_string(cloud.home().join("plan.json")).unwrap();
    std::fs::write(
        cloud.home().join("edited.json"),
        text.replace("\"destructive\": 1", "\"destructive\": 0"),
    )
    .unwrap();
    cloud.clear_requests();
    let error = refused(&apply_plan(&cloud, &dir, "edited.json"), 2, "INVALID_PLAN");
    assert!(says(&error, "edited"), "{error}");
    assert!(
        cloud.requests().is_empty(),
        "nothing is read for an edited document"
    );
    // A major version this cloudctl does not know.
    std::fs::write(
        cloud.home().join("future.json"),
        text.replace("\"format_version\": \"1.0\"", "\"format_version\": \"2.0\""),
    )
    .unwrap();
    refused(&apply_plan(&cloud, &dir, "future.json"), 2, "INVALID_PLAN");
}

/// Applies the directory as it is, asking nothing.
fn apply_plan_free(cloud: &Cloud, dir: &str) {
    cloud
        .cloudctl(&["apply", "-f", dir, "--yes", "-o", "json"])
        .expect(0);
}

#[test]
fn a_protected_pipe_is_never_deleted_on_any_path() {
    let cloud = Cloud::start();
    let protected = format!("{KAFKA_PIPE}lifecycle: {{protect: true}}\n");
    let dir = directory(&cloud, "pipes", &[("orders.yaml", &protected)]);
    apply_plan_free(&cloud, &dir);
    assert_eq!(state(&dir)["pipes"]["orders"]["lifecycle"]["protect"], true);
    let orders = recorded_id(&dir, "orders");
    let deletes = |cloud: &Cloud| {
        changing_calls(cloud)
            .keys()
            .filter(|c| c.starts_with("DELETE"))
            .count()
    };
    let both_refuse = |cloud: &Cloud, dir: &str, path: &str| {
        cloud.clear_requests();
        let planned = cloud.cloudctl(&["plan", "-f", dir, "-o", "json"]);
        refused(&planned, 12, "PROTECTED");
        let action = planned.json()["actions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["name"] == "orders")
            .cloned()
            .expect("the action");
        assert_eq!(action["protected"], true, "{path}: {action}");
        assert_valid_document(&planned.json());
        let human = cloud.cloudctl(&["plan", "-f", dir, "-o", "human"]);
        assert!(
            human.stdout.contains("PROTECTED: refused"),
            "{path}: {}",
            human.stdout
        );
        let applied = cloud.cloudctl(&["apply", "-f", dir, "--yes", "-o", "json"]);
        let error = refused(&applied, 12, "PROTECTED");
        assert!(says(&error, "orders"), "{error}");
        assert_eq!(deletes(cloud), 0, "{path}: no DELETE");
        assert!(changing_calls(cloud).is_empty(), "{path}: nothing sent");
    };
    // A replace: a change of the file.
    edit(&dir, "orders.yaml", "replicas: 2", "replicas: 3");
    both_refuse(&cloud, &dir, "replace");
    edit(&dir, "orders.yaml", "replicas: 3", "replicas: 2");
    // A replace: drift on the server.
    cloud.patch_pipe(&orders, json!({"scaling": {"replicas": 4}}));
    both_refuse(&cloud, &dir, "drift");
    cloud.patch_pipe(&orders, json!({"scaling": {"replicas": 2}}));
    // The recreate of a failed pipe.
    cloud.force_pipe_state(&orders, PipeState::Failed);
    both_refuse(&cloud, &dir, "recreate");
    cloud.unforce_pipe_state(&orders);
    // Its file removed, and the key dropped with it in one go: the record protects.
    std::fs::remove_file(Path::new(&dir).join("orders.yaml")).unwrap();
    both_refuse(&cloud, &dir, "file removed");
    // protect: false applied first (only the state changes), then the delete goes.
    cloud.file(
        "pipes/orders.yaml",
        &format!("{KAFKA_PIPE}lifecycle: {{protect: false}}\n"),
    );
    let planned = cloud
        .cloudctl(&["plan", "-f", &dir, "-o", "json"])
        .expect(8);
    assert_eq!(planned.json()["actions"][0]["action"], "record");
    assert_eq!(planned.json()["actions"][0]["cause"], "lifecycle");
    cloud.clear_requests();
    apply_plan_free(&cloud, &dir);
    assert!(changing_calls(&cloud).is_empty(), "a record sends nothing");
    std::fs::remove_file(Path::new(&dir).join("orders.yaml")).unwrap();
    apply_plan_free(&cloud, &dir);
    assert_eq!(deletes(&cloud), 1);
    assert!(cloud.pipes().is_empty());
}

#[test]
fn a_retained_pipe_is_forgotten_not_deleted_and_a_cap_refuses_before_any_call() {
    let cloud = Cloud::start();
    let retained = format!("{EVENTS_PIPE}lifecycle:\n  retainOnDelete: true\n");
    let dir = directory(
        &cloud,
        "pipes",
        &[("orders.yaml", KAFKA_PIPE), ("events.yaml", &retained)],
    );
    apply_plan_free(&cloud, &dir);
    let events = recorded_id(&dir, "events");
    std::fs::remove_file(Path::new(&dir).join("events.yaml")).unwrap();
    let (planned, document) = plan_out(&cloud, &dir, "forget.json");
    planned.expect(8);
    assert_eq!(document["actions"][0]["action"], "forget");
    assert_eq!(document["actions"][0]["calls"], json!([]));
    assert_eq!(document["summary"]["destructive"], 0);
    cloud.clear_requests();
    apply_plan(&cloud, &dir, "forget.json").expect(0);
    assert!(
        changing_calls(&cloud).is_empty(),
        "{:?}",
        changing_calls(&cloud)
    );
    assert!(
        cloud.pipes().iter().any(|p| p.id.to_string() == events),
        "still running"
    );
    assert!(state(&dir)["pipes"].get("events").is_none(), "forgotten");

    // --max-destructive: a replace and a delete are two.
    cloud.file(
        "pipes/clicks.yaml",
        &EVENTS_PIPE.replace("name: events", "name: clicks"),
    );
    apply_plan_free(&cloud, &dir);
    std::fs::remove_file(Path::new(&dir).join("clicks.yaml")).unwrap();
    edit(&dir, "orders.yaml", "replicas: 2", "replicas: 4");
    cloud.clear_requests();
    let capped = cloud.cloudctl(&[
        "apply",
        "-f",
        &dir,
        "--yes",
        "--max-destructive",
        "1",
        "-o",
        "json",
    ]);
    let error = refused(&capped, 13, "TOO_DESTRUCTIVE");
    assert!(says(&error, "2 pipes, more than the 1"), "{error}");
    assert!(
        changing_calls(&cloud).is_empty(),
        "{:?}",
        changing_calls(&cloud)
    );
    cloud
        .cloudctl(&[
            "apply",
            "-f",
            &dir,
            "--yes",
            "--max-destructive",
            "2",
            "-o",
            "json",
        ])
        .expect(0);
}

#[test]
fn the_plan_says_what_each_action_does_to_the_data() {
    let cloud = Cloud::start();
    let dir = directory(
        &cloud,
        "pipes",
        &[("orders.yaml", KAFKA_PIPE), ("events.yaml", EVENTS_PIPE)],
    );
    apply_plan_free(&cloud, &dir);
    edit(&dir, "orders.yaml", "replicas: 2", "replicas: 3");
    std::fs::remove_file(Path::new(&dir).join("events.yaml")).unwrap();
    let (_, document) = plan_out(&cloud, &dir, "impact.json");
    let impact = |name: &str| -> Vec<String> {
        document["actions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["name"] == name)
            .map(|a| {
                a["impact"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|i| i["class"].as_str().unwrap().to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    // orders: no offset declared (where it starts is not known), a managed table.
    assert_eq!(impact("orders"), ["start-unknown", "managed-table-unknown"]);
    // events: its delete stops ingestion; its table is its own.
    assert_eq!(impact("events"), ["ingestion-stops", "table-kept"]);
    let human = cloud
        .cloudctl(&["plan", "-f", &dir, "-o", "human"])
        .expect(8);
    assert!(
        human
            .stdout
            .contains("data: start-unknown (source.kafka): without `offset.timestamp`"),
        "{}",
        human.stdout
    );
}
