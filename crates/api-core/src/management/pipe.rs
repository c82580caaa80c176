//! [`Pipe`]: a data pipe as the server reports it, with its [`FieldMapping`]s.

use std::fmt;

use api_raw::management::types as raw;
use api_raw::support::PipeState;
use chrono::{DateTime, Utc};
use serde::Serialize;

use super::{Destination, PipeSettings, PipeSource, Scaling};
use crate::decode::{Invalid, Path, required};
use crate::ids::{PipeId, ServiceId};

/// The kind of source a pipe reads. `Display` writes the API's member name (`kafka`, `objectStorage`,
/// `kinesis`, `postgres`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SourceKind {
    /// A Kafka-style message stream.
    Kafka,
    /// Object storage.
    ObjectStorage,
    /// A Kinesis-style data stream.
    Kinesis,
    /// A Postgres database (CDC).
    Postgres,
}

impl fmt::Display for SourceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SourceKind::Kafka => "kafka",
            SourceKind::ObjectStorage => "objectStorage",
            SourceKind::Kinesis => "kinesis",
            SourceKind::Postgres => "postgres",
        })
    }
}

/// A source field mapped to a destination column.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct FieldMapping {
    /// Field of the source records; empty when the server omitted it.
    pub source_field: String,
    /// Destination column; empty when the server omitted it.
    pub destination_field: String,
}

/// A data pipe, as the server reports it.
///
/// Its identity ([`id`](Self::id), [`service_id`](Self::service_id)) is always there: a response
/// without it does not decode. Text members the API always fills are plain `String`s (empty if a
/// server leaves one out); members that only apply to some pipes are `Option`s or empty `Vec`s.
/// `Debug` and serde output never show a secret.
///
/// ```no_run
/// # async fn show(pipe: api_core::management::Pipe) {
/// println!("{} is {}, reading {} into {}", pipe.name, pipe.state, pipe.source, pipe.destination.database);
/// if let Some(cpu) = pipe.scaling.replica_cpu {
///     println!("{cpu} per replica");
/// }
/// # }
/// ```
///
/// Deserializes from the API's JSON (the envelope's `result` / `data`) through the same decoding as a
/// call, and serializes to the same shape with secrets as `"[REDACTED]"`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Pipe {
    /// The pipe id.
    pub id: PipeId,
    /// The service the pipe belongs to.
    pub service_id: ServiceId,
    /// The name.
    pub name: String,
    /// The state; [`PipeState::Unknown`] when the server omitted it.
    pub state: PipeState,
    /// What the pipe reads.
    pub source: PipeSource,
    /// Where it writes.
    pub destination: Destination,
    /// Source fields mapped to destination columns.
    pub field_mappings: Vec<FieldMapping>,
    /// Replicas, concurrency, CPU and memory.
    pub scaling: Scaling,
    /// Settings, known and unknown.
    pub settings: PipeSettings,
    /// When the pipe was created; absent when the server omitted it.
    pub created_at: Option<DateTime<Utc>>,
    /// When the pipe last changed; absent when the server omitted it.
    pub updated_at: Option<DateTime<Utc>>,
}

impl Pipe {
    /// Which kind of source the pipe reads (`None` for a kind this SDK does not know).
    pub fn source_kind(&self) -> Option<SourceKind> {
        match self.source {
            PipeSource::Kafka(_) => Some(SourceKind::Kafka),
            PipeSource::ObjectStorage(_) => Some(SourceKind::ObjectStorage),
            PipeSource::Kinesis(_) => Some(SourceKind::Kinesis),
            PipeSource::Postgres(_) => Some(SourceKind::Postgres),
            PipeSource::Unknown(_) => None,
        }
    }

    pub(crate) fn decode(pipe: raw::Pipe, at: Path<'_>) -> Result<Self, Invalid> {
        Ok(Self {
            id: required(pipe.id, at.field("id"))?.into(),
            service_id: required(pipe.service_id, at.field("serviceId"))?.into(),
            name: pipe.name.unwrap_or_default(),
            state: pipe.state.unwrap_or(PipeState::Unknown),
            source: PipeSource::decode(pipe.source, at.field("source"))?,
            destination: Destination::decode(pipe.destination),
            field_mappings: pipe
                .field_mappings
                .unwrap_or_default()
                .into_iter()
                .map(|m| FieldMapping {
                    source_field: m.source_field.unwrap_or_default(),
                    destination_field: m.destination_field.unwrap_or_default(),
                })
                .collect(),
            scaling: Scaling::decode(pipe.scaling, at.field("scaling"))?,
            settings: match pipe.settings {
                Some(settings) => PipeSettings::decode(settings, at.field("settings"))?,
                None => PipeSettings::default(),
            },
            created_at: pipe.created_at,
            updated_at: pipe.updated_at,
        })
    }
}

crate::decode::deserialize_from_wire!(Pipe, raw::Pipe, |value, at| Pipe::decode(value, at));
