//! The spec against the contract (`api-description.md`, `api-decisions.md`): every operation and field with
//! its JSON type, request-only members only in requests, and open value sets in sync with the Rust types.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

fn load(name: &str) -> Value {
    let path = format!("{}/../spec/{name}.yaml", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
    serde_norway::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn schemas(spec: &Value) -> &serde_json::Map<String, Value> {
    spec["components"]["schemas"]
        .as_object()
        .expect("components.schemas")
}

/// Follows `$ref`s to the schema they name.
fn resolve<'a>(spec: &'a Value, schema: &'a Value) -> &'a Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(target) => resolve(
            spec,
            spec.pointer(&target[1..])
                .unwrap_or_else(|| panic!("{target}")),
        ),
        None => schema,
    }
}

/// The JSON types a schema admits (`oneOf` alternatives included).
fn json_types(spec: &Value, schema: &Value) -> BTreeSet<String> {
    let schema = resolve(spec, schema);
    if let Some(alternatives) = schema.get("oneOf").and_then(Value::as_array) {
        return alternatives
            .iter()
            .flat_map(|alt| json_types(spec, alt))
            .collect();
    }
    schema["type"]
        .as_str()
        .map(|t| BTreeSet::from([t.to_string()]))
        .unwrap_or_default()
}

/// Checks that `schema` has exactly the `expected` properties, each admitting its JSON type.
fn assert_fields(spec: &Value, schema: &str, expected: &[(&str, &str)]) {
    let properties = schemas(spec)[schema]["properties"]
        .as_object()
        .unwrap_or_else(|| panic!("{schema} has no properties"));
    let actual: BTreeSet<&str> = properties.keys().map(String::as_str).collect();
    let wanted: BTreeSet<&str> = expected.iter().map(|(name, _)| *name).collect();
    assert_eq!(actual, wanted, "fields of {schema}");
    for (name, ty) in expected {
        let types = json_types(spec, &properties[*name]);
        let ok = types.contains(*ty) || (*ty == "integer" && types.contains("number"));
        assert!(
            ok,
            "{schema}.{name} should be {ty}, the spec says {types:?}"
        );
    }
}

const S: &str = "string";
const I: &str = "integer";
const N: &str = "number";
const B: &str = "boolean";
const O: &str = "object";
const A: &str = "array";

#[test]
fn every_operation_is_in_the_spec_with_its_method_and_path() {
    let mut found = BTreeSet::new();
    for (name, spec) in [
        ("management", load("management")),
        ("observability", load("observability")),
    ] {
        for (path, item) in spec["paths"].as_object().expect("paths") {
            for (method, op) in item.as_object().expect("path item") {
                if method != "parameters" {
                    let id = op["operationId"].as_str().expect("operationId");
                    found.insert(format!("{name} {} {path} {id}", method.to_uppercase()));
                }
            }
        }
    }
    let base = "/v1/organizations/{organizationId}/services/{serviceId}";
    let expected = BTreeSet::from([
        format!("management PATCH {base}/state updateServiceState"),
        format!("management POST {base}/pipes createPipe"),
        format!("management GET {base}/pipes/{{pipeId}} getPipe"),
        format!("management DELETE {base}/pipes/{{pipeId}} deletePipe"),
        format!("management GET {base}/pipes/{{pipeId}}/settings getPipeSettings"),
        format!("management GET {base}/pipesReversePrivateEndpoints listReversePrivateEndpoints"),
        format!("management POST {base}/privateEndpoint createPrivateEndpoint"),
        "observability GET /api/v2/alerts/{id} getAlert".to_string(),
        "observability GET /api/v2/dashboards listDashboards".to_string(),
    ]);
    assert_eq!(found, expected);
}

#[test]
fn management_path_parameters_are_uuids() {
    let spec = load("management");
    for name in ["OrganizationId", "ServiceId", "PipeId"] {
        let parameter = &spec["components"]["parameters"][name];
        assert_eq!(parameter["in"], "path");
        assert_eq!(parameter["schema"]["format"], "uuid", "{name}");
    }
}

