//! Declared pipes' state in a real Redis and a real PostgreSQL (`SharedStateStore`), each test run
//! on both: the lease refuses a second holder and names the first, is taken with a greater fencing
//! number once it lapsed, a holder whose lease was taken writes nothing, an apply records into the
//! store as into a file (no secret in any form), and the store's own failures name it without its
//! password.

use std::time::{Duration, Instant};

use api_emulator::{Emulator, EmulatorOptions};
use api_mgmt::declared::{
    self, ApplyOptions, Declaration, RecordedState, SharedStateStore, StateError, StateStore,
    StateTarget,
};
use api_mgmt::{
    Client, Credentials, NewPipe, ServiceHandle, WaitOptions,
    pipes::{Destination, KafkaSource, Scaling},
};

use api_test_support::postgres_server::PostgresServer;
use api_test_support::redis_server::RedisServer;

/// A real server of one engine, and what the tests read or do behind the store's back.
trait Server {
    /// The store's URL.
    fn url(&self) -> String;
    /// Ends the service's lease as its expiry would (a holder that stopped renewing).
    fn lapse(&self);
    /// The recorded state's JSON as the server keeps it (empty when none).
    fn raw_state(&self) -> String;
    /// Makes connections without the right password fail.
    fn require_password(&self);
    /// Writes the fencing counter back by one, as a snapshot restored or a lost tail of the log
    /// would: the next lease is given a number issued before.
    fn roll_back_counter(&self);
}

impl Server for RedisServer {
    fn url(&self) -> String {
        self.url.clone()
    }

    fn lapse(&self) {
        let keys = self.command(&["KEYS", "{cloud-sdk:state:*}:lease"]);
        for key in keys.lines().filter(|k| !k.is_empty()) {
            self.command(&["DEL", key]);
        }
    }

    fn raw_state(&self) -> String {
        let keys = self.command(&["KEYS", "{cloud-sdk:state:*}:state"]);
        keys.lines()
            .find(|k| !k.is_empty())
            .map(|key| self.command(&["GET", key]))
            .unwrap_or_default()
    }

    fn require_password(&self) {
        self.command(&["CONFIG", "SET", "requirepass", "right-password"]);
    }

    fn roll_back_counter(&self) {
        let keys = self.command(&["KEYS", "{cloud-sdk:state:*}:fence"]);
        let key = keys.lines().find(|k| !k.is_empty()).expect("the fence key");
        self.command(&["HINCRBY", key, "n", "-1"]);
    }
}

impl Server for PostgresServer {
    fn url(&self) -> String {
        self.url.clone()
    }

    fn lapse(&self) {
        self.sql("UPDATE cloud_sdk_state SET expires_at = now() - interval '1 millisecond'");
    }

    fn raw_state(&self) -> String {
        self.sql("SELECT coalesce(state, '') FROM cloud_sdk_state")
    }

    fn require_password(&self) {
        // Every TCP connection authenticates with SCRAM already (`postgres_server.rs`).
    }

    fn roll_back_counter(&self) {
        self.sql("UPDATE cloud_sdk_state SET fence = fence - 1");
    }
}

/// Runs `check` against a Redis and against a PostgreSQL, as two tests.
macro_rules! on_both {
    ($($name:ident),* $(,)?) => {
        mod redis {
            $(
                #[test]
                fn $name() {
                    if let Some(server) = super::RedisServer::start(stringify!($name)) {
                        super::$name(&server);
                    }
                }
            )*
        }
        mod postgres {
            $(
                #[test]
                fn $name() {
                    if let Some(server) = super::PostgresServer::start(stringify!($name)) {
                        super::$name(&server);
                    }
                }
            )*
        }
    };
}

on_both!(
    a_held_lease_refuses_the_next_holder_and_names_the_first,
    a_lease_that_lapses_is_taken_over_and_its_holder_then_writes_nothing,
    a_forced_unlock_names_the_holder_and_fences_it,
    an_apply_records_into_the_store_and_the_store_holds_no_secret,
    the_stores_own_failures_name_it_without_its_password,
    a_number_issued_twice_by_a_rolled_back_store_lets_one_holder_write,
);

