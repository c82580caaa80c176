//! A fault soak against the emulator, bounded in count and time: concurrent clients run random
//! sequences of creates, reads, deletes and state commands while the emulator answers with random
//! faults (429, 5xx, 500s after the create was stored, gateway pages, dropped and truncated answers,
//! malformed bodies, delays). The
//! invariants are then checked against the emulator's request log and state:
//!
//! - no create call reached the server's handler twice (a create is only retried after a 429);
//! - every acknowledged create is readable;
//! - every error is classified by the one outcome rule: a create ended by anything but a 429 (a 500
//!   after it was stored among them) is reported as outcome unknown, reads and deletes never are;
//! - nothing panics.

use crate::support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use api_emulator::{Fault, OperationId};
use api_mgmt::{Error, client::RetryPolicy, pipes::PipeId};
use support::emulated::{inject, kafka_pipe, mgmt, running_service, start, status};

const CLIENTS: usize = 8;
const OPERATIONS: usize = 20;
const PIPES: &str = "/v1/organizations/*/services/*/pipes";
const PIPE: &str = "/v1/organizations/*/services/*/pipes/*";
const STATE: &str = "/v1/organizations/*/services/*/state";

/// One random fault, or a normal answer.
fn action(rng: &mut fastrand::Rng, applies_on_create: bool) -> Fault {
    let pick = rng.u8(0..12);
    match pick {
        0 => Fault::status(429).header("X-RateLimit-Reset", "0"),
        // On the create route a 500 comes after the pipe was stored: the server applied it.
        1 if applies_on_create => status(500).applied(),
        1 => status(500),
        2 => status(503),
        3 => Fault::gateway_page([502, 504][rng.usize(0..2)]),
        // On the create route only truncation (served, then cut): so every POST the handler served is
        // countable from the log. Elsewhere a dropped connection too.
        4 if applies_on_create => Fault::truncate(),
        4 => Fault::drop_connection(),
        5 => Fault::truncate(),
        6 if !applies_on_create => Fault::malformed(),
        7 => Fault::delay(std::time::Duration::from_millis(rng.u64(1..30))),
        _ => Fault::default(),
    }
}

