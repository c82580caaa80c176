//! The commands: each reads its settings, calls the SDK and writes the result or a [`Failure`].

mod config;
mod endpoint;
mod observability;
mod pipe;
mod service;

use std::time::Duration;

use api_mgmt::WaitOptions;
use clap::CommandFactory;

use crate::cli::{Cli, Command, GlobalArgs};
use crate::exit::Failure;
use crate::output::{Output, write_stderr, write_stdout};
use crate::pipe_file::Lookup;
use crate::settings::Settings;

/// What every command shares: the output, the environment and the global flags. The secret values
/// it meets are kept out of every output ([`output::keep_secret`](crate::output::keep_secret)).
pub(crate) struct Session<'a> {
    /// Where results go.
    pub out: Output,
    /// The environment.
    pub env: Lookup<'a>,
    /// The global flags.
    pub global: GlobalArgs,
}

impl Session<'_> {
    /// Resolves the settings, and remembers their secrets for redaction.
    pub fn settings(&mut self) -> Result<Settings, Failure> {
        let settings = Settings::resolve(&self.global, self.env)?;
        settings
            .secrets()
            .iter()
            .for_each(|secret| crate::output::keep_secret(secret));
        if !self.out.is_json() {
            for warning in &settings.warnings {
                write_stderr(warning);
            }
        }
        Ok(settings)
    }
}

/// Runs `command`.
pub(crate) async fn run(command: Command, session: &mut Session<'_>) -> Result<(), Failure> {
    session.global.refuse_secret_flags()?;
    match command {
        Command::Service { command } => service::run(command, session).await,
        Command::Pipe { command } => pipe::run(command, session).await,
        Command::Endpoint { command } => endpoint::run(command, session).await,
        Command::Alert { command } => observability::alert(command, session).await,
        Command::Dashboard { command } => observability::dashboard(command, session).await,
        Command::Config { command } => config::run(command, session),
        Command::Completion { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "cloudctl", &mut script);
            write_stdout(&String::from_utf8_lossy(&script))
        }
    }
}

/// How the CLI's waits poll: every second at first, then up to every 5 seconds, until `timeout`.
pub(crate) fn wait_options(timeout: Duration) -> WaitOptions {
    WaitOptions::default()
        .interval(Duration::from_secs(1), Duration::from_secs(5))
        .timeout(timeout)
}
