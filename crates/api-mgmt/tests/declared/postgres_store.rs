//! The PostgreSQL state store against real servers, in what production runs: TLS with a
//! certificate of the test CA (`fixtures/tls`, for `localhost` and `127.0.0.1`): `verify-full` with
//! the CA as `sslrootcert` connects, and without it (the platform's roots) is refused; a name the
//! certificate does not carry is refused by `verify-full` and taken by `verify-ca`; `disable` says
//! plain. And a statement held by another session's lock is cancelled after its timeout.

use api_mgmt::declared::{SharedStateStore, StateStore, StateTarget};
use api_test_support::encodings::percent;
use api_test_support::postgres_server::PostgresServer;

const CA: &str = include_str!("../fixtures/tls/ca.pem");
const CERTIFICATE: &str = include_str!("../fixtures/tls/server.pem");
const KEY: &str = include_str!("../fixtures/tls/server.key");

fn target() -> StateTarget {
    StateTarget {
        api_url: "http://127.0.0.1:8080".into(),
        organization_id: "3f0c5e2a-8d41-4b7e-9a6c-1e2f3a4b5c6d".parse().unwrap(),
        service_id: "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d".parse().unwrap(),
    }
}

#[test]
fn the_certificate_is_checked_as_sslmode_says_and_a_name_it_lacks_only_by_verify_full() {
    let Some(server) = PostgresServer::start_tls(
        "the_certificate_is_checked_as_sslmode_says",
        CERTIFICATE,
        KEY,
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, CA).unwrap();
    let root = percent(&ca.display().to_string());
    let url = &server.url;

    // The test CA as the roots: connected, and the state set up over TLS.
    let verified = SharedStateStore::open(
        &format!("{url}?sslmode=verify-full&sslrootcert={root}"),
        &target(),
    )
    .expect("verify-full with the CA");
    let lock = verified.lock(&target()).unwrap();
    let made = verified.init(&lock).unwrap();
    assert_eq!(verified.load_for(&target()).unwrap(), made);
    drop(lock);
    let sessions = server.sql("SELECT count(*) FROM pg_stat_ssl WHERE ssl");
    assert!(
        sessions.parse::<u32>().unwrap() >= 1,
        "a TLS session: {sessions}"
    );

    // The platform's roots do not hold the test CA: refused, whatever sslmode does the checking.
    for mode in ["verify-full", "verify-ca", "require"] {
        let refused = SharedStateStore::open(&format!("{url}?sslmode={mode}"), &target())
            .unwrap_err()
            .to_string();
        assert!(refused.contains("cannot connect"), "{mode}: {refused}");
    }

    // A name the certificate does not carry (the address given apart): verify-full refuses it,
    // verify-ca checks the chain alone.
    let port = server.port;
    let renamed = url.replace(&format!("127.0.0.1:{port}"), &format!("db.internal:{port}"));
    let elsewhere = |mode: &str| {
        SharedStateStore::open(
            &format!("{renamed}?hostaddr=127.0.0.1&sslmode={mode}&sslrootcert={root}"),
            &target(),
        )
    };
    let refused = elsewhere("verify-full").unwrap_err().to_string();
    assert!(refused.contains("cannot connect"), "{refused}");
    let chain_only = elsewhere("verify-ca").expect("verify-ca takes the chain");
    assert_eq!(chain_only.load_for(&target()).unwrap(), made);

    // Plain, said so.
    let plain = SharedStateStore::open(&format!("{url}?sslmode=disable"), &target()).unwrap();
    assert_eq!(plain.load_for(&target()).unwrap(), made);
}

#[test]
fn a_write_held_by_another_sessions_lock_is_cancelled_after_its_timeout_and_changes_nothing() {
    let Some(server) = PostgresServer::start("a_write_held_by_another_sessions_lock") else {
        return;
    };
    let store = SharedStateStore::open(&server.url, &target()).unwrap();
    let lock = store.lock(&target()).unwrap();
    let made = store.init(&lock).unwrap();
    // A runaway session holds the row.
    let mut holder = server.hold("SELECT key FROM cloud_sdk_state FOR UPDATE");
    let mut state = made.clone();
    let started = std::time::Instant::now();
    let refused = state.save_to(&store, &lock).unwrap_err().to_string();
    let took = started.elapsed();
    assert!(
        refused.contains("took longer than 5s and was cancelled"),
        "{refused}"
    );
    assert!(
        took >= std::time::Duration::from_millis(4500) && took < std::time::Duration::from_secs(20),
        "cancelled at its timeout: {took:?}"
    );
    assert_eq!(state.serial, made.serial, "the failed write is not counted");
    // The runaway session ended (from the server: its client may be run through `runuser`).
    server.sql(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE state = 'idle in transaction'",
    );
    let _ = holder.kill();
    let _ = holder.wait();
    assert_eq!(
        store.load_for(&target()).unwrap(),
        made,
        "it changed nothing"
    );
    state.save_to(&store, &lock).unwrap();
    assert_eq!(store.load_for(&target()).unwrap().serial, made.serial + 1);
}
