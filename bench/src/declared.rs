//! The cost of declared pipes in calls: a plan of N recorded pipes (its reads and writes, from the
//! emulator's request log), and an apply of N new pipes under a management rate limit (its wall
//! time against the floor the key allows the calls it needs: bursts of the limit per window, each
//! pipe's read once it runs; its 429s, and how many of its calls were waiting polls). The emulator
//! runs in this process with its default timing (a pipe runs 2 s after its create); the calls go
//! through the SDK's `declared` module, as `cloudctl apply` does.

use std::time::{Duration, Instant};

use api_emulator::{Emulator, EmulatorOptions, OperationId};
use api_mgmt::declared::{
    self, ApplyOptions, Declaration, FileStateStore, RecordedState, SharedStateStore, StateStore,
};
use api_mgmt::{
    Client, Credentials, NewPipe, WaitOptions,
    pipes::{Destination, KafkaSource, SchemaRegistry},
    rate_limit::RateLimit,
};

use crate::clients::Failure;
use crate::fleet::redis_server::RedisServer;

use api_test_support::postgres_server;

/// A Redis and a PostgreSQL server of this run's own, for the shared stores' rows: each left
/// out, saying so, where this machine has none.
pub(crate) struct Servers {
    redis: Option<RedisServer>,
    postgres: Option<postgres_server::PostgresServer>,
}

impl Servers {
    /// Starts those installed.
    pub(crate) fn start() -> Self {
        Servers {
            redis: RedisServer::start("the declared benchmark's Redis store"),
            postgres: postgres_server::PostgresServer::start(
                "the declared benchmark's PostgreSQL store",
            ),
        }
    }

    /// The shared stores on them.
    pub(crate) fn stores(&self) -> Vec<Store> {
        let mut stores = Vec::new();
        if let Some(redis) = &self.redis {
            stores.push(Store::Shared("redis", redis.url.clone()));
        }
        if let Some(postgres) = &self.postgres {
            stores.push(Store::Shared("postgres", postgres.url.clone()));
        }
        stores
    }
}

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
    /// The benchmarks' figures: 20 pipes at 20 requests per 2 s.
    pub(crate) const FULL: Plan = Plan {
        pipes: 20,
        limit: 20,
        window: Duration::from_secs(2),
    };
    /// A bulk apply: 200 pipes at 20 requests per 2 s.
    pub(crate) const BULK: Plan = Plan {
        pipes: 200,
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

/// Where an apply records its state.
#[derive(Debug, Clone)]
pub(crate) enum Store {
    /// A file in a temporary directory (and its lock beside it).
    File,
    /// A shared store (its engine's name, and its URL).
    Shared(&'static str, String),
}

impl Store {
    /// Its name in the tables.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Store::File => "file",
            Store::Shared(name, _) => name,
        }
    }
}

