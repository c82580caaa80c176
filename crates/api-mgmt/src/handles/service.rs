//! [`ServiceHandle`]: one service of an organization.

use api_core::management::operations as ops;
use api_core::management::{
    PrivateEndpoint, ReversePrivateEndpoint, Service, ServiceCommand, ServiceWait, WaitFor,
    WaitOptions, raw_types, responses, wait_for_service,
};
use api_core::{Error, OrganizationId, PipeId, Problems, Response, ServiceId};

use super::Client;
use super::{PipeHandle, Pipes};

/// One service of an organization: start and stop it, and reach its pipes and private endpoints.
/// Making a handle sends nothing.
#[derive(Debug, Clone)]
pub struct ServiceHandle {
    pub(crate) client: Client,
    pub(crate) organization: OrganizationId,
    pub(crate) service: ServiceId,
}

impl ServiceHandle {
    pub(crate) fn new(client: Client, organization: OrganizationId, service: ServiceId) -> Self {
        Self {
            client,
            organization,
            service,
        }
    }

    /// The organization id.
    pub fn organization_id(&self) -> OrganizationId {
        self.organization
    }

    /// The service id.
    pub fn id(&self) -> ServiceId {
        self.service
    }

    /// Reads the service without changing it: the state endpoint with no command, which answers with
    /// the service as it is. Safe to retry.
    ///
    /// ```no_run
    /// # async fn run(service: api_mgmt::ServiceHandle) -> Result<(), api_mgmt::Error> {
    /// let now = service.get().await?;
    /// println!("{} is {}", now.name, now.state_name());
    /// # Ok(()) }
    /// ```
    pub async fn get(&self) -> Result<Response<Service>, Error> {
        self.send(None).await
    }

    /// Sends `start`; answers with the service as it is at that instant (usually `starting`). A
    /// service that is stopping answers 409 ([`Error::is_conflict`]); [`start_and_wait`](Self::start_and_wait)
    /// waits that out.
    ///
    /// ```no_run
    /// # async fn run(service: api_mgmt::ServiceHandle) -> Result<(), api_mgmt::Error> {
    /// let service_now = service.start().await?;
    /// println!("{} is {}", service_now.name, service_now.state_name());
    /// # Ok(()) }
    /// ```
    pub async fn start(&self) -> Result<Response<Service>, Error> {
        self.command(ServiceCommand::Start).await
    }

    /// Sends `stop`; answers with the service as it is at that instant (usually `stopping`).
    ///
    /// ```no_run
    /// # async fn run(service: api_mgmt::ServiceHandle) -> Result<(), api_mgmt::Error> {
    /// let service_now = service.stop().await?;
    /// println!("{} is {}", service_now.name, service_now.state_name());
    /// # Ok(()) }
    /// ```
    pub async fn stop(&self) -> Result<Response<Service>, Error> {
        self.command(ServiceCommand::Stop).await
    }

    /// Sends a state command (`PATCH .../state`). Safe to retry.
    pub async fn command(&self, command: ServiceCommand) -> Result<Response<Service>, Error> {
        self.send(Some(command)).await
    }

    async fn send(&self, command: Option<ServiceCommand>) -> Result<Response<Service>, Error> {
        let body = raw_types::ServiceStateChangeRequest {
            command: command.map(ServiceCommand::to_raw),
        };
        let (org, svc) = (self.organization.as_uuid(), self.service.as_uuid());
        let (runtime, raw) = self.client.parts();
        let response = runtime
            .execute(&ops::UPDATE_SERVICE_STATE, || {
                raw.update_service_state(org, svc, &body)
            })
            .await?;
        responses::service(response)
    }

    /// Reads the service for a waiter of `command`: the state command without a command
    /// ([`get`](Self::get)), or, on a server that refuses that with 400 (learned once per client,
    /// for all its clones), `command` itself, which changes nothing once the service is on its way
    /// (a start on a starting or running service answers its state). `None` when that command is
    /// refused with 409 (a start while the service is still stopping): the service is moving.
    ///
    /// ```no_run
    /// # async fn run(service: api_mgmt::ServiceHandle) -> Result<(), api_mgmt::Error> {
    /// match service.read_for(api_mgmt::services::ServiceCommand::Start).await? {
    ///     Some(now) => println!("{}", now.state_name()),
    ///     None => println!("still on its way"),
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn read_for(
        &self,
        command: ServiceCommand,
    ) -> Result<Option<Response<Service>>, Error> {
        let learned = self.client.parts().0.learned();
        if !learned.refuses_command_less_read() {
            match self.get().await {
                Err(e) if e.status() == Some(400) => {
                    learned.learn_command_less_read_refused();
                }
                read => return read.map(Some),
            }
        }
        match self.command(command).await {
            Err(e) if e.is_conflict() => Ok(None),
            read => read.map(Some),
        }
    }

