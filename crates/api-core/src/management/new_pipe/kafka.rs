//! [`KafkaSource`]: a Kafka-style message stream.

use api_raw::support::Secret;
use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};

use crate::ids::ReversePrivateEndpointId;

/// A schema registry for a Kafka-style source.
#[derive(Debug, Clone)]
pub struct SchemaRegistry {
    url: String,
    ca_certificate: Option<String>,
    credentials: Option<(String, Secret)>,
}

impl SchemaRegistry {
    /// A registry at `url`.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            ca_certificate: None,
            credentials: None,
        }
    }

    /// The CA certificate (PEM) of the registry.
    pub fn ca_certificate(mut self, pem: impl Into<String>) -> Self {
        self.ca_certificate = Some(pem.into());
        self
    }

    /// Credentials for the registry (sent, never returned or shown).
    pub fn credentials(mut self, username: impl Into<String>, password: impl Into<Secret>) -> Self {
        self.credentials = Some((username.into(), password.into()));
        self
    }
}

/// A Kafka-style source: brokers, topics and how to read them.
///
/// ```
/// use api_core::management::KafkaSource;
///
/// use chrono::TimeZone;
///
/// let source = KafkaSource::new("b-1.kafka.example:9098", "orders")
///     .consumer_group("pipe-orders")
///     .iam_role("arn:aws:iam::123456789012:role/pipe-reader")
///     .start_at(chrono::Utc.with_ymd_and_hms(2026, 3, 1, 0, 0, 0).unwrap());
/// # let _ = source;
/// ```
#[derive(Debug, Clone)]
pub struct KafkaSource {
    brokers: String,
    topics: String,
    consumer_group: Option<String>,
    iam_role: Option<String>,
    offset: Option<DateTime<Utc>>,
    schema_registry: Option<SchemaRegistry>,
    ca_certificate: Option<String>,
    reverse_private_endpoint_ids: Vec<ReversePrivateEndpointId>,
    credentials: Option<(String, Secret)>,
}

impl KafkaSource {
    /// Reads `topics` (comma-separated) from `brokers` (comma-separated `host:port`).
    pub fn new(brokers: impl Into<String>, topics: impl Into<String>) -> Self {
        Self {
            brokers: brokers.into(),
            topics: topics.into(),
            consumer_group: None,
            iam_role: None,
            offset: None,
            schema_registry: None,
            ca_certificate: None,
            reverse_private_endpoint_ids: Vec::new(),
            credentials: None,
        }
    }

    /// The consumer group name.
    pub fn consumer_group(mut self, group: impl Into<String>) -> Self {
        self.consumer_group = Some(group.into());
        self
    }

    /// The role to assume, in ARN form.
    pub fn iam_role(mut self, arn: impl Into<String>) -> Self {
        self.iam_role = Some(arn.into());
        self
    }

    /// Start reading at this time. The API takes minute precision (`YYYY-MM-DDTHH:MM`, UTC), so
    /// seconds and fractions are cut off: reading starts at the beginning of that minute.
    pub fn start_at(mut self, time: DateTime<Utc>) -> Self {
        self.offset = Some(time);
        self
    }

    /// The schema registry.
    pub fn schema_registry(mut self, registry: SchemaRegistry) -> Self {
        self.schema_registry = Some(registry);
        self
    }

    /// The CA certificate (PEM) of the brokers.
    pub fn ca_certificate(mut self, pem: impl Into<String>) -> Self {
        self.ca_certificate = Some(pem.into());
        self
    }

    /// Reach the brokers through this reverse private endpoint; may be called repeatedly.
    pub fn reverse_private_endpoint(mut self, id: ReversePrivateEndpointId) -> Self {
        self.reverse_private_endpoint_ids.push(id);
        self
    }

    /// SASL credentials (sent, never returned or shown).
    pub fn credentials(mut self, username: impl Into<String>, password: impl Into<Secret>) -> Self {
        self.credentials = Some((username.into(), password.into()));
        self
    }

    /// The request form, unchecked (the checks run on the whole request).
    pub(super) fn to_json(&self) -> Value {
        let mut kafka = Map::new();
        kafka.insert("brokers".into(), self.brokers.clone().into());
        kafka.insert("topics".into(), self.topics.clone().into());
        put(&mut kafka, "consumerGroup", &self.consumer_group);
        put(&mut kafka, "iamRole", &self.iam_role);
        if let Some(time) = self.offset {
            // The wire form has minute precision: the seconds are cut off.
            let text = time.format("%Y-%m-%dT%H:%M").to_string();
            kafka.insert("offset".into(), json!({ "timestamp": text }));
        }
        if let Some(registry) = &self.schema_registry {
            let mut r = Map::new();
            r.insert("url".into(), registry.url.clone().into());
            put(&mut r, "caCertificate", &registry.ca_certificate);
            if let Some((user, pass)) = &registry.credentials {
                r.insert("credentials".into(), credentials(user, pass));
            }
            kafka.insert("schemaRegistry".into(), Value::Object(r));
        }
        put(&mut kafka, "caCertificate", &self.ca_certificate);
        if !self.reverse_private_endpoint_ids.is_empty() {
            let ids = self
                .reverse_private_endpoint_ids
                .iter()
                .map(|id| Value::from(id.to_string()))
                .collect();
            kafka.insert("reversePrivateEndpointIds".into(), Value::Array(ids));
        }
        if let Some((user, pass)) = &self.credentials {
            kafka.insert("credentials".into(), credentials(user, pass));
        }
        Value::Object(kafka)
    }
}

/// `{username, password}` as sent.
pub(super) fn credentials(username: &str, password: &Secret) -> Value {
    json!({ "username": username, "password": password.expose() })
}

/// Sets `name` when `value` is present.
pub(super) fn put(map: &mut Map<String, Value>, name: &str, value: &Option<String>) {
    if let Some(value) = value {
        map.insert(name.into(), value.clone().into());
    }
}
