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
    // One pipe made (the 424 and the dry run made none), then deleted: none is left.
    let creates: Vec<u16> = cloud
        .requests()
        .iter()
        .filter(|e| e.operation_id == Some(api_emulator::OperationId::CreatePipe))
        .map(|e| e.status)
        .collect();
    assert_eq!(creates, [424, 200]);
    assert!(
        cloud.pipes().iter().all(|p| p.deleted),
        "the pipe was deleted"
    );
    // Its dry run and `config show` print the password and the key secret redacted.
    for secret in ["reader-password", "emulator-admin-secret"] {
        assert!(
            !ran.stdout.contains(secret) && !ran.stderr.contains(secret),
            "{secret} printed"
        );
    }
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
    let mut live = live;
    live.sort();
    assert_eq!(live, ["events", "orders"], "each once");
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

/// A command without its trailing comment, and the exit code the comment names (0 by default).
fn command_of(line: &str) -> (&str, &str) {
    let (command, comment) = line.split_once(" # ").unwrap_or((line, ""));
    let exit = comment
        .strip_prefix("exit ")
        .map_or("0", |rest| rest.split(':').next().unwrap_or(rest));
    (command.trim(), exit)
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
    let run: Vec<(&str, &str)> = sessions
        .iter()
        .flat_map(|s| s.lines().map(command_of))
        .collect();
    let mut checked = 0;
    for block in readme.split("```sh\n").skip(1) {
        let block = block.split("```").next().unwrap();
        if block.contains("cargo run --example tour") {
            continue;
        }
        for line in block.lines().map(command_of).filter(|l| !l.0.is_empty()) {
            assert!(
                run.contains(&line),
                "README runs `{}` (exit {}), which no guide session does with that exit code",
                line.0,
                line.1
            );
            checked += 1;
        }
    }
    assert!(checked >= 10, "{checked} commands");
}
