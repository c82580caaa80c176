//! [`Pipe`]: a data pipe as the server reports it.

use std::ops::Deref;

use api_raw::management::types as raw;
use api_raw::support::PipeState;

use crate::ids::{PipeId, ServiceId};

/// The settings of a pipe (every field optional, as the server may omit any).
pub type PipeSettings = raw::PipeSettings;

/// The kind of source a pipe reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// A data pipe. Typed accessors for the common fields; every other field through `Deref` to the
/// generated type (all optional, as the server may omit any).
#[derive(Debug, Clone)]
pub struct Pipe(raw::Pipe);

impl Pipe {
    /// The pipe id.
    pub fn id(&self) -> Option<PipeId> {
        self.0.id.map(PipeId::from_uuid)
    }

    /// The id of the owning service.
    pub fn service_id(&self) -> Option<ServiceId> {
        self.0.service_id.map(ServiceId::from_uuid)
    }

    /// The name, empty when the server omitted it.
    pub fn name(&self) -> &str {
        self.0.name.as_deref().unwrap_or_default()
    }

    /// The state; [`PipeState::Unknown`] when the server omitted it.
    pub fn state(&self) -> PipeState {
        self.0.state.clone().unwrap_or(PipeState::Unknown)
    }

    /// Which source member is filled.
    pub fn source_kind(&self) -> Option<SourceKind> {
        let source = self.0.source.as_ref()?;
        if source.kafka.is_some() {
            Some(SourceKind::Kafka)
        } else if source.object_storage.is_some() {
            Some(SourceKind::ObjectStorage)
        } else if source.kinesis.is_some() {
            Some(SourceKind::Kinesis)
        } else if source.postgres.is_some() {
            Some(SourceKind::Postgres)
        } else {
            None
        }
    }

    /// The generated type.
    pub fn as_raw(&self) -> &raw::Pipe {
        &self.0
    }

    /// The generated type, by value.
    pub fn into_raw(self) -> raw::Pipe {
        self.0
    }
}

impl From<raw::Pipe> for Pipe {
    fn from(pipe: raw::Pipe) -> Self {
        Self(pipe)
    }
}

impl Deref for Pipe {
    type Target = raw::Pipe;

    fn deref(&self) -> &raw::Pipe {
        &self.0
    }
}
