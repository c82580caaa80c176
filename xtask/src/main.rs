//! `cargo xtask <task>`: see `cargo xtask help`.

use std::process::ExitCode;

use xtask::apis::{APIS, workspace_root};
use xtask::{codegen, compile_time, links, public_api, semver, spec, surface};

const USAGE: &str = "\
usage: cargo xtask <task>

tasks:
  codegen           regenerate crates/api-raw/src/generated/ from spec/
  codegen --check   fail (exit 1) with a diff when the committed generated files are stale
  surface           print the public surface of the generated clients
  public-api        check the public API of each library crate against its snapshot in
                    xtask/snapshots/ (outside CI a change writes a .snap.new to review; with
                    INSTA_UPDATE=always it is accepted), and that api-mgmt and api-obs name
                    each thing once, from a root of at most 25 names
  semver REV        cargo-semver-checks on each library crate against the release at the git
                    revision REV (v0.2.0), from rustdoc JSON built once per side
  compile-time [--dry-run] [--only CRATE]... [--rounds N] [--dir DIR] [--keep]
                    cold debug builds of throwaway downstream crates (one operation each) in fresh
                    target dirs, dependencies fetched first, timed against the peer crate
                    clickhouse-cloud-api (newest in the registry); several minutes, not in CI.
                    --dry-run writes and fetches only; --only builds the named crates (peer-clickhouse-
                    cloud-api, only-api-obs, only-api-mgmt, api-mgmt-and-api-obs,
                    api-mgmt-with-emulator-tests); --dir writes there and keeps it
  links             every relative link of the built guide (guide/book/, after `mdbook build
                    guide`) and of README.md, CONTRIBUTING.md, CHANGELOG.md and bench/README.md
                    reaches a file, and every #fragment an id or a heading; every {{#include}}
                    of the guide names a file and an anchor that exist
  help              show this text";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match args.as_slice() {
        ["codegen"] => run_codegen(),
        ["codegen", "--check"] => run_check(),
        ["surface"] => run_surface(),
        ["public-api"] => run_public_api(),
        ["links"] => run_links(),
        ["semver", baseline] => run_semver(baseline),
        ["compile-time", rest @ ..] => match compile_time_options(rest) {
            Ok(options) => run_compile_time(&options),
            Err(e) => {
                eprintln!("error: {e}\n\n{USAGE}");
                return ExitCode::from(2);
            }
        },
        ["help"] | ["--help"] | ["-h"] => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        _ => {
            eprintln!("error: unknown arguments {args:?}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn run_links() -> anyhow::Result<ExitCode> {
    let root = workspace_root();
    let files: Vec<_> = [
        "README.md",
        "CONTRIBUTING.md",
        "CHANGELOG.md",
        "bench/README.md",
    ]
    .iter()
    .map(|f| root.join(f))
    .collect();
    let mut broken = links::includes(&root.join("guide/src"))?;
    broken.extend(links::check(&root.join("guide/book"), &files)?);
    if broken.is_empty() {
        println!("every link of the guide and of the front doors reaches its target");
        return Ok(ExitCode::SUCCESS);
    }
    for b in &broken {
        eprintln!("{}: {}: {}", b.file.display(), b.link, b.why);
    }
    eprintln!("{} broken link(s)", broken.len());
    Ok(ExitCode::FAILURE)
}

fn run_public_api() -> anyhow::Result<ExitCode> {
    let checked = public_api::snapshot_all(&workspace_root())?;
    for problem in &checked.names {
        eprintln!("{problem}");
    }
    if checked.changed.is_empty() && checked.names.is_empty() {
        println!(
            "the public API of every library crate matches its snapshot; each facade names each \
             thing once, from a root of at most {} names",
            xtask::public_names::MAX_ROOT_NAMES
        );
        return Ok(ExitCode::SUCCESS);
    }
    if !checked.changed.is_empty() {
        eprintln!(
            "the public API of {} changed: review the diff above; a breaking change needs a major \
             version (see the guide's chapter on versions and support)",
            checked.changed.join(", ")
        );
    }
    Ok(ExitCode::FAILURE)
}

fn run_semver(baseline: &str) -> anyhow::Result<ExitCode> {
    let broken = semver::check_all(&workspace_root(), baseline)?;
    if broken.is_empty() {
        println!("no library crate breaks semver against {baseline}");
        return Ok(ExitCode::SUCCESS);
    }
    eprintln!(
        "{} break semver against {baseline}: see above; such a change needs the next major (before \
         1.0, minor) version",
        broken.join(", ")
    );
    Ok(ExitCode::FAILURE)
}

fn run_codegen() -> anyhow::Result<ExitCode> {
    let changed = codegen::write_all(&workspace_root())?;
    if changed.is_empty() {
        println!("generated files are up to date");
    }
    for file in changed {
        println!("wrote {file}");
    }
    Ok(ExitCode::SUCCESS)
}

fn run_check() -> anyhow::Result<ExitCode> {
    let drifts = codegen::check_all(&workspace_root())?;
    if drifts.is_empty() {
        println!("generated files match the spec");
        return Ok(ExitCode::SUCCESS);
    }
    for drift in &drifts {
        eprintln!("{} {}", drift.file, drift.reason);
        if !drift.diff.is_empty() {
            eprintln!("{}", drift.diff);
        }
    }
    eprintln!(
        "error: {} generated file(s) are stale; run `cargo xtask codegen` and commit the result",
        drifts.len()
    );
    Ok(ExitCode::FAILURE)
}

fn compile_time_options(args: &[&str]) -> Result<compile_time::Options, String> {
    let mut options = compile_time::Options {
        rounds: 1,
        ..compile_time::Options::default()
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match *arg {
            "--dry-run" => options.dry_run = true,
            "--keep" => options.keep = true,
            "--only" => options
                .only
                .push(args.next().ok_or("--only takes a crate name")?.to_string()),
            "--rounds" => {
                options.rounds = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .filter(|&n: &usize| n > 0)
                    .ok_or("--rounds takes a number of rounds, at least 1")?
            }
            "--dir" => options.dir = Some(args.next().ok_or("--dir takes a directory")?.into()),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(options)
}

fn run_compile_time(options: &compile_time::Options) -> anyhow::Result<ExitCode> {
    let root = workspace_root();
    let measurement = compile_time::run(&root, options)?;
    let rustc = std::process::Command::new("rustc")
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!(
        "workspace at {}; {rustc}; {cores} cores; clickhouse-cloud-api {}",
        compile_time::workspace_commit(&root),
        measurement
            .peer_version
            .as_deref()
            .unwrap_or("not measured")
    );
    if options.dry_run {
        println!("dry run: the crates are written and their dependencies fetched; nothing built");
    } else {
        println!("\n{}", compile_time::report(&measurement.timings));
    }
    Ok(ExitCode::SUCCESS)
}

fn run_surface() -> anyhow::Result<ExitCode> {
    let root = workspace_root();
    for api in APIS {
        let spec = spec::load(&root.join(api.spec))?;
        let generated = std::fs::read_to_string(root.join(api.output))?;
        println!(
            "## {}\n\n{}",
            api.name,
            surface::surface(&spec, &generated)?
        );
    }
    Ok(ExitCode::SUCCESS)
}
