//! End to end: the emulator stays bounded and private — the request log within its byte budget under
//! large requests (the binary's memory is measured in its own process, by
//! `crates/api-emulator/tests/memory_budget.rs`: here other tests share the process), deleted pipes purged without being read
//! again, a private data directory, a deterministic restart that continues its ids, and a `Debug`
//! without secrets.

use crate::support;

use std::collections::HashSet;
use std::time::Duration;

use api_emulator::{
    Emulator, EmulatorOptions, LOG_BODY_LIMIT, LOG_BUDGET, OperationId, PipeView, Timing,
};
use api_test_support::large_body::large_create_body;
use serde_json::{Value, json};
use support::emulated::{control, kafka_pipe, mgmt, running_service, short_timing, start_with};

/// The management path of the pipes of the seed's running service.
fn pipes_url(emulator: &Emulator) -> String {
    format!(
        "{}/v1/organizations/{}/services/{}/pipes",
        emulator.base_url(),
        emulator.organization_id(),
        emulator.service_id("running").expect("a running service"),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creates_of_a_mebibyte_leave_their_bodies_out_of_the_log_and_keep_every_entry() {
    let emulator = start_with(EmulatorOptions::for_tests()).await;
    let (key_id, key_secret) = emulator.admin_key();
    let http = api_mgmt::client::http_client_builder().build().unwrap();
    let url = pipes_url(&emulator);
    let send = |body: String| {
        http.post(&url)
            .basic_auth(key_id, Some(key_secret))
            .header("content-type", "application/json")
            .body(body)
            .send()
    };
    assert_eq!(
        send(large_create_body("warm-up", 1 << 20))
            .await
            .unwrap()
            .status(),
        200
    );
    let body_size = large_create_body("big-000", 1 << 20).len();
    // 25 MiB in all, more than the budget: a log that kept these bodies would evict entries.
    assert!(24 * body_size > LOG_BUDGET);
    for n in 0..24 {
        let response = send(large_create_body(&format!("big-{n:03}"), 1 << 20))
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "create {n}");
    }

    let log = emulator.requests();
    let log_bytes = log.bytes();
    eprintln!(
        "25 creates of {body_size} bytes: log {} entries, {log_bytes} bytes",
        log.len()
    );
    assert!(log_bytes <= LOG_BUDGET, "{log_bytes} bytes of log");
    assert_eq!(
        log.count_of(OperationId::CreatePipe),
        25,
        "no entry evicted"
    );
    let last = log.last_of(OperationId::CreatePipe).unwrap();
    assert_eq!(
        last.body,
        Some(Value::String(format!(
            "<{body_size} bytes, not kept: larger than {LOG_BODY_LIMIT}>"
        )))
    );
    assert_eq!((last.status, last.method.as_str()), (200, "POST"));
    assert_eq!(last.headers["authorization"], api_emulator::REDACTED);
    assert_eq!(emulator.pipes().len(), 25, "every create was stored");
}

#[tokio::test]
async fn the_oldest_entries_are_evicted_to_keep_a_smaller_budget() {
    let budget = 256 * 1024;
    let emulator = start_with(EmulatorOptions::for_tests().log_budget(budget)).await;
    let (key_id, key_secret) = emulator.admin_key();
    let http = api_mgmt::client::http_client_builder().build().unwrap();
    let url = pipes_url(&emulator);
    // Bodies under the per-body limit are kept whole: about six fit in the budget.
    let body = |n: usize| large_create_body(&format!("kept-{n:02}"), LOG_BODY_LIMIT - 4096);
    assert!(body(0).len() <= LOG_BODY_LIMIT);
    for n in 0..20 {
        let response = http
            .post(&url)
            .basic_auth(key_id, Some(key_secret))
            .header("content-type", "application/json")
            .body(body(n))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        assert!(emulator.requests().bytes() <= budget);
    }
    let log = emulator.requests();
    let names: Vec<&str> = log
        .iter()
        .filter_map(|entry| entry.body.as_ref()?["name"].as_str())
        .collect();
    assert!(
        (3..20).contains(&names.len()),
        "{} entries kept",
        names.len()
    );
    assert_eq!(names.last(), Some(&"kept-19"), "the newest is kept");
    assert!(!names.contains(&"kept-00"), "the oldest went first");
    let roles = &log
        .last_of(OperationId::CreatePipe)
        .unwrap()
        .body
        .as_ref()
        .unwrap()["destination"]["roles"];
    assert!(
        roles.as_array().is_some_and(|r| !r.is_empty()),
        "kept whole"
    );
}

#[tokio::test]
async fn a_deleted_pipe_is_purged_without_being_read_again() {
    let emulator = start_with(EmulatorOptions::for_tests().timing(short_timing())).await;
    let client = mgmt(&emulator);
    let service = running_service(&emulator, &client);
    let created = service.pipes().create(&kafka_pipe("brief")).await.unwrap();
    let conflict = service
        .pipes()
        .create(&kafka_pipe("brief"))
        .await
        .unwrap_err();
    assert!(conflict.is_conflict(), "{conflict}");
    service.pipe(created.id).delete().await.unwrap();
    assert!(
        emulator
            .pipes()
            .iter()
            .any(|p| p.id == created.id && p.deleted),
        "listed as deleted while its deletion runs"
    );

    tokio::time::sleep(Duration::from_millis(300)).await;
    // Over the control endpoint, with no read of the pipe in between.
    let (status, pipes) = control(&emulator, reqwest::Method::GET, "/_emulator/pipes", None).await;
    assert_eq!(status, 200);
    assert_eq!(pipes, json!([]), "purged once its deletion finished");
    assert_eq!(emulator.requests().count_of(OperationId::GetPipe), 0);
    let again = service.pipes().create(&kafka_pipe("brief")).await.unwrap();
    assert_ne!(again.id, created.id, "the name is free again");
}

#[cfg(unix)]
#[tokio::test]
async fn the_data_directory_and_its_database_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let mode =
        |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    let set = |path: &std::path::Path, bits| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(bits)).unwrap()
    };
    let parent = tempfile::tempdir().unwrap();

    let new = parent.path().join("new");
    let emulator = start_with(EmulatorOptions::for_tests().data_dir(&new)).await;
    emulator.shutdown().await;
    assert_eq!(mode(&new), 0o700);
    assert_eq!(mode(&new.join("emulator.redb")), 0o600);

    // As an older emulator left it: both open to others; the emulator's own, so made private.
    set(&new, 0o755);
    set(&new.join("emulator.redb"), 0o644);
    let emulator = start_with(EmulatorOptions::for_tests().data_dir(&new)).await;
    emulator.shutdown().await;
    assert_eq!(
        (mode(&new), mode(&new.join("emulator.redb"))),
        (0o700, 0o600)
    );

    // A directory that holds other files may be shared: refused, untouched.
    let shared = parent.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::write(shared.join("notes.txt"), "mine").unwrap();
    set(&shared, 0o755);
    let err = Emulator::start(EmulatorOptions::for_tests().data_dir(&shared))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("chmod 700") && err.contains("mode 755"),
        "{err}"
    );
    assert_eq!(mode(&shared), 0o755);
    assert!(!shared.join("emulator.redb").exists());
}

