//! From a pipe file's document to the SDK's [`NewPipe`] builder, so that the builder's own rules check
//! the request; the problems of both are returned together, each with its path and line.

use std::str::FromStr;

use api_mgmt::{
    Compression, Destination, KafkaSource, KinesisSource, NewPipe, NewPipeBuilder,
    ObjectStorageSource, PipeSettings, PostgresSettingsSpec, PostgresSource, PostgresTableMapping,
    Problem, ReversePrivateEndpointId, Scaling, SchemaRegistry, Secret, Source, TableDefinition,
    TableEngine,
};
use chrono::NaiveDateTime;

use super::document::{Node, Value};
use super::reader::{Fields, FileProblem, Lookup, Reader};

const ROOT: &[&str] = &[
    "name",
    "source",
    "destination",
    "fieldMappings",
    "scaling",
    "settings",
];
const SOURCE: &[&str] = &[
    "kafka",
    "objectStorage",
    "kinesis",
    "postgres",
    "validateSamples",
];
const KINDS: [&str; 4] = ["kafka", "objectStorage", "kinesis", "postgres"];
const KAFKA: &[&str] = &[
    "brokers",
    "topics",
    "consumerGroup",
    "iamRole",
    "offset",
    "schemaRegistry",
    "caCertificate",
    "reversePrivateEndpointIds",
    "credentials",
];
const OBJECT_STORAGE: &[&str] = &[
    "url",
    "delimiter",
    "compression",
    "isContinuous",
    "queueUrl",
    "iamRole",
    "connectionString",
    "path",
    "azureContainerName",
    "accessKey",
];
const KINESIS: &[&str] = &[
    "streamName",
    "region",
    "useEnhancedFanOut",
    "timestamp",
    "iamRole",
    "accessKey",
];
const POSTGRES: &[&str] = &[
    "host",
    "port",
    "database",
    "settings",
    "tableMappings",
    "credentials",
];
const POSTGRES_SETTINGS: &[&str] = &[
    "syncIntervalSeconds",
    "pullBatchSize",
    "publicationName",
    "replicationSlotName",
    "allowNullableColumns",
    "initialLoadParallelism",
    "snapshotNumRowsPerPartition",
    "snapshotNumberOfParallelTables",
    "enableFailoverSlots",
];
const TABLE_MAPPING: &[&str] = &[
    "sourceSchemaName",
    "sourceTable",
    "targetTable",
    "excludedColumns",
    "useCustomSortingKey",
    "sortingKeys",
];
const DESTINATION: &[&str] = &[
    "database",
    "table",
    "managedTable",
    "tableDefinition",
    "columns",
    "roles",
];
const TABLE_DEFINITION: &[&str] = &["engine", "sortingKey", "partitionBy", "primaryKey"];
const ENGINE: &[&str] = &["versionColumnId", "columnIds"];
const COLUMN: &[&str] = &["name", "type"];
const FIELD_MAPPING: &[&str] = &["sourceField", "destinationField"];
const SCALING: &[&str] = &[
    "replicas",
    "concurrency",
    "replicaCpuMillicores",
    "replicaMemoryGb",
];
const CREDENTIALS: &[&str] = &["username", "password"];
const ACCESS_KEY: &[&str] = &["accessKeyId", "secretKey"];
const SCHEMA_REGISTRY: &[&str] = &["url", "caCertificate", "credentials"];
const OFFSET: &[&str] = &["timestamp"];

