//! [`NewPipe`]: a validated pipe create request, built with [`NewPipe::builder`].

mod kafka;
mod kinesis;
mod object_storage;
mod postgres;
mod rules;

use api_raw::management::types as raw;
use api_raw::support::Secret;
use api_raw::support::schema::{Members, SchemaSet};
use serde_json::{Map, Value};

pub use kafka::{KafkaSource, SchemaRegistry};
pub use kinesis::KinesisSource;
pub use object_storage::ObjectStorageSource;
pub use postgres::{PostgresSettingsSpec, PostgresSource, PostgresTableMapping};

use super::{Destination, PipeSettings, Scaling, SourceKind};
use crate::error::{Problems, ValidationError};

/// What a failed pipe request is called in its [`ValidationError`].
const SUBJECT: &str = "pipe create request";

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

    /// The `source` member of the request.
    fn to_json(&self, validate_samples: Option<bool>) -> Value {
        let (name, kind) = match self {
            Source::Kafka(s) => ("kafka", s.to_json()),
            Source::ObjectStorage(s) => ("objectStorage", s.to_json()),
            Source::Kinesis(s) => ("kinesis", s.to_json()),
            Source::Postgres(s) => ("postgres", s.to_json()),
        };
        let mut source = Map::new();
        source.insert(name.into(), kind);
        if let Some(validate) = validate_samples {
            source.insert("validateSamples".into(), validate.into());
        }
        Value::Object(source)
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

    /// A pipe from a create request in the API's JSON shape (exactly what would be sent), checked as
    /// the builder checks: against the spec's schema (types, bounds, patterns, required members, and
    /// no member the spec does not declare, except under `settings`), then the rules the schema
    /// cannot say (one source kind, mapped columns, ...). Every problem is reported at once, each
    /// with its JSON path. Whole numbers written as floats (`3.0`) are taken as integers.
    ///
    /// Every member the spec declares is kept and sent, including ones this version of the SDK has
    /// no builder method for.
    ///
    /// ```
    /// use api_core::management::NewPipe;
    ///
    /// let pipe = NewPipe::from_json(serde_json::json!({
    ///     "name": "clicks",
    ///     "source": {"kinesis": {"streamName": "clicks", "region": "eu-west-1"}},
    ///     "destination": {"database": "web", "table": "clicks", "managedTable": true,
    ///                     "columns": [{"name": "url", "type": "String"}]},
    ///     "fieldMappings": [{"sourceField": "url", "destinationField": "url"}],
    ///     "scaling": {"replicas": 2.0},
    /// }))
    /// .expect("a valid request");
    /// assert_eq!(pipe.as_raw().name.as_str(), "clicks");
    ///
    /// let typo = NewPipe::from_json(serde_json::json!({"name": "x", "sorce": {}})).unwrap_err();
    /// assert!(typo.has("sorce"));
    /// ```
    pub fn from_json(request: Value) -> Result<NewPipe, ValidationError> {
        Self::checked(request, Problems::new())
    }

    /// A pipe from the generated request type, checked as [`from_json`](Self::from_json) checks.
    pub fn from_request(request: raw::PipeCreateRequest) -> Result<NewPipe, ValidationError> {
        let json = serde_json::to_value(&request).map_err(|e| {
            let mut p = Problems::new();
            p.add(".", format!("the request cannot be written as JSON: {e}"));
            p.finish(SUBJECT).unwrap_err()
        })?;
        Self::from_json(json)
    }

    /// Checks `request`, adding to the problems already found (by a builder), and builds the pipe.
    fn checked(mut request: Value, mut p: Problems) -> Result<NewPipe, ValidationError> {
        whole_numbers(&mut request);
        check_request(&request, &mut p);
        p.finish(SUBJECT)?;
        let kind = rules::KINDS
            .into_iter()
            .zip([
                SourceKind::Kafka,
                SourceKind::ObjectStorage,
                SourceKind::Kinesis,
                SourceKind::Postgres,
            ])
            .find(|(name, _)| request["source"].get(*name).is_some_and(|v| !v.is_null()))
            .map(|(_, kind)| kind);
        let decoded = serde_path_to_error::deserialize::<_, raw::PipeCreateRequest>(request);
        match (decoded, kind) {
            (Ok(request), Some(kind)) => Ok(NewPipe { kind, request }),
            // The schema accepted what the generated type cannot hold: a bug of ours, said as one.
            (Err(e), _) => {
                let mut p = Problems::new();
                p.add(
                    problem_path(&e.path().to_string()),
                    format!("the SDK cannot hold this value: {}", e.inner()),
                );
                Err(p.finish(SUBJECT).unwrap_err())
            }
            (Ok(_), None) => {
                let mut p = Problems::new();
                p.add(
                    "source",
                    "required: choose a kafka, objectStorage, kinesis or postgres source",
                );
                Err(p.finish(SUBJECT).unwrap_err())
            }
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

    /// The secret values the request carries (passwords, secret keys, the connection string, a
    /// setting named like a secret), so that an error answer echoing the request can be scrubbed of
    /// them. Which members are secret comes from the spec and the redaction rule
    /// ([`for_each_secret`](api_raw::support::schema::for_each_secret)).
    pub fn secrets(&self) -> Vec<Secret> {
        let mut request = serde_json::to_value(&self.request).unwrap_or_default();
        let mut secrets = Vec::new();
        let shape = SchemaSet::management().schema("PipeCreateRequest");
        api_raw::support::schema::for_each_secret(&mut request, shape, &mut |_, value| {
            secrets.push(Secret::new(api_raw::support::schema::secret_text(value)));
        });
        secrets
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
        let mut request = Map::new();
        request.insert("name".into(), self.name.clone().into());
        if let Some(source) = &self.source {
            request.insert("source".into(), source.to_json(self.validate_samples));
        }
        if let Some(destination) = &self.destination {
            request.insert("destination".into(), destination.to_json());
        }
        if !self.field_mappings.is_empty() {
            let mappings = self
                .field_mappings
                .iter()
                .map(|(source, destination)| {
                    serde_json::json!({"sourceField": source, "destinationField": destination})
                })
                .collect();
            request.insert("fieldMappings".into(), Value::Array(mappings));
        }
        if let Some(scaling) = &self.scaling {
            request.insert("scaling".into(), scaling.to_json());
        }
        if let Some(settings) = &self.settings {
            request.insert("settings".into(), settings.to_json(&mut p));
        }
        NewPipe::checked(Value::Object(request), p)
    }
}

/// Every problem of a create request's JSON: the spec's schema, then the rules beyond it (a problem
/// at or under a path the schema already faulted is left out, so each mistake is told once).
fn check_request(request: &Value, p: &mut Problems) {
    let schema = SchemaSet::management().check("PipeCreateRequest", request, Members::Declared);
    let faulted: Vec<String> = schema.iter().map(|v| problem_path(&v.path)).collect();
    for violation in schema {
        p.add(problem_path(&violation.path), violation.message);
    }
    let mut rules = Problems::new();
    rules::check(request, &mut rules);
    for problem in rules.into_problems() {
        if !faulted.iter().any(|path| problem.is_within(path)) {
            p.add(problem.path, problem.message);
        }
    }
}

/// The validator's path of the whole value (`body`) is `.` here.
fn problem_path(path: &str) -> String {
    match path {
        "body" | "" => ".".to_string(),
        other => other.to_string(),
    }
}

/// Writes every whole number as an integer (`3.0` as `3`), by the SDK's one whole-number rule, so
/// that the generated integer fields take it.
fn whole_numbers(value: &mut Value) {
    match value {
        Value::Number(n) if n.is_f64() => {
            if let Some(whole) = n.as_f64().and_then(api_raw::support::whole_number) {
                *value = Value::from(whole);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(whole_numbers),
        Value::Object(members) => members.values_mut().for_each(whole_numbers),
        _ => {}
    }
}

#[cfg(test)]
mod tests;
