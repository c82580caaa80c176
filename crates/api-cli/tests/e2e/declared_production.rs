//! Declared pipes against a server that answers as production may: in its own canonical forms
//! (column types, trimmed certificates, topic lists, enum case, upper-case UUIDs), accepting a second
//! pipe with one name, failing pipes, answering one pipe undecodably; a rotation rolled out one pipe
//! at a time and killed midway; a state written by v0.1.0; one apply per service.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use api_emulator::{EmulatorOptions, OperationId, PipeState, Timing};
use serde_json::{Value, json};

use crate::declared::{apply, plan, recorded_id, state, stderr_error};
use crate::support::{Cloud, KAFKA_PASSWORD, KAFKA_PIPE, POSTGRES_PIPE};

/// The four source kinds written the way people write them, which a database-backed server answers
/// otherwise: `decimal(18,2)`, `DateTime64(3,'UTC')`, a certificate ending in a newline, topics with
/// spaces, a lower-case compression, a lower-case endpoint UUID.
fn written_by_people(cloud: &Cloud) -> String {
    let kafka = "\
name: orders
source:
  kafka:
    brokers: b-1.kafka.example:9098
    topics: orders, returns ,refunds
    caCertificate: \"-----BEGIN CERTIFICATE-----\\nMIIB\\n-----END CERTIFICATE-----\\n\"
    reversePrivateEndpointIds: [0f9e8d7c-6b5a-4f3e-9d2c-1b0a9f8e7d6c]
    credentials: {username: reader, password: {env: KAFKA_PASSWORD}}
destination:
  database: default
  table: orders
  managedTable: true
  columns:
    - {name: id, type: 'decimal(18,2)'}
    - {name: at, type: \"DateTime64(3,'UTC')\"}
    - {name: note, type: 'nullable(String)'}
fieldMappings:
  - {sourceField: id, destinationField: id}
  - {sourceField: at, destinationField: at}
  - {sourceField: note, destinationField: note}
scaling: {replicas: 2}
";
    let storage = json!({
        "name": "backfill",
        "source": {"objectStorage": {"url": "https://bucket.example/events/*.csv.gz", "compression": "gzip",
                                     "isContinuous": true, "iamRole": "arn:aws:iam::123456789012:role/reader"}},
        "destination": {"database": "default", "table": "events", "managedTable": true,
                        "columns": [{"name": "c", "type": "Map(String,Array( Nullable(UInt8)))"}]},
        "fieldMappings": [{"sourceField": "c", "destinationField": "c"}],
    });
    let kinesis = "\
name: clicks
source:
  kinesis:
    streamName: clicks
    region: eu-west-1
    accessKey: {accessKeyId: AKIAEXAMPLE, secretKey: {env: KINESIS_SECRET_KEY}}
destination:
  database: web
  table: clicks
  managedTable: true
  columns:
    - {name: url, type: 'lowcardinality(string)'}
fieldMappings:
  - {sourceField: url, destinationField: url}
";
    for (file, text) in [
        ("pipes/orders.yaml", kafka.to_string()),
        ("pipes/backfill.json", storage.to_string()),
        ("pipes/clicks.yaml", kinesis.to_string()),
        ("pipes/crm.yaml", POSTGRES_PIPE.to_string()),
    ] {
        cloud.file(file, &text);
    }
    cloud.home().join("pipes").to_string_lossy().into_owned()
}

/// Replaces `from` by `to` in the file at `path` (an edit of a pipe file).
fn edit(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).expect("the file");
    assert!(text.contains(from), "{from:?} in {}", path.display());
    std::fs::write(path, text.replace(from, to)).expect("the file is written");
}

/// `(action, name)` of each change of a plan's JSON.
fn actions(run: &crate::support::Run) -> Vec<(String, String)> {
    run.json()["actions"]
        .as_array()
        .expect("actions")
        .iter()
        .map(|c| {
            (
                c["action"].as_str().unwrap().into(),
                c["name"].as_str().unwrap().into(),
            )
        })
        .collect()
}

/// Every state a pipe goes through but a failure: the plan shows no change in any of them.
fn assert_no_change_through_every_state(cloud: &Cloud, dir: &str) {
    for name in ["orders", "backfill", "clicks", "crm"] {
        let id = recorded_id(dir, name);
        for state in PipeState::KNOWN {
            let state = PipeState::from(*state);
            if state.is_failed() {
                continue;
            }
            cloud.force_pipe_state(&id, state.clone());
            let planned = plan(cloud, dir);
            assert_eq!(planned.code, 0, "{name} in {state}: {}", planned.stdout);
        }
        cloud.force_pipe_state(&id, PipeState::Running);
    }
}

