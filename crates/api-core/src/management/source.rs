//! The source of a pipe as the server reports it: [`PipeSource`] and one type per source kind.
//!
//! Request-only members (credentials, access keys) never come back, so they are not here; what the
//! server does send back that is secret (the object storage connection string) is a [`Secret`].

use api_raw::support::redact::Redactor;
use std::fmt;

use api_raw::management::types as raw;
use api_raw::support::{Compression, Secret};
use chrono::{DateTime, NaiveDate, Utc};
use serde::Serialize;

use crate::decode::{Invalid, Path, fit, parse_id, redacted};
use crate::ids::ReversePrivateEndpointId;

/// What a pipe reads from: one variant per source kind, plus [`PipeSource::Unknown`] for a kind this
/// version of the SDK does not know (its JSON is kept).
///
/// `Display` writes the kind as the API names it: `kafka`, `objectStorage`, `kinesis`, `postgres`.
/// Serialised, it has the API's shape: `{"kafka": {...}}`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum PipeSource {
    /// A Kafka-style message stream.
    Kafka(Kafka),
    /// Object storage.
    ObjectStorage(ObjectStorage),
    /// A Kinesis-style data stream.
    Kinesis(Kinesis),
    /// A Postgres database (CDC).
    Postgres(Postgres),
    /// A source kind this version of the SDK does not know, or none at all.
    Unknown(UnknownSource),
}

impl PipeSource {
    /// The source kind as the API names it (`kafka`, `objectStorage`, ...; the member name for an
    /// unknown kind, `none` when the server sent no source).
    pub fn kind_name(&self) -> &str {
        match self {
            PipeSource::Kafka(_) => "kafka",
            PipeSource::ObjectStorage(_) => "objectStorage",
            PipeSource::Kinesis(_) => "kinesis",
            PipeSource::Postgres(_) => "postgres",
            PipeSource::Unknown(unknown) => unknown.kind().unwrap_or("none"),
        }
    }

    pub(crate) fn decode(source: Option<raw::PipeSource>, at: Path<'_>) -> Result<Self, Invalid> {
        let Some(source) = source else {
            return Ok(PipeSource::Unknown(UnknownSource::none()));
        };
        // At most one member is filled; should a server fill several, the known ones win in this order.
        if let Some(kafka) = source.kafka {
            return Kafka::decode(kafka, at.field("kafka")).map(PipeSource::Kafka);
        }
        if let Some(object_storage) = source.object_storage {
            return Ok(PipeSource::ObjectStorage(ObjectStorage::decode(
                object_storage,
            )));
        }
        if let Some(kinesis) = source.kinesis {
            return Kinesis::decode(kinesis, at.field("kinesis")).map(PipeSource::Kinesis);
        }
        if let Some(postgres) = source.postgres {
            return Postgres::decode(postgres, at.field("postgres")).map(PipeSource::Postgres);
        }
        // An unknown kind: the first member that is not null (in name order, so the choice is stable).
        let mut members: Vec<_> = source
            .extra
            .into_iter()
            .filter(|(_, v)| !v.is_null())
            .collect();
        members.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(PipeSource::Unknown(match members.into_iter().next() {
            Some((kind, json)) => UnknownSource {
                kind: Some(kind),
                json,
            },
            None => UnknownSource::none(),
        }))
    }
}

impl Serialize for PipeSource {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(1))?;
        match self {
            PipeSource::Kafka(kafka) => map.serialize_entry("kafka", kafka)?,
            PipeSource::ObjectStorage(o) => map.serialize_entry("objectStorage", o)?,
            PipeSource::Kinesis(kinesis) => map.serialize_entry("kinesis", kinesis)?,
            PipeSource::Postgres(postgres) => map.serialize_entry("postgres", postgres)?,
            PipeSource::Unknown(unknown) => {
                if let Some(kind) = &unknown.kind {
                    map.serialize_entry(kind, &Redactor::new().json_copy(&unknown.json))?;
                }
            }
        }
        map.end()
    }
}

impl fmt::Display for PipeSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.kind_name())
    }
}