    /// Starts the service and waits until it is `running`, reading it with [`get`](Self::get).
    ///
    /// `start` is sent once, and again only when a read shows the service `stopped` (a start refused
    /// with 409 while the service was still stopping, or a service that fell back). Every state other
    /// than `running` and the dead ends keeps the wait going without a command (`starting`, `stopping`,
    /// `degraded`, `idle`, a state this SDK does not know, ...). Fails fast when the service is failed
    /// or (being) deleted; times out with the last seen service. See
    /// [`wait_for_service`](crate::wait::wait_for_service).
    ///
    /// ```no_run
    /// # async fn run(service: api_mgmt::ServiceHandle) -> Result<(), api_mgmt::Error> {
    /// let running = service.start_and_wait(&api_mgmt::WaitOptions::default()).await?;
    /// assert_eq!(running.state, Some(api_mgmt::services::ServiceState::Running));
    /// # Ok(()) }
    /// ```
    pub async fn start_and_wait(&self, options: &WaitOptions) -> Result<Service, Error> {
        self.command_and_wait(ServiceCommand::Start, options).await
    }

    /// Stops the service and waits until it is `stopped`, the same way as
    /// [`start_and_wait`](Self::start_and_wait): `stop` is sent again only when a read shows the
    /// service `running`.
    pub async fn stop_and_wait(&self, options: &WaitOptions) -> Result<Service, Error> {
        self.command_and_wait(ServiceCommand::Stop, options).await
    }

    /// Sends `command` and reads the service until it reaches the state the command leads to.
    pub async fn command_and_wait(
        &self,
        command: ServiceCommand,
        options: &WaitOptions,
    ) -> Result<Service, Error> {
        let probe = Probe {
            service: self,
            command,
        };
        wait_for_service(&probe, &WaitFor::service_state(command.target()), options).await
    }

    /// The pipes of the service.
    pub fn pipes(&self) -> Pipes {
        Pipes::new(self.clone())
    }

    /// One pipe of the service.
    pub fn pipe(&self, id: PipeId) -> PipeHandle {
        PipeHandle::new(self.clone(), id)
    }

    /// Every reverse private endpoint of the service (one response; the list is not paged).
    ///
    /// ```no_run
    /// # async fn run(service: api_mgmt::ServiceHandle) -> Result<(), api_mgmt::Error> {
    /// for endpoint in service.reverse_private_endpoints().await?.iter() {
    ///     println!("{} {}", endpoint.id, endpoint.status);
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn reverse_private_endpoints(
        &self,
    ) -> Result<Response<Vec<ReversePrivateEndpoint>>, Error> {
        let (org, svc) = (self.organization.as_uuid(), self.service.as_uuid());
        let (runtime, raw) = self.client.parts();
        let op = &ops::LIST_REVERSE_PRIVATE_ENDPOINTS;
        let response = runtime
            .execute(op, || raw.list_reverse_private_endpoints(org, svc))
            .await?;
        responses::reverse_private_endpoints(response)
    }

    /// Registers the private endpoint `id` on the service. Not retried after it may have reached the
    /// server.
    ///
    /// ```no_run
    /// # async fn run(service: api_mgmt::ServiceHandle) -> Result<(), api_mgmt::Error> {
    /// let endpoint = service.create_private_endpoint("vpce-0123456789abcdef0", "CI runners").await?;
    /// println!("registered {} (request {:?})", endpoint.id, endpoint.meta().request_id);
    /// # Ok(()) }
    /// ```
    pub async fn create_private_endpoint(
        &self,
        id: impl Into<String>,
        description: impl Into<String>,
    ) -> Result<Response<PrivateEndpoint>, Error> {
        let id = id.into();
        let mut problems = Problems::new();
        problems.check(!id.trim().is_empty(), "id", "required; must not be empty");
        problems.finish("private endpoint request")?;
        let body = raw_types::PrivateEndpointCreateRequest {
            id: raw_types::PrivateEndpointCreateRequestId::try_from(id.as_str())
                .map_err(|e| api_core::ConfigError(format!("private endpoint id: {e}")))?,
            description: Some(description.into()),
        };
        let (org, svc) = (self.organization.as_uuid(), self.service.as_uuid());
        let (runtime, raw) = self.client.parts();
        let op = &ops::CREATE_PRIVATE_ENDPOINT;
        let response = runtime
            .execute(op, || raw.create_private_endpoint(org, svc, &body))
            .await?;
        responses::private_endpoint(response)
    }
}

/// A service waiter's two calls: the command, and a read.
struct Probe<'a> {
    service: &'a ServiceHandle,
    command: ServiceCommand,
}

impl ServiceWait for Probe<'_> {
    async fn send(&self) -> Result<Response<Service>, Error> {
        self.service.command(self.command).await
    }

    async fn observe(&self) -> Result<Option<Response<Service>>, Error> {
        self.service.read_for(self.command).await
    }
}
