//! [`KinesisSource`]: a Kinesis-style data stream.

use api_raw::support::Secret;
use serde_json::{Map, Value};

use super::kafka::put;
use super::object_storage::access_key;

/// A Kinesis-style source.
///
/// ```
/// use api_core::management::KinesisSource;
///
/// let source = KinesisSource::new("clickstream", "eu-west-1")
///     .enhanced_fan_out(true)
///     .start_at_unix_seconds(1_772_409_600)
///     .iam_role("arn:aws:iam::123456789012:role/kinesis-reader");
/// # let _ = source;
/// ```
#[derive(Debug, Clone)]
pub struct KinesisSource {
    stream_name: String,
    region: String,
    use_enhanced_fan_out: Option<bool>,
    timestamp: Option<i64>,
    iam_role: Option<String>,
    access_key: Option<(String, Secret)>,
}

impl KinesisSource {
    /// Reads the stream `stream_name` in `region`.
    pub fn new(stream_name: impl Into<String>, region: impl Into<String>) -> Self {
        Self {
            stream_name: stream_name.into(),
            region: region.into(),
            use_enhanced_fan_out: None,
            timestamp: None,
            iam_role: None,
            access_key: None,
        }
    }

    /// Use enhanced fan-out.
    pub fn enhanced_fan_out(mut self, enabled: bool) -> Self {
        self.use_enhanced_fan_out = Some(enabled);
        self
    }

    /// Start reading at this time (sent as whole seconds since the Unix epoch).
    ///
    /// ```
    /// use api_core::management::KinesisSource;
    /// use chrono::TimeZone;
    ///
    /// let start = chrono::Utc.with_ymd_and_hms(2026, 3, 2, 0, 0, 0).unwrap();
    /// let source = KinesisSource::new("clickstream", "eu-west-1").start_at(start);
    /// # let _ = source;
    /// ```
    pub fn start_at(mut self, time: chrono::DateTime<chrono::Utc>) -> Self {
        self.timestamp = Some(time.timestamp());
        self
    }

    /// Start reading at this time, in seconds since the Unix epoch.
    pub fn start_at_unix_seconds(mut self, seconds: i64) -> Self {
        self.timestamp = Some(seconds);
        self
    }

    /// The role to assume, in ARN form.
    pub fn iam_role(mut self, arn: impl Into<String>) -> Self {
        self.iam_role = Some(arn.into());
        self
    }

    /// An access key (sent, never returned or shown).
    pub fn access_key(
        mut self,
        access_key_id: impl Into<String>,
        secret_key: impl Into<Secret>,
    ) -> Self {
        self.access_key = Some((access_key_id.into(), secret_key.into()));
        self
    }

    /// The request form, unchecked (the checks run on the whole request).
    pub(super) fn to_json(&self) -> Value {
        let mut kinesis = Map::new();
        kinesis.insert("streamName".into(), self.stream_name.clone().into());
        kinesis.insert("region".into(), self.region.clone().into());
        if let Some(fan_out) = self.use_enhanced_fan_out {
            kinesis.insert("useEnhancedFanOut".into(), fan_out.into());
        }
        if let Some(seconds) = self.timestamp {
            kinesis.insert("timestamp".into(), seconds.into());
        }
        put(&mut kinesis, "iamRole", &self.iam_role);
        if let Some((id, secret)) = &self.access_key {
            kinesis.insert("accessKey".into(), access_key(id, secret));
        }
        Value::Object(kinesis)
    }
}
