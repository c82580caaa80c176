//! [`NewPipe`]: a validated pipe create request, built with [`NewPipe::builder`].

pub(crate) mod checks;
mod kafka;
mod kinesis;
mod object_storage;
mod postgres;

use api_raw::management::types as raw;
use api_raw::support::Secret;

pub use kafka::{KafkaSource, SchemaRegistry};
pub use kinesis::KinesisSource;
pub use object_storage::ObjectStorageSource;
pub use postgres::{PostgresSettingsSpec, PostgresSource, PostgresTableMapping};

use super::{Destination, PipeSettings, Scaling, SourceKind};
use crate::error::{Problem, Problems, ValidationError};
use checks::non_empty;

/// The source of a new pipe: exactly one kind, by construction.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Source {
    /// A Kafka-style message stream.
    Kafka(KafkaSource),
    /// Object storage.
    ObjectStorage(ObjectStorageSource),
    /// A Kinesis-style data stream.
    Kinesis(KinesisSource),
    /// A Postgres database.
    Postgres(PostgresSource),
}

impl Source {
    /// The kind of source.
    pub fn kind(&self) -> SourceKind {
        match self {
            Source::Kafka(_) => SourceKind::Kafka,
            Source::ObjectStorage(_) => SourceKind::ObjectStorage,
            Source::Kinesis(_) => SourceKind::Kinesis,
            Source::Postgres(_) => SourceKind::Postgres,
        }
    }

    fn lower(
        &self,
        p: &mut Problems,
        validate_samples: Option<bool>,
    ) -> Option<raw::PipeSourceRequest> {
        let mut request = raw::PipeSourceRequest {
            validate_samples,
            ..Default::default()
        };
        match self {
            Source::Kafka(s) => request.kafka = Some(s.lower(p, "source.kafka")),
            Source::ObjectStorage(s) => {
                request.object_storage = Some(s.lower(p, "source.objectStorage"))
            }
            Source::Kinesis(s) => request.kinesis = Some(s.lower(p, "source.kinesis")),
            Source::Postgres(s) => request.postgres = Some(s.lower(p, "source.postgres")?),
        }
        Some(request)
    }
}

macro_rules! source_from {
    ($($variant:ident($ty:ty)),+) => {$(
        impl From<$ty> for Source {
            fn from(source: $ty) -> Self {
                Source::$variant(source)
            }
        }
    )+};
}

source_from!(
    Kafka(KafkaSource),
    ObjectStorage(ObjectStorageSource),
    Kinesis(KinesisSource),
    Postgres(PostgresSource)
);

/// A validated pipe create request. Its `Debug` never shows a secret.
#[derive(Debug, Clone)]
pub struct NewPipe {
    kind: SourceKind,
    request: raw::PipeCreateRequest,
}

impl NewPipe {
    /// A builder for a pipe called `name` (1 to 255 characters).
    ///
    /// ```
    /// use api_core::management::{Destination, KafkaSource, NewPipe};
    ///
    /// let pipe = NewPipe::builder("orders")
    ///     .source(KafkaSource::new("b-1.kafka.example:9098", "orders").credentials("reader", "kafka-password"))
    ///     .destination(Destination::new("default").table("orders").managed_table(true).column("id", "UInt64"))
    ///     .field_mapping("id", "id")
    ///     .build()
    ///     .expect("a valid pipe");
    /// assert!(!format!("{pipe:?}").contains("kafka-password"));
    /// ```
    pub fn builder(name: impl Into<String>) -> NewPipeBuilder {
        NewPipeBuilder {
            name: name.into(),
            ..NewPipeBuilder::default()
        }
    }

    /// The kind of source.
    pub fn source_kind(&self) -> SourceKind {
        self.kind
    }

    /// The generated request type, as it will be sent.
    pub fn as_raw(&self) -> &raw::PipeCreateRequest {
        &self.request
    }

    /// The secret values the request carries (passwords, secret keys, the connection string), so that
    /// an error answer echoing the request can be scrubbed of them.
    pub fn secrets(&self) -> Vec<&Secret> {
        let source = &self.request.source;
        let kafka = source.kafka.as_ref();
        let registry = kafka
            .and_then(|k| k.schema_registry.as_ref())
            .and_then(|r| r.credentials.as_ref());
        let object_storage = source.object_storage.as_ref();
        [
            kafka
                .and_then(|k| k.credentials.as_ref())
                .map(|c| &c.password),
            registry.map(|c| &c.password),
            object_storage
                .and_then(|o| o.access_key.as_ref())
                .map(|a| &a.secret_key),
            object_storage.and_then(|o| o.connection_string.as_ref()),
            source
                .kinesis
                .as_ref()
                .and_then(|k| k.access_key.as_ref())
                .map(|a| &a.secret_key),
            source.postgres.as_ref().map(|p| &p.credentials.password),
        ]
        .into_iter()
        .flatten()
        .collect()
    }
}

/// Builds a [`NewPipe`]; [`build`](NewPipeBuilder::build) reports every problem at once.
#[derive(Debug, Clone, Default)]
pub struct NewPipeBuilder {
    name: String,
    source: Option<Source>,
    destination: Option<Destination>,
    field_mappings: Vec<(String, String)>,
    mapped_columns: Vec<(String, String)>,
    scaling: Option<Scaling>,
    settings: Option<PipeSettings>,
    validate_samples: Option<bool>,
}

impl NewPipeBuilder {
    /// The source (exactly one kind).
    pub fn source(mut self, source: impl Into<Source>) -> Self {
        self.source = Some(source.into());
        self
    }

