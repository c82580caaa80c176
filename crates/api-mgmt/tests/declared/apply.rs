//! Applies: a plan applies once, a service that does not start keeps the pipes a replace would have
//! deleted, new pipes go before the replaces, the service is read only
//! when something is deleted, a replace stopped before its delete leaves no mark, and one pipe is
//! never recorded under two names.

use std::time::Duration;

use api_emulator::{
    Emulator, EmulatorOptions, Fault, FaultRule, OperationId, PipeState, ServiceState, Timing,
};
use api_mgmt::declared::{
    self, ActionKind, Declaration, FileStateStore, Outcome, RecordedState, ServiceTarget,
    StateError, StateLock, StateStore, StateTarget, StopSignal,
};

use crate::support::{
    OrdersApplied, created_with_answer, options, orders_applied, pipe, plan_and_apply, service,
    store,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn an_apply_needs_the_lock_of_its_own_service() {
    let emulator = Emulator::start(EmulatorOptions::for_tests()).await.unwrap();
    let service = service(&emulator).await;
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir);
    let mut other = declared::target_of(&service);
    other.api_url = "https://api.example.com/".into();
    let wrong = store.lock(&other).unwrap();
    let recorded = RecordedState::new(declared::target_of(&service));
    let plan = declared::plan(
        &service,
        &Declaration::new().pipe(pipe("orders", 1)),
        &recorded,
    )
    .await
    .unwrap();
    let refused = plan.apply(&wrong, &store, &options()).await.unwrap_err();
    assert!(
        refused.to_string().contains("not of the plan's service"),
        "{refused}"
    );
    assert!(emulator.pipes().is_empty(), "nothing was created");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn a_pipe_created_before_the_intent_is_not_adopted() {
    let emulator = Emulator::start(EmulatorOptions::for_tests()).await.unwrap();
    let service = service(&emulator).await;
    let (created, mut answer) = created_with_answer(&service).await;
    let text = serde_json::json!({
        "version": 2, "target": declared::target_of(&service),
        "pending": {"orders": {
            "fingerprint": {"algorithm": "argon2id", "version": 19, "memoryKib": 19456, "iterations": 2,
                            "parallelism": 1, "salt": "c2FsdHNhbHRzYWx0c2FsdA", "digest": ""},
            "declared": {"name": "orders"}, "startedAt": "2030-01-01T00:00:00Z", "intentId": "i"}},
    });
    let mut recorded = RecordedState::from_json(&text.to_string()).unwrap();
    let refused = recorded.adopt("orders", created.id, &answer).unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("before the create of \"orders\" was sent"),
        "{refused}"
    );
    answer["name"] = serde_json::json!("events");
    let named = recorded.adopt("orders", created.id, &answer).unwrap_err();
    assert!(named.to_string().contains("is named \"events\""), "{named}");
    answer["name"] = serde_json::json!("orders");
    answer["createdAt"] = serde_json::json!("2030-01-01T00:01:00Z");
    recorded.adopt("orders", created.id, &answer).unwrap();
    assert_eq!(recorded.pipes["orders"].id, created.id);
    assert!(recorded.pending.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn a_plan_applies_once_and_a_stale_plan_is_refused() {
    let emulator = Emulator::start(EmulatorOptions::for_tests()).await.unwrap();
    let service = service(&emulator).await;
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir);
    let lock = store.lock(&declared::target_of(&service)).unwrap();
    let declaration = Declaration::new().pipe(pipe("orders", 1));
    let recorded = RecordedState::new(declared::target_of(&service));
    let plan = declared::plan(&service, &declaration, &recorded)
        .await
        .unwrap();
    assert!(
        plan.apply(&lock, &store, &options())
            .await
            .unwrap()
            .is_complete()
    );
    let observed = &store.load().unwrap().unwrap().pipes["orders"].observed;
    assert_eq!(
        observed.as_ref().map(|o| o["scaling"]["replicas"].clone()),
        Some(serde_json::json!(1)),
        "the server's answer is recorded as the observed form"
    );

    let again = plan.apply(&lock, &store, &options()).await.unwrap_err();
    assert!(matches!(again, StateError::Refused(_)), "{again}");
    assert!(again.to_string().contains("make a new plan"), "{again}");
    assert_eq!(emulator.pipes().len(), 1, "nothing was created twice");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn a_service_that_does_not_start_keeps_the_pipes_a_replace_would_delete() {
    let emulator = Emulator::start(EmulatorOptions::for_tests()).await.unwrap();
    let service = service(&emulator).await;
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir);
    let lock = store.lock(&declared::target_of(&service)).unwrap();
    let first = Declaration::new().pipe(pipe("orders", 1));
    let recorded = RecordedState::new(declared::target_of(&service));
    let plan = declared::plan(&service, &first, &recorded).await.unwrap();
    assert!(
        plan.apply(&lock, &store, &options())
            .await
            .unwrap()
            .is_complete()
    );
    let id = store.load().unwrap().unwrap().pipes["orders"].id;

    // The service fails; the declaration wants it running and the pipe on 2 replicas.
    emulator
        .set_service_state(service.id(), ServiceState::Failed)
        .unwrap();
    let changed = Declaration::new()
        .pipe(pipe("orders", 2))
        .service_state(ServiceTarget::Running);
    let recorded = store.load().unwrap().unwrap();
    let plan = declared::plan(&service, &changed, &recorded).await.unwrap();
    assert_eq!(plan.actions[0].kind, ActionKind::Replace);
    assert!(plan.service.is_some());
    let report = plan.apply(&lock, &store, &options()).await.unwrap();
    assert!(matches!(report.service, Some(Err(_))), "{report:?}");
    assert!(
        matches!(report.actions[0].outcome, Outcome::Skipped(_)),
        "{report:?}"
    );
    assert_eq!(emulator.pipes()[0].id, id, "the pipe was not deleted");
    assert_eq!(store.load().unwrap().unwrap().pipes["orders"].id, id);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn one_pipe_is_never_recorded_under_two_names() {
    let emulator = Emulator::start(EmulatorOptions::for_tests()).await.unwrap();
    let service = service(&emulator).await;
    let (created, answer) = created_with_answer(&service).await;
    let mut recorded = RecordedState::new(declared::target_of(&service));
    let differences = recorded
        .import(created.id, &pipe("orders", 1), &answer)
        .unwrap();
    assert!(differences.is_empty(), "{differences:?}");
    let twice = recorded
        .import(created.id, &pipe("events", 1), &answer)
        .unwrap_err();
    assert!(
        twice
            .to_string()
            .contains("recorded already, as \"orders\""),
        "{twice}"
    );
    let other = "0f9e8d7c-6b5a-4f3e-9d2c-1b0a9f8e7d6c".parse().unwrap();
    let taken = recorded
        .import(other, &pipe("orders", 1), &answer)
        .unwrap_err();
    assert!(taken.to_string().contains("forget it first"), "{taken}");
    assert!(recorded.forget("orders"));
    assert!(!recorded.forget("orders"));
    assert!(
        recorded.adopt("orders", created.id, &answer).is_err(),
        "no pending create to adopt"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallelism_bounds_the_calls_in_flight_not_the_waits() {
    // Pipes that run 1.5 s after their create, and creates that take 300 ms to answer.
    let timing = Timing {
        pipe_provisioning_ms: 1500,
        ..Timing::INSTANT
    };
    let emulator = Emulator::start(EmulatorOptions::for_tests().timing(timing))
        .await
        .unwrap();
    emulator
        .inject(
            FaultRule::operation(OperationId::CreatePipe)
                .then(Fault::delay(Duration::from_millis(300)).always()),
        )
        .unwrap();
    let service = service(&emulator).await;
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir);
    let lock = store.lock(&declared::target_of(&service)).unwrap();
    let mut declaration = Declaration::new();
    for name in ["a", "b", "c", "d"] {
        declaration.insert(pipe(name, 1));
    }
    let recorded = RecordedState::new(declared::target_of(&service));
    let plan = declared::plan(&service, &declaration, &recorded)
        .await
        .unwrap();
    let report = plan
        .apply(&lock, &store, &options().parallelism(2))
        .await
        .unwrap();
    assert!(report.is_complete(), "{report:?}");

    let mut sent: Vec<_> = emulator
        .requests()
        .of(OperationId::CreatePipe)
        .iter()
        .map(|r| r.at)
        .collect();
    sent.sort();
    assert_eq!(sent.len(), 4);
    // At most 2 in flight: the third create waits for one of the first two to answer.
    assert!(
        sent[2] - sent[0] >= chrono::Duration::milliseconds(300),
        "{sent:?}"
    );
    // A pipe being waited for holds no slot: the last create goes before the first pipe runs.
    assert!(
        sent[3] - sent[0] < chrono::Duration::milliseconds(1500),
        "{sent:?}"
    );
    assert!(
        emulator
            .pipes()
            .iter()
            .all(|p| p.state == PipeState::Running),
        "every pipe was waited for until it ran"
    );
}

/// The new pipes and those down already go first, then the replaces, which take a pipe down: a
/// new pipe never waits behind a rollout (nor is skipped when a replace fails).
#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn new_pipes_are_created_before_a_replace_takes_one_down() {
    let OrdersApplied {
        emulator,
        service,
        store,
        lock,
        dir: _dir,
    } = orders_applied().await;

    let changed = Declaration::new()
        .pipe(pipe("orders", 2))
        .pipe(pipe("payments", 1));
    emulator.clear_requests();
    let applied = plan_and_apply(&service, &store, &lock, &changed, &options()).await;
    assert!(applied.is_complete(), "{applied:?}");
    let changes: Vec<OperationId> = emulator
        .requests()
        .iter()
        .filter_map(|r| r.operation_id)
        .filter(|op| matches!(op, OperationId::CreatePipe | OperationId::DeletePipe))
        .collect();
    assert_eq!(
        changes,
        [
            OperationId::CreatePipe,
            OperationId::DeletePipe,
            OperationId::CreatePipe
        ],
        "payments created first, then orders deleted and created again"
    );
}

/// The service is read for its state only when the apply deletes a pipe to make it again: an
/// apply of new pipes and of a pipe gone from the server (made again, nothing deleted) spends no
/// call of the key's budget on it.
#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn an_apply_that_deletes_nothing_does_not_read_the_service() {
    let OrdersApplied {
        emulator,
        service,
        store,
        lock,
        dir: _dir,
    } = orders_applied().await;
    // Deleted behind the state's back: the next plan makes it again, with its old id known.
    let id = store.load().unwrap().unwrap().pipes["orders"].id;
    service.pipe(id).delete().await.unwrap();

    let both = Declaration::new()
        .pipe(pipe("orders", 1))
        .pipe(pipe("payments", 1));
    emulator.clear_requests();
    let applied = plan_and_apply(&service, &store, &lock, &both, &options()).await;
    assert!(applied.is_complete(), "{applied:?}");
    let reads = emulator
        .requests()
        .iter()
        .filter(|r| r.operation_id == Some(OperationId::UpdateServiceState))
        .count();
    assert_eq!(reads, 0, "no read of the service: nothing was deleted");
    assert!(
        emulator
            .requests()
            .iter()
            .all(|r| r.operation_id != Some(OperationId::DeletePipe)),
        "a pipe gone is made again, with no delete sent first"
    );
    assert_eq!(
        emulator.pipes().iter().filter(|p| !p.deleted).count(),
        2,
        "both made"
    );
}

/// A state file that stops the apply as soon as it records a replace's mark: the gate closes
/// between the mark's write and the delete.
struct StopAtTheMark {
    file: FileStateStore,
    stop: StopSignal,
}

impl StateStore for StopAtTheMark {
    fn load(&self) -> Result<Option<RecordedState>, StateError> {
        self.file.load()
    }

    fn save(&self, lock: &StateLock, state: &RecordedState) -> Result<(), StateError> {
        if state.pipes.values().any(|pipe| pipe.replacing.is_some()) {
            self.stop.stop();
        }
        self.file.save(lock, state)
    }

    fn lock(&self, target: &StateTarget) -> Result<StateLock, StateError> {
        self.file.lock(target)
    }
}

/// A replace stopped after its mark was written and before its delete was sent takes its mark
/// back: the next plan does not count as down a pipe that was never deleted.
#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn a_replace_stopped_before_its_delete_takes_its_mark_back() {
    let emulator = Emulator::start(EmulatorOptions::for_tests()).await.unwrap();
    let service = service(&emulator).await;
    let dir = tempfile::tempdir().unwrap();
    let stop = StopSignal::new();
    let store = StopAtTheMark {
        file: store(&dir),
        stop: stop.clone(),
    };
    let lock = store.lock(&declared::target_of(&service)).unwrap();
    let first = Declaration::new().pipe(pipe("orders", 1));
    let applied = plan_and_apply(&service, &store, &lock, &first, &options()).await;
    assert!(applied.is_complete(), "{applied:?}");

    let changed = Declaration::new().pipe(pipe("orders", 2));
    emulator.clear_requests();
    let stopping = options().stop_signal(stop);
    let report = plan_and_apply(&service, &store, &lock, &changed, &stopping).await;
    assert!(
        matches!(report.actions[0].outcome, Outcome::Interrupted),
        "{report:?}"
    );
    assert!(
        emulator
            .requests()
            .iter()
            .all(|r| r.operation_id != Some(OperationId::DeletePipe)),
        "no delete sent"
    );
    let after = store.load().unwrap().unwrap();
    assert_eq!(after.pipes["orders"].replacing, None, "the mark taken back");
}