#[test]
fn every_management_resource_field_is_in_the_spec() {
    let spec = load("management");
    let envelope = [("status", N), ("requestId", S), ("result", O)];
    assert_fields(&spec, "ServiceEnvelope", &envelope);
    assert_fields(&spec, "PipeEnvelope", &envelope);
    assert_fields(&spec, "PipeSettingsEnvelope", &envelope);
    assert_fields(&spec, "PrivateEndpointEnvelope", &envelope);
    assert_fields(
        &spec,
        "ReversePrivateEndpointListEnvelope",
        &[("status", N), ("requestId", S), ("result", A)],
    );
    assert_fields(&spec, "EmptyEnvelope", &[("status", N), ("requestId", S)]);
    assert_fields(
        &spec,
        "ManagementError",
        &[("status", N), ("error", S), ("requestId", S)],
    );
    assert_fields(
        &spec,
        "Pipe",
        &[
            ("id", S),
            ("serviceId", S),
            ("name", S),
            ("state", S),
            ("scaling", O),
            ("source", O),
            ("destination", O),
            ("fieldMappings", A),
            ("settings", O),
            ("createdAt", S),
            ("updatedAt", S),
        ],
    );
    let scaling = [
        ("replicas", I),
        ("concurrency", I),
        ("replicaCpuMillicores", I),
        ("replicaMemoryGb", N),
    ];
    assert_fields(&spec, "PipeScaling", &scaling);
    assert_fields(&spec, "PipeScalingRequest", &scaling);
    assert_fields(
        &spec,
        "PipeSource",
        &[
            ("kafka", O),
            ("objectStorage", O),
            ("kinesis", O),
            ("postgres", O),
        ],
    );
    let kafka = [
        ("brokers", S),
        ("topics", S),
        ("consumerGroup", S),
        ("iamRole", S),
        ("offset", O),
        ("schemaRegistry", O),
        ("caCertificate", S),
        ("reversePrivateEndpointIds", A),
    ];
    assert_fields(&spec, "KafkaSource", &kafka);
    assert_fields(&spec, "KafkaOffset", &[("timestamp", S)]);
    assert_fields(&spec, "KafkaOffsetRequest", &[("timestamp", S)]);
    assert_fields(&spec, "SchemaRegistry", &[("url", S), ("caCertificate", S)]);
    let object_storage = [
        ("url", S),
        ("delimiter", S),
        ("compression", S),
        ("isContinuous", B),
        ("queueUrl", S),
        ("iamRole", S),
        ("connectionString", S),
        ("path", S),
        ("azureContainerName", S),
    ];
    assert_fields(&spec, "ObjectStorageSource", &object_storage);
    let kinesis = [
        ("streamName", S),
        ("region", S),
        ("useEnhancedFanOut", B),
        ("timestamp", I),
        ("iamRole", S),
    ];
    assert_fields(&spec, "KinesisSource", &kinesis);
    let postgres = [
        ("host", S),
        ("port", I),
        ("database", S),
        ("settings", O),
        ("tableMappings", A),
    ];
    assert_fields(&spec, "PostgresSource", &postgres);
    let postgres_settings = [
        ("syncIntervalSeconds", I),
        ("pullBatchSize", I),
        ("publicationName", S),
        ("replicationSlotName", S),
        ("allowNullableColumns", B),
        ("initialLoadParallelism", I),
        ("snapshotNumRowsPerPartition", I),
        ("snapshotNumberOfParallelTables", I),
        ("enableFailoverSlots", B),
    ];
    assert_fields(&spec, "PostgresSettings", &postgres_settings);
    assert_fields(&spec, "PostgresSettingsRequest", &postgres_settings);
    assert_fields(
        &spec,
        "PostgresTableMapping",
        &[
            ("sourceSchemaName", S),
            ("sourceTable", S),
            ("targetTable", S),
            ("excludedColumns", A),
            ("useCustomSortingKey", B),
            ("sortingKeys", A),
        ],
    );
    let destination = [
        ("database", S),
        ("table", S),
        ("managedTable", B),
        ("tableDefinition", O),
        ("columns", A),
    ];
    assert_fields(&spec, "PipeDestination", &destination);
    assert_fields(
        &spec,
        "TableDefinition",
        &[
            ("engine", O),
            ("sortingKey", A),
            ("partitionBy", S),
            ("primaryKey", S),
        ],
    );
    assert_fields(
        &spec,
        "TableEngine",
        &[("versionColumnId", S), ("columnIds", A)],
    );
    assert_fields(&spec, "DestinationColumn", &[("name", S), ("type", S)]);
    assert_fields(
        &spec,
        "FieldMapping",
        &[("sourceField", S), ("destinationField", S)],
    );
    let settings = [
        ("streaming_max_insert_wait_ms", I),
        ("object_storage_concurrency", I),
        ("object_storage_polling_interval_ms", I),
        ("object_storage_max_insert_bytes", I),
        ("object_storage_max_file_count", I),
        ("db_max_threads", I),
        ("db_max_insert_threads", I),
        ("db_min_insert_block_size_bytes", I),
        ("db_max_download_threads", I),
        ("db_parallel_distributed_insert_select", I),
        ("object_storage_use_cluster_function", B),
        ("db_parallel_view_processing", B),
    ];
    assert_fields(&spec, "PipeSettings", &settings);
    assert_fields(&spec, "PipeSettingsRequest", &settings);
    assert_fields(
        &spec,
        "ReversePrivateEndpoint",
        &[
            ("id", S),
            ("serviceId", S),
            ("description", S),
            ("type", S),
            ("vpcEndpointServiceName", S),
            ("vpcResourceConfigurationId", S),
            ("vpcResourceShareArn", S),
            ("mskClusterArn", S),
            ("mskAuthentication", S),
            ("endpointId", S),
            ("dnsNames", A),
            ("privateDnsNames", A),
            ("status", S),
        ],
    );
    assert_fields(
        &spec,
        "Service",
        &[
            ("id", S),
            ("name", S),
            ("state", S),
            ("dbVersion", S),
            ("endpoints", A),
            ("minTotalMemoryGb", N),
            ("maxTotalMemoryGb", N),
            ("minReplicaMemoryGb", N),
            ("maxReplicaMemoryGb", N),
            ("numReplicas", N),
            ("idleScaling", B),
            ("idleTimeoutMinutes", N),
            ("ipAccessList", A),
            ("createdAt", S),
            ("encryptionKey", S),
            ("encryptionAssumedRoleIdentifier", S),
            ("iamRole", S),
            ("privateEndpointIds", A),
            ("availablePrivateEndpointIds", A),
            ("dataWarehouseId", S),
            ("isPrimary", B),
            ("isReadonly", B),
            ("byocId", S),
            ("hasTransparentDataEncryption", B),
            ("transparentDataEncryptionKeyId", S),
            ("encryptionRoleId", S),
        ],
    );
    assert_fields(
        &spec,
        "ServiceEndpoint",
        &[("protocol", S), ("host", S), ("port", I), ("username", S)],
    );
    assert_fields(
        &spec,
        "IpAccessListEntry",
        &[("source", S), ("description", S)],
    );
    assert_fields(&spec, "ServiceStateChangeRequest", &[("command", S)]);
    assert_fields(
        &spec,
        "PrivateEndpointCreateRequest",
        &[("id", S), ("description", S)],
    );
    assert_fields(&spec, "PrivateEndpoint", &[("id", S), ("description", S)]);

    // Request shapes: the response fields plus exactly the request-only members.
    assert_fields(
        &spec,
        "PipeCreateRequest",
        &[
            ("name", S),
            ("source", O),
            ("destination", O),
            ("fieldMappings", A),
            ("scaling", O),
            ("settings", O),
        ],
    );
    assert_fields(
        &spec,
        "PipeSourceRequest",
        &[
            ("kafka", O),
            ("objectStorage", O),
            ("kinesis", O),
            ("postgres", O),
            ("validateSamples", B),
        ],
    );
    assert_fields(
        &spec,
        "KafkaSourceRequest",
        &[&kafka[..], &[("credentials", O)]].concat(),
    );
    assert_fields(
        &spec,
        "SchemaRegistryRequest",
        &[("url", S), ("caCertificate", S), ("credentials", O)],
    );
    assert_fields(
        &spec,
        "ObjectStorageSourceRequest",
        &[&object_storage[..], &[("accessKey", O)]].concat(),
    );
    assert_fields(
        &spec,
        "KinesisSourceRequest",
        &[&kinesis[..], &[("accessKey", O)]].concat(),
    );
    assert_fields(
        &spec,
        "PostgresSourceRequest",
        &[&postgres[..], &[("credentials", O)]].concat(),
    );
    assert_fields(
        &spec,
        "PipeDestinationRequest",
        &[&destination[..], &[("roles", A)]].concat(),
    );
    assert_fields(
        &spec,
        "UsernamePassword",
        &[("username", S), ("password", S)],
    );
    assert_fields(&spec, "AccessKey", &[("accessKeyId", S), ("secretKey", S)]);
}