/// The figures of one run.
#[derive(Debug, Clone)]
pub(crate) struct Figures {
    /// The state's store.
    pub store: &'static str,
    /// Pipes applied, then planned.
    pub pipes: usize,
    /// Actions at once.
    pub parallelism: usize,
    /// The apply's wall time (its plan included).
    pub apply: Duration,
    /// The floor the key allows the calls the apply needs ([`burst_floor`]): its other calls (the
    /// plan's reads), a create per pipe and one read that sees it run, in bursts of the limit per
    /// window, each read once its pipe has run.
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

/// Applies `plan.pipes` new pipes under the limit, `parallelism` at a time, recording them in
/// `store`, then plans them again.
pub(crate) async fn run(plan: Plan, parallelism: usize, store: &Store) -> Result<Figures, Failure> {
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
    let target = declared::target_of(&service);
    let name = store.name();
    let store: Box<dyn StateStore> = match store {
        Store::File => Box::new(
            FileStateStore::new(dir.path().join("state.json")).lock_dir(dir.path().join("locks")),
        ),
        // The apply starts from an empty state: the servers are this run's own.
        Store::Shared(_, url) => Box::new(SharedStateStore::open(url, &target)?),
    };
    let lock = store.lock(&target)?;
    let options = ApplyOptions::default()
        .parallelism(parallelism)
        .wait(WaitOptions::default().timeout(Duration::from_secs(120)));

    // A shared store begins a service's state explicitly (`cloudctl state init`): not timed.
    let recorded = if store.requires_init() {
        store.init(&lock)?
    } else {
        RecordedState::new(declared::target_of(&service))
    };
    emulator.clear_requests();
    let started = Instant::now();
    let made = declared::plan(&service, &declaration, &recorded).await?;
    let report = made.apply(&lock, &*store, &options).await?;
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
    let provisioning = Duration::from_millis(emulator.seed().timing.pipe_provisioning_ms);
    let floor = burst_floor(
        calls - creates - polls,
        plan.pipes,
        plan.limit,
        plan.window,
        provisioning,
    );

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
        store: name,
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

/// When the last of these calls could go at the earliest, with at most `max` in any `window`: first
/// `other` calls, then a create per pipe, then for each pipe one read, `provisioning` after its
/// create. Each call goes at the earliest time the window allows it, in the order they may go.
pub(crate) fn burst_floor(
    other: usize,
    pipes: usize,
    max: u32,
    window: Duration,
    provisioning: Duration,
) -> Duration {
    let max = usize::try_from(max.max(1)).unwrap_or(usize::MAX);
    // Calls as (earliest, is a create), taken earliest first; a create adds its pipe's read.
    let mut waiting: Vec<(Duration, bool)> = std::iter::repeat_n((Duration::ZERO, false), other)
        .chain(std::iter::repeat_n((Duration::ZERO, true), pipes))
        .collect();
    let mut sent: Vec<Duration> = Vec::new();
    let mut last = Duration::ZERO;
    while let Some(next) = (0..waiting.len()).min_by_key(|&i| waiting[i].0) {
        let (earliest, create) = waiting.swap_remove(next);
        // The earliest time from `earliest` on when fewer than `max` calls were sent in the window
        // before it (the calls are sent in time order).
        let at = if sent.len() >= max {
            earliest.max(sent[sent.len() - max] + window)
        } else {
            earliest
        };
        sent.push(at);
        last = last.max(at);
        if create {
            waiting.push((at + provisioning, false));
        }
    }
    last
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

/// The figures of a plan of many recorded pipes that need nothing.
#[derive(Debug, Clone)]
pub(crate) struct PlanCost {
    /// Recorded pipes planned.
    pub pipes: usize,
    /// Secrets per pipe (each fingerprinted with Argon2id by the plan).
    pub secrets: usize,
    /// The plan's wall time.
    pub wall: Duration,
    /// CPU time of the whole process during the plan (its fingerprints, its reads, and the
    /// emulator's answers to them).
    pub cpu: Duration,
    /// The plan's reads.
    pub reads: u32,
}

/// Plans `pipes` recorded pipes with two secrets each (a Kafka password and a schema registry's),
/// against the emulator with no rate limit anywhere: the plan reads each once and fingerprints each
/// secret with the record's salt.
pub(crate) async fn plan_cost(pipes: usize) -> Result<PlanCost, Failure> {
    use futures::StreamExt as _;

    let emulator = Emulator::start(EmulatorOptions::for_tests()).await?;
    let (key, secret) = emulator.admin_key();
    let client = Client::builder(emulator.base_url())
        .credentials(Credentials::basic(key, secret))
        .build()?;
    let service = client.service(
        emulator.organization_id(),
        emulator.service_id("running").ok_or("no running service")?,
    );
    let mut declaration = Declaration::new();
    for i in 0..pipes {
        declaration.insert(two_secrets(&format!("orders-{i:03}"))?);
    }
    // The pipes exist and are recorded (import fingerprints them: not measured).
    let made: Vec<Result<_, Failure>> = futures::stream::iter(declaration.pipes())
        .map(|(_, pipe)| async {
            let created = service.pipes().create(pipe).await?;
            let answer = service.pipe(created.id).get_wire().await?;
            Ok((
                created.id,
                pipe.clone(),
                serde_json::to_value(answer.into_inner())?,
            ))
        })
        .buffer_unordered(16)
        .collect()
        .await;
    let mut recorded = RecordedState::new(declared::target_of(&service));
    for made in made {
        let (id, pipe, answer) = made?;
        let differences = recorded.import(id, &pipe, &answer)?;
        if !differences.is_empty() {
            return Err(format!("an import differs: {differences:?}").into());
        }
    }

    let cpu = crate::cpu::process_cpu_total().ok_or("no CPU figures here")?;
    let started = Instant::now();
    let plan = declared::plan(&service, &declaration, &recorded).await?;
    let wall = started.elapsed();
    let cpu = crate::cpu::process_cpu_total().ok_or("no CPU figures here")? - cpu;
    if !plan.is_empty() {
        return Err(format!("the plan has changes: {:?}", plan.actions).into());
    }
    emulator.shutdown().await;
    Ok(PlanCost {
        pipes,
        secrets: 2,
        wall,
        cpu,
        reads: plan.reads,
    })
}

/// A Kafka pipe with two secrets: the brokers' password and the schema registry's.
fn two_secrets(name: &str) -> Result<NewPipe, Failure> {
    Ok(NewPipe::builder(name)
        .source(
            KafkaSource::new("b-1.kafka.example:9098", name)
                .credentials("reader", "bench-password")
                .schema_registry(
                    SchemaRegistry::new("https://registry.example")
                        .credentials("registry", "bench-registry-password"),
                ),
        )
        .destination(Destination::new("default").table(name).managed_table(true))
        .mapped_column("id", "id", "UInt64")
        .build()?)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::burst_floor;

    #[test]
    fn the_floor_sends_bursts_of_the_limit_and_reads_each_pipe_once_it_runs() {
        let window = Duration::from_secs(2);
        let provisioning = Duration::from_secs(2);
        let floor = |other, pipes| burst_floor(other, pipes, 20, window, provisioning);
        // 20 creates at once, their reads once they run, a window later.
        assert_eq!(floor(0, 20), Duration::from_secs(2));
        // One read of the plan first: the 20th create waits for the next window, its read 2 s more.
        assert_eq!(floor(1, 20), Duration::from_secs(4));
        // 200 pipes: 400 calls, 20 a window: the last goes in the 20th window.
        assert_eq!(floor(0, 200), Duration::from_secs(38));
        assert_eq!(floor(0, 0), Duration::ZERO);
    }
}
