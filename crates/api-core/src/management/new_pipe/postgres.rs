//! [`PostgresSource`]: change data capture from a Postgres database.

use api_raw::support::Secret;
use serde_json::{Map, Value};

use super::kafka::{credentials, put};

/// One source table copied into one destination table.
#[derive(Debug, Clone, Default)]
pub struct PostgresTableMapping {
    source_schema_name: String,
    source_table: String,
    target_table: String,
    excluded_columns: Vec<String>,
    sorting_keys: Vec<String>,
}

impl PostgresTableMapping {
    /// Copies `schema.table` into `target_table`.
    pub fn new(
        schema: impl Into<String>,
        table: impl Into<String>,
        target_table: impl Into<String>,
    ) -> Self {
        Self {
            source_schema_name: schema.into(),
            source_table: table.into(),
            target_table: target_table.into(),
            ..Self::default()
        }
    }

    /// Leave this column out; may be called repeatedly.
    pub fn exclude_column(mut self, column: impl Into<String>) -> Self {
        self.excluded_columns.push(column.into());
        self
    }

    /// Sort the destination by these columns instead of the primary key.
    pub fn sorting_keys<I: IntoIterator<Item = S>, S: Into<String>>(mut self, keys: I) -> Self {
        self.sorting_keys = keys.into_iter().map(Into::into).collect();
        self
    }

    fn to_json(&self) -> Value {
        let mut mapping = Map::new();
        mapping.insert(
            "sourceSchemaName".into(),
            self.source_schema_name.clone().into(),
        );
        mapping.insert("sourceTable".into(), self.source_table.clone().into());
        mapping.insert("targetTable".into(), self.target_table.clone().into());
        if !self.excluded_columns.is_empty() {
            mapping.insert(
                "excludedColumns".into(),
                self.excluded_columns.clone().into(),
            );
        }
        // The SDK sends useCustomSortingKey: true exactly when sorting keys are given.
        if !self.sorting_keys.is_empty() {
            mapping.insert("useCustomSortingKey".into(), true.into());
            mapping.insert("sortingKeys".into(), self.sorting_keys.clone().into());
        }
        Value::Object(mapping)
    }
}

/// Replication settings of a Postgres source, checked against their bounds.
#[derive(Debug, Clone, Default)]
pub struct PostgresSettingsSpec {
    sync_interval_seconds: Option<u64>,
    pull_batch_size: Option<u64>,
    publication_name: Option<String>,
    replication_slot_name: Option<String>,
    allow_nullable_columns: Option<bool>,
    initial_load_parallelism: Option<u64>,
    snapshot_num_rows_per_partition: Option<u64>,
    snapshot_number_of_parallel_tables: Option<u64>,
    enable_failover_slots: Option<bool>,
}

impl PostgresSettingsSpec {
    /// No settings: the server's defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Seconds between syncs (>= 1).
    pub fn sync_interval_seconds(mut self, seconds: u64) -> Self {
        self.sync_interval_seconds = Some(seconds);
        self
    }

    /// Rows pulled per batch (>= 1).
    pub fn pull_batch_size(mut self, rows: u64) -> Self {
        self.pull_batch_size = Some(rows);
        self
    }

    /// The publication to read.
    pub fn publication_name(mut self, name: impl Into<String>) -> Self {
        self.publication_name = Some(name.into());
        self
    }

    /// The replication slot to use.
    pub fn replication_slot_name(mut self, name: impl Into<String>) -> Self {
        self.replication_slot_name = Some(name.into());
        self
    }

    /// Allow nullable columns in the destination.
    pub fn allow_nullable_columns(mut self, allow: bool) -> Self {
        self.allow_nullable_columns = Some(allow);
        self
    }

    /// Parallelism of the initial load (>= 1).
    pub fn initial_load_parallelism(mut self, parallelism: u64) -> Self {
        self.initial_load_parallelism = Some(parallelism);
        self
    }

