//! `cloudctl pipe create|get|settings|delete|wait|export` against the emulator.

use api_emulator::{EmulatorOptions, PipeState, Timing};

use crate::support::{Cloud, KAFKA_PIPE, POSTGRES_PIPE};

#[test]
fn a_pipe_goes_through_its_life_in_both_output_modes() {
    let cloud = Cloud::start();
    let file = cloud.file("pipe.yaml", KAFKA_PIPE);

    let created = cloud
        .cloudctl(&["pipe", "create", "-f", &file, "-o", "json"])
        .expect(0)
        .json();
    let id = created["id"].as_str().expect("an id").to_string();
    assert_eq!(created["name"], "orders");
    assert_eq!(created["serviceId"], cloud.service("running"));
    assert_eq!(
        created["source"]["kafka"]["brokers"],
        "b-1.kafka.emulator.local:9098"
    );
    assert_eq!(created["destination"]["columns"][1]["name"], "amount");
    assert_eq!(created["scaling"]["replicas"], 2);
    assert!(created["state"].is_string());

    let got = cloud
        .cloudctl(&["pipe", "get", &id, "-o", "json"])
        .expect(0)
        .json();
    assert_eq!(got["id"], id.as_str());
    assert_eq!(got["fieldMappings"][0]["sourceField"], "id");
    let shown = cloud
        .cloudctl(&["pipe", "get", &id, "-o", "human"])
        .expect(0)
        .stdout;
    for expected in [
        format!("ID           {id}"),
        "Name         orders".to_string(),
        "Source       kafka: topics orders from b-1.kafka.emulator.local:9098".to_string(),
        "Destination  default.orders (managed table)".to_string(),
        "Mappings     id -> id, amount -> amount".to_string(),
    ] {
        assert!(shown.contains(&expected), "{expected:?} in\n{shown}");
    }
    assert!(
        !shown.contains("Some(") && !shown.contains("None"),
        "{shown}"
    );

    let settings = cloud
        .cloudctl(&["pipe", "settings", &id, "-o", "json"])
        .expect(0)
        .json();
    assert_eq!(settings["db_max_threads"], 8);
    let settings = cloud
        .cloudctl(&["pipe", "settings", &id, "-o", "human"])
        .expect(0)
        .stdout;
    assert!(settings.starts_with("SETTING"), "{settings}");
    assert!(settings.contains("db_max_threads"), "{settings}");

    let waited = cloud
        .cloudctl(&["pipe", "wait", &id, "--state", "running", "-o", "human"])
        .expect(0)
        .stdout;
    assert!(waited.contains("State        Running"), "{waited}");
    let steady = cloud
        .cloudctl(&["pipe", "wait", &id, "-o", "json"])
        .expect(0)
        .json();
    assert_eq!(steady["state"], "Running");

    let deleted = cloud
        .cloudctl(&[
            "pipe",
            "delete",
            &id,
            "--wait",
            "-o",
            "json",
            "--no-rate-limit",
        ])
        .expect(0)
        .json();
    assert_eq!(
        deleted,
        serde_json::json!({"id": id, "deleted": true, "gone": true})
    );
    let gone = cloud
        .cloudctl(&["pipe", "wait", &id, "--gone", "-o", "human"])
        .expect(0);
    assert_eq!(gone.stdout, format!("Pipe {id} is gone.\n"));
    let again = cloud
        .cloudctl(&["pipe", "delete", &id, "--if-exists", "-o", "human"])
        .expect(0);
    assert_eq!(again.stdout, format!("Pipe {id} did not exist.\n"));
    let again = cloud
        .cloudctl(&["pipe", "delete", &id, "--if-exists", "-o", "json"])
        .expect(0);
    assert_eq!(again.json()["deleted"], false);
}

