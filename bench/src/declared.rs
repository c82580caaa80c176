//! The cost of declared pipes in calls: a plan of N recorded pipes (its reads and writes, from the
//! emulator's request log), and an apply of N new pipes under a management rate limit (its wall
//! time against the floor the limit sets for the calls it made, its 429s, and how many of its calls
//! were waiting polls). The emulator runs in this process with its default timing (a pipe runs 2 s
//! after its create); the calls go through the SDK's `declared` module, as `cloudctl apply` does.

use std::time::{Duration, Instant};

use api_emulator::{Emulator, EmulatorOptions, OperationId};
use api_mgmt::declared::{
    self, ApplyOptions, Declaration, FileStateStore, RecordedState, StateStore,
};
use api_mgmt::{Client, Credentials, Destination, KafkaSource, NewPipe, RateLimit, WaitOptions};

use crate::clients::Failure;

/// How big a run is.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Plan {
    /// Pipes declared and applied.
    pub pipes: usize,
    /// The management limit: requests per window.
    pub limit: u32,
    /// Its window.
    pub window: Duration,
}

impl Plan {
    /// The README's figures: 20 pipes at 20 requests per 2 s.
    pub(crate) const FULL: Plan = Plan {
        pipes: 20,
        limit: 20,
        window: Duration::from_secs(2),
    };
    /// A few seconds.
    pub(crate) const QUICK: Plan = Plan {
        pipes: 4,
        limit: 20,
        window: Duration::from_secs(2),
    };
}

/// The figures of one run.
#[derive(Debug, Clone)]
pub(crate) struct Figures {
    /// Pipes applied, then planned.
    pub pipes: usize,
    /// Actions at once.
    pub parallelism: usize,
    /// The apply's wall time (its plan included).
    pub apply: Duration,
    /// The floor the limit sets for the apply's calls: calls x window / limit.
    pub floor: Duration,
    /// The apply's calls by kind: creates, waiting polls, other (the service, plan reads).
    pub creates: usize,
    /// Reads of a pipe that waited for it to run.
    pub polls: usize,
    /// Every call of the apply.
    pub calls: usize,
    /// 429 answers during the apply.
    pub throttled: usize,
    /// A plan of the applied pipes: its reads and its writes.
    pub plan_reads: usize,
    /// Its writes.
    pub plan_writes: usize,
    /// Its wall time.
    pub plan_time: Duration,
}

/// Applies `plan.pipes` new pipes under the limit, `parallelism` at a time, then plans them again.
pub(crate) async fn run(plan: Plan, parallelism: usize) -> Result<Figures, Failure> {
    let window_secs = plan.window.as_secs();
    let emulator = Emulator::start(
        EmulatorOptions::new()
            .rate_limits(true)
            .management_rate_limit(plan.limit, window_secs),
    )
    .await?;
    let (key, secret) = emulator.admin_key();
    let client = Client::builder(emulator.base_url())
        .credentials(Credentials::basic(key, secret))
        .rate_limit(RateLimit::new(plan.limit, plan.window)?)
        .build()?;
    let service = client.service(
        emulator.organization_id(),
        emulator.service_id("running").ok_or("no running service")?,
    );
    let mut declaration = Declaration::new();
    for i in 0..plan.pipes {
        declaration.insert(pipe(&format!("orders-{i:02}"))?);
    }
    let dir = tempfile::tempdir()?;
    let store =
        FileStateStore::new(dir.path().join("state.json")).lock_dir(dir.path().join("locks"));
    let lock = store.lock(&declared::target_of(&service))?;
    let options = ApplyOptions::default()
        .parallelism(parallelism)
        .wait(WaitOptions::default().timeout(Duration::from_secs(120)));

    emulator.clear_requests();
    let started = Instant::now();
    let recorded = RecordedState::new(declared::target_of(&service));
    let made = declared::plan(&service, &declaration, &recorded).await?;
    let report = made.apply(&lock, &store, &options).await?;
    let apply = started.elapsed();
    if !report.is_complete() {
        return Err(format!("the apply did not finish: {report:?}").into());
    }
    let log = emulator.requests();
    let creates = log.of(OperationId::CreatePipe).len();
    let polls = log.of(OperationId::GetPipe).len();
    let entries = log.into_entries();
    let calls = entries.len();
    let throttled = entries.iter().filter(|r| r.status == 429).count();
    let floor = plan.window * u32::try_from(calls)? / plan.limit;

    emulator.clear_requests();
    let recorded = store.load()?.ok_or("no state was recorded")?;
    let started = Instant::now();
    let again = declared::plan(&service, &declaration, &recorded).await?;
    let plan_time = started.elapsed();
    if !again.is_empty() {
        return Err(format!(
            "a plan right after the apply has changes: {:?}",
            again.actions
        )
        .into());
    }
    let entries = emulator.requests().into_entries();
    let plan_reads = entries.iter().filter(|r| r.method == "GET").count();
    let plan_writes = entries.len() - plan_reads;
    emulator.shutdown().await;
    Ok(Figures {
        pipes: plan.pipes,
        parallelism,
        apply,
        floor,
        creates,
        polls,
        calls,
        throttled,
        plan_reads,
        plan_writes,
        plan_time,
    })
}

fn pipe(name: &str) -> Result<NewPipe, Failure> {
    Ok(NewPipe::builder(name)
        .source(
            KafkaSource::new("b-1.kafka.example:9098", name)
                .credentials("reader", "bench-password"),
        )
        .destination(Destination::new("default").table(name).managed_table(true))
        .mapped_column("id", "id", "UInt64")
        .build()?)
}
