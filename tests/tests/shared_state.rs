//! Declared pipes' state in a real Redis (`SharedStateStore`): the lease refuses a second holder
//! and names the first, lapses when its holder stops renewing and is then taken with a greater
//! fencing number, a holder whose lease was taken writes nothing, an apply records into the store
//! as into a file (no secret in any form), and the store's own failures name it without its
//! password.

use std::time::{Duration, Instant};

use api_emulator::{Emulator, EmulatorOptions};
use api_mgmt::declared::{
    self, ApplyOptions, Declaration, RecordedState, SharedStateStore, StateError, StateStore,
    StateTarget,
};
use api_mgmt::{
    Client, Credentials, Destination, KafkaSource, NewPipe, Scaling, ServiceHandle, WaitOptions,
};

mod support;
use support::redis_server::RedisServer;

fn target() -> StateTarget {
    StateTarget {
        api_url: "http://127.0.0.1:8080".into(),
        organization_id: "3f0c5e2a-8d41-4b7e-9a6c-1e2f3a4b5c6d".parse().unwrap(),
        service_id: "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d".parse().unwrap(),
    }
}

fn pipe(name: &str) -> NewPipe {
    NewPipe::builder(name)
        .source(KafkaSource::new("b-1:9092", name).credentials("reader", "shared-state-password"))
        .destination(Destination::new("d").table(name).managed_table(true))
        .mapped_column("id", "id", "UInt64")
        .scaling(Scaling::new().replicas(1))
        .build()
        .expect("a valid pipe")
}

async fn service(emulator: &Emulator) -> ServiceHandle {
    let (key, secret) = emulator.admin_key();
    Client::builder(emulator.base_url())
        .credentials(Credentials::basic(key, secret))
        .build()
        .expect("a client")
        .service(
            emulator.organization_id(),
            emulator.service_id("running").expect("a running service"),
        )
}

#[test]
fn a_held_lease_refuses_the_next_holder_and_names_the_first() {
    let Some(redis) = RedisServer::start("a_held_lease_refuses_the_next_holder") else {
        return;
    };
    let first = SharedStateStore::open(&redis.url, &target())
        .unwrap()
        .holder("runner A");
    let second = SharedStateStore::open(&redis.url, &target())
        .unwrap()
        .holder("runner B");
    let held = first.lock(&target()).unwrap();
    let refused = second.lock(&target()).unwrap_err();
    let StateError::Leased { holder, store, .. } = &refused else {
        panic!("{refused:?}");
    };
    assert_eq!(holder.holder, "runner A");
    assert!(
        holder.expires_in <= Duration::from_secs(30) && holder.expires_in > Duration::from_secs(20)
    );
    assert_eq!(store, &redis.url);
    assert!(
        refused.to_string().contains("runner A, since "),
        "{refused}"
    );
    // Another service is not held.
    let mut other = target();
    other.service_id = "b1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d".parse().unwrap();
    let other_store = SharedStateStore::open(&redis.url, &other).unwrap();
    assert!(other_store.lock(&other).is_ok());
    drop(held);
    let again = second.lock(&target()).unwrap();
    assert!(
        again.fence() > Some(1),
        "a later lease has a greater number: {:?}",
        again.fence()
    );
}

#[test]
fn a_lease_that_is_not_renewed_lapses_and_its_holder_then_writes_nothing() {
    let Some(redis) = RedisServer::start("a_lease_that_is_not_renewed_lapses") else {
        return;
    };
    let ttl = Duration::from_secs(1);
    let first = SharedStateStore::open(&redis.url, &target())
        .unwrap()
        .lease_ttl(ttl)
        .holder("runner A");
    let second = SharedStateStore::open(&redis.url, &target())
        .unwrap()
        .lease_ttl(ttl)
        .holder("runner B");
    let held = first.lock(&target()).unwrap();
    let mut state = RecordedState::new(target());
    assert!(state.pipes.is_empty());
    first.save(&held, &state).unwrap();
    // Renewed while its holder lives: after three TTLs the lease is still A's.
    std::thread::sleep(ttl * 3);
    assert!(matches!(
        second.lock(&target()),
        Err(StateError::Leased { .. })
    ));
    // A holder that stops renewing (killed, paused past its TTL) leaves no lease: its key is gone
    // (here deleted, between two of A's renewals, as its expiry would leave it) and B takes it.
    let started = Instant::now();
    let taken = loop {
        redis.command(&["DEL", &lease_key(&redis)]);
        match second.lock(&target()) {
            Ok(lock) => break lock,
            Err(StateError::Leased { .. }) if started.elapsed() < ttl * 5 => {}
            Err(e) => panic!("{e}"),
        }
    };
    assert_eq!(taken.fence(), held.fence().map(|f| f + 1));
    let taken_over = second.load().unwrap().expect("the state B found");
    // A's next write would record a pipe: refused, and nothing of it is in the store.
    state.pipes.insert(
        "orders".into(),
        serde_json::from_value(serde_json::json!({
            "id": "0f9e8d7c-6b5a-4f3e-9d2c-1b0a9f8e7d6c",
            "declared": {},
            "fingerprint": {"algorithm": "argon2id", "version": 19, "memoryKib": 19456,
                            "iterations": 2, "parallelism": 1, "salt": "AAAAAAAAAAAAAAAAAAAAAA==",
                            "digest": "00"},
            "recordedAt": "2026-11-26T00:00:00Z"
        }))
        .unwrap_or_else(|e| panic!("a recorded pipe: {e}")),
    );
    let fenced = first.save(&held, &state).unwrap_err();
    assert!(matches!(fenced, StateError::Fenced { .. }), "{fenced:?}");
    assert!(fenced.to_string().contains("runner B"), "{fenced}");
    assert_eq!(
        second.load().unwrap(),
        Some(taken_over),
        "the fenced write changed nothing"
    );
    // Dropping A's stale lock does not end B's lease.
    drop(held);
    assert_eq!(
        second.lease_holder().unwrap().map(|h| h.holder).as_deref(),
        Some("runner B")
    );
}