/// A renewal is one attempt bounded by a third of the TTL: when the store's connection goes silent
/// (a NAT's state lost, the endpoint failed over to another node) while new connections work, the
/// attempt gives up, the next one opens a new connection, and the lease is kept. An attempt left
/// to the connection's own 5 s timeout would outlast this 3 s lease.
#[test]
fn a_renewal_on_a_silent_connection_gives_up_in_time_and_the_lease_is_kept() {
    let Some(server) = RedisServer::start("silent_renewal") else {
        return;
    };
    let (proxy, through) = api_test_support::tcp_proxy::TcpProxy::in_front_of(&server.url);
    let store = SharedStateStore::open(&through, &target())
        .unwrap()
        .lease_ttl(Duration::from_secs(3));
    let lock = store.lock(&target()).unwrap();
    let taken = Instant::now();
    // The first renewal (at 1 s) goes through; the second (at about 2 s) meets a silent
    // connection, and is given up at about 3 s.
    std::thread::sleep(Duration::from_millis(1300));
    proxy.stall();
    // Had that renewal waited out its connection's own 5 s timeout, the lease would have ended at
    // 3.7 s by the holder's clock (the last renewal confirmed, sent at 1 s, plus nine tenths of
    // the TTL).
    std::thread::sleep(Duration::from_millis(4200).saturating_sub(taken.elapsed()));
    assert!(
        lock.check_lease().is_ok(),
        "the lease lapsed by the holder's own clock: {:?}",
        lock.check_lease()
    );
}

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

fn a_held_lease_refuses_the_next_holder_and_names_the_first(server: &impl Server) {
    let url = server.url();
    let first = SharedStateStore::open(&url, &target())
        .unwrap()
        .holder("runner A");
    let second = SharedStateStore::open(&url, &target())
        .unwrap()
        .holder("runner B");
    let held = first.lock(&target()).unwrap();
    let refused = second.lock(&target()).unwrap_err();
    let StateError::Leased { holder, store, .. } = &refused else {
        panic!("{refused:?}");
    };
    assert_eq!(holder.holder, "runner A");
    assert!(
        holder.expires_in <= Duration::from_secs(30) && holder.expires_in > Duration::from_secs(20),
        "{holder:?}"
    );
    assert!(
        !store.contains(api_test_support::postgres_server::PASSWORD),
        "{store}"
    );
    assert!(
        refused.to_string().contains("runner A, since "),
        "{refused}"
    );
    // Another service is not held.
    let mut other = target();
    other.service_id = "b1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d".parse().unwrap();
    let other_store = SharedStateStore::open(&url, &other).unwrap();
    assert!(other_store.lock(&other).is_ok());
    drop(held);
    let again = second.lock(&target()).unwrap();
    assert!(
        again.fence() > Some(1),
        "a later lease has a greater number: {:?}",
        again.fence()
    );
}

fn a_lease_that_lapses_is_taken_over_and_its_holder_then_writes_nothing(server: &impl Server) {
    let url = server.url();
    let ttl = Duration::from_secs(1);
    let first = SharedStateStore::open(&url, &target())
        .unwrap()
        .lease_ttl(ttl)
        .holder("runner A");
    let second = SharedStateStore::open(&url, &target())
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
    // A holder that stops renewing (killed, paused past its TTL) leaves a lapsed lease (here made
    // to lapse between two of A's renewals) and B takes it.
    let started = Instant::now();
    let taken = loop {
        server.lapse();
        match second.lock(&target()) {
            Ok(lock) => break lock,
            Err(StateError::Leased { .. }) if started.elapsed() < ttl * 5 => {}
            Err(e) => panic!("{e}"),
        }
    };
    assert_eq!(taken.fence(), held.fence().map(|f| f + 1));
    let taken_over = second.load().unwrap().expect("the state B found");
    let raw = server.raw_state();
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
    assert!(matches!(
        first.check_held(&held),
        Err(StateError::Fenced { .. })
    ));
    let fenced = first.save(&held, &state).unwrap_err();
    assert!(matches!(fenced, StateError::Fenced { .. }), "{fenced:?}");
    assert!(fenced.to_string().contains("runner B"), "{fenced}");
    assert_eq!(server.raw_state(), raw, "the fenced write changed nothing");
    assert_eq!(second.load().unwrap(), Some(taken_over));
    // Dropping A's stale lock does not end B's lease.
    drop(held);
    assert_eq!(
        second.lease_holder().unwrap().map(|h| h.holder).as_deref(),
        Some("runner B")
    );
}

