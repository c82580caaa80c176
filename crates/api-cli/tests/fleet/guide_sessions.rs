//! The guide's session of a state shared by CI runners, run on a real PostgreSQL and a real Redis.

use super::postgres_server::PostgresServer;
use super::redis_server::RedisServer;
use super::sessions::run;
use super::support::Cloud;

fn shared_state_session(url: &str, password: Option<&str>) {
    // Not beside the fleets, whose timing a PostgreSQL start would disturb.
    let _busy = super::busy();
    let cloud = Cloud::start();
    let ran = run(
        &cloud,
        "shared-state.sh",
        &[("CLOUD_STATE", url), ("CLOUD_RATE_LIMIT", "1000/1s")],
    );
    assert!(ran.commands >= 10, "{} commands", ran.commands);
    let mut live: Vec<String> = cloud
        .pipes()
        .into_iter()
        .filter(|p| !p.deleted)
        .map(|p| p.name)
        .collect();
    live.sort();
    assert_eq!(live, ["events", "orders"]);
    if let Some(password) = password {
        assert!(
            !ran.stdout.contains(password) && !ran.stderr.contains(password),
            "the store's password is never printed"
        );
    }
}

#[test]
fn the_shared_state_session_runs_on_postgres() {
    let Some(server) = PostgresServer::start("the guide's shared-state session") else {
        return;
    };
    shared_state_session(&server.url, Some(super::postgres_server::PASSWORD));
}

#[test]
fn the_shared_state_session_runs_on_redis() {
    let Some(server) = RedisServer::start("the guide's shared-state session") else {
        return;
    };
    shared_state_session(&server.url, None);
}
