//! [`Service`]: a service as returned by the state command.

use std::ops::Deref;

use api_raw::management::types as raw;
use api_raw::support::ServiceState;

use crate::ids::ServiceId;

/// The command of the service state endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServiceCommand {
    /// Start a stopped service.
    Start,
    /// Stop a running service.
    Stop,
}

impl From<ServiceCommand> for raw::ServiceStateCommand {
    fn from(command: ServiceCommand) -> Self {
        match command {
            ServiceCommand::Start => Self::Start,
            ServiceCommand::Stop => Self::Stop,
        }
    }
}

/// A service. Typed accessors for the common fields; the rest through `Deref` to the generated type.
#[derive(Debug, Clone)]
pub struct Service(raw::Service);

impl Service {
    /// The service id.
    pub fn id(&self) -> Option<ServiceId> {
        self.0.id.map(ServiceId::from_uuid)
    }

    /// The name, empty when the server omitted it.
    pub fn name(&self) -> &str {
        self.0.name.as_deref().unwrap_or_default()
    }

    /// The state, when the server reports one.
    pub fn state(&self) -> Option<ServiceState> {
        self.0.state.clone()
    }

    /// The generated type.
    pub fn as_raw(&self) -> &raw::Service {
        &self.0
    }
}

impl From<raw::Service> for Service {
    fn from(service: raw::Service) -> Self {
        Self(service)
    }
}

impl Deref for Service {
    type Target = raw::Service;

    fn deref(&self) -> &raw::Service {
        &self.0
    }
}