#[test]
fn every_observability_resource_field_is_in_the_spec() {
    let spec = load("observability");
    assert_fields(&spec, "AlertEnvelope", &[("data", O)]);
    assert_fields(&spec, "DashboardListEnvelope", &[("data", A)]);
    assert_fields(&spec, "ObservabilityError", &[("message", S)]);
    assert_fields(
        &spec,
        "Alert",
        &[
            ("id", S),
            ("name", S),
            ("message", S),
            ("threshold", N),
            ("interval", S),
            ("thresholdType", S),
            ("source", S),
            ("state", S),
            ("channel", O),
            ("team", S),
            ("tileId", S),
            ("dashboard", S),
            ("createdAt", S),
            ("updatedAt", S),
        ],
    );
    assert_fields(&spec, "AlertChannel", &[("type", S), ("webhookId", S)]);
    assert_fields(
        &spec,
        "Dashboard",
        &[("id", S), ("name", S), ("tiles", A), ("tags", A)],
    );
    assert_fields(
        &spec,
        "Tile",
        &[
            ("id", S),
            ("name", S),
            ("x", I),
            ("y", I),
            ("w", I),
            ("h", I),
            ("asRatio", B),
            ("series", A),
        ],
    );
    assert_fields(
        &spec,
        "TileSeries",
        &[
            ("sourceId", S),
            ("aggFn", S),
            ("where", S),
            ("groupBy", A),
            ("field", S),
            ("whereLanguage", S),
            ("metricName", S),
            ("metricDataType", S),
            ("type", S),
            ("dataSource", S),
        ],
    );
}