/// Checks the document and builds the request; every problem found, with path and line, otherwise.
pub(crate) fn new_pipe(document: &Node, env: Lookup<'_>) -> Result<NewPipe, Vec<FileProblem>> {
    let mut r = Reader::new(env);
    let Some(mut root) = r.mapping(document, ".") else {
        if document.value == Value::Null {
            r.problem(".", "the file is empty; expected a pipe create request");
        }
        return Err(r.into_problems());
    };
    let name = root.text(&mut r, "name").unwrap_or_default();
    let mut builder = NewPipe::builder(name);
    let mut kinds = Kinds::default();
    if let Some(source) = root.mapping(&mut r, "source") {
        (builder, kinds) = read_source(&mut r, source, builder);
    }
    if let Some(destination) = root.mapping(&mut r, "destination") {
        builder = builder.destination(read_destination(&mut r, destination));
    }
    for (item, path) in root.list(&mut r, "fieldMappings") {
        if let Some(mut mapping) = r.mapping(item, &path) {
            let source_field = mapping.text(&mut r, "sourceField").unwrap_or_default();
            let destination_field = mapping.text(&mut r, "destinationField").unwrap_or_default();
            mapping.finish(&mut r, FIELD_MAPPING);
            builder = builder.field_mapping(source_field, destination_field);
        }
    }
    if let Some(scaling) = root.mapping(&mut r, "scaling") {
        builder = builder.scaling(read_scaling(&mut r, scaling));
    }
    if let Some(settings) = root.mapping(&mut r, "settings") {
        builder = builder.settings(read_settings(&mut r, settings));
    }
    root.finish(&mut r, ROOT);

    // A file with several source kinds is wrong once, at `source`; each kind is still checked by the
    // builder's rules, so that everything else wrong in it is listed too.
    for other in kinds.others {
        if let Err(invalid) = builder.clone().source(other).build() {
            let problems = invalid.problems.into_iter();
            take_builder_problems(&mut r, problems.filter(|p| p.path.starts_with("source.")));
        }
    }
    let built = builder.build();
    if let Err(invalid) = &built {
        take_builder_problems(&mut r, invalid.problems.iter().cloned());
    }
    if let Some((path, message)) = kinds.conflict {
        r.problem(&path, message);
    }
    match built {
        Ok(pipe) if r.has_no_problems() => Ok(pipe),
        _ => Err(r.into_problems()),
    }
}

/// Adds the builder's problems, except where the file's reading already found something wrong (a
/// member the file got wrong is reported once, as the file's problem).
fn take_builder_problems(r: &mut Reader<'_>, problems: impl Iterator<Item = Problem>) {
    for problem in problems {
        if !r.has_problem_at_or_above(&problem.path) {
            r.problem(&problem.path, problem.message);
        }
    }
}

/// The source kinds of a file beyond the first, and the problem of having several.
#[derive(Default)]
struct Kinds {
    others: Vec<Source>,
    conflict: Option<(String, String)>,
}

fn read_source(
    r: &mut Reader<'_>,
    mut source: Fields<'_>,
    builder: NewPipeBuilder,
) -> (NewPipeBuilder, Kinds) {
    let mut builder = builder;
    let validate = source.boolean(r, "validateSamples");
    let mut kinds: Vec<(&str, Source)> = Vec::new();
    if let Some(kafka) = source.mapping(r, "kafka") {
        kinds.push(("kafka", read_kafka(r, kafka).into()));
    }
    if let Some(storage) = source.mapping(r, "objectStorage") {
        kinds.push(("objectStorage", read_object_storage(r, storage).into()));
    }
    if let Some(kinesis) = source.mapping(r, "kinesis") {
        kinds.push(("kinesis", read_kinesis(r, kinesis).into()));
    }
    if let Some(postgres) = source.mapping(r, "postgres") {
        kinds.push(("postgres", read_postgres(r, postgres).into()));
    }
    let conflict = (kinds.len() > 1).then(|| {
        let names: Vec<&str> = kinds.iter().map(|(name, _)| *name).collect();
        (
            source.own_path().to_string(),
            format!(
                "exactly one source kind is allowed ({}), got {}",
                KINDS.join(", "),
                names.join(" and ")
            ),
        )
    });
    source.finish(r, SOURCE);
    let mut sources = kinds.into_iter().map(|(_, source)| source);
    // No kind at all is the builder's problem to report.
    if let Some(first) = sources.next() {
        builder = builder.source(first);
    }
    if let Some(validate) = validate {
        builder = builder.validate_samples(validate);
    }
    let others = sources.collect();
    (builder, Kinds { others, conflict })
}

