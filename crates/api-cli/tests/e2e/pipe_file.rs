//! The pipe file: several mistakes at once (exit 2, nothing sent), `--dry-run`, standard input.

use crate::support::{Cloud, KAFKA_PIPE};

const BAD_PIPE: &str = "\
name: orders
source:
  kafka:
    brokers: ''
    topics: orders
    credentials: {username: reader, password: {env: NOT_SET_ANYWHERE}}
destination:
  database: default
  table: orders
  managedTable: yes please
  columns:
    - {name: id, type: UInt64}
fieldMappings:
  - {sourceField: id, destinationField: order_id}
scaling: {replicas: 41}
";

#[test]
fn a_file_with_several_mistakes_lists_them_all_and_sends_nothing() {
    let cloud = Cloud::start();
    let file = cloud.file("bad.yaml", BAD_PIPE);

    let human = cloud
        .cloudctl(&["pipe", "create", "-f", &file, "-o", "human"])
        .expect(2);
    assert!(human.stdout.is_empty());
    let lines: Vec<&str> = human.stderr.lines().collect();
    assert_eq!(
        lines[0],
        format!("error: INVALID_FILE: {file}: 6 problems found; nothing was sent")
    );
    assert_eq!(
        &lines[1..],
        [
            format!("  {file}:4: source.kafka.brokers: required; must not be empty"),
            format!(
                "  {file}:6: source.kafka.credentials.password: the environment variable NOT_SET_ANYWHERE is not set"
            ),
            format!("  {file}:10: destination.managedTable: expected a boolean, found a string"),
            format!(
                "  {file}:13: fieldMappings: every destination column must be mapped; not mapped: id"
            ),
            format!(
                "  {file}:14: fieldMappings[0].destinationField: \"order_id\" is not a destination column"
            ),
            format!("  {file}:15: scaling.replicas: must be between 1 and 40, got 41"),
        ]
    );

    let json = cloud
        .cloudctl(&["pipe", "create", "-f", &file, "-o", "json"])
        .expect(2)
        .error();
    assert_eq!(json["code"], "INVALID_FILE");
    assert_eq!(json["status"], serde_json::Value::Null);
    let problems = json["problems"].as_array().expect("the problems");
    assert_eq!(problems.len(), 6);
    assert_eq!(problems[2]["path"], "destination.managedTable");
    assert_eq!(problems[2]["line"], 10);

    assert!(
        cloud.requests().is_empty(),
        "nothing was sent: {:?}",
        cloud.requests()
    );
}

#[test]
fn dry_run_prints_the_request_and_sends_nothing() {
    let cloud = Cloud::start();
    let file = cloud.file("pipe.yaml", KAFKA_PIPE);

    let request = cloud
        .cloudctl(&["pipe", "create", "-f", &file, "--dry-run", "-o", "json"])
        .expect(0)
        .json();
    assert_eq!(request["name"], "orders");
    assert_eq!(
        request["source"]["kafka"]["credentials"]["username"],
        "reader"
    );
    assert_eq!(
        request["source"]["kafka"]["credentials"]["password"],
        "[REDACTED]"
    );
    assert_eq!(request["destination"]["managedTable"], true);
    assert_eq!(request["scaling"]["replicas"], 2);
    assert_eq!(request["settings"]["db_max_threads"], 8);

    let human = cloud
        .cloudctl(&["pipe", "create", "-f", &file, "--dry-run", "-o", "human"])
        .expect(0)
        .stdout;
    assert!(
        human.starts_with("The file is valid; nothing was sent."),
        "{human}"
    );
    assert!(human.contains("\"password\": \"[REDACTED]\""), "{human}");

    // A dry run needs no settings at all.
    let bare = cloud.run(
        cloud
            .command()
            .env_remove("CLOUD_API_URL")
            .env_remove("CLOUD_API_KEY_SECRET")
            .args(["pipe", "create", "-f", &file, "--dry-run", "-o", "json"]),
    );
    bare.expect(0);

    assert!(
        cloud.requests().is_empty(),
        "nothing was sent: {:?}",
        cloud.requests()
    );
}

#[test]
fn the_file_can_come_from_standard_input() {
    let cloud = Cloud::start();
    let created = cloud
        .run(
            cloud
                .command()
                .args(["pipe", "create", "-f", "-", "-o", "json"])
                .write_stdin(KAFKA_PIPE),
        )
        .expect(0)
        .json();
    assert_eq!(created["name"], "orders");
    let posts: Vec<_> = cloud
        .requests()
        .into_iter()
        .filter(|r| r.method == "POST")
        .collect();
    assert_eq!(posts.len(), 1, "{posts:?}");

    let broken = cloud
        .run(
            cloud
                .command()
                .args(["pipe", "create", "-f", "-", "-o", "human"])
                .write_stdin("name: [unclosed\n"),
        )
        .expect(2);
    assert!(broken.stderr.contains("<stdin>:"), "{}", broken.stderr);
    assert!(
        broken.stderr.contains("not valid YAML or JSON"),
        "{}",
        broken.stderr
    );

    let missing = cloud
        .cloudctl(&[
            "pipe",
            "create",
            "-f",
            "/nonexistent/pipe.yaml",
            "-o",
            "json",
        ])
        .expect(2)
        .error();
    assert!(
        missing["problems"][0]["message"]
            .as_str()
            .unwrap()
            .contains("cannot read the file"),
        "{missing}"
    );
}