/// Every schema reachable from `schema`, following `$ref`, properties, items and `oneOf`/`allOf`.
fn reachable(spec: &Value, schema: &Value, seen: &mut BTreeSet<String>, out: &mut Vec<Value>) {
    if let Some(target) = schema.get("$ref").and_then(Value::as_str) {
        if seen.insert(target.to_string()) {
            reachable(spec, resolve(spec, schema), seen, out);
        }
        return;
    }
    out.push(schema.clone());
    for key in ["properties"] {
        if let Some(props) = schema.get(key).and_then(Value::as_object) {
            for child in props.values() {
                reachable(spec, child, seen, out);
            }
        }
    }
    if let Some(items) = schema.get("items") {
        reachable(spec, items, seen, out);
    }
    for key in ["oneOf", "allOf", "anyOf"] {
        for child in schema
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            reachable(spec, child, seen, out);
        }
    }
}

fn response_property_names(spec: &Value) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut all = Vec::new();
    for item in spec["paths"].as_object().expect("paths").values() {
        for (method, op) in item.as_object().expect("path item") {
            if method == "parameters" {
                continue;
            }
            for (status, response) in op["responses"].as_object().expect("responses") {
                let response = resolve(spec, response);
                for media in response["content"]
                    .as_object()
                    .into_iter()
                    .flat_map(|c| c.values())
                {
                    if let Some(schema) = media.get("schema") {
                        assert!(!status.is_empty());
                        reachable(spec, schema, &mut seen, &mut all);
                    }
                }
            }
        }
    }
    all.iter()
        .filter_map(|s| s.get("properties").and_then(Value::as_object))
        .flat_map(|props| props.keys().cloned())
        .collect()
}