/// A source member of a kind this version of the SDK does not know, kept as it came (or nothing, when
/// the server sent no source at all).
///
/// Its `Debug` shows the kind and the member names only, and its serde output (inside
/// [`PipeSource`]) goes through the one redaction rule ([`api_raw::support::redact`]): members named
/// like secrets (`password`, `secretKey`, `connectionString`, ...) lose their values, and so do
/// passwords inside URIs; an unknown kind may carry secrets nobody has marked. [`json`](Self::json)
/// is the explicit way to the values.
#[derive(Clone, PartialEq)]
pub struct UnknownSource {
    kind: Option<String>,
    json: serde_json::Value,
}

impl UnknownSource {
    fn none() -> Self {
        Self {
            kind: None,
            json: serde_json::Value::Null,
        }
    }

    /// The member name of the source kind, e.g. `bigquery`; `None` when the server sent no source.
    pub fn kind(&self) -> Option<&str> {
        self.kind.as_deref()
    }

    /// The member's JSON, exactly as the server sent it (`null` when there was none), secrets
    /// included.
    pub fn json(&self) -> &serde_json::Value {
        &self.json
    }
}

impl fmt::Debug for UnknownSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let members: Vec<&str> = match &self.json {
            serde_json::Value::Object(members) => members.keys().map(String::as_str).collect(),
            _ => Vec::new(),
        };
        f.debug_struct("UnknownSource")
            .field("kind", &self.kind)
            .field("members", &members)
            .finish()
    }
}

/// A Kafka-style source.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Kafka {
    /// Broker list (`host:port`, comma-separated); empty when the server omitted it.
    pub brokers: String,
    /// Topic list (comma-separated); empty when the server omitted it.
    pub topics: String,
    /// Consumer group; the server may choose one and leave it out.
    pub consumer_group: Option<String>,
    /// Role to assume (ARN); absent when the pipe authenticates otherwise.
    pub iam_role: Option<String>,
    /// Where reading started (minute precision, UTC); absent when it starts at the server's default.
    /// Written as the API writes it: `{"timestamp": "2026-03-01T08:15"}`.
    #[serde(serialize_with = "offset_on_the_wire")]
    pub offset: Option<DateTime<Utc>>,
    /// The schema registry, when one is used.
    pub schema_registry: Option<SchemaRegistry>,
    /// CA certificate (PEM) of the brokers, when one was given.
    pub ca_certificate: Option<String>,
    /// Reverse private endpoints the brokers are reached through.
    pub reverse_private_endpoint_ids: Vec<ReversePrivateEndpointId>,
}

impl Kafka {
    fn decode(raw: raw::KafkaSource, at: Path<'_>) -> Result<Self, Invalid> {
        let offset = match raw.offset.as_ref().and_then(|o| o.timestamp.as_deref()) {
            Some(text) => Some(offset_time(text).ok_or_else(|| {
                at.field("offset").field("timestamp").error(format!(
                    "expected a UTC time as YYYY-MM-DDTHH:MM, got {text:?}"
                ))
            })?),
            None => None,
        };
        let ids_at = at.field("reversePrivateEndpointIds");
        let reverse_private_endpoint_ids = raw
            .reverse_private_endpoint_ids
            .iter()
            .flatten()
            .enumerate()
            .map(|(i, id)| parse_id(id, ids_at.index(i)))
            .collect::<Result<_, _>>()?;
        Ok(Self {
            brokers: raw.brokers.unwrap_or_default(),
            topics: raw.topics.unwrap_or_default(),
            consumer_group: raw.consumer_group,
            iam_role: raw.iam_role,
            offset,
            schema_registry: raw.schema_registry.map(|r| SchemaRegistry {
                url: r.url.unwrap_or_default(),
                ca_certificate: r.ca_certificate,
            }),
            ca_certificate: raw.ca_certificate,
            reverse_private_endpoint_ids,
        })
    }
}

/// `YYYY-MM-DDTHH:MM` (the wire form, UTC implied), or a full RFC 3339 time.
/// A Kafka offset as the API writes it: `{"timestamp": "YYYY-MM-DDTHH:MM"}`.
fn offset_on_the_wire<S: serde::Serializer>(
    offset: &Option<DateTime<Utc>>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match offset {
        Some(at) => serde_json::json!({"timestamp": at.format("%Y-%m-%dT%H:%M").to_string()})
            .serialize(serializer),
        None => serializer.serialize_none(),
    }
}

