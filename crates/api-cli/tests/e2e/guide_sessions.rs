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
