//! The emulator figures: start-up time, read and create throughput, in memory and with a data
//! directory (redb, a durable transaction per write). Instant transitions, no rate limits.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use api_emulator::{Emulator, EmulatorOptions};
use api_mgmt::{
    NewPipe,
    pipes::{Destination, KafkaSource, PipeHandle, Pipes},
};

use crate::clients::Failure;
use crate::rounds::median;

/// Where the emulator keeps its state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Storage {
    /// In memory.
    Memory,
    /// In a fresh `--data-dir`.
    DataDir,
}

/// The figures of one storage.
#[derive(Debug, Clone, Copy)]
pub struct Figures {
    /// Median time from `Emulator::start` to the first answered request.
    pub startup: Duration,
    /// `getPipe` calls per second with the concurrent callers.
    pub reads_per_second: f64,
    /// `createPipe` calls per second with the concurrent callers.
    pub creates_per_second: f64,
}

/// How much work each figure gets.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Start-ups measured.
    pub startups: usize,
    /// Rounds of reads and of creates.
    pub rounds: usize,
    /// Concurrent callers.
    pub callers: usize,
    /// Calls per round at most.
    pub calls: usize,
    /// A round ends after this long even when its calls are not all made (durable creates are slow).
    pub round_time: Duration,
}

impl Plan {
    /// About half a minute.
    pub const FULL: Plan = Plan {
        startups: 9,
        rounds: 5,
        callers: 32,
        calls: 3000,
        round_time: Duration::from_millis(1500),
    };

    /// A few seconds.
    pub const QUICK: Plan = Plan {
        startups: 2,
        rounds: 1,
        callers: 8,
        calls: 50,
        round_time: Duration::from_millis(300),
    };
}

/// Measures the emulator with `storage`.
pub async fn run(plan: Plan, storage: Storage) -> Result<Figures, Failure> {
    let mut startups = Vec::new();
    for _ in 0..plan.startups {
        let dir = tempfile::tempdir()?;
        let started = Instant::now();
        let emulator = Emulator::start(options(storage, dir.path())).await?;
        let health = format!("{}/_emulator/health", emulator.base_url());
        reqwest::get(&health).await?.error_for_status()?;
        startups.push(started.elapsed().as_secs_f64());
        emulator.shutdown().await;
    }

    let dir = tempfile::tempdir()?;
    let emulator = Emulator::start(options(storage, dir.path())).await?;
    let (id, secret) = emulator.admin_key();
    let client = api_mgmt::Client::builder(emulator.base_url())
        .credentials(api_mgmt::Credentials::basic(id, secret))
        .build()?;
    let service_id = emulator
        .service_id("running")
        .ok_or("the seed has no running service")?;
    let service = client.service(emulator.organization_id(), service_id);
    let pipes = service.pipes();
    let created = pipes.create(&new_pipe(0)?).await?;
    let pipe = Arc::new(service.pipe(created.id));
    let pipes = Arc::new(pipes);
    let names = Arc::new(AtomicUsize::new(1));

    let mut reads = Vec::new();
    let mut creates = Vec::new();
    for _ in 0..plan.rounds {
        reads.push(round(plan, |_| read(pipe.clone())).await?);
        creates.push(round(plan, |_| create(pipes.clone(), names.clone())).await?);
    }
    drop((pipe, pipes, service, client));
    emulator.shutdown().await;
    Ok(Figures {
        startup: Duration::from_secs_f64(median(startups)),
        reads_per_second: median(reads),
        creates_per_second: median(creates),
    })
}

fn options(storage: Storage, dir: &std::path::Path) -> EmulatorOptions {
    let options = EmulatorOptions::for_tests();
    match storage {
        Storage::Memory => options,
        Storage::DataDir => options.data_dir(dir),
    }
}

/// A Kafka pipe as the guide builds one; names are unique on a service.
fn new_pipe(n: usize) -> Result<NewPipe, Failure> {
    Ok(NewPipe::builder(format!("bench-orders-{n}"))
        .source(
            KafkaSource::new("b-1.kafka.example:9098", "orders").credentials("reader", "password"),
        )
        .destination(
            Destination::new("default")
                .table("orders")
                .managed_table(true),
        )
        .mapped_column("id", "order_id", "UInt64")
        .mapped_column("ts", "created_at", "DateTime64(3)")
        .build()?)
}

async fn read(pipe: Arc<PipeHandle>) -> Result<(), Failure> {
    pipe.get().await?;
    Ok(())
}

async fn create(pipes: Arc<Pipes>, names: Arc<AtomicUsize>) -> Result<(), Failure> {
    let new_pipe = new_pipe(names.fetch_add(1, Ordering::Relaxed))?;
    pipes.create(&new_pipe).await?;
    Ok(())
}

/// `plan.callers` tasks share `plan.calls` calls of `call` until they are made or the round's time is
/// up; calls per second.
async fn round<F, Fut>(plan: Plan, call: F) -> Result<f64, Failure>
where
    F: Fn(usize) -> Fut,
    Fut: Future<Output = Result<(), Failure>> + Send + 'static,
{
    let next = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let deadline = started + plan.round_time;
    let tasks: Vec<_> = (0..plan.callers)
        .map(|_| {
            let (next, done) = (next.clone(), done.clone());
            // Each caller makes its calls one after the other; `call` builds them up front.
            let calls: Vec<Fut> = (0..plan.calls / plan.callers + 1).map(&call).collect();
            tokio::spawn(async move {
                for call in calls {
                    if next.fetch_add(1, Ordering::Relaxed) >= plan.calls
                        || Instant::now() > deadline
                    {
                        break;
                    }
                    call.await?;
                    done.fetch_add(1, Ordering::Relaxed);
                }
                Ok::<_, Failure>(())
            })
        })
        .collect();
    for task in tasks {
        task.await??;
    }
    Ok(done.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64())
}
