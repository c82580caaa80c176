//! The handles: [`Client`], with [`AlertHandle`] and [`Dashboards`] (re-exported in
//! [`crate::alerts`] and [`crate::dashboards`]).

use api_core::observability::operations as ops;
use api_core::observability::{Alert, Dashboard, responses};
use api_core::raw::observability as raw;
use api_core::{AlertId, Error, Response};

api_core::facade_client! {
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
    pub struct Client(raw::Client);
    from_env = observability_from_env, rate_limit = observability,
    variables = "`CLOUD_OBSERVABILITY_URL` and `CLOUD_OBSERVABILITY_TOKEN`";
}

impl Client {
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
        let (runtime, raw) = self.client.parts();
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
        let (runtime, raw) = self.client.parts();
        let response = runtime
            .execute(&ops::LIST_DASHBOARDS, || raw.list_dashboards())
            .await?;
        responses::dashboards(response)
    }
}
