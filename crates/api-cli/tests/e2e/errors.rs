//! Errors: each exit code, the human line and the JSON object, with no secret anywhere.

use api_emulator::{Fault, FaultRule, Method};

use crate::support::{Cloud, KAFKA_PIPE};

const MISSING_PIPE: &str = "0f9e8d7c-6b5a-4f3e-9d2c-1b0a9f8e7d6c";
const PIPES: &str = "/v1/organizations/*/services/*/pipes";

#[test]
fn not_found_exits_3() {
    let cloud = Cloud::start();
    let human = cloud
        .cloudctl(&["pipe", "get", MISSING_PIPE, "-o", "human"])
        .expect(3);
    let line = human.stderr.trim_end();
    assert!(
        line.starts_with("error: NOT_FOUND (HTTP 404): getPipe: "),
        "{line}"
    );
    assert!(line.contains("[request id "), "{line}");
    assert!(
        line.contains(&format!("hint: no pipe {MISSING_PIPE} on this service")),
        "{line}"
    );

    let json = cloud
        .cloudctl(&["pipe", "settings", MISSING_PIPE, "-o", "json"])
        .expect(3)
        .error();
    assert_eq!(json["code"], "NOT_FOUND");
    assert_eq!(json["status"], 404);
    assert_eq!(json["exitCode"], 3);
    for member in ["message", "requestId"] {
        assert!(json[member].is_string(), "{member}: {json}");
    }
    for member in ["retryable", "outcomeUnknown"] {
        assert_eq!(json[member], false, "{member}: {json}");
    }

    cloud
        .cloudctl(&["pipe", "delete", MISSING_PIPE, "-o", "json"])
        .expect(3);
    cloud
        .cloudctl(&["alert", "get", "66a1f0c2d4e5f60718290000", "-o", "json"])
        .expect(3);
}

#[test]
fn wrong_credentials_exit_4_and_name_the_variables() {
    let cloud = Cloud::start();
    let human = cloud
        .run(
            cloud
                .command()
                .env("CLOUD_API_KEY_SECRET", "wrong-secret-value")
                .args(["endpoint", "list", "-o", "human"]),
        )
        .expect(4);
    assert!(
        human.stderr.starts_with("error: UNAUTHORIZED (HTTP 401)"),
        "{}",
        human.stderr
    );
    assert!(
        human
            .stderr
            .contains("check CLOUD_API_KEY_ID and CLOUD_API_KEY_SECRET"),
        "{}",
        human.stderr
    );
    assert!(
        !human.stderr.contains("wrong-secret-value"),
        "{}",
        human.stderr
    );

    let json = cloud
        .run(
            cloud
                .command()
                .env("CLOUD_API_KEY_SECRET", "wrong-secret-value")
                .args(["pipe", "get", MISSING_PIPE, "-o", "json"]),
        )
        .expect(4)
        .error();
    assert_eq!(json["code"], "UNAUTHORIZED");
    assert_eq!(json["status"], 401);

    let token = cloud
        .run(
            cloud
                .command()
                .env("CLOUD_OBSERVABILITY_TOKEN", "wrong-token-value")
                .args(["dashboard", "list", "-o", "json"]),
        )
        .expect(4)
        .error();
    assert_eq!(token["status"], 401);
    assert!(
        token["hint"]
            .as_str()
            .unwrap()
            .contains("CLOUD_OBSERVABILITY_TOKEN"),
        "{token}"
    );

    // A developer key is read-only: a create is forbidden.
    let file = cloud.file("pipe.yaml", KAFKA_PIPE);
    let forbidden = cloud
        .run(
            cloud
                .command()
                .env("CLOUD_API_KEY_ID", "emulator-developer-key")
                .env("CLOUD_API_KEY_SECRET", "emulator-developer-secret")
                .args(["pipe", "create", "-f", &file, "-o", "json"]),
        )
        .expect(4)
        .error();
    assert_eq!(forbidden["status"], 403);
    assert!(
        forbidden["hint"].as_str().unwrap().contains("read-only"),
        "{forbidden}"
    );
}

#[test]
fn rate_limited_after_retries_exits_5() {
    let cloud = Cloud::start();
    cloud.inject(
        FaultRule::on(Method::GET, format!("{PIPES}/*"))
            .then(Fault::status(429).header("Retry-After", "0").times(4)),
    );
    let json = cloud
        .cloudctl(&["pipe", "get", MISSING_PIPE, "-o", "json", "--no-rate-limit"])
        .expect(5)
        .error();
    assert_eq!(json["code"], "TOO_MANY_REQUESTS");
    assert_eq!(json["retryable"], true);
    assert!(
        json["hint"]
            .as_str()
            .unwrap()
            .contains("10 requests per 10 s"),
        "{json}"
    );
    let gets = cloud
        .requests()
        .iter()
        .filter(|r| r.method == "GET")
        .count();
    assert_eq!(gets, 4, "the SDK retried before giving up");
}

