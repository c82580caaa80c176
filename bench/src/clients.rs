//! [`Clients`]: the three clients compared, each making the same call against the canned server.

use std::hint::black_box;

use api_mgmt::{Credentials, OrganizationId, PipeHandle, ServiceHandle};
use uuid::Uuid;

use crate::fixtures::{ORGANIZATION, PIPE, SERVICE};
use crate::floor::{Auth, Floor};

/// What went wrong in a benchmark call.
pub type Failure = Box<dyn std::error::Error + Send + Sync>;

/// A client compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// `api_mgmt::Client` / `api_obs::Client` domain calls.
    Facade,
    /// The generated progenitor client alone (`client.raw()`), same HTTP client.
    Generated,
    /// Hand-written reqwest + serde.
    Floor,
}

impl Variant {
    /// Every variant, the floor last.
    pub const ALL: [Variant; 3] = [Variant::Facade, Variant::Generated, Variant::Floor];

    /// Its column in the tables.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// A call measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    /// `getPipe`: one Kafka pipe.
    GetPipe,
    /// `listReversePrivateEndpoints`: 1000 endpoints.
    ListEndpoints,
    /// `listDashboards`: 500 dashboards, about 1 MB.
    ListDashboards,
}

/// The three clients of both APIs, pointed at one server.
pub struct Clients {
    management: api_mgmt::Client,
    service: ServiceHandle,
    pipe: PipeHandle,
    observability: api_obs::Client,
    floor_management: Floor,
    floor_observability: Floor,
    organization: Uuid,
    service_id: Uuid,
    pipe_id: Uuid,
}

/// The management key of the canned server (any key works there; the header is what costs).
const KEY: (&str, &str) = ("emulator-admin-key", "emulator-admin-secret");
/// The observability token.
const TOKEN: &str = "0d8f3a4e-1c2b-4d5e-8f60-718293a4b5c6";

impl Clients {
    /// The clients of the APIs at `base_url`, with default settings (retries on, no rate limit).
    pub fn new(base_url: &str) -> Result<Self, Failure> {
        let management = api_mgmt::Client::builder(base_url)
            .credentials(Credentials::basic(KEY.0, KEY.1))
            .build()?;
        let observability = api_obs::Client::builder(base_url)
            .credentials(api_obs::Credentials::bearer(TOKEN))
            .build()?;
        let organization: Uuid = ORGANIZATION.parse()?;
        let service_id: Uuid = SERVICE.parse()?;
        let pipe_id: Uuid = PIPE.parse()?;
        let service = management.service(
            OrganizationId::from(organization),
            api_mgmt::ServiceId::from(service_id),
        );
        let pipe = service.pipe(api_mgmt::PipeId::from(pipe_id));
        // After the SDK's clients: they install the process-wide crypto provider that reqwest needs
        // with the workspace's TLS features (the canned server is plain HTTP all the same).
        Ok(Self {
            floor_management: Floor::new(base_url, Auth::Basic(KEY.0, KEY.1))?,
            floor_observability: Floor::new(base_url, Auth::Bearer(TOKEN))?,
            management,
            service,
            pipe,
            observability,
            organization,
            service_id,
            pipe_id,
        })
    }

    /// Makes `call` with `variant`; answers how many items came back.
    pub async fn call(&self, call: Call, variant: Variant) -> Result<usize, Failure> {
        let count = match (call, variant) {
            (Call::GetPipe, Variant::Facade) => {
                usize::from(!black_box(self.pipe.get().await?).name.is_empty())
            }
            (Call::GetPipe, Variant::Generated) => {
                let raw = self.management.raw();
                let envelope = raw
                    .get_pipe(&self.organization, &self.service_id, &self.pipe_id)
                    .await?
                    .into_inner();
                usize::from(black_box(envelope).result.is_some())
            }
            (Call::GetPipe, Variant::Floor) => usize::from(
                !black_box(self.floor_management.get_pipe().await?)
                    .name
                    .is_empty(),
            ),
            (Call::ListEndpoints, Variant::Facade) => {
                black_box(self.service.reverse_private_endpoints().await?).len()
            }
            (Call::ListEndpoints, Variant::Generated) => {
                let raw = self.management.raw();
                let envelope = raw
                    .list_reverse_private_endpoints(&self.organization, &self.service_id)
                    .await?
                    .into_inner();
                black_box(envelope).result.map_or(0, |list| list.len())
            }
            (Call::ListEndpoints, Variant::Floor) => {
                black_box(self.floor_management.reverse_private_endpoints().await?).len()
            }
            (Call::ListDashboards, Variant::Facade) => {
                black_box(self.observability.dashboards().list().await?).len()
            }
            (Call::ListDashboards, Variant::Generated) => {
                let list = self
                    .observability
                    .raw()
                    .list_dashboards()
                    .await?
                    .into_inner();
                black_box(list).data.map_or(0, |list| list.len())
            }
            (Call::ListDashboards, Variant::Floor) => {
                black_box(self.floor_observability.dashboards().await?).len()
            }
        };
        Ok(count)
    }
}
