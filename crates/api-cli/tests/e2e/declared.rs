//! Declared pipes, as an operator runs them: `plan`, `apply`, `import`, `pipe export` and `state`
//! against the emulator, with changes in the files, changes on the server, unknown outcomes, two
//! applies at once, a killed apply, and every bad input refused with nothing sent.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use api_emulator::{EmulatorOptions, Fault, FaultRule, OperationId, PipeState};
use serde_json::{Value, json};

use crate::support::{Cloud, KAFKA_PIPE};

/// A Kinesis pipe whose secret key comes from `KINESIS_SECRET_KEY`.
pub(crate) const KINESIS_PIPE: &str = "\
name: clicks
source:
  kinesis:
    streamName: clicks
    region: eu-west-1
    useEnhancedFanOut: true
    accessKey: {accessKeyId: AKIAEXAMPLE, secretKey: {env: KINESIS_SECRET_KEY}}
destination:
  database: web
  table: clicks
  managedTable: true
  columns:
    - {name: url, type: String}
fieldMappings:
  - {sourceField: url, destinationField: url}
scaling: {replicas: 1.0, replicaMemoryGb: 0.50, replicaCpuMillicores: 250}
";

/// An object storage pipe in a blob container, reached with `AZURE_CONNECTION_STRING`: a JSON file.
fn object_storage_pipe() -> String {
    let pipe = json!({
        "name": "backfill",
        "source": {"objectStorage": {
            "connectionString": {"env": "AZURE_CONNECTION_STRING"},
            "azureContainerName": "events",
            "path": "year=*/*.parquet",
            "compression": "zstd",
            "isContinuous": true,
        }},
        "destination": {"database": "default", "table": "events", "managedTable": true,
                        "columns": [{"name": "c", "type": "String"}]},
        "fieldMappings": [{"sourceField": "c", "destinationField": "c"}],
        "settings": {"object_storage_concurrency": 8, "kafka_max_poll_records": 500},
    });
    serde_json::to_string_pretty(&pipe).expect("JSON")
}

/// A Postgres pipe whose password comes from `POSTGRES_PASSWORD`.
const POSTGRES_PIPE: &str = "\
name: crm
source:
  postgres:
    host: crm-db.internal.example
    port: 5432
    database: crm
    credentials: {username: replicator, password: {env: POSTGRES_PASSWORD}}
    settings: {syncIntervalSeconds: 30}
    tableMappings:
      - {sourceSchemaName: public, sourceTable: customers, targetTable: crm_customers}
destination: {database: crm}
";

/// A directory of pipe files in the test's home: `(file name, text)`.
pub(crate) fn directory(cloud: &Cloud, name: &str, files: &[(&str, &str)]) -> String {
    for (file, text) in files {
        cloud.file(&format!("{name}/{file}"), text);
    }
    cloud.home().join(name).to_string_lossy().into_owned()
}

/// The four source kinds, and the service declared running.
pub(crate) fn all_kinds(cloud: &Cloud) -> String {
    directory(
        cloud,
        "pipes",
        &[
            ("orders.yaml", KAFKA_PIPE),
            ("clicks.yml", KINESIS_PIPE),
            ("backfill.json", &object_storage_pipe()),
            ("crm.yaml", POSTGRES_PIPE),
            ("service.yaml", "state: running\n"),
            ("README.md", "not a pipe file\n"),
        ],
    )
}

/// The `error` object on stderr of a run that also wrote a result on stdout (an apply's report).
pub(crate) fn stderr_error(run: &crate::support::Run) -> Value {
    let value: Value = serde_json::from_str(run.stderr.trim()).expect("one JSON object on stderr");
    value["error"].clone()
}

/// `plan -o json`; the document it prints (when it printed one) follows the schema.
pub(crate) fn plan(cloud: &Cloud, dir: &str) -> crate::support::Run {
    let run = cloud.cloudctl(&["plan", "-f", dir, "-o", "json"]);
    if let Ok(document) = serde_json::from_str::<Value>(&run.stdout) {
        crate::saved_plans::assert_valid_document(&document);
    }
    run
}

/// `apply --yes -o json`; the plan document of its report (when it wrote one) follows the schema.
pub(crate) fn apply(cloud: &Cloud, dir: &str) -> crate::support::Run {
    let run = cloud.cloudctl(&["apply", "-f", dir, "--yes", "-o", "json"]);
    if let Ok(report) = serde_json::from_str::<Value>(&run.stdout) {
        crate::saved_plans::assert_valid_document(&report["plan"]);
    }
    run
}

/// The names of the pipes on the server, sorted (a duplicate shows twice).
pub(crate) fn names_on_server(cloud: &Cloud) -> Vec<String> {
    let mut names: Vec<String> = cloud.pipes().into_iter().map(|p| p.name).collect();
    names.sort();
    names
}