#[test]
fn create_and_wait_shows_the_running_pipe() {
    let cloud = Cloud::start();
    let events = |name: &str| {
        serde_json::to_string(&serde_json::json!({
            "name": name,
            "source": {"kinesis": {"streamName": "clickstream", "region": "eu-west-1"}},
            "destination": {"database": "default", "table": "events", "managedTable": true,
                            "columns": [{"name": "id", "type": "String"}]},
            "fieldMappings": [{"sourceField": "id", "destinationField": "id"}]
        }))
        .unwrap()
    };
    let file = cloud.file("pipe.json", &events("events"));
    let human = cloud
        .cloudctl(&[
            "pipe",
            "create",
            "--file",
            &file,
            "--wait",
            "-o",
            "human",
            "--no-rate-limit",
        ])
        .expect(0)
        .stdout;
    assert!(human.contains("State        Running"), "{human}");
    assert!(
        human.contains("Source       kinesis: stream clickstream in eu-west-1"),
        "{human}"
    );

    // A second pipe needs its own name (the emulator refuses a duplicate with 409).
    let file = cloud.file("pipe.json", &events("events-2"));
    let json = cloud
        .cloudctl(&[
            "pipe",
            "create",
            "--file",
            &file,
            "--wait",
            "Running",
            "-o",
            "json",
            "--no-rate-limit",
        ])
        .expect(0)
        .json();
    assert_eq!(json["state"], "Running");
    assert_eq!(json["source"]["kinesis"]["streamName"], "clickstream");
}

#[test]
fn a_connection_string_read_back_is_never_shown() {
    let cloud = Cloud::start();
    let file = cloud.file(
        "blobs.yaml",
        "name: blobs\nsource:\n  objectStorage:\n    connectionString: {env: AZURE_CONNECTION_STRING}\n    azureContainerName: events\n    path: '*.parquet'\ndestination: {database: default, table: blobs, managedTable: true, columns: [{name: c, type: String}]}\nfieldMappings: [{sourceField: c, destinationField: c}]\n",
    );
    let created = cloud
        .cloudctl(&["pipe", "create", "-f", &file, "-o", "json"])
        .expect(0)
        .json();
    assert_eq!(
        created["source"]["objectStorage"]["connectionString"],
        "[REDACTED]"
    );
    let id = created["id"].as_str().unwrap();
    // Both modes of the read; `Cloud::run` fails the test if the connection string shows anywhere.
    cloud.cloudctl(&["pipe", "get", id, "-o", "json"]).expect(0);
    let human = cloud
        .cloudctl(&["pipe", "get", id, "-o", "human"])
        .expect(0)
        .stdout;
    assert!(
        human.contains("objectStorage: container events, *.parquet"),
        "{human}"
    );
}

#[test]
fn create_wait_on_a_stopped_service_fails_with_the_fix() {
    let cloud = Cloud::start();
    let file = cloud.file("pipe.yaml", KAFKA_PIPE);
    let stopped = cloud.service("stopped");
    let human = cloud
        .run(
            cloud
                .command()
                .env("CLOUD_SERVICE_ID", &stopped)
                .args(["pipe", "create", "--file", &file, "--wait", "-o", "human"]),
        )
        .expect(1);
    assert!(human.stdout.is_empty());
    let line = human.stderr.trim_end();
    assert!(!line.contains('\n'), "one line: {line}");
    assert!(
        line.starts_with("error: FAILED_DEPENDENCY (HTTP 424): createPipe: "),
        "{line}"
    );
    assert!(line.contains("[request id "), "{line}");
    assert!(
        line.contains("start it with `cloudctl service start --wait`"),
        "{line}"
    );

    let json = cloud
        .run(
            cloud
                .command()
                .env("CLOUD_SERVICE_ID", &stopped)
                .args(["pipe", "create", "--file", &file, "--wait", "-o", "json"]),
        )
        .expect(1)
        .error();
    assert_eq!(json["code"], "FAILED_DEPENDENCY");
    assert_eq!(json["status"], 424);
    assert_eq!(json["retryable"], false);
    assert_eq!(json["outcomeUnknown"], false);
    assert!(
        json["requestId"].as_str().is_some_and(|id| id.len() == 36),
        "{json}"
    );
    assert!(
        json["message"].as_str().unwrap().contains("stopped"),
        "{json}"
    );
    assert!(
        json["hint"]
            .as_str()
            .unwrap()
            .contains("cloudctl service start --wait"),
        "{json}"
    );
}

