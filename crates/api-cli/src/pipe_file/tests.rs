//! The pipe file: every source kind converts to the request the SDK would build, and every mistake is
//! reported with its path and line.

use super::*;

const KAFKA: &str = "\
name: orders
source:
  kafka:
    brokers: b-1.kafka.example:9098
    topics: orders
    consumerGroup: pipe-orders
    offset: {timestamp: 2026-03-01T00:00}
    reversePrivateEndpointIds: [c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f]
    credentials:
      username: reader
      password: {env: KAFKA_PASSWORD}
destination:
  database: default
  table: orders
  managedTable: true
  tableDefinition:
    sortingKey: [id]
    engine: {versionColumnId: version}
  columns:
    - {name: id, type: UInt64}
    - {name: amount, type: \"Decimal(18, 2)\"}
fieldMappings:
  - {sourceField: id, destinationField: id}
  - {sourceField: amount, destinationField: amount}
scaling: {replicas: 2, replicaCpuMillicores: 500, replicaMemoryGb: 0.5}
settings:
  db_max_threads: 8
  kafka_max_poll_records: 500
";

fn env(name: &str) -> Option<String> {
    (name == "KAFKA_PASSWORD").then(|| "kafka-pa55word".to_string())
}

fn valid(text: &str) -> NewPipe {
    check(text, &env).expect("a valid file").0
}

fn problems(text: &str) -> Vec<String> {
    check(text, &env)
        .expect_err("the file has problems")
        .into_iter()
        .map(|p| {
            format!(
                "{}:{}: {}",
                p.line.map_or("-".into(), |l| l.to_string()),
                p.path,
                p.message
            )
        })
        .collect()
}

#[test]
fn a_kafka_file_becomes_the_request_the_builder_makes() {
    let pipe = valid(KAFKA);
    let wire = serde_json::to_value(pipe.as_raw()).unwrap();
    assert_eq!(wire["name"], "orders");
    let kafka = &wire["source"]["kafka"];
    assert_eq!(kafka["brokers"], "b-1.kafka.example:9098");
    assert_eq!(kafka["offset"]["timestamp"], "2026-03-01T00:00");
    assert_eq!(
        kafka["credentials"]["password"], "kafka-pa55word",
        "read from the environment"
    );
    assert_eq!(
        kafka["reversePrivateEndpointIds"][0],
        "c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f"
    );
    assert_eq!(wire["destination"]["columns"][1]["type"], "Decimal(18, 2)");
    assert_eq!(
        wire["destination"]["tableDefinition"]["engine"]["versionColumnId"],
        "version"
    );
    assert_eq!(wire["scaling"]["replicas"], 2);
    assert_eq!(wire["scaling"]["replicaMemoryGb"], 0.5);
    assert_eq!(wire["settings"]["db_max_threads"], 8);
    assert_eq!(
        wire["settings"]["kafka_max_poll_records"], 500,
        "unknown settings pass through"
    );

    let shown = redacted_request(&pipe);
    assert_eq!(
        shown["source"]["kafka"]["credentials"]["password"],
        "[REDACTED]"
    );
    assert!(!shown.to_string().contains("kafka-pa55word"));
}

#[test]
fn the_same_request_in_json_reads_the_same() {
    let yaml = valid(KAFKA);
    let as_json = {
        // Write the YAML's own request back as JSON, with the env reference, and read it again.
        let mut wire = serde_json::to_value(yaml.as_raw()).unwrap();
        wire["source"]["kafka"]["credentials"]["password"] =
            serde_json::json!({"env": "KAFKA_PASSWORD"});
        serde_json::to_string_pretty(&wire).unwrap()
    };
    let json = valid(&as_json);
    assert_eq!(
        serde_json::to_value(json.as_raw()).unwrap(),
        serde_json::to_value(yaml.as_raw()).unwrap()
    );
}

#[test]
fn every_mistake_is_listed_with_path_and_line() {
    let text = "\
name: orders
source:
  kafka:
    brokers: \"\"
    topics: 42
    credentials: {username: reader, password: {env: MISSING_PASSWORD}}
    colour: blue
destination:
  database: default
  table: orders
  columns:
    - {name: id, type: UInt64}
fieldMappings:
  - {sourceField: id, destinationField: idd}
scaling:
  replicas: 50
  replicaCpuMillicores: lots
settings:
  db_max_threads: 65
";
    assert_eq!(
        problems(text),
        [
            "4:source.kafka.brokers: required; must not be empty",
            "5:source.kafka.topics: expected a string, found a number; quote it to make it text",
            "6:source.kafka.credentials.password: the environment variable MISSING_PASSWORD is not set",
            "7:source.kafka.colour: unknown member; expected one of: brokers, caCertificate, consumerGroup, credentials, iamRole, offset, reversePrivateEndpointIds, schemaRegistry, topics",
            "8:destination.managedTable: required for this source kind",
            "13:fieldMappings: every destination column must be mapped; not mapped: id",
            "14:fieldMappings[0].destinationField: \"idd\" is not a destination column",
            "16:scaling.replicas: must be between 1 and 40, got 50",
            "17:scaling.replicaCpuMillicores: expected an integer, found a string",
            "19:settings.db_max_threads: must be between 0 and 64, got 65",
        ]
    );
}

#[test]
fn the_source_needs_exactly_one_kind() {
    assert_eq!(
        problems("name: x\nsource: {}\ndestination: {database: d}\n"),
        ["2:source: required: choose a kafka, objectStorage, kinesis or postgres source"]
    );
    let two = problems(
        "name: x\nsource:\n  kinesis: {streamName: s, region: r}\n  kafka: {brokers: b, topics: t}\ndestination: {database: d, table: t, managedTable: true, columns: [{name: c, type: String}]}\nfieldMappings: [{sourceField: c, destinationField: c}]\n",
    );
    assert_eq!(
        two,
        [
            "2:source: exactly one source kind is allowed (kafka, objectStorage, kinesis, postgres), got kafka and kinesis"
        ]
    );
}

#[test]
fn each_of_several_source_kinds_is_still_checked() {
    let two = problems(
        "name: x\nsource:\n  kafka:\n    brokers: b\n    topcis: t\n    credentials: {username: u}\n  kinesis:\n    streamName: s\ndestination: {database: d, table: t, managedTable: true, columns: [{name: c, type: String}]}\nfieldMappings: [{sourceField: c, destinationField: c}]\n",
    );
    assert_eq!(
        two,
        [
            "2:source: exactly one source kind is allowed (kafka, objectStorage, kinesis, postgres), got kafka and kinesis",
            "3:source.kafka.topics: required; must not be empty",
            "5:source.kafka.topcis: unknown member; expected one of: brokers, caCertificate, consumerGroup, credentials, iamRole, offset, reversePrivateEndpointIds, schemaRegistry, topics",
            "6:source.kafka.credentials.password: is required",
            "7:source.kinesis.region: required; must not be empty",
        ]
    );
}

#[test]
fn a_missing_top_level_member_points_at_the_start_of_the_file() {
    let text = "\n# a pipe\nname: x\nsource: {kafka: {brokers: b, topics: t}}\ndestination: {database: d, table: t, managedTable: true, columns: [{name: c, type: String}]}\n";
    assert_eq!(
        problems(text),
        ["3:fieldMappings: every destination column must be mapped; not mapped: c"]
    );
}

#[test]
fn postgres_and_object_storage_files_convert() {
    let postgres = "\
name: crm
source:
  postgres:
    host: crm-db.internal.example
    port: 5432
    database: crm
    credentials: {username: replicator, password: pg-secret}
    settings: {syncIntervalSeconds: 30, snapshotNumRowsPerPartition: 100000}
    tableMappings:
      - {sourceSchemaName: public, sourceTable: customers, targetTable: crm_customers, excludedColumns: [ssn], useCustomSortingKey: true, sortingKeys: [id]}
destination: {database: crm}
";
    let pipe = valid(postgres);
    let wire = serde_json::to_value(pipe.as_raw()).unwrap();
    assert_eq!(wire["source"]["postgres"]["port"], 5432);
    assert_eq!(
        wire["source"]["postgres"]["tableMappings"][0]["useCustomSortingKey"],
        true
    );
    assert_eq!(
        wire["source"]["postgres"]["settings"]["syncIntervalSeconds"],
        30
    );
    assert_eq!(
        redacted_request(&pipe)["source"]["postgres"]["credentials"]["password"],
        "[REDACTED]"
    );

    assert_eq!(
        problems(
            "name: crm\nsource:\n  postgres: {host: h, database: d, port: 70000, tableMappings: []}\ndestination: {database: crm}\n"
        ),
        [
            "3:source.postgres.credentials: is required",
            "3:source.postgres.port: must be between 1 and 65535, got 70000",
            "3:source.postgres.tableMappings: must hold at least 1 item",
        ]
    );

    let azure = "\
name: blobs
source:
  objectStorage:
    connectionString: {env: KAFKA_PASSWORD}
    azureContainerName: events
    path: 'year=*/*.parquet'
    isContinuous: false
    compression: zstd
destination: {database: d, table: t, managedTable: false, columns: [{name: c, type: String}]}
fieldMappings: [{sourceField: c, destinationField: c}]
";
    let pipe = valid(azure);
    let shown = redacted_request(&pipe);
    assert_eq!(
        shown["source"]["objectStorage"]["connectionString"],
        "[REDACTED]"
    );
    assert_eq!(shown["source"]["objectStorage"]["compression"], "zstd");
    assert_eq!(
        problems(
            "name: b\nsource:\n  objectStorage: {path: p}\ndestination: {database: d, table: t, managedTable: false, columns: [{name: c, type: String}]}\nfieldMappings: [{sourceField: c, destinationField: c}]\n"
        ),
        [
            "3:source.objectStorage.url: required: a URL, or a connection string with a container name"
        ]
    );
}

#[test]
fn numbers_are_read_in_every_form_and_any_string_can_come_from_the_environment() {
    let text = "\
name: {env: KAFKA_PASSWORD}
source:
  kinesis: {streamName: clicks, region: eu-west-1, timestamp: 1.7724096e9}
destination: {database: d, table: t, managedTable: true, columns: [{name: c, type: String}]}
fieldMappings: [{sourceField: c, destinationField: c}]
scaling: {replicas: 2.0, replicaCpuMillicores: 0x1F4, replicaMemoryGb: .50}
settings: {db_max_threads: 8.0, future_setting: 1e3}
";
    let wire = serde_json::to_value(valid(text).as_raw()).unwrap();
    assert_eq!(wire["name"], "kafka-pa55word");
    assert_eq!(
        wire["scaling"],
        serde_json::json!({"replicas": 2, "replicaCpuMillicores": 500, "replicaMemoryGb": 0.5})
    );
    assert_eq!(wire["source"]["kinesis"]["timestamp"], 1_772_409_600);
    assert_eq!(wire["settings"]["db_max_threads"], 8);
    assert_eq!(
        wire["settings"]["future_setting"], 1000,
        "an unknown setting, by the whole-number rule"
    );
}

#[test]
fn a_redaction_marker_where_a_value_goes_is_refused_naming_the_member() {
    let text = "\
name: backfill
source:
  objectStorage: {url: 'https://acct.blob.example/c/*.csv?sv=1&sig=[REDACTED]', isContinuous: true}
destination: {database: d, table: t, managedTable: true, columns: [{name: c, type: String}]}
fieldMappings: [{sourceField: c, destinationField: c}]
";
    assert_eq!(
        problems(text),
        [
            "3:source.objectStorage.url: the value holds [REDACTED], the text cloudctl shows in place \
          of a secret, not the secret: give the value itself (from the environment: {env: VARIABLE})"
        ]
    );
    let from_env = text.replace(
        "'https://acct.blob.example/c/*.csv?sv=1&sig=[REDACTED]'",
        "{env: KAFKA_PASSWORD}",
    );
    let marked = |name: &str| (name == "KAFKA_PASSWORD").then(|| "x&sig=[REDACTED]".to_string());
    let problems: Vec<String> = check(&from_env, &marked)
        .expect_err("refused")
        .into_iter()
        .map(|p| format!("{}: {}", p.path, p.message))
        .collect();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0]
            .starts_with("source.objectStorage.url: the variable KAFKA_PASSWORD holds [REDACTED]"),
        "{problems:?}"
    );
}