fn read_kafka(r: &mut Reader<'_>, mut f: Fields<'_>) -> KafkaSource {
    let brokers = f.text(r, "brokers").unwrap_or_default();
    let topics = f.text(r, "topics").unwrap_or_default();
    let mut kafka = KafkaSource::new(brokers, topics);
    if let Some(group) = f.text(r, "consumerGroup") {
        kafka = kafka.consumer_group(group);
    }
    if let Some(role) = f.text(r, "iamRole") {
        kafka = kafka.iam_role(role);
    }
    if let Some(mut offset) = f.mapping(r, "offset") {
        let path = offset.path("timestamp");
        if let Some(text) = offset.text(r, "timestamp") {
            match NaiveDateTime::parse_from_str(text.trim(), "%Y-%m-%dT%H:%M") {
                Ok(time) => kafka = kafka.start_at(time.and_utc()),
                Err(_) => r.problem(
                    &path,
                    format!("must be a UTC time in the form YYYY-MM-DDTHH:MM, got {text:?}"),
                ),
            }
        }
        offset.finish(r, OFFSET);
    }
    if let Some(mut registry) = f.mapping(r, "schemaRegistry") {
        let url = registry.text(r, "url").unwrap_or_default();
        let mut schema_registry = SchemaRegistry::new(url);
        if let Some(pem) = registry.text(r, "caCertificate") {
            schema_registry = schema_registry.ca_certificate(pem);
        }
        if let Some((username, password)) = read_credentials(r, &mut registry) {
            schema_registry = schema_registry.credentials(username, password);
        }
        registry.finish(r, SCHEMA_REGISTRY);
        kafka = kafka.schema_registry(schema_registry);
    }
    if let Some(pem) = f.text(r, "caCertificate") {
        kafka = kafka.ca_certificate(pem);
    }
    for (item, path) in f.list(r, "reversePrivateEndpointIds") {
        if let Some(text) = r.text(item, &path) {
            match ReversePrivateEndpointId::from_str(&text) {
                Ok(id) => kafka = kafka.reverse_private_endpoint(id),
                Err(e) => r.problem(&path, e.to_string()),
            }
        }
    }
    if let Some((username, password)) = read_credentials(r, &mut f) {
        kafka = kafka.credentials(username, password);
    }
    f.finish(r, KAFKA);
    kafka
}

/// `credentials: {username, password}`; an absent part is passed empty, for the builder to report.
fn read_credentials(r: &mut Reader<'_>, parent: &mut Fields<'_>) -> Option<(String, Secret)> {
    let mut credentials = parent.mapping(r, "credentials")?;
    let username = credentials.text(r, "username").unwrap_or_default();
    let password = credentials
        .secret(r, "password")
        .unwrap_or_else(|| Secret::new(""));
    credentials.finish(r, CREDENTIALS);
    Some((username, password))
}

/// `accessKey: {accessKeyId, secretKey}`; an absent part is passed empty, for the builder to report.
fn read_access_key(r: &mut Reader<'_>, parent: &mut Fields<'_>) -> Option<(String, Secret)> {
    let mut key = parent.mapping(r, "accessKey")?;
    let id = key.text(r, "accessKeyId").unwrap_or_default();
    let secret = key
        .secret(r, "secretKey")
        .unwrap_or_else(|| Secret::new(""));
    key.finish(r, ACCESS_KEY);
    Some((id, secret))
}

fn read_object_storage(r: &mut Reader<'_>, mut f: Fields<'_>) -> ObjectStorageSource {
    let url = f.text(r, "url");
    let url_path = f.path("url");
    let connection_string = f.secret(r, "connectionString");
    let container = f.text(r, "azureContainerName");
    let container_path = f.path("azureContainerName");
    let path = f.text(r, "path");
    let path_path = f.path("path");
    // The SDK's builder has two shapes: files at a URL, or a path in a container reached with a
    // connection string. A file mixing them is told which members belong together.
    let mut storage = match connection_string {
        Some(connection_string) => {
            if url.is_some() {
                r.problem(
                    &url_path,
                    "give either url, or connectionString with azureContainerName and path",
                );
            }
            if container.is_none() {
                r.problem(&container_path, "required with connectionString");
            }
            if path.is_none() {
                r.problem(&path_path, "required with connectionString");
            }
            ObjectStorageSource::azure(
                connection_string,
                container.unwrap_or_default(),
                path.unwrap_or_default(),
            )
        }
        None => {
            if container.is_some() {
                r.problem(&container_path, "used only with connectionString");
            }
            if path.is_some() {
                r.problem(&path_path, "used only with connectionString");
            }
            ObjectStorageSource::url(url.unwrap_or_default())
        }
    };
    if let Some(delimiter) = f.text(r, "delimiter") {
        storage = storage.delimiter(delimiter);
    }
    if let Some(compression) = f.text(r, "compression") {
        storage = storage.compression(Compression::from(compression));
    }
    if let Some(continuous) = f.boolean(r, "isContinuous") {
        storage = storage.continuous(continuous);
    }
    if let Some(queue) = f.text(r, "queueUrl") {
        storage = storage.queue_url(queue);
    }
    if let Some(role) = f.text(r, "iamRole") {
        storage = storage.iam_role(role);
    }
    if let Some((id, secret)) = read_access_key(r, &mut f) {
        storage = storage.access_key(id, secret);
    }
    f.finish(r, OBJECT_STORAGE);
    storage
}