#[test]
fn a_wait_that_runs_out_of_time_exits_6_with_the_pipe() {
    let slow = Timing {
        pipe_provisioning_ms: 600_000,
        ..Timing::INSTANT
    };
    let cloud = Cloud::with(EmulatorOptions::for_tests().timing(slow));
    let file = cloud.file("pipe.yaml", KAFKA_PIPE);
    let error = cloud
        .cloudctl(&[
            "pipe",
            "create",
            "-f",
            &file,
            "--wait",
            "--timeout",
            "1s",
            "-o",
            "json",
            "--no-rate-limit",
        ])
        .expect(6)
        .error();
    assert_eq!(error["code"], "WAIT_TIMEOUT");
    assert_eq!(error["lastSeen"]["state"], "Provisioning");
    let id = error["lastSeen"]["id"]
        .as_str()
        .expect("the created pipe's id")
        .to_string();
    let hint = error["hint"].as_str().unwrap();
    assert!(hint.contains(&format!("pipe {id} was created")), "{hint}");
    assert!(
        hint.contains(&format!(
            "`cloudctl pipe wait {id} --state Running` waits again"
        )),
        "the hint repeats what was waited for: {hint}"
    );

    let human = cloud
        .cloudctl(&[
            "pipe",
            "wait",
            &id,
            "--state",
            "Running",
            "--timeout",
            "1s",
            "-o",
            "human",
            "--no-rate-limit",
        ])
        .expect(6);
    let line = human.stderr.trim_end();
    assert!(
        line.starts_with("error: WAIT_TIMEOUT: gave up waiting for Running after "),
        "{line}"
    );
    assert!(
        line.contains(&format!("pipe {id} was last seen Provisioning")),
        "{line}"
    );
    assert!(
        line.contains(&format!(
            "cloudctl pipe wait {id} --state Running --timeout 20m"
        )),
        "{line}"
    );

    let gone = cloud
        .cloudctl(&[
            "pipe",
            "wait",
            &id,
            "--gone",
            "--timeout",
            "1s",
            "-o",
            "json",
            "--no-rate-limit",
        ])
        .expect(6)
        .error();
    let hint = gone["hint"].as_str().unwrap();
    assert!(
        hint.contains(&format!("cloudctl pipe wait {id} --gone --timeout 20m")),
        "{hint}"
    );
}

#[test]
fn a_state_the_cli_does_not_know_is_waited_for_and_a_typo_is_refused() {
    let cloud = Cloud::start();
    let id = cloud.create_kafka_pipe();

    // The API may add states: a name cloudctl does not know is waited for as written.
    let error = cloud
        .cloudctl(&[
            "pipe",
            "wait",
            &id,
            "--state",
            "Hibernating",
            "--timeout",
            "1s",
            "-o",
            "json",
        ])
        .expect(6)
        .error();
    assert_eq!(error["code"], "WAIT_TIMEOUT");
    let hint = error["hint"].as_str().unwrap();
    assert!(
        hint.contains(&format!(
            "cloudctl pipe wait {id} --state Hibernating --timeout 20m"
        )),
        "{hint}"
    );
    assert!(
        hint.contains("Hibernating is not a pipe state this cloudctl knows"),
        "{hint}"
    );

    // One letter off a known state is a typo, refused before anything is sent.
    let requests = cloud.requests().len();
    let typo = cloud
        .cloudctl(&["pipe", "wait", &id, "--state", "Runing", "-o", "json"])
        .expect(2);
    assert!(
        typo.stderr.contains("did you mean Running?"),
        "{}",
        typo.stderr
    );
    assert_eq!(cloud.requests().len(), requests, "nothing sent");
}

#[test]
fn a_failed_pipe_ends_the_wait_at_once_with_exit_1() {
    let cloud = Cloud::start();
    let id = cloud.create_kafka_pipe();
    // The service reports the pipe as Failed from now on.
    cloud.force_pipe_state(&id, PipeState::Failed);
    let error = cloud
        .cloudctl(&[
            "pipe",
            "wait",
            &id,
            "--state",
            "Running",
            "--timeout",
            "60s",
            "-o",
            "json",
        ])
        .expect(1)
        .error();
    assert_eq!(error["code"], "PIPE_FAILED");
    assert_eq!(error["lastSeen"]["state"], "Failed");
    assert_eq!(
        error["hint"],
        format!("`cloudctl pipe get {id}` shows the pipe")
    );
}

/// Fails when a secret of the test shows in `text`.
#[track_caller]
fn assert_no_secret(cloud: &Cloud, text: &str) {
    for secret in cloud.secrets() {
        assert!(!text.contains(&secret), "a secret was written:\n{text}");
    }
}