#[test]
fn request_only_members_never_appear_in_a_response_schema() {
    let spec = load("management");
    let names = response_property_names(&spec);
    assert!(
        names.contains("connectionString"),
        "the walk reaches the pipe source"
    );
    for request_only in [
        "credentials",
        "accessKey",
        "validateSamples",
        "roles",
        "password",
        "secretKey",
    ] {
        assert!(
            !names.contains(request_only),
            "{request_only} appears in a response schema"
        );
    }
}

/// The open value sets of the spec, by schema name.
fn extensible_enums(spec: &Value) -> BTreeMap<String, Vec<String>> {
    schemas(spec)
        .iter()
        .filter_map(|(name, schema)| {
            let values = schema.get("x-extensible-enum")?.as_array()?;
            assert!(
                schema.get("enum").is_none(),
                "{name} is open and must not also be a closed enum"
            );
            assert_eq!(
                schema["x-api-raw-type"],
                name.as_str(),
                "{name} maps to its open Rust type"
            );
            Some((
                name.clone(),
                values
                    .iter()
                    .map(|v| v.as_str().expect("string").to_string())
                    .collect(),
            ))
        })
        .collect()
}

fn known(values: &[&str]) -> Vec<String> {
    values.iter().map(|v| v.to_string()).collect()
}

#[test]
fn open_value_sets_match_the_rust_types() {
    use api_raw::support::*;
    let management = BTreeMap::from([
        ("Compression".to_string(), known(Compression::KNOWN)),
        (
            "MskAuthentication".to_string(),
            known(MskAuthentication::KNOWN),
        ),
        ("PipeState".to_string(), known(PipeState::KNOWN)),
        (
            "ReversePrivateEndpointStatus".to_string(),
            known(ReversePrivateEndpointStatus::KNOWN),
        ),
        (
            "ReversePrivateEndpointType".to_string(),
            known(ReversePrivateEndpointType::KNOWN),
        ),
        (
            "ServiceEndpointProtocol".to_string(),
            known(ServiceEndpointProtocol::KNOWN),
        ),
        ("ServiceState".to_string(), known(ServiceState::KNOWN)),
    ]);
    assert_eq!(extensible_enums(&load("management")), management);
    let observability = BTreeMap::from([
        (
            "AlertChannelType".to_string(),
            known(AlertChannelType::KNOWN),
        ),
        ("AlertInterval".to_string(), known(AlertInterval::KNOWN)),
        ("AlertSource".to_string(), known(AlertSource::KNOWN)),
        ("AlertState".to_string(), known(AlertState::KNOWN)),
        (
            "AlertThresholdType".to_string(),
            known(AlertThresholdType::KNOWN),
        ),
        ("MetricDataType".to_string(), known(MetricDataType::KNOWN)),
        ("SeriesAggFn".to_string(), known(SeriesAggFn::KNOWN)),
        (
            "SeriesDataSource".to_string(),
            known(SeriesDataSource::KNOWN),
        ),
        ("SeriesType".to_string(), known(SeriesType::KNOWN)),
        ("WhereLanguage".to_string(), known(WhereLanguage::KNOWN)),
    ]);
    assert_eq!(extensible_enums(&load("observability")), observability);
}