#[derive(Default)]
struct Outcomes {
    create_calls: usize,
    create_attempts: u32,
    created: Vec<PipeId>,
    unknown_creates: usize,
    errors: Vec<String>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_clients_under_random_faults_keep_the_invariants() {
    let emulator = start().await;
    let seed = fastrand::u64(..);
    let mut rng = fastrand::Rng::with_seed(seed);
    let faults =
        |rng: &mut fastrand::Rng, create: bool| (0..120).map(|_| action(rng, create)).collect();
    inject(&emulator, "POST", PIPES, faults(&mut rng, true));
    inject(&emulator, "GET", PIPE, faults(&mut rng, false));
    inject(&emulator, "DELETE", PIPE, faults(&mut rng, false));
    inject(&emulator, "PATCH", STATE, faults(&mut rng, false));

    let client = mgmt(&emulator).with_retry(
        RetryPolicy::default()
            .max_attempts(3)
            .initial_backoff(Duration::from_millis(2))
            .max_backoff(Duration::from_millis(10)),
    );
    let service = running_service(&emulator, &client);
    let outcomes = Arc::new(Mutex::new(Outcomes::default()));
    let mut tasks = Vec::new();
    for worker in 0..CLIENTS {
        let service = service.clone();
        let outcomes = outcomes.clone();
        let mut rng = fastrand::Rng::with_seed(seed ^ worker as u64);
        tasks.push(tokio::spawn(async move {
            let mut mine: Vec<PipeId> = Vec::new();
            for step in 0..OPERATIONS {
                let pick = rng.u8(0..4);
                let known = (!mine.is_empty()).then(|| mine[rng.usize(0..mine.len())]);
                match (pick, known) {
                    (0, _) | (_, None) => {
                        let result = service
                            .pipes()
                            .create(&kafka_pipe(&format!("soak-{worker}-{step}")))
                            .await;
                        let mut o = outcomes.lock().unwrap();
                        o.create_calls += 1;
                        match result {
                            Ok(created) => {
                                o.create_attempts += created.meta().attempts;
                                o.created.push(created.id);
                                mine.push(created.id);
                            }
                            Err(e) => {
                                o.create_attempts += attempts_of(&e);
                                if e.is_outcome_unknown() {
                                    o.unknown_creates += 1;
                                }
                                classify(&mut o, &e, true);
                            }
                        }
                    }
                    (1, Some(id)) => {
                        if let Err(e) = service.pipe(id).get_opt().await {
                            classify(&mut outcomes.lock().unwrap(), &e, false);
                        }
                    }
                    (2, Some(id)) => {
                        if let Err(e) = service.pipe(id).delete_if_exists().await {
                            classify(&mut outcomes.lock().unwrap(), &e, false);
                        }
                        mine.retain(|m| *m != id);
                    }
                    _ => {
                        if let Err(e) = service.start().await {
                            classify(&mut outcomes.lock().unwrap(), &e, false);
                        }
                    }
                }
            }
        }));
    }
    let run = async {
        for task in tasks {
            task.await.expect("no client panicked");
        }
    };
    tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .expect("the soak finishes in time");

    let outcomes = std::mem::take(&mut *outcomes.lock().unwrap());
    let errors = outcomes.errors.join("\n");
    assert!(
        errors.is_empty(),
        "seed {seed}: misclassified errors:\n{errors}"
    );

    // What the create handler really did: served normally (200), served and then cut (logged 0), or
    // stored and answered 500 (on this route every 500 comes after the create was applied).
    let log = emulator.requests();
    let posts: Vec<u16> = log
        .of(OperationId::CreatePipe)
        .iter()
        .map(|r| r.status)
        .collect();
    let served = posts.iter().filter(|s| matches!(s, 200 | 0 | 500)).count();
    let throttled = posts.iter().filter(|s| **s == 429).count();
    assert_eq!(
        posts.len() as u32,
        outcomes.create_attempts,
        "seed {seed}: every attempt is logged"
    );
    assert!(
        served <= outcomes.create_calls,
        "seed {seed}: {served} creates served for {} calls: a create was repeated",
        outcomes.create_calls
    );
    let retries = outcomes.create_attempts as usize - outcomes.create_calls;
    assert!(
        retries <= throttled,
        "seed {seed}: {retries} create retries but only {throttled} answers of 429"
    );
    assert!(
        served <= outcomes.created.len() + outcomes.unknown_creates,
        "seed {seed}: {served} creates applied, {} acknowledged, {} reported as outcome unknown: one was reported as failed",
        outcomes.created.len(),
        outcomes.unknown_creates
    );

    // Every acknowledged create is readable (or deleted by this run), once the faults are gone.
    let clean = mgmt(&emulator);
    api_mgmt::client::http_client_builder()
        .build()
        .unwrap()
        .delete(format!("{}/_emulator/faults", emulator.base_url()))
        .bearer_auth(emulator.control_token())
        .send()
        .await
        .unwrap();
    let service = running_service(&emulator, &clean);
    // A delete the handler served (200), or served and then cut (0), may have deleted the pipe.
    let deletes: Vec<&str> = log
        .iter()
        .filter(|r| r.method == "DELETE" && matches!(r.status, 200 | 0))
        .map(|r| r.path.as_str())
        .collect();
    for id in &outcomes.created {
        let deleted = deletes.iter().any(|p| p.ends_with(&id.to_string()));
        match service.pipe(*id).get_opt().await.unwrap() {
            Some(pipe) => assert_eq!(pipe.id, *id),
            None => assert!(deleted, "seed {seed}: acknowledged pipe {id} is missing"),
        }
    }
}

/// Attempts the call made, from its error.
fn attempts_of(error: &Error) -> u32 {
    match error {
        Error::Api(e) => e.attempts,
        Error::Transport(e) => e.attempt,
        Error::Timeout { attempts, .. } => *attempts,
        _ => 1,
    }
}

/// Records an error that is not classified as the outcome rule says it must be.
fn classify(outcomes: &mut Outcomes, error: &Error, create: bool) {
    let status = error.status();
    let consistent = match error {
        // Only a 429 proves that a create was not applied, and it may be retried.
        Error::Api(_) if status == Some(429) => !error.is_outcome_unknown() && error.is_retryable(),
        // Every other answer to a create leaves it unknown (never retried); reads, deletes and state
        // commands are repeatable, retried on gateway errors.
        Error::Api(_) if create => error.is_outcome_unknown() && !error.is_retryable(),
        Error::Api(_) => {
            !error.is_outcome_unknown() && error.is_retryable() == matches!(status, Some(502..=504))
        }
        // A lost or cut answer leaves a create's outcome unknown.
        Error::Transport(_) => error.is_outcome_unknown() == create,
        // A malformed success body is only armed for reads.
        Error::Decode(_) => !create && !error.is_outcome_unknown(),
        Error::Timeout { .. } => true,
        _ => false,
    };
    if !consistent {
        outcomes.errors.push(format!(
            "create={create} unknown={} retryable={}: {error}",
            error.is_outcome_unknown(),
            error.is_retryable()
        ));
    }
}