#[test]
fn a_server_that_answers_in_its_own_forms_shows_no_change_after_apply_and_after_import() {
    let cloud = Cloud::canonical();
    let dir = written_by_people(&cloud);
    apply(&cloud, &dir).expect(0);
    // The server did rewrite what was sent.
    let orders = cloud
        .pipes()
        .into_iter()
        .find(|p| p.name == "orders")
        .unwrap();
    let answer = cloud
        .cloudctl(&["pipe", "get", &orders.id.to_string(), "-o", "json"])
        .expect(0)
        .json();
    assert_eq!(
        answer["destination"]["columns"][0]["type"], "Decimal(18, 2)",
        "{answer}"
    );
    assert_eq!(
        answer["source"]["kafka"]["topics"],
        "orders,returns,refunds"
    );
    let planned = plan(&cloud, &dir).expect(0);
    assert_eq!(planned.json()["actions"], json!([]));
    assert_no_change_through_every_state(&cloud, &dir);

    // The same pipes adopted into another directory from their exports.
    let imported = cloud.home().join("imported");
    std::fs::create_dir_all(&imported).unwrap();
    let imported = imported.to_string_lossy().into_owned();
    for name in ["orders", "backfill", "clicks", "crm"] {
        let id = recorded_id(&dir, name);
        let export = cloud.cloudctl(&["pipe", "export", &id]).expect(0);
        std::fs::write(
            Path::new(&imported).join(format!("{name}.yaml")),
            &export.stdout,
        )
        .unwrap();
    }
    // What the API never returns is added to the files, as the export's note says.
    // The Kafka credentials and the Kinesis access key are request-only: the export leaves them
    // out, and says so.
    edit(
        &Path::new(&imported).join("orders.yaml"),
        "  kafka:\n",
        "  kafka:\n    credentials: {username: reader, password: {env: KAFKA_PASSWORD}}\n",
    );
    edit(
        &Path::new(&imported).join("clicks.yaml"),
        "  kinesis:\n",
        "  kinesis:\n    accessKey: {accessKeyId: AKIAEXAMPLE, secretKey: {env: KINESIS_SECRET_KEY}}\n",
    );
    // The Postgres credentials the export reads from variables named for the pipe: the test's own.
    for (file, exported, given) in [
        (
            "crm.yaml",
            "{env: CRM_POSTGRES_PASSWORD}",
            "{env: POSTGRES_PASSWORD}",
        ),
        ("crm.yaml", "{env: CRM_POSTGRES_USERNAME}", "replicator"),
    ] {
        edit(&Path::new(&imported).join(file), exported, given);
    }
    assert_no_secret_in_state(&cloud, &dir);
    std::fs::remove_file(Path::new(&dir).join(".cloudctl-state.json")).unwrap();
    for name in ["orders", "backfill", "clicks", "crm"] {
        let id = orders_or(&cloud, name);
        let said = cloud
            .cloudctl(&["import", "-f", &imported, name, &id, "-o", "json"])
            .expect(0)
            .json();
        // The export is the pipe, but for the server's own spelling of what the SDK writes its
        // way (a UUID in upper case): the import says so, and records the pipe as it is.
        let paths: Vec<&str> = said["differences"]
            .as_array()
            .expect("differences")
            .iter()
            .map(|d| d["path"].as_str().unwrap())
            .collect();
        let spelled = if name == "orders" {
            vec!["source.kafka.reversePrivateEndpointIds[0]"]
        } else {
            vec![]
        };
        assert_eq!(paths, spelled, "{name}: {said}");
        assert!(
            state(&imported)["pipes"][name]["observed"].is_object(),
            "{name}: the answer is recorded"
        );
    }
    let planned = cloud.cloudctl(&["plan", "-f", &imported, "-o", "json"]);
    assert_eq!(planned.code, 0, "{}\n{}", planned.stdout, planned.stderr);
    assert_no_change_through_every_state(&cloud, &imported);
    assert_no_secret_in_state(&cloud, &imported);
}

/// Fails when a secret of the test stands in clear in the state file of `dir`.
#[track_caller]
fn assert_no_secret_in_state(cloud: &Cloud, dir: &str) {
    let text =
        std::fs::read_to_string(Path::new(dir).join(".cloudctl-state.json")).expect("a state");
    for secret in cloud.secrets() {
        assert!(!text.contains(&secret), "a secret in the state of {dir}");
    }
}

/// The id of the live pipe named `name` on the server.
fn orders_or(cloud: &Cloud, name: &str) -> String {
    cloud
        .pipes()
        .into_iter()
        .find(|p| p.name == name && !p.deleted)
        .map(|p| p.id.to_string())
        .expect("a live pipe of that name")
}

