//! What the declared tests share: a pipe, a service of the emulator, a state store in a directory.

use api_emulator::Emulator;
use api_mgmt::declared::{
    self, ApplyOptions, ApplyReport, Declaration, FileStateStore, Plan, RecordedState, StateError,
    StateLock, StateStore,
};
use api_mgmt::{
    Client, Credentials, NewPipe, ServiceHandle, WaitOptions,
    pipes::{Destination, KafkaSource, Scaling},
};

/// A Kafka pipe `name` with one mapped column and `replicas` replicas.
pub fn pipe(name: &str, replicas: u32) -> NewPipe {
    NewPipe::builder(name)
        .source(KafkaSource::new("b-1:9092", name).credentials("reader", "sdk-test-password"))
        .destination(Destination::new("d").table(name).managed_table(true))
        .mapped_column("id", "id", "UInt64")
        .scaling(Scaling::new().replicas(replicas))
        .build()
        .expect("a valid pipe")
}

/// A client of `emulator` with the admin key, on its running service.
pub async fn service(emulator: &Emulator) -> ServiceHandle {
    let (key, secret) = emulator.admin_key();
    let client = Client::builder(emulator.base_url())
        .credentials(Credentials::basic(key, secret))
        .build()
        .expect("a client");
    client.service(
        emulator.organization_id(),
        emulator.service_id("running").expect("a running service"),
    )
}

/// A pipe `orders` created on `service`, and its answer to a read as the API wrote it.
pub async fn created_with_answer(
    service: &api_mgmt::ServiceHandle,
) -> (api_mgmt::Pipe, serde_json::Value) {
    let created = service.pipes().create(&pipe("orders", 1)).await.unwrap();
    let read = service.pipe(created.id).get_wire().await.unwrap();
    let answer = serde_json::to_value(read.into_inner()).unwrap();
    (created.into_inner(), answer)
}

/// A state file in `dir`, its service locks beside it.
pub fn store(dir: &tempfile::TempDir) -> FileStateStore {
    FileStateStore::new(dir.path().join("state.json")).lock_dir(dir.path().join("locks"))
}

/// Apply options whose waits end within 10 s.
pub fn options() -> ApplyOptions {
    ApplyOptions::default().wait(WaitOptions::default().timeout(std::time::Duration::from_secs(10)))
}

/// What the store records after `declaration` is planned and applied, from nothing, on `service`.
pub async fn applied(service: &ServiceHandle, declaration: &Declaration) -> RecordedState {
    let recorded = RecordedState::new(declared::target_of(service));
    let plan = declared::plan(service, declaration, &recorded)
        .await
        .unwrap();
    let (report, state) = apply_saved(service, &recorded, &plan).await;
    let report = report.unwrap();
    assert!(report.is_complete(), "{report:?}");
    state.expect("a saved state")
}

/// `plan` applied, holding the service's lock, on a store that holds `recorded` (the state it was
/// made against); and what the store holds after.
pub async fn apply_saved(
    service: &ServiceHandle,
    recorded: &RecordedState,
    plan: &Plan,
) -> (Result<ApplyReport, StateError>, Option<RecordedState>) {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir);
    let lock = store.lock(&declared::target_of(service)).unwrap();
    store.save(&lock, recorded).unwrap();
    let report = plan.apply(&lock, &store, &options()).await;
    (report, store.load().unwrap())
}

/// `declaration` planned against what `store` records (an empty state before the first apply) and
/// applied under `lock` with `options`: the report.
pub async fn plan_and_apply(
    service: &ServiceHandle,
    store: &dyn StateStore,
    lock: &StateLock,
    declaration: &Declaration,
    options: &ApplyOptions,
) -> ApplyReport {
    let recorded = store
        .load()
        .unwrap()
        .unwrap_or_else(|| RecordedState::new(declared::target_of(service)));
    let plan = declared::plan(service, declaration, &recorded)
        .await
        .unwrap();
    plan.apply(lock, store, options).await.unwrap()
}

/// A service of a fresh emulator with `orders` (one replica) applied through a state file: what
/// the tests of a second apply start from.
pub struct OrdersApplied {
    pub emulator: Emulator,
    pub service: ServiceHandle,
    pub store: FileStateStore,
    pub lock: StateLock,
    /// The state's directory, removed when dropped: keep it while the store is used.
    pub dir: tempfile::TempDir,
}

/// A fresh emulator, and `orders` applied to its running service (see [`OrdersApplied`]).
pub async fn orders_applied() -> OrdersApplied {
    let emulator = Emulator::start(api_emulator::EmulatorOptions::for_tests())
        .await
        .unwrap();
    let service = service(&emulator).await;
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir);
    let lock = store.lock(&declared::target_of(&service)).unwrap();
    let first = Declaration::new().pipe(pipe("orders", 1));
    let applied = plan_and_apply(&service, &store, &lock, &first, &options()).await;
    assert!(applied.is_complete(), "{applied:?}");
    OrdersApplied {
        emulator,
        service,
        store,
        lock,
        dir,
    }
}
