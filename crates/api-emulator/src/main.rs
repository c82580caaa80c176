//! `api-emulator`: run the local emulator of the management and observability APIs.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use api_emulator::{DEFAULT_SEED, Emulator, EmulatorOptions, Limits, Seed, Timing};
use clap::Parser;

/// A local emulator of the management and observability APIs; or, with a subcommand, a recorder of
/// a real deployment's answers, a server that replays them, and a check of them against the spec.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
    #[command(subcommand)]
    command: Option<Tool>,
    /// Address to listen on; port 0 picks a free port.
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// Seed file (.toml or .json); the built-in seed when absent (see --print-default-seed).
    #[arg(long)]
    seed: Option<PathBuf>,
    /// Keep state in this directory across restarts (an embedded redb database); on Unix it is made
    /// private (0700, the database 0600), and an open one that holds other files is refused.
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// Turn the rate limits off.
    #[arg(long)]
    no_rate_limit: bool,
    /// The management limit per API key, MAX/WINDOW (default 10/10s, counted in fixed windows).
    #[arg(long, value_name = "MAX/WINDOW", value_parser = Limits::parse)]
    management_rate_limit: Option<(u32, u64)>,
    /// The observability limit per token, MAX/WINDOW (default 100/60s).
    #[arg(long, value_name = "MAX/WINDOW", value_parser = Limits::parse)]
    observability_rate_limit: Option<(u32, u64)>,
    /// Make every state transition immediate.
    #[arg(long)]
    instant: bool,
    /// Refuse the service state command without a command (400), as the production service may.
    #[arg(long)]
    require_state_command: bool,
    /// Store and answer created pipes in a production server's canonical forms (column types as
    /// ClickHouse writes them, certificates trimmed, topics without spaces, the compression and
    /// reverse private endpoint ids in upper case) rather than as sent.
    #[arg(long)]
    canonical: bool,
    /// Create a second pipe with the name of a live one on the same service, as a production server
    /// may, rather than refuse it with 409.
    #[arg(long)]
    duplicate_names: bool,
    /// Acknowledge a delete before the pipe's teardown, as the production delete does: the pipe
    /// answers 404 at once and holds its name (409 to a create of it) until its deletion finishes.
    #[arg(long)]
    delete_acknowledged_first: bool,
    /// Deterministic mode: ids and request ids from this seed, a clock that starts at
    /// 2026-01-01T00:00:00Z and moves one second per API request (byte-identical answers to the
    /// same requests in the same order). With --data-dir a restart continues the ids and the clock
    /// rather than replaying them.
    #[arg(long, value_name = "SEED")]
    deterministic: Option<u64>,
    /// Print the built-in seed and exit.
    #[arg(long)]
    print_default_seed: bool,
}

/// The cassette tools.
#[derive(Debug, clap::Subcommand)]
enum Tool {
    /// Forward every request to a real deployment and append each exchange, secrets redacted, to a
    /// cassette (JSON Lines, 0600); Ctrl-C or SIGTERM closes it cleanly.
    Record {
        /// The management API of the deployment, e.g. https://api.example.com.
        #[arg(long)]
        upstream: String,
        /// The observability API, when it is elsewhere (else /api/v2 goes to --upstream).
        #[arg(long)]
        observability_upstream: Option<String>,
        /// The cassette file (created, or continued).
        #[arg(long)]
        cassette: PathBuf,
        /// Address to listen on; point the SDK or cloudctl at it.
        #[arg(long, default_value = "127.0.0.1:8080")]
        listen: SocketAddr,
    },
    /// Answer the exchanges of a cassette: in order per operation, matching path and body
    /// (redacted members match anything); a request that was not recorded gets a 400 NOT_RECORDED.
    Replay {
        /// The cassette file.
        #[arg(long)]
        cassette: PathBuf,
        /// Address to listen on.
        #[arg(long, default_value = "127.0.0.1:8080")]
        listen: SocketAddr,
    },
    /// Cassette tools.
    Cassette {
        #[command(subcommand)]
        command: CassetteTool,
    },
}

/// What to do with a cassette.
#[derive(Debug, clap::Subcommand)]
enum CassetteTool {
    /// Check every recorded answer against the spec's schemas and the SDK's decoding: one line per
    /// finding; exit 0 when clean, 1 with findings, 2 when the file cannot be read.
    Check {
        /// The cassette file.
        file: PathBuf,
    },
}

