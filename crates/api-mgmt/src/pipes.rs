//! Data pipes and their sources, beside [`Pipe`](crate::Pipe), [`NewPipe`](crate::NewPipe) and
//! [`PipeSource`](crate::PipeSource): the handles ([`Pipes`], [`PipeHandle`]), what a pipe is
//! made of (destination, scaling, settings, state), and the source of a new pipe
//! ([`KafkaSource`], [`ObjectStorageSource`], [`KinesisSource`], [`PostgresSource`]). The source of
//! a pipe as read back is in [`source`].

pub use crate::handles::{PipeHandle, Pipes};
pub use api_core::PipeId;
pub use api_core::management::{
    Compression, CpuMillicores, Destination, DestinationColumn, FieldMapping, KafkaSource,
    KinesisSource, MemoryGb, MskAuthentication, NewPipeBuilder, ObjectStorageSource, PipeSettings,
    PipeState, PostgresSettingsSpec, PostgresSource, PostgresTableMapping, Scaling, SchemaRegistry,
    Source, SourceKind, TableDefinition, TableEngine,
};

/// The source of a pipe as the API answers it, one struct per kind of
/// [`PipeSource`](crate::PipeSource).
pub mod source {
    pub use api_core::management::source::{
        Kafka, Kinesis, ObjectStorage, Postgres, PostgresSettings, SchemaRegistry, TableMapping,
        UnknownSource,
    };
}