fn a_forced_unlock_names_the_holder_and_fences_it(server: &impl Server) {
    let store = SharedStateStore::open(&server.url(), &target())
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

fn an_apply_records_into_the_store_and_the_store_holds_no_secret(server: &impl Server) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let emulator = Emulator::start(EmulatorOptions::for_tests().duplicate_names(true))
            .await
            .unwrap();
        let service = service(&emulator).await;
        let target = declared::target_of(&service);
        // Opened, used and dropped on the runtime's threads, as an application does.
        let store = SharedStateStore::open(&server.url(), &target).unwrap();
        let declaration = Declaration::new().pipe(pipe("orders")).pipe(pipe("events"));
        let lock = store.lock(&target).unwrap();
        // No state is not an empty state here: refused until set up.
        assert!(matches!(
            store.load_for(&target),
            Err(StateError::Missing { .. })
        ));
        let unset = declared::plan(&service, &declaration, &RecordedState::new(target.clone()))
            .await
            .unwrap();
        assert!(matches!(
            unset.apply(&lock, &store, &ApplyOptions::default()).await,
            Err(StateError::Missing { .. })
        ));
        assert_eq!(
            emulator
                .requests()
                .count_of(api_emulator::OperationId::CreatePipe),
            0
        );
        let recorded = store.init(&lock).unwrap();
        let plan = declared::plan(&service, &declaration, &recorded)
            .await
            .unwrap();
        let options =
            ApplyOptions::default().wait(WaitOptions::default().timeout(Duration::from_secs(10)));
        let report = plan.apply(&lock, &store, &options).await.unwrap();
        assert!(report.is_complete(), "{report:?}");
        assert_eq!(report.lineage, recorded.lineage, "the lineage is kept");
        assert!(report.serial > recorded.serial + 3, "{report:?}");
        drop(lock);
        drop(store);
        // Another runner, with nothing on its disk, sees what was applied: no change.
        let elsewhere = SharedStateStore::open(&server.url(), &target).unwrap();
        let recorded = elsewhere.load_for(&target).unwrap();
        assert_eq!(recorded.pipes.len(), 2);
        assert_eq!(
            (&recorded.lineage, recorded.serial),
            (&report.lineage, report.serial)
        );
        let plan = declared::plan(&service, &declaration, &recorded)
            .await
            .unwrap();
        assert!(plan.is_empty(), "{:?}", plan.actions);
        drop(elsewhere);
    });
    let text = server.raw_state();
    assert!(text.contains("orders"), "{text}");
    assert!(
        !text.contains("shared-state-password") && !text.contains("c2hhcmVkLXN0YXRlLXBhc3N3b3Jk"),
        "no secret in the store"
    );
}

fn the_stores_own_failures_name_it_without_its_password(server: &impl Server) {
    let url = server.url();
    let scheme = &url[..url.find("://").unwrap() + 3];
    let unreachable = format!("{scheme}user:hunter2-secret@127.0.0.1:1/0");
    let refused = SharedStateStore::open(&unreachable, &target()).unwrap_err();
    assert!(matches!(refused, StateError::Store { .. }), "{refused:?}");
    let text = format!("{refused} {refused:?}");
    assert!(text.contains("127.0.0.1:1"), "the store is named: {text}");
    assert!(!text.contains("hunter2"), "{text}");
    // A wrong password, escaped, and one written unescaped with a `/` in it, as a generated one
    // may be: never shown.
    let host = &url[url.rfind('@').map_or(scheme.len(), |at| at + 1)..];
    let host = if host.contains('/') || scheme.starts_with("redis") {
        host.to_string()
    } else {
        format!("{host}/postgres")
    };
    server.require_password();
    for wrong in [
        format!("{scheme}postgres:wrong%2Fpassword@{host}"),
        format!("{scheme}postgres:ab/cd+ef@{host}"),
    ] {
        let refused = SharedStateStore::open(&wrong, &target()).unwrap_err();
        let text = format!("{refused} {refused:?}");
        assert!(matches!(refused, StateError::Store { .. }), "{refused:?}");
        assert!(
            !text.contains("wrong") && !text.contains("cd+ef") && !text.contains("ab/"),
            "{text}"
        );
    }
}

fn a_number_issued_twice_by_a_rolled_back_store_lets_one_holder_write(server: &impl Server) {
    // A TTL long enough that the first holder's renewal does not run during the test: it is as
    // if paused.
    let store = SharedStateStore::open(&server.url(), &target())
        .unwrap()
        .lease_ttl(Duration::from_secs(60));
    let first = store.lock(&target()).unwrap();
    let state = store.init(&first).unwrap();
    // The first holder's lease lapses, and the store goes back to before its number was issued:
    // the next holder is given the same number.
    server.lapse();
    server.roll_back_counter();
    let other = SharedStateStore::open(&server.url(), &target()).unwrap();
    let second = other.lock(&target()).unwrap();
    assert_eq!(first.fence(), second.fence(), "the number was issued twice");
    let mut mine = state.clone();
    mine.pipes.clear();
    let theirs = mine.save_to(&other, &second);
    let stale = state.clone().save_to(&store, &first);
    assert!(theirs.is_ok(), "{theirs:?}");
    assert!(
        matches!(stale, Err(StateError::Fenced { .. })),
        "the first holder's write must not pass too: {stale:?}"
    );
    assert_eq!(other.load().unwrap().unwrap().serial, state.serial + 1);
    drop((first, second));
}