#[test]
fn a_forced_unlock_names_the_holder_and_fences_it() {
    let Some(redis) = RedisServer::start("a_forced_unlock_names_the_holder") else {
        return;
    };
    let store = SharedStateStore::open(&redis.url, &target())
        .unwrap()
        .holder("runner A");
    let held = store.lock(&target()).unwrap();
    let ended = store.force_unlock().unwrap().expect("a holder");
    assert_eq!(ended.holder, "runner A");
    assert_eq!(store.lease_holder().unwrap(), None);
    assert!(matches!(
        store.save(&held, &RecordedState::new(target())),
        Err(StateError::Fenced { .. })
    ));
    assert_eq!(store.load().unwrap(), None, "nothing was written");
    assert_eq!(store.force_unlock().unwrap(), None, "no one holds it now");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_apply_records_into_the_store_and_the_store_holds_no_secret() {
    let Some(redis) = RedisServer::start("an_apply_records_into_the_store") else {
        return;
    };
    let emulator = Emulator::start(EmulatorOptions::for_tests().duplicate_names(true))
        .await
        .unwrap();
    let service = service(&emulator).await;
    let target = declared::target_of(&service);
    let store = SharedStateStore::open(&redis.url, &target).unwrap();
    let declaration = Declaration::new().pipe(pipe("orders")).pipe(pipe("events"));
    let lock = store.lock(&target).unwrap();
    let recorded = store
        .load()
        .unwrap()
        .unwrap_or_else(|| RecordedState::new(target.clone()));
    let plan = declared::plan(&service, &declaration, &recorded)
        .await
        .unwrap();
    let options =
        ApplyOptions::default().wait(WaitOptions::default().timeout(Duration::from_secs(10)));
    let report = plan.apply(&lock, &store, &options).await.unwrap();
    assert!(report.is_complete(), "{report:?}");
    drop(lock);
    // Another runner, with nothing on its disk, sees what was applied: no change.
    let elsewhere = SharedStateStore::open(&redis.url, &target).unwrap();
    let recorded = elsewhere.load().unwrap().expect("the state in Redis");
    assert_eq!(recorded.pipes.len(), 2);
    let plan = declared::plan(&service, &declaration, &recorded)
        .await
        .unwrap();
    assert!(plan.is_empty(), "{:?}", plan.actions);
    let text = redis.command(&["GET", &format!("{}:state", key_base(&redis))]);
    assert!(text.contains("orders"), "{text}");
    assert!(
        !text.contains("shared-state-password") && !text.contains("c2hhcmVkLXN0YXRlLXBhc3N3b3Jk"),
        "no secret in the store"
    );
}

#[test]
fn the_stores_own_failures_name_it_without_its_password() {
    let refused =
        SharedStateStore::open("redis://:hunter2-secret@127.0.0.1:1/0", &target()).unwrap_err();
    assert!(matches!(refused, StateError::Store { .. }), "{refused:?}");
    let text = refused.to_string();
    assert!(text.contains("127.0.0.1:1"), "the store is named: {text}");
    assert!(!text.contains("hunter2"), "{text}");
    assert!(!format!("{refused:?}").contains("hunter2"));
    let Some(redis) = RedisServer::start("the_stores_own_failures_name_it") else {
        return;
    };
    redis.command(&["CONFIG", "SET", "requirepass", "right-password"]);
    let wrong = redis.url.replace("redis://", "redis://:wrong%2Fpassword@");
    let refused = SharedStateStore::open(&wrong, &target()).unwrap_err();
    // A password written unescaped, with a `/` in it, as a generated one may be.
    for url in [
        "redis://:ab/cd+ef@127.0.0.1:1/0",
        "redis://user:p@ss/w0rd@127.0.0.1:1",
    ] {
        let refused = SharedStateStore::open(url, &target()).unwrap_err();
        let text = format!("{refused} {refused:?}");
        assert!(
            !text.contains("cd+ef") && !text.contains("w0rd") && !text.contains("ab/"),
            "{text}"
        );
    }
    let text = refused.to_string();
    assert!(matches!(refused, StateError::Store { .. }), "{refused:?}");
    assert!(
        !text.contains("wrong") && !text.contains("password@"),
        "{text}"
    );
}

/// The keys' common part for [`target`]: found in Redis, as the store names them.
fn key_base(redis: &RedisServer) -> String {
    let keys = redis.command(&["KEYS", "{cloud-sdk:state:*}:fence"]);
    let key = keys
        .lines()
        .find(|l| l.contains(":fence"))
        .unwrap_or_else(|| panic!("no fence key: {keys:?}"));
    key.trim_end_matches(":fence").to_string()
}

fn lease_key(redis: &RedisServer) -> String {
    format!("{}:lease", key_base(redis))
}