/// A Kinesis start as the API writes it: seconds since the Unix epoch.
fn seconds_on_the_wire<S: serde::Serializer>(
    at: &Option<DateTime<Utc>>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match at {
        Some(at) => serializer.serialize_i64(at.timestamp()),
        None => serializer.serialize_none(),
    }
}

fn offset_time(text: &str) -> Option<DateTime<Utc>> {
    minute_time(text).or_else(|| DateTime::parse_from_rfc3339(text).ok().map(|t| t.to_utc()))
}

/// The wire form `YYYY-MM-DDTHH:MM`, read by position: chrono's format-string parser took about a
/// tenth of the facade's own work per pipe read (profiled).
fn minute_time(text: &str) -> Option<DateTime<Utc>> {
    let b = text.as_bytes();
    let shape = b.len() == 16 && b[4] == b'-' && b[7] == b'-' && b[10] == b'T' && b[13] == b':';
    if !shape {
        return None;
    }
    let number = |range: std::ops::Range<usize>| -> Option<u32> {
        b[range].iter().try_fold(0u32, |n, &d| {
            d.is_ascii_digit().then(|| n * 10 + u32::from(d - b'0'))
        })
    };
    let date = NaiveDate::from_ymd_opt(number(0..4)? as i32, number(5..7)?, number(8..10)?)?;
    let time = date.and_hms_opt(number(11..13)?, number(14..16)?, 0)?;
    Some(time.and_utc())
}

/// The schema registry of a Kafka-style source (its credentials are request-only).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SchemaRegistry {
    /// Registry URL; empty when the server omitted it.
    pub url: String,
    /// CA certificate (PEM), when one was given.
    pub ca_certificate: Option<String>,
}

/// An object storage source.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ObjectStorage {
    /// Location, may contain glob patterns; absent for Azure sources addressed by connection string.
    pub url: Option<String>,
    /// Column delimiter, for formats that have one.
    pub delimiter: Option<String>,
    /// Compression of the files, when set.
    pub compression: Option<Compression>,
    /// Whether new files keep being loaded (`false`: a one-shot load that ends in Completed); absent when
    /// the server does not say.
    pub is_continuous: Option<bool>,
    /// Notification queue, for event-driven loading.
    pub queue_url: Option<String>,
    /// Role to assume (ARN), when used.
    pub iam_role: Option<String>,
    /// Connection string of blob storage: returned by the server, and secret (never shown or serialised).
    #[serde(serialize_with = "redacted")]
    pub connection_string: Option<Secret>,
    /// Path or glob inside the container (Azure).
    pub path: Option<String>,
    /// Container name (Azure).
    pub azure_container_name: Option<String>,
}

impl ObjectStorage {
    fn decode(raw: raw::ObjectStorageSource) -> Self {
        Self {
            url: raw.url,
            delimiter: raw.delimiter,
            compression: raw.compression,
            is_continuous: raw.is_continuous,
            queue_url: raw.queue_url,
            iam_role: raw.iam_role,
            connection_string: raw.connection_string,
            path: raw.path,
            azure_container_name: raw.azure_container_name,
        }
    }
}

/// A Kinesis-style source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Kinesis {
    /// Stream name; empty when the server omitted it.
    pub stream_name: String,
    /// Region; empty when the server omitted it.
    pub region: String,
    /// Whether enhanced fan-out is used; absent when the server does not say.
    pub use_enhanced_fan_out: Option<bool>,
    /// Where reading started (the wire form, also of serde output: seconds since the Unix epoch);
    /// absent for the default.
    #[serde(serialize_with = "seconds_on_the_wire")]
    pub timestamp: Option<DateTime<Utc>>,
    /// Role to assume (ARN), when used.
    pub iam_role: Option<String>,
}