#[test]
fn broken_and_empty_files_say_so() {
    let broken = problems("name: x\nsource: [\n");
    assert_eq!(broken.len(), 1);
    assert!(
        broken[0].starts_with("3:.: not valid YAML or JSON: "),
        "{broken:?}"
    );
    assert_eq!(
        problems(""),
        ["1:.: the file is empty; expected a pipe create request"]
    );
    assert_eq!(
        problems("- a\n"),
        ["1:.: expected a mapping (the API's create request), got a list"]
    );
}

/// Generated pipe files of every source kind, with optional members present or absent and numbers
/// in every form the file takes: once applied, a plan shows no change, and keeps showing none
/// through every state the emulator's pipe goes through.
mod declared_files {
    use api_emulator::{Emulator, EmulatorOptions, PipeState};
    use api_mgmt::declared::{self, ApplyOptions, Declaration, RecordedState, StateStore};
    use api_mgmt::{Client, Credentials, WaitOptions};
    use proptest::prelude::*;

    use super::*;

    /// A whole number in one of the forms the file reads (`2`, `2.0`, `0x2`, `2e0`).
    fn integer(value: u64, form: u8) -> String {
        match form % 4 {
            0 => value.to_string(),
            1 => format!("{value}.0"),
            2 => format!("{value:#x}"),
            _ => format!("{value}e0"),
        }
    }

