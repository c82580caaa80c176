use chrono::TimeZone;

use super::*;
use crate::management::Compression;

fn kafka_pipe() -> NewPipeBuilder {
    NewPipe::builder("orders")
        .source(
            KafkaSource::new("b-1.kafka.example:9098", "orders")
                .consumer_group("pipe-orders")
                .iam_role("arn:aws:iam::123456789012:role/pipe-reader")
                .start_at(chrono::Utc.with_ymd_and_hms(2026, 3, 1, 0, 0, 42).unwrap())
                .reverse_private_endpoint("c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f".parse().unwrap())
                .schema_registry(
                    SchemaRegistry::new("https://registry.example:8081")
                        .credentials("reg", "reg-pass"),
                )
                .credentials("reader", "kafka-pass"),
        )
        .destination(
            Destination::new("default")
                .table("orders")
                .managed_table(true)
                .column("order_id", "UInt64")
                .column("created_at", "DateTime64(3)")
                .sorting_key(["order_id"])
                .role("writer"),
        )
        .field_mapping("id", "order_id")
        .field_mapping("ts", "created_at")
}

fn problems(builder: NewPipeBuilder) -> Vec<String> {
    builder
        .build()
        .unwrap_err()
        .problems
        .into_iter()
        .map(|p| format!("{}: {}", p.path, p.message))
        .collect()
}

#[test]
fn a_complete_kafka_pipe_becomes_the_request_the_spec_describes() {
    let pipe = kafka_pipe()
        .scaling(
            Scaling::new()
                .replicas(2)
                .replica_cpu_millicores(500)
                .replica_memory_gb(2.0)
                .concurrency(4),
        )
        .settings(
            PipeSettings::new()
                .streaming_max_insert_wait_ms(5000)
                .db_parallel_view_processing(true),
        )
        .validate_samples(true)
        .build()
        .unwrap();
    assert_eq!(pipe.source_kind(), SourceKind::Kafka);
    let json = serde_json::to_value(pipe.as_raw()).unwrap();
    assert_eq!(json["name"], "orders");
    let kafka = &json["source"]["kafka"];
    assert_eq!(
        kafka["offset"]["timestamp"], "2026-03-01T00:00",
        "minute precision: the seconds are cut off"
    );
    assert_eq!(
        kafka["credentials"]["password"], "kafka-pass",
        "request-only credentials are sent"
    );
    assert_eq!(kafka["schemaRegistry"]["credentials"]["username"], "reg");
    assert_eq!(
        kafka["reversePrivateEndpointIds"][0],
        "c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f"
    );
    assert_eq!(json["source"]["validateSamples"], true);
    assert_eq!(json["destination"]["roles"][0], "writer");
    assert_eq!(
        json["destination"]["tableDefinition"]["sortingKey"][0],
        "order_id"
    );
    assert_eq!(json["fieldMappings"][1]["destinationField"], "created_at");
    assert_eq!(json["scaling"]["replicas"], 2);
    assert_eq!(json["scaling"]["replicaMemoryGb"], 2.0);
    assert_eq!(json["settings"]["streaming_max_insert_wait_ms"], 5000);
    let shown = format!("{pipe:?}");
    assert!(
        !shown.contains("kafka-pass") && !shown.contains("reg-pass"),
        "{shown}"
    );
    let secrets = pipe.secrets();
    let secrets: Vec<&str> = secrets.iter().map(|s| s.expose()).collect();
    assert_eq!(secrets, ["kafka-pass", "reg-pass"]);
}

#[test]
fn three_mistakes_are_reported_together() {
    let builder = NewPipe::builder("")
        .source(KafkaSource::new("b-1:9092", "orders").iam_role("role/pipe-reader"))
        .destination(
            Destination::new("default")
                .table("orders")
                .managed_table(true)
                .column("id", "UInt64"),
        )
        .field_mapping("id", "id")
        .scaling(Scaling::new().replicas(50));
    assert_eq!(
        problems(builder),
        [
            "name: must be at least 1 character long",
            "scaling.replicas: must be between 1 and 40, got 50",
            "source.kafka.iamRole: must be an ARN (arn:<partition>:<service>:<region>:<account>:<resource>)",
        ]
    );
}

#[test]
fn source_and_destination_are_required() {
    assert_eq!(
        problems(NewPipe::builder("p")),
        ["destination: is required", "source: is required"]
    );
}