/// Waits for Ctrl-C or SIGTERM.
async fn stopped() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Runs a cassette tool.
async fn tool(tool: Tool) -> ExitCode {
    match tool {
        Tool::Record {
            upstream,
            observability_upstream,
            cassette,
            listen,
        } => {
            let options = api_emulator::RecordOptions {
                upstream,
                observability_upstream,
                cassette: cassette.clone(),
                listen,
            };
            let recorder = match api_emulator::Recorder::start(options).await {
                Ok(recorder) => recorder,
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::FAILURE;
                }
            };
            println!(
                "api-emulator recording on {} into {}",
                recorder.base_url(),
                cassette.display()
            );
            stopped().await;
            recorder.shutdown().await;
            ExitCode::SUCCESS
        }
        Tool::Replay { cassette, listen } => {
            let read = match api_emulator::Cassette::read(&cassette) {
                Ok(read) => read,
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::from(2);
                }
            };
            let replay = match api_emulator::Replay::start(read, listen).await {
                Ok(replay) => replay,
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::FAILURE;
                }
            };
            println!(
                "api-emulator replaying {} on {}",
                cassette.display(),
                replay.base_url()
            );
            stopped().await;
            let unused = replay.report().unused().len();
            if unused > 0 {
                eprintln!("{unused} recorded exchange(s) were not asked for");
            }
            replay.shutdown().await;
            ExitCode::SUCCESS
        }
        Tool::Cassette {
            command: CassetteTool::Check { file },
        } => match api_emulator::Cassette::read(&file) {
            Ok(cassette) => {
                let findings = api_emulator::check::check(&cassette);
                for finding in &findings {
                    println!("{finding}");
                }
                if findings.is_empty() {
                    println!(
                        "{}: {} exchange(s), no finding",
                        file.display(),
                        cassette.exchanges.len()
                    );
                    ExitCode::SUCCESS
                } else {
                    ExitCode::FAILURE
                }
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::from(2)
            }
        },
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    if let Some(command) = args.command {
        tracing_subscriber::fmt()
            .with_writer(std::io::stderr)
            .init();
        return tool(command).await;
    }
    if args.print_default_seed {
        print!("{DEFAULT_SEED}");
        return ExitCode::SUCCESS;
    }
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .init();
    let seed = match &args.seed {
        Some(path) => match Seed::from_path(path) {
            Ok(seed) => seed,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        },
        None => Seed::builtin(),
    };
    let mut options = EmulatorOptions::new().listen(args.listen).seed(seed);
    if let Some(dir) = args.data_dir {
        options = options.data_dir(dir);
    }
    if let Some(seed) = args.deterministic {
        options = options.deterministic(seed);
    }
    if let Some((max, window)) = args.management_rate_limit {
        options = options.management_rate_limit(max, window);
    }
    if let Some((max, window)) = args.observability_rate_limit {
        options = options.observability_rate_limit(max, window);
    }
    if args.no_rate_limit {
        options = options.rate_limits(false);
    }
    if args.instant {
        options = options.timing(Timing::INSTANT);
    }
    if args.require_state_command {
        options = options.require_state_command();
    }
    if args.canonical {
        options = options.canonical(true);
    }
    if args.duplicate_names {
        options = options.duplicate_names(true);
    }
    if args.delete_acknowledged_first {
        options = options.delete_acknowledged_first(true);
    }
    let emulator = match Emulator::start(options).await {
        Ok(emulator) => emulator,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let url = emulator.base_url();
    println!("api-emulator listening on {url}");
    println!(
        "  management API:    {url}/v1      (HTTP Basic; key id {})",
        emulator.admin_key().0
    );
    println!("  observability API: {url}/api/v2  (Bearer token from the seed)");
    println!("  control:           {url}/_emulator (Bearer control token from the seed)");
    println!("  credentials: see the seed (the built-in one: api-emulator --print-default-seed)");
    stopped().await;
    emulator.shutdown().await;
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_production_flags_parse() {
        let args = Args::try_parse_from(["api-emulator", "--canonical", "--duplicate-names"])
            .expect("the flags parse");
        assert!(args.canonical && args.duplicate_names);
        let args = Args::try_parse_from(["api-emulator"]).expect("no flag parses");
        assert!(!args.canonical && !args.duplicate_names);
    }

    #[test]
    fn the_arguments_are_consistent() {
        use clap::CommandFactory;
        Args::command().debug_assert();
    }
}