/// How many creates the server took for each name (a duplicate shows as 2, whether or not the server
/// would refuse the second: the emulator answers 409 to a name it has, a real server may not).
fn creates_taken(cloud: &Cloud) -> std::collections::BTreeMap<String, usize> {
    let mut taken = std::collections::BTreeMap::new();
    for request in cloud.requests() {
        let sent = request.operation_id == Some(OperationId::CreatePipe);
        let name = request
            .body
            .as_ref()
            .and_then(|b| b["name"].as_str().map(str::to_string));
        if let (true, Some(name)) = (sent, name) {
            *taken.entry(name).or_insert(0) += 1;
        }
    }
    taken
}

/// Fails when the server took a second create of any name.
#[track_caller]
fn assert_one_create_per_name(cloud: &Cloud) {
    let taken = creates_taken(cloud);
    assert!(
        taken.values().all(|n| *n == 1),
        "one create per name: {taken:?}"
    );
}

pub(crate) fn state(dir: &str) -> Value {
    let text =
        std::fs::read_to_string(Path::new(dir).join(".cloudctl-state.json")).expect("a state file");
    serde_json::from_str(&text).expect("JSON")
}

pub(crate) fn recorded_id(dir: &str, name: &str) -> String {
    state(dir)["pipes"][name]["id"]
        .as_str()
        .expect("a recorded id")
        .to_string()
}

pub(crate) fn changes(run: &crate::support::Run) -> Vec<(String, String, Vec<String>)> {
    run.json()["actions"]
        .as_array()
        .expect("actions")
        .iter()
        .map(|c| {
            let paths = c["changes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["path"].as_str().unwrap().to_string())
                .collect();
            (
                c["action"].as_str().unwrap().to_string(),
                c["name"].as_str().unwrap().to_string(),
                paths,
            )
        })
        .collect()
}

#[test]
fn four_source_kinds_are_applied_and_then_plan_shows_no_change() {
    let cloud = Cloud::start();
    let dir = all_kinds(&cloud);

    let planned = plan(&cloud, &dir).expect(8);
    let creates: Vec<String> = changes(&planned)
        .into_iter()
        .map(|(a, n, _)| format!("{a} {n}"))
        .collect();
    assert_eq!(
        creates,
        [
            "create backfill",
            "create clicks",
            "create crm",
            "create orders"
        ]
    );
    assert_eq!(
        planned.json()["reads"],
        1,
        "no pipe is recorded: one read, the service's"
    );
    // Reads only: getPipe, and the service's state command without a command (the API's read).
    let reads_only = cloud.requests().iter().all(|r| {
        r.method == "GET"
            || (r.operation_id == Some(OperationId::UpdateServiceState)
                && r.body.as_ref().is_some_and(|b| b.get("command").is_none()))
    });
    assert!(reads_only, "a plan writes nothing: {:?}", cloud.requests());

    let applied = apply(&cloud, &dir).expect(0).json();
    let results: Vec<(String, String)> = applied["results"]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().into(),
                r["state"].as_str().unwrap_or("-").into(),
            )
        })
        .collect();
    assert_eq!(
        results,
        [
            ("backfill".into(), "Running".into()),
            ("clicks".into(), "Running".into()),
            ("crm".into(), "Running".into()),
            ("orders".into(), "Running".into()),
        ]
    );
    assert_eq!(
        names_on_server(&cloud),
        ["backfill", "clicks", "crm", "orders"]
    );

    cloud.clear_requests();
    let again = plan(&cloud, &dir).expect(0).json();
    assert_eq!(again["actions"], json!([]));
    assert_eq!(again["summary"]["unchanged"], 4);
    let log = cloud.requests();
    let reads = log
        .iter()
        .filter(|r| r.operation_id == Some(OperationId::GetPipe))
        .count();
    assert_eq!(reads, 4, "one read per recorded pipe");
    assert_eq!(log.len(), 5, "and the service's state: {log:?}");
    assert!(
        log.iter()
            .all(|r| r.method != "POST" && r.method != "DELETE"),
        "nothing written"
    );

    let human = cloud
        .cloudctl(&["plan", "-f", &dir, "-o", "human"])
        .expect(0);
    assert_eq!(
        human.stdout.trim(),
        format!("No changes: the service matches the 4 pipes declared in {dir}.")
    );
}

#[test]
fn a_changed_file_replaces_the_pipe_and_names_the_member() {
    let cloud = Cloud::start();
    let dir = directory(&cloud, "pipes", &[("orders.yaml", KAFKA_PIPE)]);
    apply(&cloud, &dir).expect(0);
    let old = recorded_id(&dir, "orders");

    cloud.file(
        "pipes/orders.yaml",
        &KAFKA_PIPE.replace("scaling: {replicas: 2}", "scaling: {replicas: 3}"),
    );
    let planned = plan(&cloud, &dir).expect(8);
    assert_eq!(
        changes(&planned),
        [(
            "replace".into(),
            "orders".into(),
            vec!["scaling.replicas".into()]
        )]
    );
    let member = &planned.json()["actions"][0]["changes"][0];
    assert_eq!(
        (
            member["old"].clone(),
            member["new"].clone(),
            member["cause"].clone()
        ),
        (json!(2), json!(3), json!("declaration"))
    );
    let human = cloud
        .cloudctl(&["plan", "-f", &dir, "-o", "human"])
        .expect(8);
    assert!(
        human.stdout.contains("  ~ replace   orders"),
        "{}",
        human.stdout
    );
    assert!(
        human
            .stdout
            .contains("      scaling.replicas: 2 -> 3  (changed in the file)"),
        "{}",
        human.stdout
    );

    apply(&cloud, &dir).expect(0);
    let new = recorded_id(&dir, "orders");
    assert_ne!(new, old, "a replace is a delete and a create");
    assert_eq!(names_on_server(&cloud), ["orders"], "the old pipe is gone");
    assert_eq!(cloud.pipes()[0].pipe["scaling"]["replicas"], 3);
    plan(&cloud, &dir).expect(0);
}