#[test]
fn streaming_destinations_need_table_managed_flag_columns_and_complete_mappings() {
    let builder = NewPipe::builder("p")
        .source(KinesisSource::new("clicks", "eu-west-1"))
        .destination(Destination::new("web"));
    assert_eq!(
        problems(builder),
        [
            "destination.table: required for this source kind",
            "destination.managedTable: required for this source kind",
            "destination.columns: at least one column is required for this source kind",
        ]
    );
    let unmapped = NewPipe::builder("p")
        .source(KinesisSource::new("clicks", "eu-west-1"))
        .destination(
            Destination::new("web")
                .table("t")
                .managed_table(false)
                .column("url", "String")
                .column("ts", "DateTime"),
        )
        .field_mapping("url", "url")
        .field_mapping("x", "nope");
    assert_eq!(
        problems(unmapped),
        [
            "fieldMappings[1].destinationField: \"nope\" is not a destination column",
            "fieldMappings: every destination column must be mapped; not mapped: ts",
        ]
    );
}

#[test]
fn postgres_needs_credentials_tables_and_a_valid_port() {
    let builder = NewPipe::builder("cdc")
        .source(
            PostgresSource::new("", 0, "crm")
                .settings(PostgresSettingsSpec::new().snapshot_num_rows_per_partition(10)),
        )
        .destination(Destination::new("crm"));
    assert_eq!(
        problems(builder),
        [
            "source.postgres.credentials: is required",
            "source.postgres.host: must be at least 1 character long",
            "source.postgres.port: must be between 1 and 65535, got 0",
            "source.postgres.settings.snapshotNumRowsPerPartition: must be at least 1000, got 10",
            "source.postgres.tableMappings: must hold at least 1 item",
        ]
    );
    let ok = NewPipe::builder("cdc")
        .source(
            PostgresSource::new("db.example", 5432, "crm")
                .credentials("replicator", "pg-pass")
                .table(
                    PostgresTableMapping::new("public", "customers", "crm_customers")
                        .sorting_keys(["id"]),
                ),
        )
        .destination(Destination::new("crm"))
        .build()
        .unwrap();
    let json = serde_json::to_value(ok.as_raw()).unwrap();
    assert_eq!(json["source"]["postgres"]["port"], 5432);
    assert_eq!(
        json["source"]["postgres"]["tableMappings"][0]["useCustomSortingKey"],
        true
    );
    assert_eq!(
        json["source"]["postgres"]["credentials"]["password"],
        "pg-pass"
    );
}

#[test]
fn every_pipe_setting_bound_is_enforced() {
    for (name, min, max) in PipeSettings::BOUNDS {
        let set = |value: u64| {
            let json = serde_json::json!({ *name: value });
            let spec: PipeSettings = settings_from_json(&json);
            NewPipe::builder("p")
                .source(ObjectStorageSource::url("https://bucket.example/*.csv"))
                .destination(
                    Destination::new("d")
                        .table("t")
                        .managed_table(true)
                        .column("c", "String"),
                )
                .field_mapping("c", "c")
                .settings(spec)
                .build()
        };
        assert!(set(*min).is_ok(), "{name} = {min} is allowed");
        assert!(set(*max).is_ok(), "{name} = {max} is allowed");
        // A minimum of 0 cannot be undercut: the setters take unsigned integers.
        if *min > 0 {
            let below = set(min - 1).unwrap_err();
            assert!(
                below.has(&format!("settings.{name}")),
                "{name} = {} is refused: {below}",
                min - 1
            );
        }
        assert!(set(max + 1).is_err(), "{name} = {} is refused", max + 1);
    }
}

#[test]
fn a_known_setting_given_through_extra_is_refused_by_name() {
    let mut settings = PipeSettings::new().streaming_max_insert_wait_ms(5_000);
    settings.extra.extend([
        ("streaming_max_insert_wait_ms".into(), 100.into()),
        ("object_storage_use_cluster_function".into(), true.into()),
        ("kafka_max_poll_records".into(), 500.into()),
    ]);
    assert_eq!(
        problems(kafka_pipe().settings(settings)),
        [
            "settings.object_storage_use_cluster_function: a known setting: set it with \
             PipeSettings::object_storage_use_cluster_function(), not through extra",
            "settings.streaming_max_insert_wait_ms: a known setting: set it with \
             PipeSettings::streaming_max_insert_wait_ms(), not through extra",
        ]
    );
}