#[test]
fn a_create_whose_outcome_is_unknown_exits_7() {
    let cloud = Cloud::start();
    let file = cloud.file("pipe.yaml", KAFKA_PIPE);
    // A gateway's 504 after the create was stored, then a connection closed before any answer.
    cloud.inject(
        FaultRule::on(Method::POST, PIPES)
            .then(Fault::status(504).applied())
            .then(Fault::hangup()),
    );
    let json = cloud
        .cloudctl(&["pipe", "create", "-f", &file, "-o", "json"])
        .expect(7)
        .error();
    assert_eq!(json["outcomeUnknown"], true);
    assert_eq!(json["retryable"], false);
    assert_eq!(json["status"], 504);
    assert!(
        json["hint"]
            .as_str()
            .unwrap()
            .contains("may or may not have been created"),
        "{json}"
    );
    // How to find out is the spec's `x-reconcile` of the operation.
    let reconcile = api_mgmt::raw::operations::CREATE_PIPE.reconcile.unwrap();
    assert!(
        json["hint"]
            .as_str()
            .unwrap()
            .contains(reconcile[1..].trim_end_matches('.')),
        "{json}"
    );

    let human = cloud
        .cloudctl(&["pipe", "create", "-f", &file, "--wait", "-o", "human"])
        .expect(7);
    assert!(
        human
            .stderr
            .contains("the pipe \"orders\" may or may not have been created"),
        "{}",
        human.stderr
    );
    let posts = cloud
        .requests()
        .iter()
        .filter(|r| r.method == "POST")
        .count();
    assert_eq!(posts, 2, "each create was sent once, never retried");
}

#[test]
fn missing_settings_and_bad_usage_exit_2() {
    let cloud = Cloud::start();
    let json = cloud
        .run(
            cloud
                .command()
                .env_remove("CLOUD_API_URL")
                .env_remove("CLOUD_API_KEY_SECRET")
                .args(["pipe", "get", MISSING_PIPE, "-o", "json"]),
        )
        .expect(2)
        .error();
    assert_eq!(json["code"], "MISSING_SETTINGS");
    let message = json["message"].as_str().unwrap();
    assert!(
        message.contains("--api-url, CLOUD_API_URL or api_url in profile \"default\""),
        "{message}"
    );
    assert!(
        message.contains("CLOUD_API_KEY_SECRET or api_key_secret"),
        "{message}"
    );
    assert!(cloud.requests().is_empty());

    let usage = cloud
        .cloudctl(&["pipe", "get", "not-a-uuid", "-o", "json"])
        .expect(2)
        .error();
    assert_eq!(usage["code"], "USAGE");
    assert!(
        usage["message"]
            .as_str()
            .unwrap()
            .contains("invalid pipe id"),
        "{usage}"
    );
    let usage = cloud.cloudctl(&["pipe", "frobnicate"]).expect(2);
    assert!(
        usage.stderr.contains("\"code\":\"USAGE\""),
        "JSON when stdout is not a terminal: {}",
        usage.stderr
    );
    let usage = cloud.cloudctl(&["pipe"]).expect(2).error();
    assert_eq!(usage["message"], "a command is missing");
    let usage = cloud
        .cloudctl(&["-o", "human", "pipe", "frobnicate"])
        .expect(2);
    assert!(
        usage
            .stderr
            .starts_with("error: unrecognized subcommand 'frobnicate'"),
        "{}",
        usage.stderr
    );

    let unreachable = cloud
        .run(
            cloud
                .command()
                .env("CLOUD_API_URL", "http://127.0.0.1:9")
                .args(["pipe", "get", MISSING_PIPE, "-o", "json", "--no-rate-limit"]),
        )
        .expect(1)
        .error();
    assert_eq!(unreachable["code"], "CONNECTION_FAILED");
    assert!(
        unreachable["hint"]
            .as_str()
            .unwrap()
            .contains("check the URL"),
        "{unreachable}"
    );
}

#[test]
fn a_secret_is_never_taken_from_a_flag() {
    let cloud = Cloud::start();
    for (flag, variable) in [
        ("--key-secret", "CLOUD_API_KEY_SECRET"),
        ("--api-key-secret", "CLOUD_API_KEY_SECRET"),
        ("--token", "CLOUD_OBSERVABILITY_TOKEN"),
    ] {
        let run = cloud
            .cloudctl(&["endpoint", "list", flag, "flag-secret-value", "-o", "human"])
            .expect(2);
        assert!(run.stderr.contains("is not accepted"), "{}", run.stderr);
        assert!(run.stderr.contains(variable), "{}", run.stderr);
        assert!(!run.stderr.contains("flag-secret-value"), "{}", run.stderr);
    }
    assert!(cloud.requests().is_empty(), "nothing was sent");
}

/// An argument that is not UTF-8, in any position, is a usage error (exit 2), never a panic.
#[cfg(unix)]
#[test]
fn an_argument_that_is_not_utf8_is_a_usage_error() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt as _;

    let cloud = Cloud::start();
    let bad = OsStr::from_bytes(b"caf\xe9");
    let lines: [Vec<&OsStr>; 5] = [
        vec![bad],
        vec![OsStr::new("pipe"), OsStr::new("get"), bad],
        vec![
            OsStr::new("pipe"),
            OsStr::new("create"),
            OsStr::new("-f"),
            bad,
        ],
        vec![
            OsStr::new("--output"),
            bad,
            OsStr::new("endpoint"),
            OsStr::new("list"),
        ],
        vec![
            OsStr::new("endpoint"),
            OsStr::new("list"),
            OsStr::new("--key-secret"),
            bad,
        ],
    ];
    for line in lines {
        for mode in ["json", "human"] {
            let run = cloud.run(cloud.command().args(&line).args(["-o", mode]));
            assert_eq!(
                run.code, 2,
                "{line:?} -o {mode}: {}{}",
                run.stdout, run.stderr
            );
            assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
        }
    }
}
