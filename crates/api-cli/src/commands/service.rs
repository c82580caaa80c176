//! `cloudctl service start|stop [--wait]`.

use api_mgmt::{
    Error, Response, Service, ServiceHandle, WaitOptions,
    services::ServiceCommand,
    wait::{ServiceWait, WaitFor, wait_for_service},
};

use super::Session;
use crate::cli;
use crate::exit::{Api, Context, Failure};
use crate::progress::Progress;
use crate::render;

/// Runs a service command.
pub(crate) async fn run(
    command: cli::ServiceCommand,
    session: &mut Session<'_>,
) -> Result<(), Failure> {
    let (command, name, args) = match command {
        cli::ServiceCommand::Start(args) => (ServiceCommand::Start, "start", args),
        cli::ServiceCommand::Stop(args) => (ServiceCommand::Stop, "stop", args),
    };
    let settings = session.settings()?;
    let service = settings.service()?;
    let options = settings.wait_options(args.timeout)?;
    let context = Context {
        service_command: Some(name),
        ..Context::api(Api::Management)
    };
    let result = if args.wait {
        wait(&service, command, &options).await
    } else {
        service.command(command).await.map(Response::into_inner)
    };
    let value = result.map_err(|e| Failure::sdk(&e, &context))?;
    session.out.show(&value, render::service)
}

/// Sends `command` until the service reaches the state it leads to, showing each state seen.
async fn wait(
    service: &ServiceHandle,
    command: ServiceCommand,
    options: &WaitOptions,
) -> Result<Service, Error> {
    let target = command.target();
    let progress = Progress::start(format!("the service to be {target}"));
    let probe = Probe {
        service,
        command,
        progress: &progress,
    };
    wait_for_service(&probe, &WaitFor::service_state(target), options).await
}

/// The two calls of a service waiter (the command, and a read), reporting each state seen.
struct Probe<'a> {
    service: &'a ServiceHandle,
    command: ServiceCommand,
    progress: &'a Progress,
}

impl Probe<'_> {
    fn seen(&self, answer: Result<Response<Service>, Error>) -> Result<Response<Service>, Error> {
        if let Ok(service) = &answer {
            self.progress.state(service.state_name());
        }
        answer
    }
}

impl ServiceWait for Probe<'_> {
    async fn send(&self) -> Result<Response<Service>, Error> {
        self.seen(self.service.command(self.command).await)
    }

    async fn observe(&self) -> Result<Option<Response<Service>>, Error> {
        let read = self.service.read_for(self.command).await?;
        read.map(|service| self.seen(Ok(service))).transpose()
    }
}
