//! [`Client`]: the management API client.

use std::fmt;

use api_core::raw::management as raw;
use api_core::{
    Config, ConfigBuilder, Connection, Error, FromConfig, OrganizationId, RetryPolicy, Runtime,
    ServiceId,
};

use crate::service::ServiceHandle;

/// A client of the management API. Cheap to clone: clones share connections and the rate limiter.
///
/// ```no_run
/// # async fn run() -> Result<(), api_mgmt::Error> {
/// use api_mgmt::{Client, Credentials};
///
/// let client = Client::builder("https://api.example.com")
///     .credentials(Credentials::basic("KEY_ID", "KEY_SECRET"))
///     .build()?;
/// let org = "3f0c5e2a-8d41-4b7e-9a6c-1e2f3a4b5c6d".parse()?;
/// let service = "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d".parse()?;
/// let started = client.service(org, service).start().await?;
/// println!("{} is {}", started.name, started.state_name());
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Client {
    pub(crate) connection: Connection<raw::Client>,
}

impl Client {
    /// A builder for a client of the management API at `base_url`, with the user agent
    /// `api-mgmt/<version>`.
    pub fn builder(base_url: impl Into<String>) -> ConfigBuilder<Client> {
        ConfigBuilder::new(base_url).user_agent(user_agent())
    }

    /// A builder configured from `CLOUD_API_URL`, `CLOUD_API_KEY_ID` and `CLOUD_API_KEY_SECRET`, to add a rate
    /// limit, timeouts or a transport before [`build`](ConfigBuilder::build).
    ///
    /// ```no_run
    /// # fn run() -> Result<(), api_mgmt::Error> {
    /// let client = api_mgmt::Client::builder_from_env()?
    ///     .rate_limit(api_mgmt::RateLimit::management())
    ///     .operation_timeout(std::time::Duration::from_secs(60))
    ///     .build()?;
    /// # Ok(()) }
    /// ```
    pub fn builder_from_env() -> Result<ConfigBuilder<Client>, Error> {
        Ok(ConfigBuilder::<Client>::management_from_env()?.user_agent(user_agent()))
    }

    /// A client configured from `CLOUD_API_URL`, `CLOUD_API_KEY_ID` and `CLOUD_API_KEY_SECRET` (see [`Client::builder_from_env`]).
    pub fn from_env() -> Result<Self, Error> {
        Self::builder_from_env()?.build()
    }

    /// A client from a checked configuration.
    pub fn new(config: Config) -> Result<Self, Error> {
        Ok(Self {
            connection: Connection::new(config)?,
        })
    }

    /// A client that shares this one's connections and rate limiter but retries by `policy`
    /// (e.g. [`RetryPolicy::disabled`] for one call).
    pub fn with_retry(&self, policy: RetryPolicy) -> Self {
        Self {
            connection: self.connection.with_retry(policy),
        }
    }

    /// The service `service` of organization `organization`.
    pub fn service(&self, organization: OrganizationId, service: ServiceId) -> ServiceHandle {
        ServiceHandle::new(self.clone(), organization, service)
    }

    /// The runtime and the generated client, for the handles.
    pub(crate) fn parts(&self) -> (&Runtime, &raw::Client) {
        (self.connection.runtime(), self.connection.raw())
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        self.connection.config()
    }

    /// The generated client, for what this facade does not wrap. It carries the credentials but none
    /// of the retries, rate limiting or error decoding.
    pub fn raw(&self) -> &raw::Client {
        self.connection.raw()
    }
}

impl FromConfig for Client {
    fn from_config(config: Config) -> Result<Self, Error> {
        Self::new(config)
    }
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("api_mgmt::Client")
            .field("config", self.connection.config())
            .finish()
    }
}

fn user_agent() -> String {
    concat!(env!("CARGO_PKG_NAME"), "/", env!("CARGO_PKG_VERSION")).to_string()
}
