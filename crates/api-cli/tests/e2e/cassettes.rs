//! A cloudctl session through `api-emulator record`'s proxy, then against `api-emulator replay`:
//! the same JSON outputs and exit codes, a cassette with no password, key secret or encoded
//! `Authorization` value, and a command that was not recorded refused naming what it asked.

use std::net::SocketAddr;

use api_emulator::{RecordOptions, Recorder, Replay};

use crate::support::{Cloud, KAFKA_PASSWORD, KAFKA_PIPE};

const MISSING_PIPE: &str = "0f9e8d7c-6b5a-4f3e-9d2c-1b0a9f8e7d6c";

/// Runs the session against `url`: (exit code, stdout, stderr) of each command.
fn session(
    cloud: &Cloud,
    url: &str,
    file: &str,
    id: Option<&str>,
) -> (Vec<(i32, String, String)>, String) {
    let run = |args: &[&str]| {
        let run = cloud.run(cloud.command().env("CLOUD_API_URL", url).args(args));
        (run.code, run.stdout, run.stderr)
    };
    let created = run(&["pipe", "create", "-f", file, "-o", "json"]);
    let id = match id {
        Some(id) => id.to_string(),
        None => serde_json::from_str::<serde_json::Value>(&created.1).unwrap()["id"]
            .as_str()
            .unwrap()
            .to_string(),
    };
    let outputs = vec![
        created,
        run(&["pipe", "get", &id, "-o", "json"]),
        run(&["endpoint", "list", "-o", "json"]),
        run(&["pipe", "get", MISSING_PIPE, "-o", "json"]),
    ];
    (outputs, id)
}

#[test]
fn a_recorded_cloudctl_session_replays_the_same() {
    let cloud = Cloud::start();
    let file = cloud.file("pipe.yaml", KAFKA_PIPE);
    let path = cloud.home().join("session.jsonl");
    let loopback = SocketAddr::from(([127, 0, 0, 1], 0));
    let recorder = cloud
        .block_on(Recorder::start(RecordOptions {
            upstream: cloud.base_url(),
            observability_upstream: None,
            cassette: path.clone(),
            listen: loopback,
        }))
        .unwrap();
    let (recorded, id) = session(&cloud, &recorder.base_url(), &file, None);
    cloud.block_on(recorder.shutdown());
    let codes: Vec<i32> = recorded.iter().map(|r| r.0).collect();
    assert_eq!(codes, [0, 0, 0, 3], "{recorded:#?}");

    let text = std::fs::read_to_string(&path).unwrap();
    for secret in cloud.secrets() {
        assert!(
            !text.contains(&secret),
            "a secret is in the cassette: {text}"
        );
    }
    assert!(!text.contains(KAFKA_PASSWORD));
    assert!(
        !text.to_ascii_lowercase().contains("authorization"),
        "{text}"
    );

    let replay = cloud
        .block_on(Replay::start(
            api_emulator::Cassette::read(&path).unwrap(),
            loopback,
        ))
        .unwrap();
    let (replayed, _) = session(&cloud, &replay.base_url(), &file, Some(&id));
    assert_eq!(replayed, recorded);

    let not_recorded = cloud.run(
        cloud
            .command()
            .env("CLOUD_API_URL", replay.base_url())
            .args(["pipe", "settings", &id, "-o", "json"]),
    );
    assert_ne!(not_recorded.code, 0);
    assert!(
        not_recorded
            .stderr
            .contains("no recorded answer for getPipeSettings"),
        "{}",
        not_recorded.stderr
    );
    cloud.block_on(replay.shutdown());
}
