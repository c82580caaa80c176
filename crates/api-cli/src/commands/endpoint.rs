//! `cloudctl endpoint list|register`.

use super::Session;
use crate::cli::EndpointCommand;
use crate::exit::{Api, Context, Failure};
use crate::render;

/// Runs an endpoint command.
pub(crate) async fn run(
    command: EndpointCommand,
    session: &mut Session<'_>,
) -> Result<(), Failure> {
    let service = session.settings()?.service()?;
    let context = Context::api(Api::Management);
    match command {
        EndpointCommand::List => {
            let endpoints = service
                .reverse_private_endpoints()
                .await
                .map_err(|e| Failure::sdk(&e, &context))?
                .into_inner();
            session
                .out
                .show(endpoints.as_slice(), render::reverse_endpoints)
        }
        EndpointCommand::Register { id, description } => {
            let endpoint = service
                .create_private_endpoint(id, description)
                .await
                .map_err(|e| Failure::sdk(&e, &context))?
                .into_inner();
            session.out.show(&endpoint, render::private_endpoint)
        }
    }
}