/// Creates Kafka pipes `{prefix}-0` to `{prefix}-2` on the running service.
async fn create_three_pipes(emulator: &Emulator, prefix: &str) {
    let client = mgmt(emulator);
    let service = running_service(emulator, &client);
    for n in 0..3 {
        let name = format!("{prefix}-{n}");
        service.pipes().create(&kafka_pipe(&name)).await.unwrap();
    }
}

#[tokio::test]
async fn a_deterministic_restart_on_the_same_data_dir_continues_the_ids() {
    let dir = tempfile::tempdir().unwrap();
    let options = || {
        EmulatorOptions::for_tests()
            .deterministic(42)
            .data_dir(dir.path())
    };
    let emulator = start_with(options()).await;
    create_three_pipes(&emulator, "before").await;
    let before = emulator.pipes();
    let first_run: HashSet<String> = emulator
        .requests()
        .iter()
        .map(|r| r.request_id.clone())
        .collect();
    emulator.shutdown().await;

    let restarted = start_with(options()).await;
    assert_eq!(
        restarted.pipes(),
        before,
        "every earlier pipe is there, unchanged"
    );
    create_three_pipes(&restarted, "after").await;
    let all = restarted.pipes();
    assert_eq!(all.len(), 6, "{all:#?}");
    assert_eq!(&all[..3], &before[..], "the earlier pipes are unchanged");
    let ids: HashSet<_> = all.iter().map(|p| p.id).collect();
    assert_eq!(ids.len(), 6, "no pipe id repeats");
    let names: Vec<&str> = all.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "before-0", "before-1", "before-2", "after-0", "after-1", "after-2"
        ]
    );
    let created = |view: &PipeView| {
        view.pipe["createdAt"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    assert!(
        created(&all[3]) > created(&all[2]),
        "the clock went on: {} after {}",
        created(&all[3]),
        created(&all[2])
    );
    for request in restarted.requests().iter() {
        assert!(
            !first_run.contains(&request.request_id),
            "request id {} repeated",
            request.request_id
        );
    }
    restarted.shutdown().await;

    // Another seed would draw its own sequence and leave 42's to be drawn again later: refused.
    let refused = Emulator::start(
        EmulatorOptions::for_tests()
            .deterministic(43)
            .data_dir(dir.path()),
    )
    .await
    .expect_err("another seed on the same data directory is refused");
    assert!(refused.to_string().contains("seed 42, not 43"), "{refused}");
    let again = start_with(options()).await;
    assert_eq!(again.pipes(), all, "the refused start changed nothing");
}

#[tokio::test]
async fn debug_shows_no_key_secret_or_token() {
    // Rate limits on, so that the windows (keyed by key and token) exist.
    let options = EmulatorOptions::new().timing(Timing::INSTANT);
    let emulator = start_with(options.clone()).await;
    let client = mgmt(&emulator);
    let service = running_service(&emulator, &client);
    service.pipes().create(&kafka_pipe("shown")).await.unwrap();
    let http = api_mgmt::client::http_client_builder().build().unwrap();
    for token in &emulator.seed().observability_tokens {
        let response = http
            .get(format!("{}/api/v2/dashboards", emulator.base_url()))
            .bearer_auth(&token.token)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
    }

    let seed = emulator.seed();
    let mut secrets: Vec<&str> = seed.api_keys.iter().map(|k| k.secret.as_str()).collect();
    secrets.extend(seed.observability_tokens.iter().map(|t| t.token.as_str()));
    secrets.push(emulator.control_token());
    secrets.push("kafka-password");
    assert_eq!(
        secrets.len(),
        7,
        "three keys, two tokens, the control token, a pipe's"
    );
    for shown in [format!("{emulator:?}"), format!("{options:?}")] {
        assert!(shown.contains(api_emulator::REDACTED), "{shown}");
        for secret in &secrets {
            assert!(
                !shown.contains(secret),
                "{secret} leaked into Debug: {shown}"
            );
        }
    }
}