#[test]
fn secrets_are_the_redacting_type() {
    let spec = load("management");
    let secret_ref = "#/components/schemas/Secret";
    for (schema, field) in [
        ("UsernamePassword", "password"),
        ("AccessKey", "secretKey"),
        ("ObjectStorageSource", "connectionString"),
        ("ObjectStorageSourceRequest", "connectionString"),
    ] {
        assert_eq!(
            schemas(&spec)[schema]["properties"][field]["$ref"],
            secret_ref,
            "{schema}.{field}"
        );
    }
    assert_eq!(schemas(&spec)["Secret"]["x-api-raw-type"], "Secret");
}

#[test]
fn both_documents_declare_servers_and_security() {
    let management = load("management");
    assert_eq!(
        management["components"]["securitySchemes"]["basicAuth"]["scheme"],
        "basic"
    );
    assert_eq!(management["servers"][0]["url"], "{base_url}");
    let observability = load("observability");
    assert_eq!(
        observability["components"]["securitySchemes"]["bearerAuth"]["scheme"],
        "bearer"
    );
    assert_eq!(observability["servers"][0]["url"], "{observability_url}");
    for spec in [&management, &observability] {
        assert!(
            spec["openapi"]
                .as_str()
                .expect("openapi")
                .starts_with("3.0.")
        );
    }
}

#[test]
fn the_sdk_operation_table_matches_the_spec() {
    use api_mgmt::client::Idempotency;
    let mut from_spec = BTreeSet::new();
    for name in ["management", "observability"] {
        let spec = load(name);
        for (path, item) in spec["paths"].as_object().expect("paths") {
            for (method, op) in item.as_object().expect("path item") {
                if method != "parameters" {
                    from_spec.insert((
                        op["operationId"].as_str().unwrap().to_string(),
                        method.to_uppercase(),
                        path.clone(),
                    ));
                }
            }
        }
    }
    let mut from_sdk = BTreeSet::new();
    for op in api_mgmt::raw::operations::ALL
        .iter()
        .chain(api_obs::raw::operations::ALL.iter())
    {
        from_sdk.insert((
            op.id.to_string(),
            op.method.to_string(),
            op.path.to_string(),
        ));
        let safe = matches!(op.method, "GET" | "DELETE" | "PATCH");
        assert_eq!(
            op.idempotency == Idempotency::Idempotent,
            safe,
            "{} retry class",
            op.id
        );
    }
    assert_eq!(from_sdk, from_spec);
}

/// `(minimum, maximum)` of every bounded integer property of a request schema.
fn bounds(spec: &Value, schema: &str) -> BTreeMap<String, (i64, Option<i64>)> {
    schemas(spec)[schema]["properties"]
        .as_object()
        .expect("properties")
        .iter()
        .filter_map(|(name, p)| {
            Some((
                name.clone(),
                (p["minimum"].as_i64()?, p["maximum"].as_i64()),
            ))
        })
        .collect()
}

#[test]
fn the_builder_bounds_are_the_spec_bounds() {
    let spec = load("management");
    let from_spec = bounds(&spec, "PipeSettingsRequest");
    let from_sdk: BTreeMap<String, (i64, Option<i64>)> = api_mgmt::pipes::PipeSettings::BOUNDS
        .iter()
        .map(|(name, min, max)| {
            let int = |v: u64| i64::try_from(v).expect("bounds fit i64");
            (name.to_string(), (int(*min), Some(int(*max))))
        })
        .collect();
    assert_eq!(from_sdk, from_spec);
    // The decisions page, for the settings whose bounds are easiest to get wrong.
    assert_eq!(
        from_spec["object_storage_max_insert_bytes"],
        (10_485_760, Some(53_687_091_200))
    );
    assert_eq!(
        from_spec["db_min_insert_block_size_bytes"],
        (0, Some(10_737_418_240))
    );
    let scaling = bounds(&spec, "PipeScalingRequest");
    assert_eq!(scaling["replicas"], (1, Some(40)));
    assert_eq!(scaling["replicaCpuMillicores"], (125, Some(2000)));
    let postgres = bounds(&spec, "PostgresSettingsRequest");
    assert_eq!(postgres["snapshotNumRowsPerPartition"], (1000, None));
}