impl Kinesis {
    fn decode(raw: raw::KinesisSource, at: Path<'_>) -> Result<Self, Invalid> {
        let timestamp = raw
            .timestamp
            .map(|seconds| {
                DateTime::from_timestamp(seconds, 0).ok_or_else(|| {
                    at.field("timestamp").error(format!(
                        "{seconds} is not a time in seconds since the epoch"
                    ))
                })
            })
            .transpose()?;
        Ok(Self {
            stream_name: raw.stream_name.unwrap_or_default(),
            region: raw.region.unwrap_or_default(),
            use_enhanced_fan_out: raw.use_enhanced_fan_out,
            timestamp,
            iam_role: raw.iam_role,
        })
    }
}

/// A Postgres (CDC) source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Postgres {
    /// Host; empty when the server omitted it.
    pub host: String,
    /// Port; absent when the server omitted it (there is no default to assume).
    pub port: Option<u16>,
    /// Database; empty when the server omitted it.
    pub database: String,
    /// Replication settings (each absent where the server's default applies).
    pub settings: PostgresSettings,
    /// Source tables and where they go.
    pub table_mappings: Vec<TableMapping>,
}

impl Postgres {
    fn decode(raw: raw::PostgresSource, at: Path<'_>) -> Result<Self, Invalid> {
        let settings_at = at.field("settings");
        let s = raw.settings.unwrap_or_default();
        let settings = PostgresSettings {
            sync_interval_seconds: fit(
                s.sync_interval_seconds,
                settings_at.field("syncIntervalSeconds"),
            )?,
            pull_batch_size: fit(s.pull_batch_size, settings_at.field("pullBatchSize"))?,
            publication_name: s.publication_name,
            replication_slot_name: s.replication_slot_name,
            allow_nullable_columns: s.allow_nullable_columns,
            initial_load_parallelism: fit(
                s.initial_load_parallelism,
                settings_at.field("initialLoadParallelism"),
            )?,
            snapshot_num_rows_per_partition: fit(
                s.snapshot_num_rows_per_partition,
                settings_at.field("snapshotNumRowsPerPartition"),
            )?,
            snapshot_number_of_parallel_tables: fit(
                s.snapshot_number_of_parallel_tables,
                settings_at.field("snapshotNumberOfParallelTables"),
            )?,
            enable_failover_slots: s.enable_failover_slots,
        };
        let table_mappings = raw
            .table_mappings
            .unwrap_or_default()
            .into_iter()
            .map(|m| TableMapping {
                source_schema_name: m.source_schema_name.unwrap_or_default(),
                source_table: m.source_table.unwrap_or_default(),
                target_table: m.target_table.unwrap_or_default(),
                excluded_columns: m.excluded_columns.unwrap_or_default(),
                use_custom_sorting_key: m.use_custom_sorting_key,
                sorting_keys: m.sorting_keys.unwrap_or_default(),
            })
            .collect();
        Ok(Self {
            host: raw.host.unwrap_or_default(),
            port: fit(raw.port, at.field("port"))?,
            database: raw.database.unwrap_or_default(),
            settings,
            table_mappings,
        })
    }
}

/// Replication settings of a Postgres source; each is absent where the server's default applies.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct PostgresSettings {
    /// Seconds between two syncs.
    pub sync_interval_seconds: Option<u64>,
    /// Rows pulled per batch.
    pub pull_batch_size: Option<u64>,
    /// Publication name.
    pub publication_name: Option<String>,
    /// Replication slot name.
    pub replication_slot_name: Option<String>,
    /// Whether nullable columns are allowed.
    pub allow_nullable_columns: Option<bool>,
    /// Parallelism of the initial load.
    pub initial_load_parallelism: Option<u64>,
    /// Rows per snapshot partition.
    pub snapshot_num_rows_per_partition: Option<u64>,
    /// Tables snapshotted in parallel.
    pub snapshot_number_of_parallel_tables: Option<u64>,
    /// Whether failover slots are enabled.
    pub enable_failover_slots: Option<bool>,
}

/// One source table of a Postgres pipe and the table it goes to.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TableMapping {
    /// Source schema; empty when the server omitted it.
    pub source_schema_name: String,
    /// Source table; empty when the server omitted it.
    pub source_table: String,
    /// Destination table; empty when the server omitted it.
    pub target_table: String,
    /// Columns left out.
    pub excluded_columns: Vec<String>,
    /// Whether `sorting_keys` replace the primary key; absent when the server does not say.
    pub use_custom_sorting_key: Option<bool>,
    /// Sorting keys of the destination.
    pub sorting_keys: Vec<String>,
}