#[test]
fn a_pipe_deleted_out_of_band_is_recreated_and_a_removed_file_deletes_its_pipe() {
    let cloud = Cloud::start();
    let dir = directory(
        &cloud,
        "pipes",
        &[("orders.yaml", KAFKA_PIPE), ("clicks.yaml", KINESIS_PIPE)],
    );
    apply(&cloud, &dir).expect(0);
    let orders = recorded_id(&dir, "orders");

    cloud
        .cloudctl(&["pipe", "delete", &orders, "--wait"])
        .expect(0);
    let planned = plan(&cloud, &dir).expect(8);
    assert_eq!(
        changes(&planned),
        [("recreate".into(), "orders".into(), vec![])]
    );
    apply(&cloud, &dir).expect(0);
    assert_ne!(recorded_id(&dir, "orders"), orders);
    assert_eq!(names_on_server(&cloud), ["clicks", "orders"]);

    std::fs::remove_file(Path::new(&dir).join("clicks.yaml")).unwrap();
    let clicks = recorded_id(&dir, "clicks");
    let planned = plan(&cloud, &dir).expect(8);
    assert_eq!(
        changes(&planned),
        [("delete".into(), "clicks".into(), vec![])]
    );
    assert_eq!(planned.json()["actions"][0]["id"], clicks);
    apply(&cloud, &dir).expect(0);
    assert_eq!(names_on_server(&cloud), ["orders"]);
    assert!(state(&dir)["pipes"].get("clicks").is_none());
    plan(&cloud, &dir).expect(0);
}

#[test]
fn drift_on_the_server_is_a_replace_and_state_churn_is_not() {
    let cloud = Cloud::start();
    let dir = all_kinds(&cloud);
    apply(&cloud, &dir).expect(0);

    // Every state a pipe goes through is no difference, but a failure.
    let orders = recorded_id(&dir, "orders");
    for state in PipeState::KNOWN {
        let state = PipeState::from(*state);
        if state.is_failed() {
            continue;
        }
        cloud.force_pipe_state(&orders, state);
        plan(&cloud, &dir).expect(0);
    }

    cloud.patch_pipe(
        &orders,
        json!({"scaling": {"replicas": 5}, "source": {"kafka": {"topics": "orders,returns"}}}),
    );
    let crm = recorded_id(&dir, "crm");
    cloud.patch_pipe(
        &crm,
        json!({"source": {"postgres": {"settings": {"syncIntervalSeconds": 60}}}}),
    );
    let planned = plan(&cloud, &dir).expect(8);
    assert_eq!(
        changes(&planned),
        [
            (
                "replace".into(),
                "crm".into(),
                vec!["source.postgres.settings.syncIntervalSeconds".into()]
            ),
            (
                "replace".into(),
                "orders".into(),
                vec!["scaling.replicas".into(), "source.kafka.topics".into()]
            ),
        ]
    );
    let member = &planned.json()["actions"][1]["changes"][0];
    assert_eq!(
        (
            member["old"].clone(),
            member["new"].clone(),
            member["cause"].clone()
        ),
        (json!(5), json!(2), json!("server"))
    );
    // A member the declaration leaves out may change on the server: it is the server's.
    cloud.patch_pipe(
        &recorded_id(&dir, "clicks"),
        json!({"settings": {"db_max_threads": 16}}),
    );
    assert_eq!(changes(&plan(&cloud, &dir).expect(8)).len(), 2);

    apply(&cloud, &dir).expect(0);
    plan(&cloud, &dir).expect(0);
    assert_eq!(
        names_on_server(&cloud),
        ["backfill", "clicks", "crm", "orders"]
    );
}

