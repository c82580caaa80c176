//! The guide's shell sessions, each run as the guide shows it (see `sessions`).

use crate::sessions::run;
use crate::support::Cloud;

#[test]
fn the_first_session_runs_as_the_guide_shows_it() {
    let cloud = Cloud::start();
    let ran = run(
        &cloud,
        "first-session.sh",
        &[("CLOUD_RATE_LIMIT", "1000/1s")],
    );
    assert!(ran.commands >= 20, "{} commands", ran.commands);
    assert!(
        ran.stdout.contains("Checkout p99 latency"),
        "{}",
        ran.stdout
    );
    assert!(
        ran.stderr.contains("FAILED_DEPENDENCY") && ran.stderr.contains("NOT_FOUND"),
        "the failures the session shows: {}",
        ran.stderr
    );
    assert!(
        cloud.pipes().iter().all(|p| p.deleted),
        "the pipe was deleted"
    );
}

/// Runs as production may answer: its own canonical forms, and a second pipe of one name allowed.
#[test]
fn the_declared_pipes_session_runs_as_the_guide_shows_it() {
    let cloud = Cloud::with(
        api_emulator::EmulatorOptions::for_tests()
            .canonical(true)
            .duplicate_names(true),
    );
    let ran = run(&cloud, "declared.sh", &[("CLOUD_RATE_LIMIT", "1000/1s")]);
    assert!(ran.commands >= 25, "{} commands", ran.commands);
    let live: Vec<String> = cloud
        .pipes()
        .into_iter()
        .filter(|p| !p.deleted)
        .map(|p| p.name)
        .collect();
    assert_eq!(live.len(), 2, "orders and events, once each: {live:?}");
}

#[test]
fn the_fault_session_arms_and_clears_rules_as_the_guide_shows_it() {
    let cloud = Cloud::start();
    let ran = run(&cloud, "faults.sh", &[]);
    assert_eq!(ran.commands, 5);
    let listed = ran
        .stdout
        .find("[{")
        .unwrap_or_else(|| panic!("the armed rules listed: {}", ran.stdout));
    let armed: serde_json::Value = serde_json::Deserializer::from_str(&ran.stdout[listed..])
        .into_iter()
        .next()
        .expect("a JSON value")
        .expect("the rules as JSON");
    assert_eq!(armed.as_array().map(Vec::len), Some(2), "{armed}");
}

/// A command without its trailing comment.
fn command_of(line: &str) -> &str {
    line.split(" # ").next().unwrap_or(line).trim()
}

/// The README's shell blocks (but its two commands, run by CI as they are) hold only commands the
/// guide's sessions run: a command of the front door cannot rot apart from the tests.
#[test]
fn every_command_of_the_readme_is_run_by_a_guide_session() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let sessions: Vec<String> = std::fs::read_dir(root.join("guide/sessions"))
        .unwrap()
        .map(|entry| std::fs::read_to_string(entry.unwrap().path()).unwrap())
        .collect();
    let run: Vec<&str> = sessions
        .iter()
        .flat_map(|s| s.lines().map(command_of))
        .collect();
    let mut checked = 0;
    for block in readme.split("```sh\n").skip(1) {
        let block = block.split("```").next().unwrap();
        if block.contains("cargo run --example tour") {
            continue;
        }
        for line in block.lines().map(command_of).filter(|l| !l.is_empty()) {
            assert!(
                run.contains(&line),
                "README runs `{line}`, which no guide session does"
            );
            checked += 1;
        }
    }
    assert!(checked >= 10, "{checked} commands");
}