/// Sets one integer setting by name (through the public setters).
fn settings_from_json(json: &serde_json::Value) -> PipeSettings {
    let (name, value) = json.as_object().unwrap().iter().next().unwrap();
    let v = value.as_u64().unwrap();
    let spec = PipeSettings::new();
    match name.as_str() {
        "streaming_max_insert_wait_ms" => spec.streaming_max_insert_wait_ms(v),
        "object_storage_concurrency" => spec.object_storage_concurrency(v),
        "object_storage_polling_interval_ms" => spec.object_storage_polling_interval_ms(v),
        "object_storage_max_insert_bytes" => spec.object_storage_max_insert_bytes(v),
        "object_storage_max_file_count" => spec.object_storage_max_file_count(v),
        "db_max_threads" => spec.db_max_threads(v),
        "db_max_insert_threads" => spec.db_max_insert_threads(v),
        "db_min_insert_block_size_bytes" => spec.db_min_insert_block_size_bytes(v),
        "db_max_download_threads" => spec.db_max_download_threads(v),
        "db_parallel_distributed_insert_select" => spec.db_parallel_distributed_insert_select(v),
        other => panic!("unknown setting {other}"),
    }
}

#[test]
fn scaling_bounds() {
    let base = || {
        NewPipe::builder("p")
            .source(
                ObjectStorageSource::url("https://bucket.example/*.csv")
                    .compression(Compression::Auto),
            )
            .destination(
                Destination::new("d")
                    .table("t")
                    .managed_table(true)
                    .column("c", "String"),
            )
            .field_mapping("c", "c")
    };
    assert!(
        base()
            .scaling(
                Scaling::new()
                    .replicas(40)
                    .replica_cpu_millicores(125)
                    .replica_memory_gb(0.5)
            )
            .build()
            .is_ok()
    );
    assert_eq!(
        problems(
            base().scaling(
                Scaling::new()
                    .replicas(0)
                    .replica_cpu_millicores(2001)
                    .replica_memory_gb(f64::NAN)
            )
        ),
        [
            "scaling.replicaCpuMillicores: must be between 125 and 2000, got 2001",
            "scaling.replicaMemoryGb: must be between 0.5 and 8, got 0",
            "scaling.replicas: must be between 1 and 40, got 0",
        ]
    );
}

#[test]
fn an_offset_beyond_the_wire_form_is_refused() {
    let far = chrono::Utc.with_ymd_and_hms(10_000, 1, 1, 0, 0, 0).unwrap();
    let builder = NewPipe::builder("p")
        .source(KafkaSource::new("b:9092", "t").start_at(far))
        .destination(Destination::new("d").table("t").managed_table(true))
        .mapped_column("c", "c", "String");
    let problems = problems(builder);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].starts_with(
            "source.kafka.offset.timestamp: must be a UTC time in the form YYYY-MM-DDTHH:MM"
        ),
        "{problems:?}"
    );
}

#[test]
fn a_mapped_column_declares_the_column_and_its_mapping() {
    let pipe = NewPipe::builder("p")
        .source(KinesisSource::new("clicks", "eu-west-1"))
        .destination(
            Destination::new("web")
                .table("t")
                .managed_table(true)
                .column("ts", "DateTime"),
        )
        .field_mapping("time", "ts")
        .mapped_column("url", "page", "String")
        .build()
        .unwrap();
    let json = serde_json::to_value(pipe.as_raw()).unwrap();
    assert_eq!(
        json["destination"]["columns"],
        serde_json::json!([{"name": "ts", "type": "DateTime"}, {"name": "page", "type": "String"}])
    );
    assert_eq!(
        json["fieldMappings"],
        serde_json::json!([
            {"sourceField": "time", "destinationField": "ts"},
            {"sourceField": "url", "destinationField": "page"}
        ])
    );
}

#[test]
fn object_storage_needs_a_location_and_keeps_secrets_hidden() {
    let builder = NewPipe::builder("p")
        .source(ObjectStorageSource::default().access_key("AKIA", ""))
        .destination(
            Destination::new("d")
                .table("t")
                .managed_table(true)
                .column("c", "String"),
        )
        .field_mapping("c", "c");
    assert_eq!(
        problems(builder),
        [
            "source.objectStorage.url: required: a URL, or a connection string with a container name",
            "source.objectStorage.accessKey.secretKey: required; must not be empty",
        ]
    );
    let azure = NewPipe::builder("p")
        .source(
            ObjectStorageSource::azure("AccountKey=azure-secret", "raw", "events/*.csv")
                .continuous(false),
        )
        .destination(
            Destination::new("d")
                .table("t")
                .managed_table(true)
                .column("c", "String"),
        )
        .field_mapping("c", "c")
        .build()
        .unwrap();
    assert!(!format!("{azure:?}").contains("azure-secret"));
    let json = serde_json::to_value(azure.as_raw()).unwrap();
    assert_eq!(
        json["source"]["objectStorage"]["connectionString"],
        "AccountKey=azure-secret"
    );
    assert_eq!(json["source"]["objectStorage"]["isContinuous"], false);
}