#[test]
fn export_then_import_then_plan_shows_no_change() {
    let cloud = Cloud::start();
    let dir = all_kinds(&cloud);
    apply(&cloud, &dir).expect(0);

    for name in ["orders", "clicks", "backfill", "crm"] {
        let id = recorded_id(&dir, name);
        let exported = cloud
            .cloudctl(&["pipe", "export", &id, "-o", "human"])
            .expect(0);
        assert!(
            !exported.stdout.contains("state:") && !exported.stdout.contains(&id),
            "{}",
            exported.stdout
        );
        let adopted = format!("adopted-{name}");
        let file = cloud.file(&format!("{adopted}/{name}.yaml"), &exported.stdout);
        let adopted_dir = Path::new(&file)
            .parent()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        // What the API does not return comes from the environment, named for the pipe and member.
        let mut import = cloud.command();
        for variable in exported
            .stderr
            .split(['(', ' ', ','])
            .filter(|w| w.chars().all(|c| c.is_ascii_uppercase() || c == '_') && w.len() > 3)
        {
            import.env(variable, "from-the-environment");
        }
        let run = cloud.run(import.args(["import", "-f", &adopted_dir, name, &id, "-o", "json"]));
        let run = run.expect(0);
        assert_eq!(run.json()["id"], id.as_str());
        let mut planned = cloud.command();
        for variable in exported
            .stderr
            .split(['(', ' ', ','])
            .filter(|w| w.chars().all(|c| c.is_ascii_uppercase() || c == '_') && w.len() > 3)
        {
            planned.env(variable, "from-the-environment");
        }
        let planned = cloud.run(planned.args(["plan", "-f", &adopted_dir, "-o", "json"]));
        let planned = planned.expect(0);
        assert_eq!(
            planned.json()["summary"]["unchanged"],
            1,
            "{name}: {}",
            planned.stdout
        );
    }
    let orders = cloud
        .cloudctl(&[
            "pipe",
            "export",
            &recorded_id(&dir, "orders"),
            "-o",
            "human",
        ])
        .expect(0);
    assert!(!orders.stdout.contains("credentials"), "{}", orders.stdout);
    assert!(
        orders.stderr.contains("The API never returns ")
            && orders.stderr.contains("source.kafka.credentials"),
        "{}",
        orders.stderr
    );
    let crm = cloud
        .cloudctl(&["pipe", "export", &recorded_id(&dir, "crm"), "-o", "human"])
        .expect(0);
    assert!(
        crm.stdout
            .contains("password: {env: CRM_POSTGRES_PASSWORD}"),
        "{}",
        crm.stdout
    );
    assert!(
        crm.stdout
            .contains("username: {env: CRM_POSTGRES_USERNAME}"),
        "{}",
        crm.stdout
    );
    let backfill = cloud
        .cloudctl(&[
            "pipe",
            "export",
            &recorded_id(&dir, "backfill"),
            "-o",
            "human",
        ])
        .expect(0);
    assert!(
        backfill
            .stdout
            .contains("connectionString: {env: BACKFILL_OBJECT_STORAGE_CONNECTION_STRING}"),
        "{}",
        backfill.stdout
    );
    assert!(
        !backfill.stdout.contains("object_storage_max_file_count"),
        "a server default is left out: {}",
        backfill.stdout
    );
    assert!(
        backfill.stdout.contains("object_storage_concurrency: 8"),
        "{}",
        backfill.stdout
    );

    // An import of a file that differs from the pipe shows the differences.
    let id = recorded_id(&dir, "orders");
    let differs = directory(
        &cloud,
        "differs",
        &[(
            "orders.yaml",
            &KAFKA_PIPE.replace("topics: orders", "topics: other"),
        )],
    );
    let imported = cloud
        .cloudctl(&["import", "-f", &differs, "orders", &id, "-o", "human"])
        .expect(0)
        .stdout;
    assert!(
        imported.contains("source.kafka.topics: \"orders\" on the server, \"other\" in the file"),
        "the import says where the file differs: {imported}"
    );
    let advice = format!("`cloudctl pipe delete {id} --wait`, then `cloudctl apply -f {differs}`");
    assert!(imported.contains(&advice), "{imported}");
    // The pipe is recorded as it is; the advice makes it follow the file, with no second pipe.
    plan(&cloud, &differs).expect(0);
    cloud.cloudctl(&["pipe", "delete", &id, "--wait"]).expect(0);
    assert_eq!(
        changes(&plan(&cloud, &differs).expect(8)),
        [("recreate".into(), "orders".into(), vec![])]
    );
    apply(&cloud, &differs).expect(0);
    let live: Vec<_> = cloud
        .pipes()
        .into_iter()
        .filter(|p| p.name == "orders" && !p.deleted)
        .collect();
    assert_eq!(live.len(), 1, "one pipe named orders: {live:?}");
    let now = cloud
        .cloudctl(&["pipe", "get", &live[0].id.to_string(), "-o", "json"])
        .expect(0)
        .json();
    assert_eq!(now["source"]["kafka"]["topics"], "other", "{now}");
    // A change to the file after the import is a replace.
    let file = cloud.home().join("differs/orders.yaml");
    std::fs::write(
        &file,
        KAFKA_PIPE.replace("topics: orders", "topics: changed"),
    )
    .unwrap();
    assert_eq!(
        changes(&plan(&cloud, &differs).expect(8)),
        [(
            "replace".into(),
            "orders".into(),
            vec!["source.kafka.topics".into()]
        )]
    );
}

