//! [`PostgresSource`]: change data capture from a Postgres database.

use api_raw::management::types as raw;
use api_raw::support::Secret;

use super::checks::{bounded, non_empty, port};
use super::kafka::credentials;
use crate::error::Problems;

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

    fn lower(&self, p: &mut Problems, at: &str) -> raw::PostgresTableMapping {
        non_empty(
            p,
            &format!("{at}.sourceSchemaName"),
            &self.source_schema_name,
        );
        non_empty(p, &format!("{at}.sourceTable"), &self.source_table);
        non_empty(p, &format!("{at}.targetTable"), &self.target_table);
        let custom = !self.sorting_keys.is_empty();
        raw::PostgresTableMapping {
            source_schema_name: Some(self.source_schema_name.clone()),
            source_table: Some(self.source_table.clone()),
            target_table: Some(self.target_table.clone()),
            excluded_columns: (!self.excluded_columns.is_empty())
                .then(|| self.excluded_columns.clone()),
            use_custom_sorting_key: custom.then_some(true),
            sorting_keys: custom.then(|| self.sorting_keys.clone()),
        }
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

    fn lower(&self, p: &mut Problems, at: &str) -> raw::PostgresSettingsRequest {
        let path = |name: &str| format!("{at}.{name}");
        raw::PostgresSettingsRequest {
            sync_interval_seconds: bounded(
                p,
                &path("syncIntervalSeconds"),
                self.sync_interval_seconds,
                1,
                None,
            ),
            pull_batch_size: bounded(p, &path("pullBatchSize"), self.pull_batch_size, 1, None),
            publication_name: self.publication_name.clone(),
            replication_slot_name: self.replication_slot_name.clone(),
            allow_nullable_columns: self.allow_nullable_columns,
            initial_load_parallelism: bounded(
                p,
                &path("initialLoadParallelism"),
                self.initial_load_parallelism,
                1,
                None,
            ),
            snapshot_num_rows_per_partition: bounded(
                p,
                &path("snapshotNumRowsPerPartition"),
                self.snapshot_num_rows_per_partition,
                1000,
                None,
            ),
            snapshot_number_of_parallel_tables: bounded(
                p,
                &path("snapshotNumberOfParallelTables"),
                self.snapshot_number_of_parallel_tables,
                1,
                None,
            ),
            enable_failover_slots: self.enable_failover_slots,
        }
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

    pub(super) fn lower(&self, p: &mut Problems, at: &str) -> Option<raw::PostgresSourceRequest> {
        non_empty(p, &format!("{at}.host"), &self.host);
        non_empty(p, &format!("{at}.database"), &self.database);
        let port = port(p, &format!("{at}.port"), self.port);
        let credentials = match &self.credentials {
            Some((user, pass)) => Some(credentials(p, &format!("{at}.credentials"), user, pass)),
            None => {
                p.add(
                    format!("{at}.credentials"),
                    "required: call credentials(username, password)",
                );
                None
            }
        };
        p.check(
            !self.table_mappings.is_empty(),
            format!("{at}.tableMappings"),
            "at least one table mapping is required",
        );
        let table_mappings = self
            .table_mappings
            .iter()
            .enumerate()
            .map(|(i, mapping)| mapping.lower(p, &format!("{at}.tableMappings[{i}]")))
            .collect();
        let settings = self
            .settings
            .as_ref()
            .map(|s| s.lower(p, &format!("{at}.settings")));
        let host = raw::PostgresSourceRequestHost::try_from(self.host.as_str()).ok();
        let database = raw::PostgresSourceRequestDatabase::try_from(self.database.as_str()).ok();
        Some(raw::PostgresSourceRequest {
            host: host?,
            port: port?,
            database: database?,
            settings,
            table_mappings,
            credentials: credentials?,
        })
    }
}