fn read_kinesis(r: &mut Reader<'_>, mut f: Fields<'_>) -> KinesisSource {
    let stream = f.text(r, "streamName").unwrap_or_default();
    let region = f.text(r, "region").unwrap_or_default();
    let mut kinesis = KinesisSource::new(stream, region);
    if let Some(fan_out) = f.boolean(r, "useEnhancedFanOut") {
        kinesis = kinesis.enhanced_fan_out(fan_out);
    }
    if let Some(seconds) = f.signed(r, "timestamp") {
        kinesis = kinesis.start_at_unix_seconds(seconds);
    }
    if let Some(role) = f.text(r, "iamRole") {
        kinesis = kinesis.iam_role(role);
    }
    if let Some((id, secret)) = read_access_key(r, &mut f) {
        kinesis = kinesis.access_key(id, secret);
    }
    f.finish(r, KINESIS);
    kinesis
}

fn read_postgres(r: &mut Reader<'_>, mut f: Fields<'_>) -> PostgresSource {
    let host = f.text(r, "host").unwrap_or_default();
    let port_path = f.path("port");
    let present = f.has("port");
    // A missing or unusable port is reported here; 0 then only stands in, and nothing is sent.
    let port = f.unsigned_as::<u16>(r, "port");
    if !present {
        r.problem(&port_path, "required: 1 to 65535");
    }
    let database = f.text(r, "database").unwrap_or_default();
    let mut postgres = PostgresSource::new(host, port.unwrap_or(0), database);
    if let Some(settings) = f.mapping(r, "settings") {
        postgres = postgres.settings(read_postgres_settings(r, settings));
    }
    for (item, path) in f.list(r, "tableMappings") {
        if let Some(mapping) = r.mapping(item, &path) {
            postgres = postgres.table(read_table_mapping(r, mapping));
        }
    }
    let credentials_path = f.path("credentials");
    match read_credentials(r, &mut f) {
        Some((username, password)) => postgres = postgres.credentials(username, password),
        None if !r.has_problem_at_or_above(&credentials_path) => {
            r.problem(&credentials_path, "required: username and password");
        }
        None => {}
    }
    f.finish(r, POSTGRES);
    postgres
}

fn read_postgres_settings(r: &mut Reader<'_>, mut f: Fields<'_>) -> PostgresSettingsSpec {
    let mut spec = PostgresSettingsSpec::new();
    if let Some(v) = f.unsigned(r, "syncIntervalSeconds") {
        spec = spec.sync_interval_seconds(v);
    }
    if let Some(v) = f.unsigned(r, "pullBatchSize") {
        spec = spec.pull_batch_size(v);
    }
    if let Some(v) = f.text(r, "publicationName") {
        spec = spec.publication_name(v);
    }
    if let Some(v) = f.text(r, "replicationSlotName") {
        spec = spec.replication_slot_name(v);
    }
    if let Some(v) = f.boolean(r, "allowNullableColumns") {
        spec = spec.allow_nullable_columns(v);
    }
    if let Some(v) = f.unsigned(r, "initialLoadParallelism") {
        spec = spec.initial_load_parallelism(v);
    }
    if let Some(v) = f.unsigned(r, "snapshotNumRowsPerPartition") {
        spec = spec.snapshot_num_rows_per_partition(v);
    }
    if let Some(v) = f.unsigned(r, "snapshotNumberOfParallelTables") {
        spec = spec.snapshot_number_of_parallel_tables(v);
    }
    if let Some(v) = f.boolean(r, "enableFailoverSlots") {
        spec = spec.enable_failover_slots(v);
    }
    f.finish(r, POSTGRES_SETTINGS);
    spec
}

fn read_table_mapping(r: &mut Reader<'_>, mut f: Fields<'_>) -> PostgresTableMapping {
    let schema = f.text(r, "sourceSchemaName").unwrap_or_default();
    let table = f.text(r, "sourceTable").unwrap_or_default();
    let target = f.text(r, "targetTable").unwrap_or_default();
    let mut mapping = PostgresTableMapping::new(schema, table, target);
    for column in f.texts(r, "excludedColumns") {
        mapping = mapping.exclude_column(column);
    }
    let custom_path = f.path("useCustomSortingKey");
    let custom = f.boolean(r, "useCustomSortingKey");
    let keys = f.texts(r, "sortingKeys");
    // The SDK sends useCustomSortingKey: true exactly when sorting keys are given.
    match (custom, keys.is_empty()) {
        (Some(true), true) => r.problem(&custom_path, "true needs sortingKeys"),
        (Some(false), false) => r.problem(
            &custom_path,
            "sortingKeys are used only with useCustomSortingKey: true",
        ),
        _ => {}
    }
    if !keys.is_empty() {
        mapping = mapping.sorting_keys(keys);
    }
    f.finish(r, TABLE_MAPPING);
    mapping
}