#[test]
fn a_504_after_the_create_is_pending_until_resolved_and_never_created_twice() {
    // A server that would take a second pipe of the name, so "never twice" is the SDK's doing.
    let cloud = Cloud::with(EmulatorOptions::for_tests().duplicate_names(true));
    let dir = directory(&cloud, "pipes", &[("orders.yaml", KAFKA_PIPE)]);
    cloud.inject(FaultRule::operation(OperationId::CreatePipe).then(Fault::status(504).applied()));

    let failed = apply(&cloud, &dir).expect(7);
    assert_eq!(stderr_error(&failed)["code"], "PENDING_CREATE");
    assert_eq!(
        failed.json()["results"]["results"][0]["result"],
        "outcomeUnknown"
    );
    let pending = &state(&dir)["pending"]["orders"];
    assert!(
        pending["startedAt"].is_string() && pending["intentId"].is_string(),
        "{pending}"
    );
    assert_eq!(pending["reason"], "HTTP 504 GATEWAY_TIMEOUT");
    assert_eq!(
        names_on_server(&cloud),
        ["orders"],
        "the 504 came after the create"
    );

    let planned = plan(&cloud, &dir).expect(7);
    assert_eq!(
        changes(&planned),
        [("pending".into(), "orders".into(), vec![])]
    );
    let again = apply(&cloud, &dir).expect(7);
    assert!(again.stderr.contains("state resolve"), "{}", again.stderr);
    assert_eq!(names_on_server(&cloud), ["orders"], "no second pipe");
    assert_eq!(
        creates_taken(&cloud)["orders"],
        1,
        "one create was ever sent"
    );

    let id = cloud.pipes()[0].id.to_string();
    let wrong = cloud
        .cloudctl(&[
            "state",
            "resolve",
            "-f",
            &dir,
            "orders",
            "--id",
            "0f9e8d7c-6b5a-4f3e-9d2c-1b0a9f8e7d6c",
        ])
        .expect(3);
    assert!(wrong.stderr.contains("NOT_FOUND"), "{}", wrong.stderr);
    cloud
        .cloudctl(&["state", "resolve", "-f", &dir, "orders", "--id", &id])
        .expect(0);
    assert_eq!(recorded_id(&dir, "orders"), id);
    plan(&cloud, &dir).expect(0);

    // Confirming that nothing was made frees the name.
    cloud
        .cloudctl(&["state", "forget", "-f", &dir, "orders"])
        .expect(0);
    cloud.cloudctl(&["pipe", "delete", &id, "--wait"]).expect(0);
    cloud.inject(FaultRule::operation(OperationId::CreatePipe).then(Fault::hangup()));
    apply(&cloud, &dir).expect(7);
    assert!(
        names_on_server(&cloud).is_empty(),
        "the hangup came before the create"
    );
    cloud
        .cloudctl(&["state", "resolve", "-f", &dir, "orders", "--absent"])
        .expect(0);
    apply(&cloud, &dir).expect(0);
    assert_eq!(names_on_server(&cloud), ["orders"]);
}

/// An emulator whose pipes take `provisioning` to run, and that takes a second pipe of a live
/// one's name (as a production server may): the tests of "no duplicate" on it can fail.
fn slow_cloud(provisioning: Duration) -> Cloud {
    let mut timing = api_emulator::Timing::INSTANT;
    timing.pipe_provisioning_ms = u64::try_from(provisioning.as_millis()).unwrap();
    Cloud::with(
        EmulatorOptions::for_tests()
            .timing(timing)
            .duplicate_names(true),
    )
}

/// Starts `cloudctl apply -f dir --yes` (and `extra`) as a process of its own, its output dropped.
fn spawn_apply(cloud: &Cloud, dir: &str, extra: &[&str]) -> std::process::Child {
    let mut apply = cloud.process();
    apply
        .args(["apply", "-f", dir, "--yes", "-o", "json"])
        .args(extra);
    apply
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    apply.spawn().expect("cloudctl starts")
}