#[test]
fn a_file_edited_to_what_the_server_has_is_recorded_and_drift_it_leaves_out_is_shown() {
    let cloud = Cloud::canonical();
    let dir = written_by_people(&cloud);
    apply(&cloud, &dir).expect(0);
    let orders = recorded_id(&dir, "orders");

    // A console edit of a declared member: a replace, naming it.
    cloud.patch_pipe(&orders, json!({"scaling": {"replicas": 3}}));
    let planned = plan(&cloud, &dir).expect(8);
    assert_eq!(actions(&planned), [("replace".into(), "orders".into())]);
    assert_eq!(
        planned.json()["actions"][0]["changes"][0]["path"],
        "scaling.replicas"
    );

    // The file accepts it: only the state changes, and nothing is sent but reads.
    edit(
        &cloud.home().join("pipes/orders.yaml"),
        "replicas: 2",
        "replicas: 3",
    );
    let planned = plan(&cloud, &dir).expect(8);
    assert_eq!(actions(&planned), [("record".into(), "orders".into())]);
    let human = cloud
        .cloudctl(&["plan", "-f", &dir, "-o", "human"])
        .expect(8);
    assert!(
        human.stdout.contains("= record    orders"),
        "{}",
        human.stdout
    );
    assert!(human.stdout.contains("recorded only"), "{}", human.stdout);
    cloud.clear_requests();
    apply(&cloud, &dir).expect(0);
    let writes: Vec<_> = cloud
        .requests()
        .into_iter()
        .filter(|r| r.method != "GET")
        .map(|r| (r.method, r.path))
        .collect();
    assert!(writes.is_empty(), "the pipe was not touched: {writes:?}");
    assert_eq!(recorded_id(&dir, "orders"), orders);
    plan(&cloud, &dir).expect(0);

    // A console edit of a member the file leaves out: shown, not acted on.
    cloud.patch_pipe(&orders, json!({"scaling": {"concurrency": 3}}));
    let planned = plan(&cloud, &dir).expect(0);
    let drift = &planned.json()["drift"][0];
    assert_eq!(drift["name"], "orders", "{}", planned.stdout);
    assert_eq!(drift["changes"][0]["path"], "scaling.concurrency");
    assert_eq!(drift["changes"][0]["effect"], "none");
    let human = cloud
        .cloudctl(&["plan", "-f", &dir, "-o", "human"])
        .expect(0);
    assert!(
        human.stdout.contains("~ drift     orders"),
        "{}",
        human.stdout
    );
    assert!(human.stdout.contains("not acted on"), "{}", human.stdout);
}