crate::decode::deserialize_from_wire!(PipeSource, raw::PipeSource, |value, at| PipeSource::decode(
    Some(value),
    at
));
crate::decode::deserialize_from_wire!(Kafka, raw::KafkaSource, |value, at| Kafka::decode(
    value, at
));
crate::decode::deserialize_from_wire!(ObjectStorage, raw::ObjectStorageSource, |value, _at| Ok(
    ObjectStorage::decode(value)
));
crate::decode::deserialize_from_wire!(Kinesis, raw::KinesisSource, |value, at| Kinesis::decode(
    value, at
));
crate::decode::deserialize_from_wire!(Postgres, raw::PostgresSource, |value, at| Postgres::decode(
    value, at
));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_read_the_wire_form_and_rfc3339() {
        let minute = offset_time("2026-03-01T08:15").unwrap();
        assert_eq!(minute.to_rfc3339(), "2026-03-01T08:15:00+00:00");
        assert_eq!(offset_time("2026-03-01T08:15:00Z"), Some(minute));
        assert_eq!(offset_time("yesterday"), None);
    }

    proptest::proptest! {
        /// The positional reader agrees with chrono's format-string parser on any 16 characters of
        /// the wire form's alphabet, valid or not (month 13, day 31 of February, hour 24, ...).
        #[test]
        fn the_minute_form_reads_as_chrono_reads_it(text in "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}|[0-9T:-]{16}|.{0,20}") {
            let chrono = chrono::NaiveDateTime::parse_from_str(&text, "%Y-%m-%dT%H:%M").ok().map(|t| t.and_utc());
            proptest::prop_assert_eq!(minute_time(&text), chrono);
        }
    }

    #[test]
    fn an_unknown_kind_keeps_its_json_and_writes_it_back() {
        let raw: raw::PipeSource =
            serde_json::from_str(r#"{"bigquery": {"dataset": "d1"}, "kafka": null}"#).unwrap();
        let source = PipeSource::decode(Some(raw), Path::Root("result")).unwrap();
        assert_eq!(source.to_string(), "bigquery");
        let PipeSource::Unknown(unknown) = &source else {
            panic!("{source:?}")
        };
        assert_eq!(unknown.kind(), Some("bigquery"));
        assert_eq!(unknown.json()["dataset"], "d1");
        assert_eq!(
            serde_json::to_value(&source).unwrap(),
            serde_json::json!({"bigquery": {"dataset": "d1"}}),
            "serialised in the API's shape"
        );
        let none = PipeSource::decode(None, Path::Root("result")).unwrap();
        assert_eq!(none.to_string(), "none");
    }

    #[test]
    fn an_unknown_kind_never_shows_its_secrets() {
        let raw: raw::PipeSource = serde_json::from_str(
            r#"{"mongo": {"uri": "mongodb://db", "Password": "hunter22", "auth": {"secretKey": "sk-1"}, "tags": [{"apiKey": "k-9"}]}}"#,
        )
        .unwrap();
        let source = PipeSource::decode(Some(raw), Path::Root("result")).unwrap();
        let shown = format!("{source:?}");
        let json = serde_json::to_string(&source).unwrap();
        for secret in ["hunter22", "sk-1", "k-9", "mongodb://db"] {
            assert!(!shown.contains(secret), "{shown}");
        }
        for secret in ["hunter22", "sk-1", "k-9"] {
            assert!(!json.contains(secret), "{json}");
        }
        assert!(shown.contains("mongo") && shown.contains("uri"), "{shown}");
        assert!(
            json.contains("mongodb://db"),
            "other members are kept: {json}"
        );
    }

    #[test]
    fn a_malformed_endpoint_id_names_its_path() {
        let raw: raw::PipeSource =
            serde_json::from_str(r#"{"kafka": {"reversePrivateEndpointIds": ["nope"]}}"#).unwrap();
        let root = Path::Root("result");
        let err = PipeSource::decode(Some(raw), root.field("source"))
            .unwrap_err()
            .at("getPipe");
        assert_eq!(err.path, "result.source.kafka.reversePrivateEndpointIds[0]");
    }
}
