//! [`KafkaSource`]: a Kafka-style message stream.

use api_raw::management::types as raw;
use api_raw::support::Secret;

use chrono::{DateTime, Utc};

use super::checks::{arn, non_empty};
use crate::error::Problems;
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

    pub(super) fn lower(&self, p: &mut Problems, at: &str) -> raw::KafkaSourceRequest {
        non_empty(p, &format!("{at}.brokers"), &self.brokers);
        non_empty(p, &format!("{at}.topics"), &self.topics);
        let timestamp = self.offset.and_then(|time| {
            let text = time.format("%Y-%m-%dT%H:%M").to_string();
            let converted = api_raw::support::OffsetTimestamp::try_from(text.as_str()).ok();
            p.check(
                converted.is_some(),
                format!("{at}.offset.timestamp"),
                format!("must be a time in the years 0 to 9999, got {text}"),
            );
            converted
        });
        let schema_registry = self.schema_registry.as_ref().map(|registry| {
            non_empty(p, &format!("{at}.schemaRegistry.url"), &registry.url);
            raw::SchemaRegistryRequest {
                url: Some(registry.url.clone()),
                ca_certificate: registry.ca_certificate.clone(),
                credentials: registry.credentials.as_ref().map(|(user, pass)| {
                    credentials(p, &format!("{at}.schemaRegistry.credentials"), user, pass)
                }),
            }
        });
        raw::KafkaSourceRequest {
            brokers: Some(self.brokers.clone()),
            topics: Some(self.topics.clone()),
            consumer_group: self.consumer_group.clone(),
            iam_role: arn(p, &format!("{at}.iamRole"), &self.iam_role),
            offset: timestamp.map(|t| raw::KafkaOffsetRequest { timestamp: Some(t) }),
            schema_registry,
            ca_certificate: self.ca_certificate.clone(),
            reverse_private_endpoint_ids: self
                .reverse_private_endpoint_ids
                .iter()
                .map(|id| *id.as_uuid())
                .collect(),
            credentials: self
                .credentials
                .as_ref()
                .map(|(user, pass)| credentials(p, &format!("{at}.credentials"), user, pass)),
        }
    }
}

/// Username and password, with the username checked.
pub(super) fn credentials(
    p: &mut Problems,
    at: &str,
    username: &str,
    password: &Secret,
) -> raw::UsernamePassword {
    non_empty(p, &format!("{at}.username"), username);
    p.check(
        !password.expose().is_empty(),
        format!("{at}.password"),
        "required; must not be empty",
    );
    raw::UsernamePassword {
        username: username.to_string(),
        password: password.clone(),
    }
}