    /// The destination table.
    pub fn destination(mut self, destination: Destination) -> Self {
        self.destination = Some(destination);
        self
    }

    /// Maps the source field `source_field` to the destination column `destination_column`.
    pub fn field_mapping(
        mut self,
        source_field: impl Into<String>,
        destination_column: impl Into<String>,
    ) -> Self {
        self.field_mappings
            .push((source_field.into(), destination_column.into()));
        self
    }

    /// Declares a destination column and the source field that fills it, in one call: the column is
    /// added to the [`destination`](Self::destination) and the mapping to the field mappings.
    ///
    /// ```
    /// use api_core::management::{Destination, KafkaSource, NewPipe};
    ///
    /// let pipe = NewPipe::builder("orders")
    ///     .source(KafkaSource::new("b-1.kafka.example:9098", "orders"))
    ///     .destination(Destination::new("default").table("orders").managed_table(true))
    ///     .mapped_column("id", "order_id", "UInt64")
    ///     .mapped_column("amount", "amount", "Decimal(18, 2)")
    ///     .build()
    ///     .expect("a valid pipe");
    /// assert_eq!(pipe.as_raw().destination.columns.len(), 2);
    /// ```
    pub fn mapped_column(
        mut self,
        source_field: impl Into<String>,
        column: impl Into<String>,
        column_type: impl Into<String>,
    ) -> Self {
        let column = column.into();
        self.field_mappings
            .push((source_field.into(), column.clone()));
        self.mapped_columns.push((column, column_type.into()));
        self
    }

    /// Scaling of the pipe.
    pub fn scaling(mut self, scaling: Scaling) -> Self {
        self.scaling = Some(scaling);
        self
    }

    /// Settings of the pipe.
    pub fn settings(mut self, settings: PipeSettings) -> Self {
        self.settings = Some(settings);
        self
    }

    /// Ask the server to validate sample records (passed through as `source.validateSamples`).
    pub fn validate_samples(mut self, validate: bool) -> Self {
        self.validate_samples = Some(validate);
        self
    }

    /// Checks everything and returns the request, or one error listing every problem with its path.
    pub fn build(mut self) -> Result<NewPipe, ValidationError> {
        let mut p = Problems::new();
        if let Some(destination) = &mut self.destination {
            let declared = self.mapped_columns.drain(..);
            destination.columns.extend(
                declared.map(|(name, column_type)| super::DestinationColumn { name, column_type }),
            );
        }
        let length = self.name.chars().count();
        p.check(
            (1..=255).contains(&length),
            "name",
            format!("must be 1 to 255 characters, got {length}"),
        );
        let name = raw::PipeCreateRequestName::try_from(self.name.as_str()).ok();

        let kind = self.source.as_ref().map(Source::kind);
        if self.source.is_none() {
            p.add(
                "source",
                "required: choose a kafka, objectStorage, kinesis or postgres source",
            );
        }
        let source = self
            .source
            .as_ref()
            .and_then(|s| s.lower(&mut p, self.validate_samples));

        let needs_table = kind.is_some_and(|k| k != SourceKind::Postgres);
        let destination = match &self.destination {
            Some(d) => d.lower(&mut p, needs_table),
            None => {
                p.add("destination", "required");
                None
            }
        };
        let columns: Vec<&str> = self
            .destination
            .iter()
            .flat_map(|d| d.columns.iter().map(|c| c.name.as_str()))
            .collect();
        self.check_field_mappings(&mut p, &columns);
        let scaling = self.scaling.as_ref().map(|s| s.lower(&mut p));
        let settings = self.settings.as_ref().map(|s| s.lower(&mut p));

        p.finish("pipe create request")?;
        let (Some(name), Some(source), Some(destination), Some(kind)) =
            (name, source, destination, kind)
        else {
            // Every check above records a problem before a conversion can fail, so this is unreachable;
            // it still answers with an error rather than a panic.
            let problem = Problem {
                path: ".".into(),
                message: "the request could not be assembled".into(),
            };
            return Err(ValidationError {
                subject: "pipe create request",
                problems: vec![problem],
            });
        };
        let field_mappings = self
            .field_mappings
            .iter()
            .map(|(s, d)| mapping(s, d))
            .collect();
        let request = raw::PipeCreateRequest {
            name,
            source,
            destination,
            field_mappings,
            scaling,
            settings,
        };
        Ok(NewPipe { kind, request })
    }

    /// Every destination column must be mapped, and every mapping must name a destination column.
    fn check_field_mappings(&self, p: &mut Problems, columns: &[&str]) {
        for (i, (source_field, destination_field)) in self.field_mappings.iter().enumerate() {
            non_empty(p, &format!("fieldMappings[{i}].sourceField"), source_field);
            if !columns.is_empty() && !columns.contains(&destination_field.as_str()) {
                p.add(
                    format!("fieldMappings[{i}].destinationField"),
                    format!("{destination_field:?} is not a destination column"),
                );
            }
        }
        let unmapped: Vec<&str> = columns
            .iter()
            .copied()
            .filter(|column| !self.field_mappings.iter().any(|(_, d)| d == column))
            .collect();
        if !unmapped.is_empty() {
            p.add(
                "fieldMappings",
                format!(
                    "every destination column must be mapped; not mapped: {}",
                    unmapped.join(", ")
                ),
            );
        }
    }
}

fn mapping(source_field: &str, destination_field: &str) -> raw::FieldMapping {
    raw::FieldMapping {
        source_field: Some(source_field.to_string()),
        destination_field: Some(destination_field.to_string()),
    }
}

#[cfg(test)]
mod tests;
