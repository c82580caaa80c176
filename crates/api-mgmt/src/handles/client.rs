//! [`Client`]: the management API client.

use api_core::raw::management as raw;
use api_core::{OrganizationId, ServiceId};

use super::ServiceHandle;

api_core::facade_client! {
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
    pub struct Client(raw::Client);
    from_env = management_from_env, rate_limit = management,
    variables = "`CLOUD_API_URL`, `CLOUD_API_KEY_ID` and `CLOUD_API_KEY_SECRET`";
}

impl Client {
    /// The service `service` of organization `organization`.
    pub fn service(&self, organization: OrganizationId, service: ServiceId) -> ServiceHandle {
        ServiceHandle::new(self.clone(), organization, service)
    }
}