/// Polls until `done` holds (at most 20 s).
fn until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !done() {
        assert!(Instant::now() < deadline, "never: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_second_apply_while_one_runs_is_refused_and_nothing_is_created_twice() {
    let cloud = slow_cloud(Duration::from_secs(3));
    let dir = directory(
        &cloud,
        "pipes",
        &[("orders.yaml", KAFKA_PIPE), ("clicks.yaml", KINESIS_PIPE)],
    );
    let mut first = spawn_apply(&cloud, &dir, &[]);
    // The first holds the lock while it waits for its pipes to run.
    until("the first apply created its pipes", || {
        cloud.pipes().len() == 2
    });
    let second = apply(&cloud, &dir).expect(1);
    assert_eq!(second.error()["code"], "STATE_LOCKED");
    assert!(first.wait().unwrap().success());
    assert_eq!(names_on_server(&cloud), ["clicks", "orders"]);
    assert_one_create_per_name(&cloud);
    plan(&cloud, &dir).expect(0);
}

#[test]
fn an_apply_killed_midway_is_finished_by_the_next_without_a_duplicate() {
    let cloud = slow_cloud(Duration::from_secs(3));
    let dir = all_kinds(&cloud);
    // The third create is applied, then its answer takes 30 s: the kill lands in the middle of it.
    cloud.inject(
        FaultRule::operation(OperationId::CreatePipe)
            .then(Fault::delay(Duration::ZERO).times(2))
            .then(Fault::status(504).after(Duration::from_secs(30)).applied()),
    );
    let mut running = spawn_apply(&cloud, &dir, &["--parallelism", "1"]);
    until("the third create is taken", || cloud.pipes().len() == 3);
    running.kill().expect("SIGKILL");
    running.wait().unwrap();
    cloud.clear_faults();
    let recorded = state(&dir);
    assert_eq!(
        recorded["pipes"].as_object().unwrap().len(),
        2,
        "two creates answered: {recorded}"
    );
    let pending: Vec<&String> = recorded["pending"].as_object().unwrap().keys().collect();
    assert_eq!(
        pending.len(),
        1,
        "the create in flight is pending: {recorded}"
    );
    let name = pending[0].clone();

    // The next apply creates nothing of that name: it may exist (it does).
    let blocked = apply(&cloud, &dir).expect(7);
    assert!(blocked.stderr.contains(&name), "{}", blocked.stderr);
    // (The killed create was never answered, so the log has no entry for it: any entry is another.)
    assert_eq!(
        creates_taken(&cloud).get(&name),
        None,
        "no second create of {name}"
    );
    assert_eq!(
        names_on_server(&cloud),
        ["backfill", "clicks", "crm", "orders"],
        "the other names are applied; the pending one is not created again"
    );
    let id = cloud
        .pipes()
        .into_iter()
        .find(|p| p.name == name)
        .expect("made")
        .id;
    cloud
        .cloudctl(&[
            "state",
            "resolve",
            "-f",
            &dir,
            &name,
            "--id",
            &id.to_string(),
        ])
        .expect(0);
    apply(&cloud, &dir).expect(0);
    assert_eq!(
        names_on_server(&cloud),
        ["backfill", "clicks", "crm", "orders"]
    );
    assert_one_create_per_name(&cloud);
    plan(&cloud, &dir).expect(0);
}

#[test]
fn a_stopped_service_declared_running_is_started_before_the_creates() {
    let cloud = Cloud::start();
    cloud.set_service_state("stopped");
    let dir = directory(
        &cloud,
        "pipes",
        &[
            ("orders.yaml", KAFKA_PIPE),
            ("service.yaml", "state: running\n"),
        ],
    );
    let planned = plan(&cloud, &dir).expect(8).json();
    assert_eq!(
        (
            &planned["service"]["declared"],
            &planned["service"]["from"],
            &planned["service"]["known"]
        ),
        (&json!("running"), &json!("stopped"), &json!(true))
    );
    apply(&cloud, &dir).expect(0);
    let log = cloud.requests();
    let start = log.iter().position(|r| {
        r.operation_id == Some(OperationId::UpdateServiceState)
            && r.body.as_ref().is_some_and(|b| b["command"] == "start")
    });
    let create = log
        .iter()
        .position(|r| r.operation_id == Some(OperationId::CreatePipe));
    assert!(
        start.is_some() && start < create,
        "started first: {start:?} < {create:?}"
    );
    assert_eq!(names_on_server(&cloud), ["orders"]);
    plan(&cloud, &dir).expect(0);

    cloud.file("pipes/service.yaml", "state: stopped\n");
    let refused = plan(&cloud, &dir);
    assert_eq!(
        refused.code, 8,
        "a stop with no pipe to create is planned: {}",
        refused.stderr
    );
}

#[test]
fn bad_input_is_refused_with_what_and_where_and_nothing_is_sent() {
    let cloud = Cloud::start();
    let refused = |args: &[&str], code: i32, expected: &str| {
        cloud.clear_requests();
        let run = cloud.cloudctl(args).expect(code);
        let error = run.error();
        let shown = error.to_string();
        assert!(shown.contains(expected), "{expected:?} in {shown}");
        assert!(
            cloud.requests().is_empty(),
            "nothing was sent: {:?}",
            cloud.requests()
        );
        error
    };

    refused(
        &[
            "plan",
            "-f",
            &cloud.home().join("nowhere").to_string_lossy(),
            "-o",
            "json",
        ],
        2,
        "nowhere does not exist",
    );

    let twice = directory(
        &cloud,
        "twice",
        &[("a.yaml", KAFKA_PIPE), ("b.yaml", KAFKA_PIPE)],
    );
    let error = refused(&["plan", "-f", &twice, "-o", "json"], 2, "declared twice");
    let files: Vec<&str> = error["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["file"].as_str().unwrap())
        .collect();
    assert!(
        files[0].ends_with("a.yaml") && files[1].ends_with("b.yaml"),
        "both files are named: {files:?}"
    );
    assert_eq!(error["problems"][0]["line"], 1);

    let invalid = directory(
        &cloud,
        "invalid",
        &[
            (
                "orders.yaml",
                &KAFKA_PIPE.replace("replicas: 2", "replicas: 41"),
            ),
            ("bad.yaml", "name: x\nsorce: {}\n"),
        ],
    );
    let human = cloud
        .cloudctl(&["plan", "-f", &invalid, "-o", "human"])
        .expect(2);
    assert!(
        human
            .stderr
            .contains("orders.yaml:19: scaling.replicas: must be between 1 and 40, got 41"),
        "{}",
        human.stderr
    );
    assert!(
        human.stderr.contains("bad.yaml:2: sorce: unknown member"),
        "{}",
        human.stderr
    );

    let ok = directory(&cloud, "ok", &[("orders.yaml", KAFKA_PIPE)]);
    let state_file = Path::new(&ok).join(".cloudctl-state.json");
    for (text, expected) in [
        ("{\"version\": 1, \"target\"", "INVALID_STATE"),
        ("{\"version\": 5, \"target\": {}}", "version 5, newer"),
        ("[]", "INVALID_STATE"),
    ] {
        std::fs::write(&state_file, text).unwrap();
        refused(&["plan", "-f", &ok, "-o", "json"], 2, expected);
        refused(&["apply", "-f", &ok, "--yes", "-o", "json"], 2, expected);
    }
    let other_service = json!({"version": 1, "target": {"apiUrl": cloud.base_url(), "organizationId": cloud.organization(), "serviceId": cloud.service("stopped")}});
    std::fs::write(&state_file, other_service.to_string()).unwrap();
    refused(&["plan", "-f", &ok, "-o", "json"], 2, "belongs to service");
    let other_url = json!({"version": 1, "target": {"apiUrl": "https://api.example.com", "organizationId": cloud.organization(), "serviceId": cloud.service("running")}});
    std::fs::write(&state_file, other_url.to_string()).unwrap();
    refused(
        &["plan", "-f", &ok, "-o", "json"],
        2,
        "https://api.example.com",
    );
    std::fs::remove_file(&state_file).unwrap();

    // Off a terminal, apply needs --yes: asked for nothing, it sends nothing.
    let error = refused(&["apply", "-f", &ok, "-o", "json"], 2, "--yes");
    assert_eq!(error["code"], "USAGE");
    refused(
        &[
            "import",
            "-f",
            &ok,
            "events",
            "0f9e8d7c-6b5a-4f3e-9d2c-1b0a9f8e7d6c",
            "-o",
            "json",
        ],
        2,
        "no file of",
    );
}

#[test]
fn the_state_file_is_private_and_holds_no_secret() {
    let cloud = Cloud::start();
    let dir = all_kinds(&cloud);
    apply(&cloud, &dir).expect(0);
    let path: PathBuf = Path::new(&dir).join(".cloudctl-state.json");
    let text = std::fs::read_to_string(&path).unwrap();
    for secret in cloud.secrets() {
        assert!(
            !text.contains(&secret),
            "a secret in the state file:\n{text}"
        );
    }
    assert!(
        text.contains("argon2id:"),
        "the secrets are there as fingerprints"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
    let listed = cloud
        .cloudctl(&["state", "list", "-f", &dir, "-o", "human"])
        .expect(0);
    let lines: Vec<&str> = listed.stdout.lines().collect();
    assert!(
        lines[0].starts_with("State lineage ") && lines[0].contains(", serial "),
        "the state's generation first: {}",
        listed.stdout
    );
    assert!(lines[1].starts_with("NAME"), "{}", listed.stdout);
    assert_eq!(lines.len(), 6);
}

/// Everything a declared pipe's life prints and writes when its password is `secret` and the
/// server's first answer to the create echoes it (`answer`): apply, plan, state list, export, and
/// the state file, as written and as its strings read.
fn declared_outputs(
    cloud: &Cloud,
    dir: &str,
    secret: &str,
    answer: (u16, &'static str, String),
) -> String {
    let run = |args: &[&str]| cloud.run(cloud.command().env("KAFKA_PASSWORD", secret).args(args));
    let (status, content_type, body) = answer;
    let mut all = String::new();
    for mode in ["json", "human"] {
        // Each apply meets the echoing answer (a fault serves one request).
        cloud.inject(
            FaultRule::operation(OperationId::CreatePipe)
                .then(Fault::body(status, body.clone()).content_type(content_type)),
        );
        let failed = run(&["apply", "-f", dir, "--yes", "-o", mode]);
        assert_ne!(
            failed.code, 0,
            "the echoing answer is an error: {}",
            failed.stdout
        );
        all.push_str(&failed.stdout);
        all.push_str(&failed.stderr);
        if failed.code == 7 {
            run(&["state", "resolve", "-f", dir, "orders", "--absent"]).expect(0);
        }
    }
    let applied = run(&["apply", "-f", dir, "--yes", "-o", "human"]).expect(0);
    all.push_str(&applied.stdout);
    let id = recorded_id(dir, "orders");
    for args in [
        &["plan", "-f", dir, "-o", "json"][..],
        &["plan", "-f", dir, "-o", "human"],
        &["state", "list", "-f", dir, "-o", "json"],
        &["pipe", "export", &id, "-o", "human"],
        &["pipe", "export", &id, "-o", "json"],
    ] {
        let shown = run(args);
        all.push_str(&shown.stdout);
        all.push_str(&shown.stderr);
    }
    let state_text = std::fs::read_to_string(Path::new(dir).join(".cloudctl-state.json")).unwrap();
    all.push_str(&state_text);
    all.push_str(&strings_of(&serde_json::from_str(&state_text).unwrap()));
    // The next case starts from nothing.
    cloud.cloudctl(&["pipe", "delete", &id, "--wait"]).expect(0);
    std::fs::remove_file(Path::new(dir).join(".cloudctl-state.json")).unwrap();
    all
}

/// Every string of a JSON value, as read (escapes undone).
fn strings_of(value: &Value) -> String {
    match value {
        Value::String(s) => format!("{s}\n"),
        Value::Array(items) => items.iter().map(strings_of).collect(),
        Value::Object(members) => members
            .iter()
            .map(|(k, v)| format!("{k}\n{}", strings_of(v)))
            .collect(),
        _ => String::new(),
    }
}

#[test]
fn no_piece_of_a_secret_reaches_the_state_a_plan_an_apply_or_an_export() {
    use crate::redaction::encodings::{SECRET_ALPHABET, echoing, html_decoded, leaked_piece};
    use proptest::prelude::*;

    let cloud = Cloud::start();
    let dir = directory(&cloud, "pipes", &[("orders.yaml", KAFKA_PIPE)]);
    let baseline = declared_outputs(&cloud, &dir, "~~~~~~~~~~", echoing("~~~~~~~~~~", &[0], 0));
    let config = ProptestConfig {
        cases: 6,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    proptest!(config, |(
        secret in SECRET_ALPHABET,
        picks in proptest::collection::vec(any::<u8>(), 24),
        kind in 0u8..3,
    )| {
        prop_assume!(leaked_piece(&secret, 6, &baseline).is_none());
        let shown = declared_outputs(&cloud, &dir, &secret, echoing(&secret, &picks, kind));
        for text in [shown.clone(), html_decoded(&shown)] {
            let leaked = leaked_piece(&secret, 6, &text);
            prop_assert!(leaked.is_none(), "{leaked:?} of {secret:?} shown: {text}");
        }
    });
}

#[test]
fn a_service_that_cannot_be_read_is_never_a_change_and_apply_still_brings_it_to_its_state() {
    let mut timing = api_emulator::Timing::INSTANT;
    timing.service_transition_ms = 300;
    let cloud = Cloud::with(
        EmulatorOptions::for_tests()
            .timing(timing)
            .require_state_command(),
    );
    cloud.set_service_state("stopped");
    let dir = directory(
        &cloud,
        "pipes",
        &[
            ("orders.yaml", KAFKA_PIPE),
            ("service.yaml", "state: running\n"),
        ],
    );
    let planned = plan(&cloud, &dir).expect(8).json();
    assert_eq!(
        (
            &planned["service"]["declared"],
            &planned["service"]["from"],
            &planned["service"]["known"]
        ),
        (&json!("running"), &json!("unknown"), &json!(false))
    );
    let human = cloud
        .cloudctl(&["plan", "-f", &dir, "-o", "human"])
        .expect(8);
    assert!(
        human.stdout.contains("? service   not read"),
        "{}",
        human.stdout
    );
    apply(&cloud, &dir).expect(0);
    assert_eq!(names_on_server(&cloud), ["orders"], "started, then created");
    // Nothing known to change: exit 0, the unread state said.
    let again = cloud
        .cloudctl(&["plan", "-f", &dir, "-o", "human"])
        .expect(0);
    assert!(again.stdout.starts_with("No changes"), "{}", again.stdout);
    assert!(
        again.stdout.contains("? service   not read"),
        "{}",
        again.stdout
    );
}

#[test]
fn the_resolve_hint_names_the_state_it_was_given_and_runs_as_shown() {
    let cloud = Cloud::start();
    let dir = directory(&cloud, "pipes", &[("orders.yaml", KAFKA_PIPE)]);
    let elsewhere = cloud.home().join("elsewhere.json");
    let elsewhere = elsewhere.to_str().unwrap();
    let with_state = |verb: &[&str]| {
        let mut args = verb.to_vec();
        args.extend(["-f", &dir, "--state", elsewhere, "-o", "json"]);
        cloud.cloudctl(&args)
    };
    cloud.inject(FaultRule::operation(OperationId::CreatePipe).then(Fault::hangup()));
    let failed = with_state(&["apply", "--yes"]).expect(7);
    let hint = stderr_error(&failed)["hint"].as_str().unwrap().to_string();
    assert!(
        hint.contains(&format!("--state {elsewhere}")),
        "the hint names the state: {hint}"
    );
    assert!(
        !Path::new(&dir).join(".cloudctl-state.json").exists(),
        "the directory's own state was never written"
    );
    // The hint's `--absent` command, run as shown, resolves the pending create in that state.
    let absent = hint
        .split('`')
        .find(|part| part.ends_with("--absent"))
        .unwrap_or_else(|| panic!("a command that ends with --absent: {hint}"));
    let words: Vec<&str> = absent.split_whitespace().skip(1).collect();
    cloud.cloudctl(&words).expect(0);
    with_state(&["apply", "--yes"]).expect(0);
    assert_eq!(names_on_server(&cloud), ["orders"]);
}