    /// A number with a fraction in one of its forms (`0.5`, `0.50`, `.5`, `5e-1`).
    fn fraction(tenths: u64, form: u8) -> String {
        let whole = tenths / 10;
        let tenth = tenths % 10;
        match form % 4 {
            0 => format!("{whole}.{tenth}"),
            1 => format!("{whole}.{tenth}0"),
            2 if whole == 0 => format!(".{tenth}"),
            _ => format!("{}e-1", tenths),
        }
    }

    prop_compose! {
        /// A pipe file (JSON-like flow text, which YAML reads too) of kind `0..4`.
        fn pipe_file()(
            kind in 0u8..4,
            forms in proptest::collection::vec(any::<u8>(), 8),
            present in proptest::collection::vec(any::<bool>(), 8),
            replicas in 1u64..=40,
            cpu in 125u64..=2000,
            memory_tenths in 5u64..=80,
            wait_ms in 500u64..=60_000,
        ) -> String {
            let optional = |i: usize, member: String| if present[i] { format!(", {member}") } else { String::new() };
            let source = match kind {
                0 => format!(
                    "{{\"kafka\": {{\"brokers\": \"b-1:9092\", \"topics\": \"orders\"{}{}{}}}{}}}",
                    optional(0, "\"consumerGroup\": \"group-1\"".into()),
                    optional(1, "\"credentials\": {\"username\": \"reader\", \"password\": \"kafka-secret\"}".into()),
                    optional(2, "\"offset\": {\"timestamp\": \"2026-03-01T00:00\"}".into()),
                    optional(3, "\"validateSamples\": true".into()),
                ),
                1 => format!(
                    "{{\"objectStorage\": {{\"url\": \"https://bucket/*.csv\", \"isContinuous\": true{}{}}}}}",
                    optional(0, "\"compression\": \"gzip\"".into()),
                    optional(1, "\"accessKey\": {\"accessKeyId\": \"AKIA\", \"secretKey\": \"storage-secret\"}".into()),
                ),
                2 => format!(
                    "{{\"kinesis\": {{\"streamName\": \"clicks\", \"region\": \"eu-west-1\"{}{}}}}}",
                    optional(0, format!("\"timestamp\": {}", integer(1_772_409_600, forms[6]))),
                    optional(1, "\"useEnhancedFanOut\": false".into()),
                ),
                _ => format!(
                    "{{\"postgres\": {{\"host\": \"db\", \"port\": {}, \"database\": \"crm\", \"credentials\": {{\"username\": \"u\", \"password\": \"pg-secret\"}}, \"tableMappings\": [{{\"sourceSchemaName\": \"public\", \"sourceTable\": \"t\", \"targetTable\": \"t\"}}]{}}}}}",
                    integer(5432, forms[7]),
                    optional(0, format!("\"settings\": {{\"syncIntervalSeconds\": {}}}", integer(30, forms[5]))),
                ),
            };
            let destination = if kind == 3 {
                "{\"database\": \"crm\"}".to_string()
            } else {
                format!(
                    "{{\"database\": \"d\", \"table\": \"t\", \"managedTable\": true, \"columns\": [{{\"name\": \"c\", \"type\": \"String\"}}]{}}}",
                    optional(4, "\"roles\": [\"writer\"]".into()),
                )
            };
            let mappings = if kind == 3 { String::new() } else {
                ", \"fieldMappings\": [{\"sourceField\": \"c\", \"destinationField\": \"c\"}]".into()
            };
            let scaling = optional(5, format!(
                "\"scaling\": {{\"replicas\": {}, \"replicaCpuMillicores\": {}, \"replicaMemoryGb\": {}}}",
                integer(replicas, forms[0]), integer(cpu, forms[1]), fraction(memory_tenths, forms[2]),
            ));
            let settings = optional(6, format!(
                "\"settings\": {{\"streaming_max_insert_wait_ms\": {}, \"future_setting\": {}}}",
                integer(wait_ms, forms[3]), integer(7, forms[4]),
            ));
            format!("{{\"name\": \"generated\", \"source\": {source}, \"destination\": {destination}{mappings}{scaling}{settings}}}")
        }
    }

