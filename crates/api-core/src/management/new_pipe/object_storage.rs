//! [`ObjectStorageSource`]: files in object storage.

use api_raw::support::{Compression, Secret};
use serde_json::{Map, Value, json};

use super::kafka::put;

/// An object storage source: files at a URL (globs allowed), or in a blob container.
///
/// ```
/// use api_core::management::{Compression, ObjectStorageSource};
///
/// let one_shot = ObjectStorageSource::url("https://bucket.s3.example/events/*.csv.gz")
///     .compression(Compression::Gzip)
///     .continuous(false)
///     .access_key("AKIAEXAMPLE", "secret-key");
/// # let _ = one_shot;
/// ```
#[derive(Debug, Clone, Default)]
pub struct ObjectStorageSource {
    url: Option<String>,
    delimiter: Option<String>,
    compression: Option<Compression>,
    is_continuous: Option<bool>,
    queue_url: Option<String>,
    iam_role: Option<String>,
    connection_string: Option<Secret>,
    path: Option<String>,
    azure_container_name: Option<String>,
    access_key: Option<(String, Secret)>,
}

impl ObjectStorageSource {
    /// Files at `url`, which may contain glob patterns.
    pub fn url(url: impl Into<String>) -> Self {
        Self {
            url: Some(url.into()),
            ..Self::default()
        }
    }

    /// Files at `path` (globs allowed) in the blob container `container`, reached with a connection
    /// string (sent, returned by the server, never shown).
    pub fn azure(
        connection_string: impl Into<Secret>,
        container: impl Into<String>,
        path: impl Into<String>,
    ) -> Self {
        Self {
            connection_string: Some(connection_string.into()),
            azure_container_name: Some(container.into()),
            path: Some(path.into()),
            ..Self::default()
        }
    }

    /// The column delimiter.
    pub fn delimiter(mut self, delimiter: impl Into<String>) -> Self {
        self.delimiter = Some(delimiter.into());
        self
    }

    /// The compression of the files.
    pub fn compression(mut self, compression: Compression) -> Self {
        self.compression = Some(compression);
        self
    }

    /// `true`: keep ingesting new files; `false`: load once, then the pipe ends in Completed.
    pub fn continuous(mut self, continuous: bool) -> Self {
        self.is_continuous = Some(continuous);
        self
    }

    /// The notification queue announcing new files.
    pub fn queue_url(mut self, url: impl Into<String>) -> Self {
        self.queue_url = Some(url.into());
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
        let mut storage = Map::new();
        put(&mut storage, "url", &self.url);
        put(&mut storage, "delimiter", &self.delimiter);
        if let Some(compression) = &self.compression {
            storage.insert("compression".into(), compression.as_str().into());
        }
        if let Some(continuous) = self.is_continuous {
            storage.insert("isContinuous".into(), continuous.into());
        }
        put(&mut storage, "queueUrl", &self.queue_url);
        put(&mut storage, "iamRole", &self.iam_role);
        if let Some(connection_string) = &self.connection_string {
            storage.insert("connectionString".into(), connection_string.expose().into());
        }
        put(&mut storage, "path", &self.path);
        put(
            &mut storage,
            "azureContainerName",
            &self.azure_container_name,
        );
        if let Some((id, secret)) = &self.access_key {
            storage.insert("accessKey".into(), access_key(id, secret));
        }
        Value::Object(storage)
    }
}

/// `{accessKeyId, secretKey}` as sent.
pub(super) fn access_key(id: &str, secret: &Secret) -> Value {
    json!({ "accessKeyId": id, "secretKey": secret.expose() })
}
