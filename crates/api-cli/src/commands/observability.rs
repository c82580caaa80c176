//! `cloudctl alert get` and `cloudctl dashboard list` (the observability API).

use super::Session;
use crate::cli::{AlertCommand, DashboardCommand};
use crate::exit::{Api, Context, Failure};
use crate::render;

/// Runs an alert command.
pub(crate) async fn alert(command: AlertCommand, session: &mut Session<'_>) -> Result<(), Failure> {
    let client = session.settings()?.observability()?;
    let context = Context::api(Api::Observability);
    match command {
        AlertCommand::Get { id } => {
            let alert = client
                .alert(id)
                .get()
                .await
                .map_err(|e| Failure::sdk(&e, &context))?
                .into_inner();
            session.out.show(&alert, render::alert)
        }
    }
}

/// Runs a dashboard command.
pub(crate) async fn dashboard(
    command: DashboardCommand,
    session: &mut Session<'_>,
) -> Result<(), Failure> {
    let client = session.settings()?.observability()?;
    let context = Context::api(Api::Observability);
    match command {
        DashboardCommand::List => {
            let dashboards = client
                .dashboards()
                .list()
                .await
                .map_err(|e| Failure::sdk(&e, &context))?
                .into_inner();
            session.out.show(dashboards.as_slice(), render::dashboards)
        }
    }
}