fn read_destination(r: &mut Reader<'_>, mut f: Fields<'_>) -> Destination {
    let database = f.text(r, "database").unwrap_or_default();
    let mut destination = Destination::new(database);
    if let Some(table) = f.text(r, "table") {
        destination = destination.table(table);
    }
    if let Some(managed) = f.boolean(r, "managedTable") {
        destination = destination.managed_table(managed);
    }
    if let Some(mut definition) = f.mapping(r, "tableDefinition") {
        let mut table_definition = TableDefinition::default();
        if let Some(mut engine) = definition.mapping(r, "engine") {
            let mut table_engine = TableEngine::default();
            table_engine.version_column_id = engine.text(r, "versionColumnId");
            table_engine.column_ids = engine.texts(r, "columnIds");
            engine.finish(r, ENGINE);
            table_definition.engine = Some(table_engine);
        }
        table_definition.sorting_key = definition.texts(r, "sortingKey");
        table_definition.partition_by = definition.text(r, "partitionBy");
        table_definition.primary_key = definition.text(r, "primaryKey");
        definition.finish(r, TABLE_DEFINITION);
        destination.table_definition = Some(table_definition);
    }
    for (item, path) in f.list(r, "columns") {
        if let Some(mut column) = r.mapping(item, &path) {
            let name = column.text(r, "name").unwrap_or_default();
            let column_type = column.text(r, "type").unwrap_or_default();
            column.finish(r, COLUMN);
            destination = destination.column(name, column_type);
        }
    }
    for role in f.texts(r, "roles") {
        destination = destination.role(role);
    }
    f.finish(r, DESTINATION);
    destination
}

fn read_scaling(r: &mut Reader<'_>, mut f: Fields<'_>) -> Scaling {
    let mut scaling = Scaling::new();
    if let Some(replicas) = f.unsigned_as::<u32>(r, "replicas") {
        scaling = scaling.replicas(replicas);
    }
    if let Some(concurrency) = f.unsigned_as::<u32>(r, "concurrency") {
        scaling = scaling.concurrency(concurrency);
    }
    if let Some(cpu) = f.unsigned(r, "replicaCpuMillicores") {
        scaling = scaling.replica_cpu_millicores(cpu);
    }
    if let Some(memory) = f.number(r, "replicaMemoryGb") {
        scaling = scaling.replica_memory_gb(memory);
    }
    f.finish(r, SCALING);
    scaling
}

/// Known settings are checked by type (and by the builder against their bounds); any other setting
/// is sent as it is, as the SDK does with settings it does not know.
fn read_settings(r: &mut Reader<'_>, mut f: Fields<'_>) -> PipeSettings {
    let mut s = PipeSettings::new();
    s.streaming_max_insert_wait_ms = f.unsigned(r, "streaming_max_insert_wait_ms");
    s.object_storage_concurrency = f.unsigned(r, "object_storage_concurrency");
    s.object_storage_polling_interval_ms = f.unsigned(r, "object_storage_polling_interval_ms");
    s.object_storage_max_insert_bytes = f.unsigned(r, "object_storage_max_insert_bytes");
    s.object_storage_max_file_count = f.unsigned(r, "object_storage_max_file_count");
    s.db_max_threads = f.unsigned(r, "db_max_threads");
    s.db_max_insert_threads = f.unsigned(r, "db_max_insert_threads");
    s.db_min_insert_block_size_bytes = f.unsigned(r, "db_min_insert_block_size_bytes");
    s.db_max_download_threads = f.unsigned(r, "db_max_download_threads");
    s.db_parallel_distributed_insert_select =
        f.unsigned(r, "db_parallel_distributed_insert_select");
    s.object_storage_use_cluster_function = f.boolean(r, "object_storage_use_cluster_function");
    s.db_parallel_view_processing = f.boolean(r, "db_parallel_view_processing");
    for (name, node) in f.rest(r) {
        s.extra.insert(name.to_string(), node.value.to_json());
    }
    s
}
