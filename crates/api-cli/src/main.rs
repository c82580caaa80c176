//! `cloudctl`: a command-line client of the analytics cloud's management and observability APIs,
//! built on the SDK's facades (`api-mgmt`, `api-obs`).
//!
//! Results go to stdout (aligned text on a terminal, the domain values as JSON otherwise or with
//! `-o json`); errors go to stderr (one line, or `{"error": {...}}` in JSON mode), and the exit code
//! tells scripts what happened (see `cloudctl --help`).

mod cli;
mod commands;
mod control_echo;
mod declared_view;
mod duration;
mod exit;
mod interrupt;
mod output;
mod pipe_file;
mod progress;
mod render;
mod settings;
mod telemetry;
mod warnings;

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::{CommandFactory, FromArgMatches};
use tracing::Instrument;

use crate::cli::{Cli, OutputFormat};
use crate::commands::Session;
use crate::exit::{Exit, Failure};
use crate::output::{Output, write_stderr};

fn main() -> ExitCode {
    let matches = match Cli::command().try_get_matches() {
        Ok(matches) => matches,
        Err(error) => return usage_error(&error),
    };
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(error) => return usage_error(&error),
    };
    let out = Output::resolve(cli.global.output);
    progress::say_limit_waits(!out.is_json());
    let env = |name: &str| std::env::var(name).ok();
    // Two workers beside the main thread, which runs the command: a call to a shared state store
    // (blocking, bounded by the store's timeouts) holds the main thread, never the tasks that drive
    // the HTTP connections, the signals and the exporter.
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            let failure = Failure::other("RUNTIME_ERROR", format!("cannot start: {e}"));
            return report(out, &failure);
        }
    };
    // A secret given as a flag is refused, and kept out of every message.
    for flagged in [&cli.global.key_secret, &cli.global.token]
        .into_iter()
        .flatten()
    {
        output::keep_secret(flagged);
    }
    let mut session = Session {
        out,
        env: &env,
        global: cli.global,
    };
    // With OTEL_EXPORTER_OTLP_ENDPOINT set, the run is one trace under the command's span.
    let telemetry = telemetry::install(&env, out.is_json());
    let span = match telemetry {
        Some(_) => telemetry::command_span(&command_words(&matches)),
        None => tracing::Span::none(),
    };
    let exporting = telemetry.is_some();
    let ran = runtime.block_on(async {
        let command = commands::run(cli.command, &mut session).instrument(span.clone());
        if !exporting {
            return command.await;
        }
        // A signal ends the command where it is: its spans end (dropped: what was under way as
        // `cancelled`) and are exported before the exit, rather than lost with the process.
        tokio::select! {
            ran = command => ran,
            exit = interrupt::outside_apply() => Err(interrupt::stopped(exit)),
        }
    });
    let code = match ran {
        Ok(exit) => exit.code(),
        Err(failure) => {
            report(out, &failure);
            failure.exit.code()
        }
    };
    telemetry::record_exit(&span, code);
    drop(span);
    drop(runtime);
    if let Some(telemetry) = telemetry {
        telemetry.finish();
    }
    ExitCode::from(code)
}

/// The subcommands of the command line (`pipe`, `create`), for the command's span.
fn command_words(matches: &clap::ArgMatches) -> Vec<&str> {
    let mut words = Vec::new();
    let mut current = matches;
    while let Some((name, next)) = current.subcommand() {
        words.push(name);
        current = next;
    }
    words
}

/// Writes the failure to stderr, as one JSON object or as text, and returns its exit code.
fn report(out: Output, failure: &Failure) -> ExitCode {
    if out.is_json() {
        write_stderr(&failure.json().to_string());
    } else {
        write_stderr(&failure.human());
    }
    ExitCode::from(failure.exit.code())
}

/// Help and version go to stdout (exit 0); a usage error goes to stderr with exit 2, as JSON when the
/// output is JSON, without the value of any flag named like a secret.
fn usage_error(error: &clap::Error) -> ExitCode {
    if matches!(
        error.kind(),
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion
    ) {
        let _ = error.print();
        return ExitCode::from(Exit::Success.code());
    }
    keep_secret_flag_values();
    if !json_requested() {
        write_stderr(&error.render().to_string());
        return ExitCode::from(Exit::Usage.code());
    }
    let message = if error.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        "a command is missing".to_string()
    } else {
        let rendered = error.render().to_string();
        rendered
            .lines()
            .next()
            .unwrap_or("invalid command line")
            .trim_start_matches("error: ")
            .to_string()
    };
    let failure =
        Failure::usage(message).with_hint("`cloudctl --help` lists the commands and options");
    report(
        Output {
            format: OutputFormat::Json,
        },
        &failure,
    )
}

/// The command line as text, for a command line that did not parse: an argument that is not UTF-8
/// is read with its bytes replaced (`std::env::args` would panic on it).
fn raw_args() -> Vec<String> {
    std::env::args_os()
        .skip(1)
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect()
}

/// Keeps the value of every flag named like a secret (`--key-secret`, `--token`, a misspelt
/// `--pasword=...`) out of the messages, from the raw arguments, since they did not parse.
fn keep_secret_flag_values() {
    let args = raw_args();
    for (i, arg) in args.iter().enumerate() {
        let Some(flag) = arg.strip_prefix("--") else {
            continue;
        };
        let (name, value) = match flag.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (flag, args.get(i + 1).map(String::as_str)),
        };
        if let Some(value) = value.filter(|_| api_mgmt::redact::is_secret_member(name)) {
            output::keep_secret(value);
        }
    }
}

/// Whether the command line asks for JSON (or leaves the format to stdout, which is not a terminal);
/// read from the raw arguments, since they did not parse.
fn json_requested() -> bool {
    let args = raw_args();
    let mut requested = None;
    for (i, arg) in args.iter().enumerate() {
        let value = match arg.as_str() {
            "-o" | "--output" => args.get(i + 1).map(String::as_str),
            other => other
                .strip_prefix("--output=")
                .or_else(|| other.strip_prefix("-o").filter(|v| !v.is_empty())),
        };
        match value {
            Some("json") => requested = Some(true),
            Some("human") => requested = Some(false),
            _ => {}
        }
    }
    requested.unwrap_or_else(|| !std::io::stdout().is_terminal())
}
