//! [`ObjectStorageSource`]: files in object storage.

use api_raw::management::types as raw;
use api_raw::support::{Compression, Secret};

use super::checks::{arn, non_empty};
use crate::error::Problems;

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

    pub(super) fn lower(&self, p: &mut Problems, at: &str) -> raw::ObjectStorageSourceRequest {
        let has_location = self.url.as_deref().is_some_and(|u| !u.trim().is_empty())
            || (self.connection_string.is_some() && self.azure_container_name.is_some());
        p.check(
            has_location,
            format!("{at}.url"),
            "required: a URL, or a connection string with a container name",
        );
        raw::ObjectStorageSourceRequest {
            url: self.url.clone(),
            delimiter: self.delimiter.clone(),
            compression: self.compression.clone(),
            is_continuous: self.is_continuous,
            queue_url: self.queue_url.clone(),
            iam_role: arn(p, &format!("{at}.iamRole"), &self.iam_role),
            connection_string: self.connection_string.clone(),
            path: self.path.clone(),
            azure_container_name: self.azure_container_name.clone(),
            access_key: self
                .access_key
                .as_ref()
                .map(|(id, secret)| access_key(p, &format!("{at}.accessKey"), id, secret)),
        }
    }
}

/// An access key, with the id checked.
pub(super) fn access_key(p: &mut Problems, at: &str, id: &str, secret: &Secret) -> raw::AccessKey {
    non_empty(p, &format!("{at}.accessKeyId"), id);
    p.check(
        !secret.expose().is_empty(),
        format!("{at}.secretKey"),
        "required; must not be empty",
    );
    raw::AccessKey {
        access_key_id: id.to_string(),
        secret_key: secret.clone(),
    }
}
