//! The guide's record, replay and check session, run as the guide shows it with this package's
//! `api-emulator` binary, an emulator standing in for the real deployment.

mod support;

use api_test_support::session;

use std::path::Path;

use support::{BINARY, port, spawn};

/// A server stopped when dropped, also when the test fails.
struct Stopped(std::process::Child);

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_record_replay_check_session_runs_as_the_guide_shows_it() {
    let dir = tempfile::tempdir().unwrap();
    let (upstream_port, proxy_port) = (port(), port());
    let upstream = Stopped(spawn(
        &[
            "--listen",
            &format!("127.0.0.1:{upstream_port}"),
            "--instant",
            "--no-rate-limit",
        ],
        upstream_port,
    ));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sessions/record-replay.sh");
    let ran = session::Session {
        script: &script,
        replace: vec![
            (
                "https://api.example.com".into(),
                format!("http://127.0.0.1:{upstream_port}"),
            ),
            ("127.0.0.1:8089".into(), format!("127.0.0.1:{proxy_port}")),
            ("127.0.0.1/8089".into(), format!("127.0.0.1/{proxy_port}")),
        ],
        path: vec![Path::new(BINARY).parent().unwrap().to_path_buf()],
        env: vec![],
        dir: dir.path().to_path_buf(),
    }
    .run();
    drop(upstream);
    assert_eq!(ran.commands, 12);
    assert!(ran.stdout.contains("NOT_RECORDED"), "{}", ran.stdout);
    let cassette = std::fs::read_to_string(dir.path().join("prod.jsonl")).unwrap();
    assert_eq!(
        cassette.lines().count(),
        2,
        "a header and one exchange: {cassette}"
    );
    // Neither the secret nor the Basic header curl sent (its base64) reaches the file.
    for secret in [
        "emulator-admin-secret",
        "ZW11bGF0b3ItYWRtaW4ta2V5OmVtdWxhdG9yLWFkbWluLXNlY3JldA",
    ] {
        assert!(!cassette.contains(secret), "{cassette}");
        assert!(!ran.stdout.contains(secret) && !ran.stderr.contains(secret));
    }
    assert!(
        !cassette.to_lowercase().contains("authorization"),
        "{cassette}"
    );
}
