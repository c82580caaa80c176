//! [`Destination`]: the table a pipe writes to. The same type is read back from the server and given to
//! [`NewPipe::builder`](super::NewPipe::builder).

use api_raw::management::types as raw;
use serde::Serialize;

/// The destination table of a pipe: read from the server, or declared for a new pipe with the builder
/// methods.
///
/// ```
/// use api_core::management::Destination;
///
/// let destination = Destination::new("default")
///     .table("orders")
///     .managed_table(true)
///     .column("order_id", "UInt64")
///     .column("created_at", "DateTime64(3)")
///     .sorting_key(["order_id"]);
/// assert_eq!(destination.columns[1].column_type, "DateTime64(3)");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Destination {
    /// Database; empty when the server omitted it.
    pub database: String,
    /// Table; absent for Postgres pipes, whose tables come from the table mappings.
    pub table: Option<String>,
    /// Whether the service creates and manages the table; absent for Postgres pipes.
    pub managed_table: Option<bool>,
    /// Sorting, partitioning, primary key and engine of a managed table, when given.
    pub table_definition: Option<TableDefinition>,
    /// Columns of the table.
    pub columns: Vec<DestinationColumn>,
    /// Roles granted access to the table. Request-only: always empty when read from the server.
    pub roles: Vec<String>,
}

/// A column of a destination table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct DestinationColumn {
    /// Column name; empty when the server omitted it.
    pub name: String,
    /// Database type, e.g. `UInt64`; empty when the server omitted it.
    #[serde(rename = "type")]
    pub column_type: String,
}

/// How a managed table is laid out.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TableDefinition {
    /// The engine's version column and deduplication columns, when set.
    pub engine: Option<TableEngine>,
    /// Sorting key columns.
    pub sorting_key: Vec<String>,
    /// Partition expression, when set.
    pub partition_by: Option<String>,
    /// Primary key expression, when set.
    pub primary_key: Option<String>,
}

/// The engine settings of a managed table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TableEngine {
    /// Version column, when set.
    pub version_column_id: Option<String>,
    /// Columns the engine deduplicates on.
    pub column_ids: Vec<String>,
}

impl Destination {
    /// A destination in `database`, for a new pipe.
    pub fn new(database: impl Into<String>) -> Self {
        Self {
            database: database.into(),
            ..Self::default()
        }
    }

    /// The table (required for kafka, object storage and kinesis sources).
    pub fn table(mut self, table: impl Into<String>) -> Self {
        self.table = Some(table.into());
        self
    }

    /// Whether the service creates and manages the table (required for kafka, object storage and
    /// kinesis sources).
    pub fn managed_table(mut self, managed: bool) -> Self {
        self.managed_table = Some(managed);
        self
    }

    /// A column with its database type; every column must be named by a field mapping (see
    /// [`NewPipeBuilder::mapped_column`](super::NewPipeBuilder::mapped_column) to declare both at once).
    pub fn column(mut self, name: impl Into<String>, column_type: impl Into<String>) -> Self {
        self.columns.push(DestinationColumn {
            name: name.into(),
            column_type: column_type.into(),
        });
        self
    }

    /// Grant this role access to the table; may be called repeatedly.
    pub fn role(mut self, role: impl Into<String>) -> Self {
        self.roles.push(role.into());
        self
    }

    /// The sorting key of a managed table.
    pub fn sorting_key<I: IntoIterator<Item = S>, S: Into<String>>(mut self, columns: I) -> Self {
        self.definition().sorting_key = columns.into_iter().map(Into::into).collect();
        self
    }

    /// The partition expression of a managed table.
    pub fn partition_by(mut self, expression: impl Into<String>) -> Self {
        self.definition().partition_by = Some(expression.into());
        self
    }

    /// The primary key expression of a managed table.
    pub fn primary_key(mut self, expression: impl Into<String>) -> Self {
        self.definition().primary_key = Some(expression.into());
        self
    }

    /// The engine's version column and the columns it deduplicates on.
    pub fn engine<I: IntoIterator<Item = S>, S: Into<String>>(
        mut self,
        version_column: impl Into<String>,
        column_ids: I,
    ) -> Self {
        self.definition().engine = Some(TableEngine {
            version_column_id: Some(version_column.into()),
            column_ids: column_ids.into_iter().map(Into::into).collect(),
        });
        self
    }

    fn definition(&mut self) -> &mut TableDefinition {
        self.table_definition
            .get_or_insert_with(TableDefinition::default)
    }

    pub(crate) fn decode(raw: Option<raw::PipeDestination>) -> Self {
        let Some(raw) = raw else {
            return Self::default();
        };
        Self {
            database: raw.database.unwrap_or_default(),
            table: raw.table,
            managed_table: raw.managed_table,
            table_definition: raw.table_definition.map(|d| TableDefinition {
                engine: d.engine.map(|e| TableEngine {
                    version_column_id: e.version_column_id,
                    column_ids: e.column_ids.unwrap_or_default(),
                }),
                sorting_key: d.sorting_key.unwrap_or_default(),
                partition_by: d.partition_by,
                primary_key: d.primary_key,
            }),
            columns: raw
                .columns
                .unwrap_or_default()
                .into_iter()
                .map(|c| DestinationColumn {
                    name: c.name.unwrap_or_default(),
                    column_type: c.type_.unwrap_or_default(),
                })
                .collect(),
            roles: Vec::new(),
        }
    }

    /// The request form, unchecked (the checks run on the whole request).
    pub(crate) fn to_json(&self) -> serde_json::Value {
        use serde_json::{Map, Value};
        let mut destination = Map::new();
        destination.insert("database".into(), self.database.clone().into());
        if let Some(table) = &self.table {
            destination.insert("table".into(), table.clone().into());
        }
        if let Some(managed) = self.managed_table {
            destination.insert("managedTable".into(), managed.into());
        }
        if let Some(definition) = &self.table_definition {
            // The read form leaves empty lists empty; the request leaves them out.
            let mut shown = serde_json::to_value(definition).unwrap_or_default();
            if let Value::Object(map) = &mut shown {
                map.retain(|_, v| !v.is_null() && v != &Value::Array(Vec::new()));
                if let Some(Value::Object(engine)) = map.get_mut("engine") {
                    engine.retain(|_, v| !v.is_null() && v != &Value::Array(Vec::new()));
                }
            }
            destination.insert("tableDefinition".into(), shown);
        }
        if !self.columns.is_empty() {
            let columns = serde_json::to_value(&self.columns).unwrap_or_default();
            destination.insert("columns".into(), columns);
        }
        if !self.roles.is_empty() {
            destination.insert("roles".into(), self.roles.clone().into());
        }
        Value::Object(destination)
    }
}

crate::decode::deserialize_from_wire!(Destination, raw::PipeDestination, |value, _at| Ok(
    Destination::decode(Some(value))
));
