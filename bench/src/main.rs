//! `cargo run --release -p api-bench [-- --quick] [-- --only sdk|emulator]`: the SDK's benchmarks.
//!
//! In one run, against one canned local server (fixed bytes per path, on a runtime of its own), the
//! facade (`api_mgmt::Client`, `api_obs::Client`), the generated client alone (`client.raw()`), a
//! hand-written reqwest + serde floor and, with the `peer` feature, the vendor's crate
//! `clickhouse-cloud-api` (on the state command) make the same calls in interleaved rounds; the
//! table shows each one's median and its ratio to the floor of the same run. Then the emulator: start-up, reads and
//! creates, in memory and with a data directory. Not a test: nothing here runs in CI.

mod canned;
mod clients;
mod cpu;
mod declared;
mod emulator;
mod fixtures;
mod fleet;
mod floor;
mod report;
mod rounds;
mod sdk;
mod traces;

use std::process::ExitCode;

use clients::{Call, Failure, Variant};
use emulator::Storage;

const USAGE: &str = "\
usage: cargo run --release -p api-bench -- [--quick] [--only sdk|emulator|fleet|below|declared|traces] [--server-threads N]
       cargo run --release -p api-bench -- --repeat facade|generated|floor|peer start|pipe|endpoints|dashboards N [--callers K]
       cargo run --release -p api-bench -- burst-floor OTHER PIPES

  --quick             a few seconds, to check that everything runs (figures not to be trusted)
  --only sdk          only the facade / generated client / floor table
  --only emulator     only the emulator table
  --only fleet        only the fleet table (1, 8, 32 processes sharing one key through each rate
                      limit store, then eight at twice the server's limit; needs `cargo build
                      --release -p api-emulator` first)
  --only below        only the runs above the server's limit (twice it for a minute, ten
                      times it for four, per shared store)
  --only declared     only the declared pipes' cost in calls (an apply of 20, then 200, new pipes
                      under a limit of 20 per 2 s, then a plan of them; and a plan of 500 recorded
                      pipes with 2 secrets each: its wall and CPU time)
  --only traces       only the spans' cost: getPipe by the facade without a subscriber, then with
                      one recording every span, each against the generated client
  --server-threads N  worker threads of the canned server's own runtime (default 1)
  --repeat V C N      only N sequential calls C by variant V, for a profiler (perf, callgrind)
  --callers K         with --repeat: the N calls made by K concurrent callers (default 1)
  burst-floor O P     prints, in seconds, the floor of an apply of P new pipes after O other calls
                      under 20 per 2 s, each pipe read 2 s after its create (what `--only declared`
                      compares with; bench/scripts/cloudctl-apply.sh reads it)";

/// What to run.
struct Args {
    quick: bool,
    sdk: bool,
    emulator: bool,
    fleet: bool,
    below: bool,
    declared: bool,
    traces: bool,
    server_threads: usize,
    repeat: Option<(Variant, Call, usize)>,
    callers: usize,
}

fn parse(args: &[String]) -> Result<Args, String> {
    let mut parsed = Args {
        quick: false,
        sdk: true,
        emulator: true,
        fleet: false,
        below: false,
        declared: false,
        traces: false,
        server_threads: 1,
        repeat: None,
        callers: 1,
    };
    let mut args = args.iter().map(String::as_str);
    while let Some(arg) = args.next() {
        if arg == "--repeat" {
            let (v, c, n) = (args.next(), args.next(), args.next());
            parsed.repeat =
                Some(repeat(v, c, n).ok_or("--repeat takes a variant, a call and a count")?);
            continue;
        }
        match (arg, args.clone().next()) {
            ("--quick", _) => parsed.quick = true,
            ("--only", Some("sdk")) => parsed.emulator = false,
            ("--only", Some("emulator")) => parsed.sdk = false,
            ("--only", Some("fleet")) => {
                (parsed.sdk, parsed.emulator, parsed.fleet, parsed.below) =
                    (false, false, true, true);
            }
            ("--only", Some("below")) => {
                (parsed.sdk, parsed.emulator, parsed.below) = (false, false, true);
            }
            ("--only", Some("declared")) => {
                (parsed.sdk, parsed.emulator, parsed.declared) = (false, false, true);
            }
            ("--only", Some("traces")) => {
                (parsed.sdk, parsed.emulator, parsed.traces) = (false, false, true);
            }
            ("--callers", Some(n)) => {
                parsed.callers = n
                    .parse()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or(format!("--callers takes a positive number, not {n:?}"))?;
            }
            ("--server-threads", Some(n)) => {
                parsed.server_threads = n.parse().ok().filter(|&n| n > 0).ok_or(format!(
                    "--server-threads takes a positive number, not {n:?}"
                ))?;
            }
            _ => return Err(format!("unknown argument {arg:?}")),
        }
        if matches!(arg, "--only" | "--server-threads" | "--callers") {
            args.next();
        }
    }
    Ok(parsed)
}

/// The variant, call and count of `--repeat`.
fn repeat(v: Option<&str>, c: Option<&str>, n: Option<&str>) -> Option<(Variant, Call, usize)> {
    let variant = match v? {
        "facade" => Variant::Facade,
        "generated" => Variant::Generated,
        "floor" => Variant::Floor,
        "peer" => Variant::Peer,
        _ => return None,
    };
    let call = match c? {
        "start" => Call::StartService,
        "pipe" => Call::GetPipe,
        "endpoints" => Call::ListEndpoints,
        "dashboards" => Call::ListDashboards,
        _ => return None,
    };
    Some((variant, call, n?.parse().ok()?))
}

/// `burst-floor OTHER PIPES`: [`declared::burst_floor`] under the bench's limit, in seconds.
fn burst_floor(args: &[String]) -> ExitCode {
    let count = |i: usize| args.get(i).and_then(|n| n.parse::<usize>().ok());
    let (Some(other), Some(pipes)) = (count(0), count(1)) else {
        eprintln!(
            "error: burst-floor takes two counts: the calls besides creates and reads, and the pipes"
        );
        return ExitCode::FAILURE;
    };
    // The emulator's own pipe transition (2 s), as the script runs it.
    let provisioning =
        std::time::Duration::from_millis(api_emulator::Timing::default().pipe_provisioning_ms);
    let plan = declared::Plan::FULL;
    let floor = declared::burst_floor(other, pipes, plan.limit, plan.window, provisioning);
    println!("{:.3}", floor.as_secs_f64());
    ExitCode::SUCCESS
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("fleet-worker") {
        return fleet_worker(args.get(1));
    }
    if args.first().map(String::as_str) == Some("canned-server") {
        let workers = args.get(1).and_then(|n| n.parse().ok()).unwrap_or(1);
        return match canned::CannedServer::serve_until_stdin_closes(workers) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: the canned server: {e}");
                ExitCode::FAILURE
            }
        };
    }
    if args.first().map(String::as_str) == Some("burst-floor") {
        return burst_floor(&args[1..]);
    }
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let args = match parse(&args) {
        Ok(args) => args,
        Err(e) => {
            eprintln!("error: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// One process of the fleet benchmark (spawned by it, settings in the environment).
fn fleet_worker(seconds: Option<&String>) -> ExitCode {
    let seconds = seconds.and_then(|s| s.parse().ok()).unwrap_or(1);
    let ran = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(Failure::from)
        .and_then(|runtime| runtime.block_on(fleet::work(seconds)));
    match ran {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fleet-worker: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<(), Failure> {
    if cfg!(debug_assertions) {
        eprintln!("warning: a debug build; run with --release for figures worth reading");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    if let Some((variant, call, calls)) = args.repeat {
        return runtime.block_on(sdk::repeat(
            variant,
            call,
            calls,
            args.callers,
            args.server_threads,
        ));
    }
    println!("{}\n", machine());
    let started = std::time::Instant::now();
    if args.sdk {
        let plan = if args.quick {
            sdk::Plan::QUICK
        } else {
            sdk::Plan::FULL
        };
        let figures = runtime.block_on(sdk::run(plan, args.server_threads))?;
        println!(
            "Ratios against the floor of the same run (median of {} interleaved rounds; per call: lower \
             is better, throughput: higher is better)\n",
            plan.rounds
        );
        println!("{}", report::sdk(&figures));
        println!("{}", report::sdk_cpu(&figures));
    }
    if args.traces {
        let plan = if args.quick {
            traces::Plan::QUICK
        } else {
            traces::Plan::FULL
        };
        let phases = runtime.block_on(traces::run(plan, args.server_threads))?;
        println!("{}", report::traces(&phases, plan));
    }
    if args.emulator {
        let plan = if args.quick {
            emulator::Plan::QUICK
        } else {
            emulator::Plan::FULL
        };
        eprintln!("measuring: the emulator in memory");
        let memory = runtime.block_on(emulator::run(plan, Storage::Memory))?;
        eprintln!("measuring: the emulator with a data directory");
        let data_dir = runtime.block_on(emulator::run(plan, Storage::DataDir))?;
        println!("{}", report::emulator(&memory, &data_dir));
    }
    if args.fleet {
        let plan = if args.quick {
            fleet::Plan::QUICK
        } else {
            fleet::Plan::FULL
        };
        let (rows, stalls) = fleet::run(plan)?;
        println!("{}", report::fleet(&rows, &stalls, plan));
    }
    if args.below {
        let plan = if args.quick {
            fleet::Plan::QUICK
        } else {
            fleet::Plan::FULL
        };
        let runs = fleet::run_below(plan)?;
        println!("{}", report::below(&runs, plan));
    }
    if args.declared {
        let plan = if args.quick {
            declared::Plan::QUICK
        } else {
            declared::Plan::FULL
        };
        let runs = if args.quick {
            vec![(plan, 4)]
        } else {
            vec![(plan, plan.pipes), (plan, 4), (declared::Plan::BULK, 4)]
        };
        let mut baseline = None;
        for (plan, parallelism) in runs {
            eprintln!(
                "measuring: an apply of {} declared pipes, {parallelism} calls at a time, then a plan",
                plan.pipes
            );
            let figures =
                runtime.block_on(declared::run(plan, parallelism, &declared::Store::File))?;
            println!("{}", report::declared(&figures, plan));
            if plan.pipes == declared::Plan::FULL.pipes.min(plan.pipes) && parallelism == 4 {
                baseline.get_or_insert((plan, figures));
            }
        }
        // The same apply with its state in each shared store, against the file store's run.
        if let Some((plan, file)) = baseline {
            let servers = declared::Servers::start();
            let mut rows = vec![file];
            for store in servers.stores() {
                eprintln!(
                    "measuring: an apply of {} declared pipes, its state in {}",
                    plan.pipes,
                    store.name()
                );
                rows.push(runtime.block_on(declared::run(plan, 4, &store))?);
            }
            println!("{}", report::stores(&rows, plan));
        }
        let pipes = if args.quick { 20 } else { 500 };
        eprintln!("measuring: a plan of {pipes} recorded pipes with 2 secrets each");
        let cost = runtime.block_on(declared::plan_cost(pipes))?;
        println!("{}", report::plan_cost(&cost));
    }
    println!("(measured in {:.0} s)", started.elapsed().as_secs_f64());
    Ok(())
}

/// The machine, as the tables' caption: cores and CPU model.
fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".to_string());
    format!(
        "api-bench on {cores} cores ({model}), {} {}",
        std::env::consts::OS,
        std::env::consts::ARCH
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(text: &str) -> Result<Args, String> {
        parse(
            &text
                .split_whitespace()
                .map(String::from)
                .collect::<Vec<_>>(),
        )
    }

    #[test]
    fn arguments_select_the_parts_and_the_size() {
        let all = args("").unwrap();
        assert!(all.sdk && all.emulator && !all.quick && all.server_threads == 1);
        let quick_sdk = args("--quick --only sdk --server-threads 2").unwrap();
        assert!(quick_sdk.quick && quick_sdk.sdk && !quick_sdk.emulator);
        assert_eq!(quick_sdk.server_threads, 2);
        assert!(!args("--only emulator").unwrap().sdk);
        let fleet = args("--only fleet").unwrap();
        assert!(fleet.fleet && fleet.below && !fleet.sdk && !fleet.emulator);
        let below = args("--only below").unwrap();
        assert!(below.below && !below.fleet && !below.sdk);
        assert!(!all.fleet, "the fleet runs only when asked");
        let traces = args("--only traces").unwrap();
        assert!(traces.traces && !traces.sdk && !traces.emulator && !all.traces);
        let declared = args("--only declared").unwrap();
        assert!(declared.declared && !declared.sdk && !declared.emulator && !all.declared);
        assert!(args("--only nothing").is_err());
        assert!(args("--server-threads 0").is_err());
        let repeat = args("--repeat facade dashboards 20").unwrap().repeat;
        assert_eq!(repeat, Some((Variant::Facade, Call::ListDashboards, 20)));
        assert!(args("--repeat facade dashboards").is_err());
        assert_eq!(
            args("--repeat floor pipe 9 --callers 3").unwrap().callers,
            3
        );
        assert_eq!(args("--repeat floor pipe 9").unwrap().callers, 1);
        assert!(args("--repeat floor pipe 9 --callers 0").is_err());
    }
}