    #[test]
    fn a_generated_pipe_file_once_applied_never_differs() {
        generated_pipe_files_never_differ(EmulatorOptions::for_tests());
    }

    /// Against a server that answers in its own canonical forms and takes duplicate names.
    #[test]
    fn a_generated_pipe_file_never_differs_on_a_server_that_rewrites_it() {
        generated_pipe_files_never_differ(
            EmulatorOptions::for_tests()
                .canonical(true)
                .duplicate_names(true),
        );
    }

    fn generated_pipe_files_never_differ(options: EmulatorOptions) {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let emulator = runtime.block_on(Emulator::start(options)).unwrap();
        let (key, secret) = emulator.admin_key();
        let client = Client::builder(emulator.base_url())
            .credentials(Credentials::basic(key, secret))
            .build()
            .unwrap();
        let service = client.service(
            emulator.organization_id(),
            emulator.service_id("running").unwrap(),
        );
        let state_dir = tempfile::tempdir().unwrap();
        let config = ProptestConfig {
            cases: 12,
            failure_persistence: None,
            ..ProptestConfig::default()
        };
        proptest!(config, |(file in pipe_file())| {
            let (pipe, _, _) = check(&file, &env).unwrap_or_else(|p| panic!("{p:?} in {file}"));
            let store = declared::FileStateStore::new(state_dir.path().join("state.json"))
                .lock_dir(state_dir.path().join("locks"));
            let lock = store.lock(&declared::target_of(&service)).unwrap();
            let declaration = Declaration::new().pipe(pipe);
            let recorded = RecordedState::new(declared::target_of(&service));
            let options = ApplyOptions::default().wait(WaitOptions::default());
            let plan = runtime.block_on(declared::plan(&service, &declaration, &recorded)).unwrap();
            let report = runtime.block_on(plan.apply(&lock, &store, &options)).unwrap();
            prop_assert!(report.is_complete(), "{report:?}");
            let recorded = store.load().unwrap().unwrap();
            let id = recorded.pipes["generated"].id;
            // Every state but a failure (a failed pipe is recreated).
            let states = PipeState::KNOWN.iter().map(|s| PipeState::from(*s)).filter(|s| !s.is_failed());
            for state in std::iter::once(None).chain(states.map(Some)) {
                if let Some(state) = state {
                    emulator.force_pipe_state(id, Some(state)).unwrap();
                }
                let again = runtime.block_on(declared::plan(&service, &declaration, &recorded)).unwrap();
                prop_assert!(again.is_empty(), "a difference in {file}: {:?}", again.actions);
                prop_assert_eq!(again.reads, 1);
            }
            runtime.block_on(service.pipe(id).delete()).unwrap();
            // The next case starts from nothing recorded.
            std::fs::remove_file(store.path()).unwrap();
        });
        runtime.block_on(emulator.shutdown());
    }
}