#[test]
fn a_request_from_json_keeps_every_member_and_is_checked_as_the_builder_checks() {
    let request = serde_json::json!({
        "name": "orders",
        "source": {"kafka": {"brokers": "b:9092", "topics": "orders",
                              "credentials": {"username": "reader", "password": "kafka-pass"}}},
        "destination": {"database": "d", "table": "t", "managedTable": true,
                        "columns": [{"name": "id", "type": "UInt64"}]},
        "fieldMappings": [{"sourceField": "id", "destinationField": "id"}],
        "scaling": {"replicas": 2.0, "replicaMemoryGb": 0.50},
        "settings": {"kafka_max_poll_records": 500.0},
    });
    let pipe = NewPipe::from_json(request.clone()).unwrap();
    assert_eq!(pipe.source_kind(), SourceKind::Kafka);
    let sent = serde_json::to_value(pipe.as_raw()).unwrap();
    assert_eq!(
        sent["scaling"]["replicas"], 2,
        "a whole float is an integer"
    );
    assert_eq!(sent["settings"]["kafka_max_poll_records"], 500);
    assert_eq!(pipe.secrets().len(), 1);
    let again = NewPipe::from_request(pipe.as_raw().clone()).unwrap();
    assert_eq!(serde_json::to_value(again.as_raw()).unwrap(), sent);

    let mut wrong = request;
    wrong["sorce"] = serde_json::json!({});
    wrong["source"]["kinesis"] = serde_json::json!({"streamName": " ", "region": "r"});
    wrong["scaling"]["replicas"] = serde_json::json!(41);
    wrong["fieldMappings"][0]["destinationField"] = serde_json::json!("nope");
    let shown: Vec<String> = NewPipe::from_json(wrong)
        .unwrap_err()
        .problems
        .into_iter()
        .map(|p| format!("{}: {}", p.path, p.message))
        .collect();
    assert_eq!(
        shown,
        [
            "scaling.replicas: must be between 1 and 40, got 41",
            "sorce: unknown member; expected one of: destination, fieldMappings, name, scaling, settings, source",
            "source: exactly one source kind is allowed (kafka, objectStorage, kinesis, postgres), got kafka and kinesis",
            "source.kinesis.streamName: required; must not be empty",
            "fieldMappings[0].destinationField: \"nope\" is not a destination column",
            "fieldMappings: every destination column must be mapped; not mapped: id",
        ]
    );
}

mod properties {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

        /// Any input gives a pipe that keeps every bound, or a validation error that names a path: never
        /// a panic.
        #[test]
        fn any_input_gives_a_pipe_or_a_validation_error(
            name in ".{0,300}",
            brokers in ".{0,20}",
            replicas in any::<u32>(),
            cpu in any::<u64>(),
            memory in any::<f64>(),
            wait_ms in any::<u64>(),
            max_bytes in any::<u64>(),
            port in any::<u16>(),
            postgres in any::<bool>(),
            column in ".{0,10}",
        ) {
            let builder = NewPipe::builder(name)
                .scaling(Scaling::new().replicas(replicas).replica_cpu_millicores(cpu).replica_memory_gb(memory))
                .settings(PipeSettings::new().streaming_max_insert_wait_ms(wait_ms).object_storage_max_insert_bytes(max_bytes));
            let builder = if postgres {
                builder
                    .source(PostgresSource::new(brokers, port, "db").credentials("u", "p").table(PostgresTableMapping::new("s", "t", "u")))
                    .destination(Destination::new("d"))
            } else {
                builder
                    .source(KafkaSource::new(brokers, "t"))
                    .destination(Destination::new("d").table("t").managed_table(true))
                    .mapped_column("f", column, "String")
            };
            match builder.build() {
                Ok(pipe) => {
                    let json = serde_json::to_value(pipe.as_raw()).unwrap();
                    let replicas = json["scaling"]["replicas"].as_u64().unwrap();
                    prop_assert!((1..=40).contains(&replicas));
                    let cpu = json["scaling"]["replicaCpuMillicores"].as_u64().unwrap();
                    prop_assert!((125..=2000).contains(&cpu));
                    let memory = json["scaling"]["replicaMemoryGb"].as_f64().unwrap();
                    prop_assert!((0.5..=8.0).contains(&memory));
                    let wait = json["settings"]["streaming_max_insert_wait_ms"].as_u64().unwrap();
                    prop_assert!((500..=60_000).contains(&wait));
                }
                Err(error) => {
                    prop_assert!(!error.problems.is_empty());
                    prop_assert!(error.problems.iter().all(|p| !p.path.is_empty() && !p.message.is_empty()));
                }
            }
        }
    }
}
