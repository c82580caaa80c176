//! The binary's cassette commands as a user runs them: `record` in front of an emulator, closed
//! cleanly by SIGTERM; `cassette check` with its exit codes; `replay` answering what was recorded.

mod support;

use std::process::{Child, Command};
use std::time::{Duration, Instant};

use support::{BINARY, admin, get, port, request, spawn};

/// A GET; the status and the rest of the answer.
fn fetch(port: u16, path: &str, authorization: &str) -> (u16, String) {
    request(port, "GET", path, authorization, None)
}

/// Sends SIGTERM; the process ends on its own, with exit code 0.
fn terminate(child: &mut Child) {
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "SIGTERM ended it with {status}");
            return;
        }
        assert!(Instant::now() < deadline, "SIGTERM did not stop it");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn record_closes_on_sigterm_check_reports_and_replay_answers() {
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("session.jsonl");
    let cassette_arg = cassette.to_str().unwrap();
    let (upstream_port, proxy_port, replay_port) = (port(), port(), port());
    let mut upstream = spawn(
        &[
            "--listen",
            &format!("127.0.0.1:{upstream_port}"),
            "--instant",
            "--no-rate-limit",
        ],
        upstream_port,
    );
    let mut recorder = spawn(
        &[
            "record",
            "--upstream",
            &format!("http://127.0.0.1:{upstream_port}"),
            "--cassette",
            cassette_arg,
            "--listen",
            &format!("127.0.0.1:{proxy_port}"),
        ],
        proxy_port,
    );
    // The built-in seed's observability token, and one it does not know.
    let token = "Bearer 0d8f3a4e-1c2b-4d5e-8f60-718293a4b5c6";
    let dashboards = get(proxy_port, "/api/v2/dashboards", token);
    let refused = get(proxy_port, "/api/v2/dashboards", "Bearer wrong-token-value");
    terminate(&mut recorder);
    terminate(&mut upstream);
    let text = std::fs::read_to_string(&cassette).unwrap();
    assert_eq!(
        text.lines().count(),
        3,
        "a header and two exchanges: {text}"
    );
    assert!(
        !text.contains("0d8f3a4e-1c2b") && !text.contains("wrong-token-value"),
        "{text}"
    );
    assert_eq!((dashboards, refused), (200, 401));

    let check = Command::new(BINARY)
        .args(["cassette", "check", cassette_arg])
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&check.stdout);
    assert_eq!(check.status.code(), Some(0), "{report}");
    assert!(report.contains("2 exchange(s), no finding"), "{report}");
    let quirky = dir.path().join("quirky.jsonl");
    std::fs::write(
        &quirky,
        format!(
            "{}\n{}\n",
            text.lines().next().unwrap(),
            r#"{"operationId":"listDashboards","method":"GET","path":"/api/v2/dashboards","status":200,"responseBody":{"data":[{"id":"66a1f0c2d4e5f60718293a42","name":7}]}}"#
        ),
    )
    .unwrap();
    let check = Command::new(BINARY)
        .args(["cassette", "check", quirky.to_str().unwrap()])
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&check.stdout);
    assert_eq!(check.status.code(), Some(1), "{report}");
    assert!(
        report.contains("exchange 1 (listDashboards): `data[0].name`: wrong type"),
        "{report}"
    );
    let missing = Command::new(BINARY)
        .args(["cassette", "check", "/nonexistent/cassette.jsonl"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));

    let mut replay = spawn(
        &[
            "replay",
            "--cassette",
            cassette_arg,
            "--listen",
            &format!("127.0.0.1:{replay_port}"),
        ],
        replay_port,
    );
    assert_eq!(get(replay_port, "/api/v2/dashboards", token), dashboards);
    assert_eq!(
        get(replay_port, "/api/v2/dashboards", "Bearer another"),
        refused
    );
    assert_eq!(
        get(replay_port, "/api/v2/dashboards", token),
        400,
        "not recorded a third time"
    );
    let control = "Bearer emulator-control-token";
    let (status, report) = fetch(replay_port, "/_emulator/cassette", control);
    assert_eq!(status, 200, "{report}");
    let body = &report[report.find("\r\n\r\n").unwrap() + 4..];
    let report: serde_json::Value = serde_json::from_str(body).unwrap();
    let used: Vec<bool> = report["exchanges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["used"].as_bool().unwrap())
        .collect();
    assert_eq!(used, [true, true]);
    let unmatched = report["unmatched"].as_array().unwrap();
    assert_eq!(unmatched.len(), 1, "{report}");
    assert!(
        unmatched[0]
            .as_str()
            .unwrap()
            .contains("every recorded listDashboards"),
        "{report}"
    );
    assert_eq!(get(replay_port, "/_emulator/cassette", "Bearer nope"), 401);
    terminate(&mut replay);
}

#[test]
fn the_rate_limit_flags_set_each_apis_limit_per_key() {
    let seed = api_emulator::Seed::builtin();
    let (basic, service) = admin();
    let path = format!("{service}/pipesReversePrivateEndpoints");
    let token = format!("Bearer {}", seed.observability_tokens[0].token);
    let port = port();
    let mut emulator = spawn(
        &[
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--instant",
            "--management-rate-limit",
            "2/1m",
            "--observability-rate-limit",
            "1/1m",
        ],
        port,
    );
    let management: Vec<u16> = (0..3).map(|_| get(port, &path, &basic)).collect();
    assert_eq!(management, [200, 200, 429]);
    let (_, throttled) = fetch(port, &path, &basic);
    assert!(
        throttled
            .to_ascii_lowercase()
            .contains("x-ratelimit-reset:"),
        "{throttled}"
    );
    let observability: Vec<u16> = (0..2)
        .map(|_| get(port, "/api/v2/dashboards", &token))
        .collect();
    assert_eq!(observability, [200, 429], "a limit of its own");
    terminate(&mut emulator);
}