#[test]
fn the_lifecycle_is_cloudctls_own_key_read_beside_the_request_and_never_sent() {
    let kept = format!("{KAFKA}lifecycle:\n  protect: true\n  retainOnDelete: true\n");
    let (pipe, _, lifecycle) = check(&kept, &env).expect("a valid file");
    assert!(lifecycle.protect && lifecycle.retain_on_delete);
    let wire = serde_json::to_value(pipe.as_raw()).unwrap();
    assert!(wire.get("lifecycle").is_none(), "never sent: {wire}");
    assert_eq!(check(KAFKA, &env).unwrap().2, Default::default());
    // Every problem by path and line, with the request's own.
    let lines = KAFKA.lines().count();
    let bad = format!(
        "{}lifecycle: {{protect: yes please, keep: true}}\n",
        KAFKA.replace("topics: orders", "topics: 7")
    );
    let found = problems(&bad);
    assert!(
        found.contains(&format!(
            "{}:lifecycle.protect: expected true or false, got a string",
            lines + 1
        )),
        "{found:?}"
    );
    assert!(
        found
            .iter()
            .any(|p| p.contains("lifecycle.keep: unknown member \"keep\"")),
        "{found:?}"
    );
    assert!(
        found.iter().any(|p| p.contains("source.kafka.topics")),
        "{found:?}"
    );
    let not_a_map = problems(&format!("{KAFKA}lifecycle: protect\n"));
    assert!(
        not_a_map[0].ends_with(
            "lifecycle: expected a mapping ({protect: true, retainOnDelete: true}), got a string"
        ),
        "{not_a_map:?}"
    );
}
