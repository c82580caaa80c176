//! [`Client`]: the observability API client, with [`AlertHandle`] and [`Dashboards`].

use std::fmt;

use api_core::observability::operations as ops;
use api_core::observability::{Alert, Dashboard, responses};
use api_core::raw::observability as raw;
use api_core::{
    AlertId, Config, ConfigBuilder, Connection, Error, FromConfig, Response, RetryPolicy,
};

/// A client of the observability API. Cheap to clone: clones share connections and the rate limiter.
///
/// ```no_run
/// # async fn run() -> Result<(), api_obs::Error> {
/// use api_obs::{Client, Credentials};
///
/// let client = Client::builder("https://obs.example.com")
///     .credentials(Credentials::bearer("0d8f3a4e-1c2b-4d5e-8f60-718293a4b5c6"))
///     .build()?;
/// let alert = client.alert("66a1f0c2d4e5f60718293a4b".parse()?).get().await?;
/// println!("{} is {}", alert.name, alert.state_name());
/// for dashboard in client.dashboards().list().await?.iter() {
///     println!("{} has {} tiles", dashboard.name, dashboard.tiles.len());
/// }
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Client {
    connection: Connection<raw::Client>,
}

impl Client {
    /// A builder for a client of the observability API at `base_url`, with the user agent
    /// `api-obs/<version>`.
    pub fn builder(base_url: impl Into<String>) -> ConfigBuilder<Client> {
        ConfigBuilder::new(base_url).user_agent(user_agent())
    }

    /// A builder configured from `CLOUD_OBSERVABILITY_URL` and `CLOUD_OBSERVABILITY_TOKEN`, to add a rate
    /// limit, timeouts or a transport before [`build`](ConfigBuilder::build).
    ///
    /// ```no_run
    /// # fn run() -> Result<(), api_obs::Error> {
    /// let client = api_obs::Client::builder_from_env()?
    ///     .rate_limit(api_obs::RateLimit::observability())
    ///     .operation_timeout(std::time::Duration::from_secs(60))
    ///     .build()?;
    /// # Ok(()) }
    /// ```
    pub fn builder_from_env() -> Result<ConfigBuilder<Client>, Error> {
        Ok(ConfigBuilder::<Client>::observability_from_env()?.user_agent(user_agent()))
    }

    /// A client configured from `CLOUD_OBSERVABILITY_URL` and `CLOUD_OBSERVABILITY_TOKEN` (see [`Client::builder_from_env`]).
    pub fn from_env() -> Result<Self, Error> {
        Self::builder_from_env()?.build()
    }

    /// A client from a checked configuration.
    pub fn new(config: Config) -> Result<Self, Error> {
        Ok(Self {
            connection: Connection::new(config)?,
        })
    }

    /// A client that shares this one's connections and rate limiter but retries by `policy`.
    pub fn with_retry(&self, policy: RetryPolicy) -> Self {
        Self {
            connection: self.connection.with_retry(policy),
        }
    }

    /// One alert.
    pub fn alert(&self, id: AlertId) -> AlertHandle {
        AlertHandle {
            client: self.clone(),
            id,
        }
    }

    /// The dashboards.
    pub fn dashboards(&self) -> Dashboards {
        Dashboards {
            client: self.clone(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        self.connection.config()
    }

    /// The generated client, for what this facade does not wrap.
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
        f.debug_struct("api_obs::Client")
            .field("config", self.connection.config())
            .finish()
    }
}

fn user_agent() -> String {
    concat!(env!("CARGO_PKG_NAME"), "/", env!("CARGO_PKG_VERSION")).to_string()
}

/// One alert.
#[derive(Debug, Clone)]
pub struct AlertHandle {
    client: Client,
    id: AlertId,
}

impl AlertHandle {
    /// The alert id.
    pub fn id(&self) -> &AlertId {
        &self.id
    }

    /// Reads the alert. Safe to retry.
    ///
    /// ```no_run
    /// # async fn run(client: api_obs::Client) -> Result<(), api_obs::Error> {
    /// let alert = client.alert("66a1f0c2d4e5f60718293a4b".parse()?).get().await?;
    /// if let (Some(kind), Some(threshold)) = (&alert.threshold_type, alert.threshold) {
    ///     println!("{} fires {kind} {threshold}", alert.name);
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn get(&self) -> Result<Response<Alert>, Error> {
        let id = api_core::raw::support::AlertId::try_from(self.id.as_str()).map_err(|_| {
            api_core::IdError {
                kind: "alert id",
                input: self.id.to_string(),
                expected: "24 hexadecimal digits",
            }
        })?;
        let (runtime, raw) = (
            self.client.connection.runtime(),
            self.client.connection.raw(),
        );
        let response = runtime
            .execute(&ops::GET_ALERT, || raw.get_alert(&id))
            .await?;
        responses::alert(response)
    }
}

/// The dashboards.
#[derive(Debug, Clone)]
pub struct Dashboards {
    client: Client,
}

impl Dashboards {
    /// Every dashboard with its tiles (one response; the list is not paged). Safe to retry.
    ///
    /// ```no_run
    /// # async fn run(client: api_obs::Client) -> Result<(), api_obs::Error> {
    /// for dashboard in client.dashboards().list().await?.iter() {
    ///     println!("{}: {} tiles, tagged {}", dashboard.name, dashboard.tiles.len(), dashboard.tags.join(", "));
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn list(&self) -> Result<Response<Vec<Dashboard>>, Error> {
        let (runtime, raw) = (
            self.client.connection.runtime(),
            self.client.connection.raw(),
        );
        let response = runtime
            .execute(&ops::LIST_DASHBOARDS, || raw.list_dashboards())
            .await?;
        responses::dashboards(response)
    }
}