#[test]
fn a_failed_pipe_is_recreated_and_an_unreadable_answer_blocks_only_its_pipe() {
    let cloud = Cloud::production();
    let dir = written_by_people(&cloud);
    std::fs::remove_file(cloud.home().join("pipes/crm.yaml")).unwrap();
    apply(&cloud, &dir).expect(0);

    let orders = recorded_id(&dir, "orders");
    cloud.force_pipe_state(&orders, PipeState::Failed);
    let planned = plan(&cloud, &dir).expect(8);
    assert_eq!(actions(&planned), [("recreate".into(), "orders".into())]);
    let note = planned.json()["actions"][0]["note"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(note.contains("is Failed"), "{note}");
    apply(&cloud, &dir).expect(0);
    let now = recorded_id(&dir, "orders");
    assert_ne!(now, orders, "a new pipe");
    let live: Vec<_> = cloud
        .pipes()
        .into_iter()
        .filter(|p| p.name == "orders" && !p.deleted)
        .collect();
    assert_eq!(live.len(), 1, "the failed pipe was deleted: {live:?}");
    plan(&cloud, &dir).expect(0);

    // One of three answers cannot be decoded; the others are planned (one has a change).
    let clicks = recorded_id(&dir, "clicks");
    cloud.set_raw_overlay(&clicks, json!({"scaling": {"replicas": "three"}}));
    edit(
        &cloud.home().join("pipes/orders.yaml"),
        "replicas: 2",
        "replicas: 4",
    );
    let planned = plan(&cloud, &dir).expect(9);
    let shown = planned.json();
    let mut planned_actions = actions(&planned);
    planned_actions.sort();
    assert_eq!(
        planned_actions,
        [
            ("replace".into(), "orders".into()),
            ("unreadable".into(), "clicks".into())
        ],
        "{shown}"
    );
    assert_eq!(shown["summary"]["unchanged"], 1, "backfill");
    let error = stderr_error(&planned);
    assert_eq!(error["code"], "UNREADABLE_PIPE", "{error}");
    assert_eq!(error["exitCode"], 9, "{error}");
    assert!(
        error["message"].as_str().unwrap().contains("clicks"),
        "{error}"
    );
    // An apply does the rest, and leaves the unreadable pipe alone.
    let applied = apply(&cloud, &dir).expect(9);
    assert!(
        applied.stdout.contains("\"unreadable\""),
        "{}",
        applied.stdout
    );
    assert_eq!(recorded_id(&dir, "clicks"), clicks);
    assert!(
        cloud
            .pipes()
            .iter()
            .any(|p| p.id.to_string() == clicks && !p.deleted)
    );
}

/// Six Kafka pipes sharing one password.
/// The emulator of the rotation tests: 100 ms for each pipe transition (five samples of the
/// server each), canonical answers, a second pipe of a name taken as production may.
fn rotation_cloud() -> Cloud {
    let timing = Timing {
        service_transition_ms: 0,
        pipe_provisioning_ms: 100,
        pipe_phase_ms: 100,
        pipe_delete_ms: 100,
    };
    Cloud::with(
        EmulatorOptions::for_tests()
            .timing(timing)
            .canonical(true)
            .duplicate_names(true),
    )
}

fn six_pipes(cloud: &Cloud) -> String {
    for i in 0..6 {
        cloud.file(
            &format!("six/p{i}.yaml"),
            &KAFKA_PIPE.replace("name: orders", &format!("name: p{i}")),
        );
    }
    cloud.home().join("six").to_string_lossy().into_owned()
}

/// How many of the six declared pipes are missing from the server, or not Running (a deletion under
/// way counts as down), now; and whether any name has two live pipes.
fn down_now(cloud: &Cloud) -> (usize, bool) {
    let pipes = cloud.pipes();
    let mut down = 0;
    let mut duplicate = false;
    for i in 0..6 {
        let name = format!("p{i}");
        let live: Vec<_> = pipes
            .iter()
            .filter(|p| p.name == name && !p.deleted)
            .collect();
        duplicate |= live.len() > 1;
        if !live.iter().any(|p| p.state == PipeState::Running) {
            down += 1;
        }
    }
    (down, duplicate)
}

/// Runs `apply` with a rotated password as a process, sampling the server every 20 ms until it
/// exits or `kill_after` downs have been seen; answers the most pipes seen down at once.
fn rotate(
    cloud: &Cloud,
    dir: &str,
    password: &str,
    kill_after: Option<usize>,
) -> (usize, Option<i32>) {
    let mut running = cloud
        .process()
        .env("KAFKA_PASSWORD", password)
        .args([
            "apply",
            "-f",
            dir,
            "--yes",
            "-o",
            "json",
            "--max-unavailable",
            "1",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("cloudctl runs");
    let started = Instant::now();
    let (mut most, mut downs_seen, mut was_down) = (0, 0, false);
    loop {
        let (down, duplicate) = down_now(cloud);
        assert!(!duplicate, "a name has two live pipes");
        most = most.max(down);
        if down > 0 && !was_down {
            downs_seen += 1;
        }
        was_down = down > 0;
        if kill_after.is_some_and(|n| downs_seen >= n) {
            running.kill().expect("SIGKILL");
            running.wait().unwrap();
            return (most, None);
        }
        if let Some(status) = running.try_wait().unwrap() {
            return (most, status.code());
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the apply ends"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_rotated_password_replaces_six_pipes_one_at_a_time_and_a_killed_rollout_is_finished() {
    let cloud = rotation_cloud();
    let dir = six_pipes(&cloud);
    apply(&cloud, &dir).expect(0);
    assert_eq!(down_now(&cloud), (0, false));

    let planned = cloud.run(
        cloud
            .command()
            .env("KAFKA_PASSWORD", "rotated-pa55word-1")
            .args(["plan", "-f", &dir, "-o", "json"]),
    );
    assert_eq!(planned.code, 8);
    assert_eq!(actions(&planned).len(), 6, "six replaces");

    let (most, code) = rotate(&cloud, &dir, "rotated-pa55word-1", None);
    assert_eq!(code, Some(0));
    assert_eq!(most, 1, "at most one of the six down at any moment");
    assert_eq!(down_now(&cloud), (0, false));

    // A second rotation, killed in the middle of its second replace.
    let (most, _) = rotate(&cloud, &dir, "rotated-pa55word-2", Some(2));
    assert!(most <= 1, "{most} down at once before the kill");
    // A replace under way: its record marked, and its create perhaps pending (one name).
    let recorded = state(&dir);
    let mut under_way: Vec<&String> = recorded["pipes"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, p)| p.get("replacing").is_some())
        .map(|(name, _)| name)
        .chain(recorded["pending"].as_object().unwrap().keys())
        .collect();
    under_way.sort();
    under_way.dedup();
    assert!(under_way.len() <= 1, "one replace under way: {recorded}");
    let (most, code) = rotate(&cloud, &dir, "rotated-pa55word-2", None);
    assert_eq!(code, Some(0), "the next apply finishes it");
    assert!(most <= 1, "{most} down at once");
    assert_eq!(
        down_now(&cloud),
        (0, false),
        "all six Running, no duplicate"
    );
    let live = cloud.pipes().into_iter().filter(|p| !p.deleted).count();
    assert_eq!(live, 6);
    cloud
        .run(
            cloud
                .command()
                .env("KAFKA_PASSWORD", "rotated-pa55word-2")
                .args(["plan", "-f", &dir]),
        )
        .expect(0);
    let _ = KAFKA_PASSWORD;
}

#[test]
fn a_state_written_by_v0_1_0_keeps_working_and_gains_its_observed_forms() {
    let cloud = Cloud::start();
    let dir = cloud.home().join("pipes");
    let fixture = include_str!("fixtures/state-v0.1.0.json");
    // The same four pipes the fixture was recorded for, made again on this emulator.
    let source = PathBuf::from(crate::declared::all_kinds(&cloud));
    let mut text = fixture.replace("{{API_URL}}", cloud.base_url().as_str());
    for name in ["orders", "clicks", "backfill", "crm"] {
        let file = std::fs::read_dir(&source)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.file_stem().is_some_and(|s| s == name))
            .unwrap();
        let created = cloud
            .cloudctl(&[
                "pipe",
                "create",
                "--file",
                file.to_str().unwrap(),
                "-o",
                "json",
            ])
            .expect(0)
            .json();
        text = text.replace(
            &format!("{{{{ID_{}}}}}", name.to_uppercase()),
            created["id"].as_str().unwrap(),
        );
    }
    std::fs::rename(&source, &dir).unwrap();
    std::fs::write(dir.join(".cloudctl-state.json"), text).unwrap();
    let dir = dir.to_string_lossy().into_owned();

    let planned = plan(&cloud, &dir).expect(0);
    assert_eq!(
        planned.json()["summary"]["unchanged"],
        4,
        "{}",
        planned.stdout
    );
    assert_eq!(state(&dir)["version"], 1, "a plan writes nothing");
    // The next apply records what the server answered, and touches no pipe.
    cloud.clear_requests();
    apply(&cloud, &dir).expect(0);
    assert!(
        cloud
            .requests()
            .iter()
            .all(|r| r.operation_id != Some(OperationId::CreatePipe))
    );
    let recorded = state(&dir);
    assert_eq!(recorded["version"], 4);
    assert!(
        recorded["lineage"].as_str().is_some_and(|l| l.len() == 36),
        "a state of an older version gets its lineage at its next write: {recorded}"
    );
    for name in ["orders", "clicks", "backfill", "crm"] {
        assert!(
            recorded["pipes"][name]["observed"].is_object(),
            "{name}: {recorded}"
        );
    }
    plan(&cloud, &dir).expect(0);
}

#[test]
fn two_directories_of_one_service_cannot_apply_at_once() {
    let cloud = Cloud::start();
    let first = cloud.home().join("first");
    let second = cloud.home().join("second");
    cloud.file("first/orders.yaml", KAFKA_PIPE);
    cloud.file(
        "second/other.yaml",
        &KAFKA_PIPE.replace("name: orders", "name: other"),
    );
    // The first apply is held in its create by a slow answer.
    cloud.inject(
        api_emulator::FaultRule::operation(OperationId::CreatePipe)
            .then(api_emulator::Fault::delay(Duration::from_secs(3))),
    );
    let mut holding = cloud
        .process()
        .args([
            "apply",
            "-f",
            first.to_str().unwrap(),
            "--yes",
            "-o",
            "json",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    // Its intent is recorded just before the create is sent.
    while !std::fs::read_to_string(first.join(".cloudctl-state.json"))
        .is_ok_and(|text| text.contains("\"pending\": {\n    \"orders\""))
    {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the first apply creates"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let refused = cloud
        .cloudctl(&[
            "apply",
            "-f",
            second.to_str().unwrap(),
            "--yes",
            "-o",
            "json",
        ])
        .expect(1);
    let error = refused.error();
    assert_eq!(error["code"], "STATE_LOCKED", "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("another apply holds service"), "{message}");
    assert!(message.contains("first"), "the holder is named: {message}");
    assert!(holding.wait().unwrap().success());
    assert!(
        cloud.pipes().iter().all(|p| p.name != "other"),
        "nothing was created"
    );
    cloud
        .cloudctl(&[
            "apply",
            "-f",
            second.to_str().unwrap(),
            "--yes",
            "-o",
            "json",
        ])
        .expect(0);
}

/// A pipe file whose column type is written as people write it (`decimal(18,2)`), which the
/// canonical server answers as `Decimal(18, 2)`.
const CANONICAL_KAFKA: &str = "\
name: orders
source:
  kafka:
    brokers: b-1.kafka.example:9098
    topics: orders
    credentials: {username: reader, password: {env: KAFKA_PASSWORD}}
destination:
  database: default
  table: orders
  managedTable: true
  columns:
    - {name: id, type: 'decimal(18,2)'}
fieldMappings:
  - {sourceField: id, destinationField: id}
";

/// `cloudctl apply` of `dir` as a process of its own, its standard error kept.
fn spawn_apply_keeping_stderr(cloud: &Cloud, dir: &str) -> std::process::Child {
    let mut apply = cloud.process();
    apply
        .args(["apply", "-f", dir, "--yes", "-o", "json"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    apply.spawn().expect("cloudctl starts")
}

/// Sends `signal` (`-INT`, `-TERM`) to `child`.
fn send(child: &std::process::Child, signal: &str) {
    let sent = std::process::Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(sent.success());
}

/// Waits for `child` to end (at most `within`): its exit code, its standard error and how long it
/// took from the call.
fn ended(mut child: std::process::Child, within: Duration) -> (i32, String, Duration) {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut stderr = String::new();
            if let Some(mut pipe) = child.stderr.take() {
                use std::io::Read as _;
                pipe.read_to_string(&mut stderr).unwrap();
            }
            return (status.code().unwrap_or(-1), stderr, started.elapsed());
        }
        if started.elapsed() > within {
            let _ = child.kill();
            panic!("cloudctl did not end within {within:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Polls the state file of `dir` until `name` is recorded with an id (the create answered).
fn until_recorded(dir: &str, name: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let text = std::fs::read_to_string(Path::new(dir).join(".cloudctl-state.json"))
            .unwrap_or_default();
        let recorded: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        if recorded["pipes"][name]["id"].is_string() {
            return;
        }
        assert!(Instant::now() < deadline, "{name} never recorded: {text}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn ctrl_c_while_a_created_pipe_provisions_records_it_and_the_next_plan_is_no_change() {
    // The pipe provisions for a minute: the apply is waiting for Running when it is interrupted.
    let mut timing = Timing::INSTANT;
    timing.pipe_provisioning_ms = 60_000;
    let cloud = Cloud::with(EmulatorOptions::for_tests().canonical(true).timing(timing));
    cloud.file("pipes/orders.yaml", CANONICAL_KAFKA);
    let dir = cloud.home().join("pipes").to_string_lossy().into_owned();
    let running = spawn_apply_keeping_stderr(&cloud, &dir);
    until_recorded(&dir, "orders");
    send(&running, "-INT");
    let (code, stderr, took) = ended(running, Duration::from_secs(20));
    assert_eq!(code, 130, "{stderr}");
    assert!(
        took < Duration::from_secs(10),
        "the wait was cut short, not waited out: {took:?}"
    );
    assert!(
        stderr.contains("Stopping") && stderr.contains("\"INTERRUPTED\""),
        "{stderr}"
    );
    let recorded = state(&dir);
    assert!(
        recorded["pipes"]["orders"]["observed"].is_object(),
        "the created pipe is recorded with the form the server answered: {recorded}"
    );
    assert!(
        recorded["pending"].as_object().unwrap().is_empty(),
        "{recorded}"
    );
    // The server wrote `Decimal(18, 2)`: not a change, and nothing is created again.
    cloud.clear_requests();
    let planned = plan(&cloud, &dir);
    planned.expect(0);
    apply(&cloud, &dir).expect(0);
    assert_eq!(
        cloud
            .requests()
            .iter()
            .filter(|r| r.operation_id == Some(OperationId::CreatePipe))
            .count(),
        0
    );
    assert_eq!(cloud.pipes().len(), 1);
}

#[test]
fn a_second_ctrl_c_exits_at_once_and_a_record_without_its_answer_adopts_it() {
    let mut timing = Timing::INSTANT;
    timing.pipe_provisioning_ms = 60_000;
    let cloud = Cloud::with(EmulatorOptions::for_tests().canonical(true).timing(timing));
    cloud.file("pipes/orders.yaml", CANONICAL_KAFKA);
    let dir = cloud.home().join("pipes").to_string_lossy().into_owned();
    // Every read is answered after 30 s: the stopped apply's one read for the pipe's form hangs.
    cloud.inject(
        api_emulator::FaultRule::operation(OperationId::GetPipe)
            .then(api_emulator::Fault::delay(Duration::from_secs(30)).always()),
    );
    let running = spawn_apply_keeping_stderr(&cloud, &dir);
    until_recorded(&dir, "orders");
    send(&running, "-TERM");
    std::thread::sleep(Duration::from_millis(500));
    send(&running, "-TERM");
    let (code, stderr, took) = ended(running, Duration::from_secs(20));
    assert_eq!(code, 143, "{stderr}");
    assert!(took < Duration::from_secs(5), "at once: {took:?}");
    assert!(stderr.contains("Exiting at once"), "{stderr}");
    cloud.clear_faults();
    let recorded = state(&dir);
    assert!(
        recorded["pipes"]["orders"]["id"].is_string()
            && recorded["pipes"]["orders"].get("observed").is_none(),
        "recorded by its id, never read: {recorded}"
    );
    // The file has not changed since the create: the answer is adopted, not compared with the
    // file (`decimal(18,2)` against `Decimal(18, 2)` would replace the pipe just made).
    plan(&cloud, &dir).expect(0);
    apply(&cloud, &dir).expect(0);
    assert!(
        state(&dir)["pipes"]["orders"]["observed"].is_object(),
        "the apply recorded the adopted form"
    );
    assert_eq!(cloud.pipes().len(), 1, "nothing was created again");
}

#[test]
fn a_server_that_respells_its_answers_later_shows_no_change_but_a_console_edit_is_drift() {
    let cloud = Cloud::canonical();
    let dir = written_by_people(&cloud);
    apply(&cloud, &dir).expect(0);
    let (orders, backfill) = (recorded_id(&dir, "orders"), recorded_id(&dir, "backfill"));
    let answer = cloud
        .cloudctl(&["pipe", "get", &orders, "-o", "json"])
        .expect(0)
        .json();
    let endpoint = answer["source"]["kafka"]["reversePrivateEndpointIds"][0]
        .as_str()
        .unwrap()
        .to_string();
    // An upgrade of the server: whitespace inside the types, the columns in another order, a
    // UUID's letter case, the compression in capitals.
    cloud.set_raw_overlay(
        &orders,
        json!({
            "destination": {"columns": [
                {"name": "note", "type": "Nullable( String )"},
                {"name": "at", "type": "DateTime64(3,'UTC')"},
                {"name": "id", "type": "Decimal(18,2)"},
            ]},
            "source": {"kafka": {"reversePrivateEndpointIds": [endpoint.to_ascii_lowercase()]}},
        }),
    );
    cloud.set_raw_overlay(
        &backfill,
        json!({"source": {"objectStorage": {"compression": "GZIP"}}}),
    );
    let planned = plan(&cloud, &dir).expect(0).json();
    assert_eq!(planned["actions"], json!([]), "{planned}");
    let respelled: Vec<(&str, Vec<&str>)> = planned["respelled"]
        .as_array()
        .expect("respelled pipes are shown")
        .iter()
        .map(|pipe| {
            let paths = pipe["changes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["path"].as_str().unwrap())
                .collect();
            (pipe["name"].as_str().unwrap(), paths)
        })
        .collect();
    // The canonical server writes the UUID in capitals; the overlay in small letters.
    let mut orders_paths = vec![
        "destination.columns[name=id].type",
        "destination.columns[name=at].type",
        "destination.columns[name=note].type",
        "source.kafka.reversePrivateEndpointIds",
    ];
    orders_paths.sort_unstable();
    let mut respelled_sorted: Vec<(&str, Vec<&str>)> = respelled
        .into_iter()
        .map(|(name, mut paths)| {
            paths.sort_unstable();
            (name, paths)
        })
        .collect();
    respelled_sorted.sort();
    // The canonical server writes the compression in capitals already: that overlay changes
    // nothing, and backfill shows nothing at all.
    assert_eq!(respelled_sorted, [("orders", orders_paths)]);
    let human = cloud
        .cloudctl(&["plan", "-f", &dir, "-o", "human"])
        .expect(0);
    assert!(
        human.stdout.contains("= respelled orders")
            && human
                .stdout
                .contains("written another way by the server: no change"),
        "{}",
        human.stdout
    );
    // An apply records the new forms and sends nothing; the next plan has nothing to say.
    cloud.clear_requests();
    apply(&cloud, &dir).expect(0);
    assert!(
        cloud.requests().iter().all(|r| r.method == "GET"),
        "only reads: {:?}",
        cloud
            .requests()
            .iter()
            .map(|r| (&r.method, &r.path))
            .collect::<Vec<_>>()
    );
    let planned = plan(&cloud, &dir).expect(0).json();
    assert_eq!(planned["respelled"], json!([]), "{planned}");
    // A console edit of a declared member is still drift: replaced.
    cloud.set_raw_overlay(
        &backfill,
        json!({"source": {"objectStorage": {"compression": "zstd"}}}),
    );
    let planned = plan(&cloud, &dir).expect(8).json();
    assert_eq!(planned["actions"][0]["action"], "replace", "{planned}");
    assert_eq!(
        planned["actions"][0]["changes"][0]["path"],
        "source.objectStorage.compression"
    );
    assert_eq!(
        planned["actions"][0]["changes"].as_array().map(Vec::len),
        Some(1)
    );
}

#[test]
fn a_create_of_a_rotation_refused_or_pending_counts_as_down_and_a_stopped_service_deletes_nothing()
{
    let cloud = rotation_cloud();
    let dir = six_pipes(&cloud);
    apply(&cloud, &dir).expect(0);
    // The rotation's second create is refused: its pipe, deleted, stays down.
    cloud.inject(
        api_emulator::FaultRule::operation(OperationId::CreatePipe)
            .then(api_emulator::Fault::delay(Duration::ZERO).times(1))
            .then(api_emulator::Fault::status(422).times(1)),
    );
    let (most, code) = rotate(&cloud, &dir, "rotated-pa55word-1", None);
    assert_eq!(code, Some(1), "the refused create fails the apply");
    assert!(most <= 1, "{most} down at once");
    assert_eq!(down_now(&cloud), (1, false), "the refused one is down");
    let recorded = state(&dir);
    let marked: Vec<&String> = recorded["pipes"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, p)| p.get("replacing").is_some())
        .map(|(name, _)| name)
        .collect();
    assert_eq!(marked.len(), 1, "its record keeps its mark: {recorded}");
    cloud.clear_faults();
    // The next apply finishes it before it takes any other down.
    let (most, code) = rotate(&cloud, &dir, "rotated-pa55word-1", None);
    assert_eq!(code, Some(0));
    assert!(most <= 1, "{most} down at once");
    assert_eq!(down_now(&cloud), (0, false));

    // A create of a rotation whose outcome is unknown (a 504, nothing made): its pipe is down
    // while the create is pending, and counts as down in the next apply, which replaces no other.
    cloud.inject(
        api_emulator::FaultRule::operation(OperationId::CreatePipe)
            .then(api_emulator::Fault::delay(Duration::ZERO).times(1))
            .then(api_emulator::Fault::status(504).times(1)),
    );
    let (most, code) = rotate(&cloud, &dir, "rotated-pa55word-3", None);
    assert_eq!(code, Some(7), "the unknown outcome is pending");
    assert!(most <= 1, "{most} down at once");
    cloud.clear_faults();
    let (most, code) = rotate(&cloud, &dir, "rotated-pa55word-3", None);
    assert_eq!(code, Some(7), "the pending create still blocks its name");
    assert!(most <= 1, "{most} down at once with a create pending");
    let pending: Vec<String> = state(&dir)["pending"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(pending.len(), 1);
    cloud
        .cloudctl(&["state", "resolve", "-f", &dir, &pending[0], "--absent"])
        .expect(0);
    let (most, code) = rotate(&cloud, &dir, "rotated-pa55word-3", None);
    assert_eq!(code, Some(0), "resolved, the rotation finishes");
    assert!(most <= 1, "{most} down at once");
    assert_eq!(down_now(&cloud), (0, false));

    // On a stopped service a replace would delete, then have its create refused: nothing is
    // deleted.
    cloud.set_service_state("stopped");
    cloud.clear_requests();
    let (_, code) = rotate(&cloud, &dir, "rotated-pa55word-2", None);
    assert_eq!(code, Some(1));
    assert!(
        cloud
            .requests()
            .iter()
            .all(|r| r.operation_id != Some(OperationId::DeletePipe)),
        "no delete was sent"
    );
    assert_eq!(cloud.pipes().iter().filter(|p| !p.deleted).count(), 6);
    let refused = cloud.run(
        cloud
            .command()
            .env("KAFKA_PASSWORD", "rotated-pa55word-2")
            .args(["apply", "-f", &dir, "--yes", "-o", "human"]),
    );
    assert_eq!(refused.code, 1);
    assert!(
        refused
            .stdout
            .contains("the service is stopped: a replace deletes before it creates"),
        "{}",
        refused.stdout
    );
}

#[test]
fn an_export_reads_a_signed_url_from_the_environment_and_reimports_with_no_change() {
    let cloud = Cloud::canonical();
    let url = "https://acct.blob.core.windows.net/c/*.csv?sv=2024-05-04&se=2030-01-01&sig=c2lnbmF0dXJlLW9mLXRoZS1zYXM%3D";
    cloud.file(
        "sas/backfill.yaml",
        "\
name: backfill
source:
  objectStorage: {url: {env: SAS_URL}, isContinuous: true, compression: gzip}
destination: {database: d, table: t, managedTable: true, columns: [{name: c, type: String}]}
fieldMappings: [{sourceField: c, destinationField: c}]
",
    );
    let dir = cloud.home().join("sas").to_string_lossy().into_owned();
    cloud
        .run(
            cloud
                .command()
                .env("SAS_URL", url)
                .args(["apply", "-f", &dir, "--yes", "-o", "json"]),
        )
        .expect(0);
    let id = recorded_id(&dir, "backfill");
    let export = cloud.cloudctl(&["pipe", "export", &id]).expect(0);
    assert!(
        !export.stdout.contains("[REDACTED]") && !export.stdout.contains("c2lnbmF0dXJl"),
        "{}",
        export.stdout
    );
    assert!(
        export
            .stdout
            .contains("url: {env: BACKFILL_OBJECT_STORAGE_URL}"),
        "{}",
        export.stdout
    );
    assert!(
        export
            .stderr
            .contains("source.objectStorage.url holds a credential")
            && export.stderr.contains("BACKFILL_OBJECT_STORAGE_URL"),
        "{}",
        export.stderr
    );
    // The exported file, imported into another directory with the variable set: no change.
    std::fs::create_dir_all(cloud.home().join("again")).unwrap();
    let again = cloud.file("again/backfill.yaml", &export.stdout);
    let again = Path::new(&again)
        .parent()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let with_url = |args: &[&str]| {
        cloud.run(
            cloud
                .command()
                .env("BACKFILL_OBJECT_STORAGE_URL", url)
                .args(args),
        )
    };
    let imported = with_url(&["import", "-f", &again, "backfill", &id, "-o", "json"]).expect(0);
    assert_eq!(
        imported.json()["differences"],
        json!([]),
        "{}",
        imported.stdout
    );
    with_url(&["plan", "-f", &again, "-o", "json"]).expect(0);
    // Edited to what an older export showed, the file is refused, naming the member.
    cloud.file(
        "again/backfill.yaml",
        &export.stdout.replace(
            "{env: BACKFILL_OBJECT_STORAGE_URL}",
            "'https://acct.blob.core.windows.net/c/*.csv?sv=2024-05-04&sig=[REDACTED]'",
        ),
    );
    let refused = with_url(&["plan", "-f", &again, "-o", "json"]).expect(2);
    assert!(
        refused.stderr.contains("source.objectStorage.url")
            && refused.stderr.contains("holds [REDACTED]"),
        "{}",
        refused.stderr
    );
}

#[test]
fn a_replace_waits_until_a_deleted_pipe_frees_its_name_and_ends_running() {
    // The production delete: acknowledged at once (404), the name held until the teardown (2 s).
    let timing = Timing {
        service_transition_ms: 0,
        pipe_provisioning_ms: 0,
        pipe_phase_ms: 0,
        pipe_delete_ms: 2000,
    };
    let cloud = Cloud::with(
        EmulatorOptions::for_tests()
            .timing(timing)
            .delete_acknowledged_first(true),
    );
    let dir = six_pipes(&cloud);
    // One pipe is enough: the others are left out.
    for i in 1..6 {
        std::fs::remove_file(Path::new(&dir).join(format!("p{i}.yaml"))).unwrap();
    }
    apply(&cloud, &dir).expect(0);
    let file = Path::new(&dir).join("p0.yaml");
    edit(&file, "replicas: 2", "replicas: 3");
    cloud.clear_requests();
    let applied = apply(&cloud, &dir).expect(0);
    assert_eq!(
        applied.json()["results"]["results"][0]["result"],
        "done",
        "{}",
        applied.stdout
    );
    let creates: Vec<u16> = cloud
        .requests()
        .iter()
        .filter(|r| r.operation_id == Some(OperationId::CreatePipe))
        .map(|r| r.status)
        .collect();
    assert!(
        creates.len() >= 2 && creates[..creates.len() - 1].iter().all(|s| *s == 409),
        "refused while the name was held, then made: {creates:?}"
    );
    assert_eq!(creates.last(), Some(&200));
    let recorded = state(&dir);
    assert!(
        recorded["pending"].as_object().unwrap().is_empty(),
        "{recorded}"
    );
    assert!(
        recorded["pipes"]["p0"].get("replacing").is_none(),
        "the replace is finished: {recorded}"
    );
    let live: Vec<_> = cloud.pipes().into_iter().filter(|p| !p.deleted).collect();
    assert_eq!(live.len(), 1);
    assert_eq!(live[0].state, PipeState::Running);
    plan(&cloud, &dir).expect(0);
}
