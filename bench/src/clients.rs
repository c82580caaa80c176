//! [`Clients`]: the clients compared, each making the same call against the canned server: ours (the
//! facade and the generated client alone), a floor written by hand, and, with the `peer` feature,
//! the vendor's crate `clickhouse-cloud-api` on the one operation both have at the same path.

use std::hint::black_box;

use api_mgmt::{Credentials, ServiceHandle, pipes::PipeHandle, services::OrganizationId};
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
    /// The vendor's crate `clickhouse-cloud-api` (feature `peer`): reqwest and serde, no retries,
    /// timeouts, rate limit, typed values or redaction.
    Peer,
}

/// How many variants there are (the columns of the samples).
pub const VARIANTS: usize = 4;

impl Variant {
    /// Every variant, in the tables' order.
    pub const ALL: [Variant; VARIANTS] = [
        Variant::Facade,
        Variant::Generated,
        Variant::Floor,
        Variant::Peer,
    ];

    /// Its column in the samples.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// A call measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    /// `updateServiceState` with `start`: the service as it is then.
    StartService,
    /// `getPipe`: one Kafka pipe.
    GetPipe,
    /// `listReversePrivateEndpoints`: 1000 endpoints.
    ListEndpoints,
    /// `listDashboards`: 500 dashboards, about 1 MB.
    ListDashboards,
}

impl Call {
    /// The variants that make this call: the peer only where it has the operation at the same
    /// path, and only when built with the `peer` feature (its pipe read is another path and shape).
    pub fn variants(self) -> &'static [Variant] {
        const OURS: &[Variant] = &[Variant::Facade, Variant::Generated, Variant::Floor];
        match self {
            Call::StartService if cfg!(feature = "peer") => &Variant::ALL,
            _ => OURS,
        }
    }
}

/// The clients of both APIs, pointed at one server.
pub struct Clients {
    management: api_mgmt::Client,
    service: ServiceHandle,
    pipe: PipeHandle,
    observability: api_obs::Client,
    floor_management: Floor,
    floor_observability: Floor,
    #[cfg(feature = "peer")]
    peer: clickhouse_cloud_api::Client,
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
            api_mgmt::services::ServiceId::from(service_id),
        );
        let pipe = service.pipe(api_mgmt::pipes::PipeId::from(pipe_id));
        // After the SDK's clients: they install the process-wide crypto provider that reqwest needs
        // with the workspace's TLS features (the canned server is plain HTTP all the same).
        Ok(Self {
            floor_management: Floor::new(base_url, Auth::Basic(KEY.0, KEY.1))?,
            floor_observability: Floor::new(base_url, Auth::Bearer(TOKEN))?,
            #[cfg(feature = "peer")]
            peer: clickhouse_cloud_api::Client::with_base_url(base_url, KEY.0, KEY.1),
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
            (Call::StartService, Variant::Facade) => {
                usize::from(!black_box(self.service.start().await?).name.is_empty())
            }
            (Call::StartService, Variant::Generated) => {
                let body = api_mgmt::raw::types::ServiceStateChangeRequest {
                    command: Some(api_mgmt::raw::types::ServiceStateCommand::Start),
                };
                let envelope = self
                    .management
                    .raw()
                    .update_service_state(&self.organization, &self.service_id, &body)
                    .await?
                    .into_inner();
                usize::from(black_box(envelope).result.is_some())
            }
            (Call::StartService, Variant::Floor) => usize::from(
                !black_box(self.floor_management.start_service().await?)
                    .name
                    .is_empty(),
            ),
            #[cfg(feature = "peer")]
            (Call::StartService, Variant::Peer) => {
                use clickhouse_cloud_api::{
                    ServiceStatePatchRequest, ServiceStatePatchRequestCommand,
                };
                let body = ServiceStatePatchRequest {
                    command: Some(ServiceStatePatchRequestCommand::Start),
                };
                let envelope = self
                    .peer
                    .instance_state_update(ORGANIZATION, SERVICE, &body)
                    .await?;
                usize::from(black_box(envelope).result.and_then(|s| s.name).is_some())
            }
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
            (call, variant) => {
                return Err(
                    format!("{variant:?} does not make {call:?} (see Call::variants)").into(),
                );
            }
        };
        Ok(count)
    }
}
