//! `cargo xtask <task>`: see `cargo xtask help`.

use std::process::ExitCode;

use xtask::apis::{APIS, workspace_root};
use xtask::{codegen, spec, surface};

const USAGE: &str = "\
usage: cargo xtask <task>

tasks:
  codegen           regenerate crates/api-raw/src/generated/ from spec/
  codegen --check   fail (exit 1) with a diff when the committed generated files are stale
  surface           print the public surface of the generated clients
  help              show this text";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match args.as_slice() {
        ["codegen"] => run_codegen(),
        ["codegen", "--check"] => run_check(),
        ["surface"] => run_surface(),
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
