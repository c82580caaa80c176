//! The commands: each reads its settings, calls the SDK and writes the result or a [`Failure`].

mod config;
mod declared;
mod endpoint;
mod observability;
mod pipe;
mod service;

use clap::CommandFactory;

use crate::cli::{Cli, Command, GlobalArgs};
use crate::exit::{Exit, Failure};
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

/// Runs `command`; the exit code of a command that did what it was asked (0, or 8 for a plan with
/// changes to make).
pub(crate) async fn run(command: Command, session: &mut Session<'_>) -> Result<Exit, Failure> {
    session.global.refuse_secret_flags()?;
    let done = match command {
        Command::Plan(args) => return declared::plan(args, session).await,
        Command::Apply(args) => return declared::apply(args, session).await,
        Command::Import(args) => declared::import(args, session).await,
        Command::State { command } => declared::state(command, session).await,
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
    };
    done.map(|()| Exit::Success)
}