/// `cloudctl pipe export ID > orders.yaml`: stdout is a file, not a terminal, and no `-o` is given;
/// the file is still the pipe file, YAML, and what the API never returns (the Kafka credentials) is
/// said on stderr.
#[test]
fn export_into_a_file_writes_yaml_and_says_what_the_api_never_returns() {
    let cloud = Cloud::start();
    let id = cloud.create_kafka_pipe();
    let path = cloud.home().join("orders.yaml");
    let file = std::fs::File::create(&path).expect("the file");
    let output = cloud
        .process()
        .args(["pipe", "export", &id])
        .stdout(file)
        .output()
        .expect("cloudctl runs");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let written = std::fs::read_to_string(&path).expect("the file is written");
    assert_no_secret(&cloud, &written);
    assert_no_secret(&cloud, &stderr);
    assert!(
        written.lines().any(|line| line == "name: orders"),
        "{written}"
    );
    assert!(written.contains("\n    topics: orders\n"), "{written}");
    assert!(
        serde_json::from_str::<serde_json::Value>(&written).is_err(),
        "YAML, not JSON: {written}"
    );
    assert!(!written.contains("credentials"), "{written}");
    assert!(
        stderr.contains("The API never returns ") && stderr.contains("source.kafka.credentials"),
        "{stderr}"
    );
    // cloudctl reads it back as the pipe file it is.
    let checked = cloud
        .cloudctl(&[
            "pipe",
            "create",
            "--file",
            &path.to_string_lossy(),
            "--dry-run",
            "-o",
            "json",
        ])
        .expect(0)
        .json();
    assert_eq!(checked["name"], "orders");
    assert_eq!(checked["source"]["kafka"]["topics"], "orders");
}

/// Export without `-o` into a pipe writes the YAML pipe file, its secrets as `{env: VARIABLE}`,
/// which an import takes as it is (and a plan then finds no change); with `-o json`, the same file
/// as JSON. Both say on stderr what the file reads from the environment and what the API never
/// returns.
#[test]
fn export_writes_yaml_unless_json_is_asked_for_and_says_what_it_lacks_in_both() {
    let cloud = Cloud::start();
    let file = cloud.file("crm.yaml", POSTGRES_PIPE);
    let created = cloud
        .cloudctl(&["pipe", "create", "-f", &file, "-o", "json"])
        .expect(0)
        .json();
    let id = created["id"].as_str().expect("an id").to_string();
    let notes = |stderr: &str| {
        assert!(
            stderr.contains("The file reads CRM_POSTGRES_")
                && stderr.contains("CRM_POSTGRES_PASSWORD")
                && stderr.contains("from the environment"),
            "{stderr}"
        );
        assert!(
            stderr.contains("The API never returns ") && stderr.contains("destination.roles"),
            "{stderr}"
        );
    };

    let yaml = cloud.cloudctl(&["pipe", "export", &id]).expect(0);
    notes(&yaml.stderr);
    assert!(
        yaml.stdout.lines().any(|line| line == "name: crm"),
        "{}",
        yaml.stdout
    );
    assert!(
        yaml.stdout
            .contains("password: {env: CRM_POSTGRES_PASSWORD}"),
        "{}",
        yaml.stdout
    );
    assert!(
        serde_json::from_str::<serde_json::Value>(&yaml.stdout).is_err(),
        "YAML, not JSON: {}",
        yaml.stdout
    );
    // An import takes the file as it is, with what it reads from the environment, and a plan then
    // finds the pipe as declared.
    let exported = cloud.file("adopted/crm.yaml", &yaml.stdout);
    let dir = std::path::Path::new(&exported)
        .parent()
        .expect("its directory")
        .to_string_lossy()
        .into_owned();
    let with_variables = |args: &[&str]| {
        let mut command = cloud.command();
        command
            .env("CRM_POSTGRES_USERNAME", "replicator")
            .env("CRM_POSTGRES_PASSWORD", crate::support::POSTGRES_PASSWORD)
            .args(args);
        cloud.run(&mut command)
    };
    let imported = with_variables(&["import", "-f", &dir, "crm", &id, "-o", "json"]).expect(0);
    assert_eq!(imported.json()["id"], id.as_str());
    let planned = with_variables(&["plan", "-f", &dir, "-o", "json"]).expect(0);
    assert_eq!(
        planned.json()["summary"]["unchanged"],
        1,
        "{}",
        planned.stdout
    );

    let json = cloud
        .cloudctl(&["pipe", "export", &id, "-o", "json"])
        .expect(0);
    notes(&json.stderr);
    let json = json.json();
    assert_eq!(json["name"], "crm");
    assert_eq!(
        json["source"]["postgres"]["credentials"]["password"],
        serde_json::json!({"env": "CRM_POSTGRES_PASSWORD"})
    );
    assert!(
        json.get("id").is_none() && json.get("state").is_none(),
        "{json}"
    );
}