    /// Rows per snapshot partition (>= 1000).
    pub fn snapshot_num_rows_per_partition(mut self, rows: u64) -> Self {
        self.snapshot_num_rows_per_partition = Some(rows);
        self
    }

    /// Tables snapshotted in parallel (>= 1).
    pub fn snapshot_number_of_parallel_tables(mut self, tables: u64) -> Self {
        self.snapshot_number_of_parallel_tables = Some(tables);
        self
    }

    /// Use failover replication slots.
    pub fn enable_failover_slots(mut self, enable: bool) -> Self {
        self.enable_failover_slots = Some(enable);
        self
    }

    fn to_json(&self) -> Value {
        let mut settings = Map::new();
        let mut number = |name: &str, value: Option<u64>| {
            if let Some(value) = value {
                settings.insert(name.into(), value.into());
            }
        };
        number("syncIntervalSeconds", self.sync_interval_seconds);
        number("pullBatchSize", self.pull_batch_size);
        number("initialLoadParallelism", self.initial_load_parallelism);
        number(
            "snapshotNumRowsPerPartition",
            self.snapshot_num_rows_per_partition,
        );
        number(
            "snapshotNumberOfParallelTables",
            self.snapshot_number_of_parallel_tables,
        );
        put(&mut settings, "publicationName", &self.publication_name);
        put(
            &mut settings,
            "replicationSlotName",
            &self.replication_slot_name,
        );
        for (name, flag) in [
            ("allowNullableColumns", self.allow_nullable_columns),
            ("enableFailoverSlots", self.enable_failover_slots),
        ] {
            if let Some(flag) = flag {
                settings.insert(name.into(), flag.into());
            }
        }
        Value::Object(settings)
    }
}

/// A Postgres source: host, port, database, credentials and at least one table mapping.
///
/// ```
/// use api_core::management::{PostgresSource, PostgresTableMapping};
///
/// let source = PostgresSource::new("crm-db.internal.example", 5432, "crm")
///     .credentials("replicator", "pg-password")
///     .table(PostgresTableMapping::new("public", "customers", "crm_customers").exclude_column("ssn"));
/// # let _ = source;
/// ```
#[derive(Debug, Clone)]
pub struct PostgresSource {
    host: String,
    port: u16,
    database: String,
    settings: Option<PostgresSettingsSpec>,
    table_mappings: Vec<PostgresTableMapping>,
    credentials: Option<(String, Secret)>,
}

impl PostgresSource {
    /// Replicates from `database` at `host:port` (port 1 to 65535).
    pub fn new(host: impl Into<String>, port: u16, database: impl Into<String>) -> Self {
        Self {
            host: host.into(),
            port,
            database: database.into(),
            settings: None,
            table_mappings: Vec::new(),
            credentials: None,
        }
    }

    /// The database user and password (required; sent, never returned or shown).
    pub fn credentials(mut self, username: impl Into<String>, password: impl Into<Secret>) -> Self {
        self.credentials = Some((username.into(), password.into()));
        self
    }

    /// Replicate this table; at least one is required.
    pub fn table(mut self, mapping: PostgresTableMapping) -> Self {
        self.table_mappings.push(mapping);
        self
    }

    /// Replication settings.
    pub fn settings(mut self, settings: PostgresSettingsSpec) -> Self {
        self.settings = Some(settings);
        self
    }

    /// The request form, unchecked (the checks run on the whole request).
    pub(super) fn to_json(&self) -> Value {
        let mut postgres = Map::new();
        postgres.insert("host".into(), self.host.clone().into());
        postgres.insert("port".into(), self.port.into());
        postgres.insert("database".into(), self.database.clone().into());
        if let Some(settings) = &self.settings {
            postgres.insert("settings".into(), settings.to_json());
        }
        let tables = self
            .table_mappings
            .iter()
            .map(PostgresTableMapping::to_json);
        postgres.insert("tableMappings".into(), Value::Array(tables.collect()));
        if let Some((user, pass)) = &self.credentials {
            postgres.insert("credentials".into(), credentials(user, pass));
        }
        Value::Object(postgres)
    }
}
