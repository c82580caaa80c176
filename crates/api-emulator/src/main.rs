//! `api-emulator`: run the local emulator of the management and observability APIs.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use api_emulator::{DEFAULT_SEED, Emulator, EmulatorOptions, Limits, Seed, Timing};
use clap::Parser;

/// A local emulator of the management and observability APIs.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Args {
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

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
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
    if tokio::signal::ctrl_c().await.is_err() {
        eprintln!("error: cannot wait for Ctrl-C");
    }
    emulator.shutdown().await;
    ExitCode::SUCCESS
}
