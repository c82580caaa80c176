//! A tour of the whole SDK: `cargo run --example tour`.
//!
//! Without configuration it starts the embedded emulator and runs against it. With `CLOUD_API_URL`,
//! `CLOUD_API_KEY_ID`, `CLOUD_API_KEY_SECRET`, `CLOUD_ORGANIZATION_ID`, `CLOUD_SERVICE_ID`,
//! `CLOUD_OBSERVABILITY_URL`, `CLOUD_OBSERVABILITY_TOKEN` and `CLOUD_ALERT_ID` set, it runs against that
//! deployment instead (it creates three pipes named `tour-*-<time>`, deletes them all, and paces
//! itself with the client-side rate limiter).

use std::time::Duration;

use api_emulator::{Emulator, EmulatorOptions, Timing};
use api_mgmt::{
    NewPipe, PipeSource, ServiceHandle, WaitOptions,
    pipes::{Compression, Destination, KafkaSource, ObjectStorageSource, PipeState, Scaling},
};
use chrono::{TimeZone, Utc};

type Failure = Box<dyn std::error::Error>;

struct Target {
    obs: api_obs::Client,
    service: ServiceHandle,
    alert: api_obs::alerts::AlertId,
    _emulator: Option<Emulator>,
}

fn var(name: &str) -> Result<String, Failure> {
    std::env::var(name).map_err(|_| format!("the environment variable {name} is not set").into())
}

async fn target() -> Result<Target, Failure> {
    if std::env::var_os(api_mgmt::client::env::MANAGEMENT_URL).is_some() {
        println!(
            "Using the deployment at ${}",
            api_mgmt::client::env::MANAGEMENT_URL
        );
        // A real deployment counts 10 requests per 10 s per key: pace the tour instead of collecting 429s.
        let mgmt = api_mgmt::Client::builder(var(api_mgmt::client::env::MANAGEMENT_URL)?)
            .credentials(api_mgmt::Credentials::basic(
                var(api_mgmt::client::env::MANAGEMENT_KEY_ID)?,
                var(api_mgmt::client::env::MANAGEMENT_KEY_SECRET)?,
            ))
            .rate_limit(api_mgmt::rate_limit::RateLimit::management())
            .build()?;
        let obs = api_obs::Client::from_env()?;
        let service = mgmt.service(
            var("CLOUD_ORGANIZATION_ID")?.parse()?,
            var("CLOUD_SERVICE_ID")?.parse()?,
        );
        let alert = var("CLOUD_ALERT_ID")?.parse()?;
        return Ok(Target {
            obs,
            service,
            alert,
            _emulator: None,
        });
    }
    let timing = Timing {
        service_transition_ms: 600,
        pipe_provisioning_ms: 800,
        pipe_phase_ms: 800,
        pipe_delete_ms: 600,
    };
    // As the production service may, it refuses to read a service without a command: the SDK's
    // waiters cope with both kinds of server.
    let options = EmulatorOptions::new()
        .timing(timing)
        .rate_limits(false)
        .require_state_command();
    let emulator = Emulator::start(options).await?;
    println!(
        "Started the embedded emulator at {} (rate limits off for the tour; like production, it \
         refuses to read a service without a command)",
        emulator.base_url()
    );
    let (key_id, key_secret) = emulator.admin_key();
    let mgmt = api_mgmt::Client::builder(emulator.base_url())
        .credentials(api_mgmt::Credentials::basic(key_id, key_secret))
        .build()?;
    let obs = api_obs::Client::builder(emulator.base_url())
        .credentials(api_obs::Credentials::bearer(emulator.observability_token()))
        .build()?;
    let stopped = emulator
        .service_id("stopped")
        .ok_or("the seed has no stopped service")?;
    let service = mgmt.service(emulator.organization_id(), stopped);
    let alert = "66a1f0c2d4e5f60718293a4b".parse()?;
    Ok(Target {
        obs,
        service,
        alert,
        _emulator: Some(emulator),
    })
}

fn object_storage_name(run: &u64) -> String {
    format!("tour-events-{run}")
}

/// The declared pipes: a declaration of one pipe planned and applied, planned again (no change),
/// changed (a replace naming its member), and emptied (a delete), the state in a temporary file.
async fn declared_pipes(
    service: &ServiceHandle,
    run: u64,
    wait: &WaitOptions,
) -> Result<(), Failure> {
    use api_mgmt::declared::{
        self, ApplyOptions, Declaration, FileStateStore, RecordedState, StateStore,
    };

    let name = format!("tour-declared-{run}");
    let pipe = |replicas: u32| {
        NewPipe::builder(name.as_str())
            .source(
                KafkaSource::new("b-1.kafka.example:9098", "clicks")
                    .credentials("reader", "tour-password"),
            )
            .destination(
                Destination::new("default")
                    .table("clicks")
                    .managed_table(true),
            )
            .mapped_column("url", "url", "String")
            .scaling(Scaling::new().replicas(replicas))
            .build()
    };
    let dir = tempfile::tempdir()?;
    let store =
        FileStateStore::new(dir.path().join("state.json")).lock_dir(dir.path().join("locks"));
    let options = ApplyOptions::default().wait(wait.clone());
    // One apply per service at a time: the plan is applied under its service's lock.
    let lock = store.lock(&declared::target_of(service))?;
    let describe = |plan: &declared::Plan| -> String {
        if plan.is_empty() {
            return format!("no change ({} read)", plan.reads);
        }
        let actions: Vec<String> = plan
            .actions
            .iter()
            .map(|action| {
                let changes: Vec<String> = action
                    .changes
                    .iter()
                    .map(|c| {
                        let shown = |v: &Option<serde_json::Value>| {
                            v.as_ref().map_or("not set".into(), ToString::to_string)
                        };
                        format!(" ({} {} -> {})", c.path, shown(&c.old), shown(&c.new))
                    })
                    .collect();
                format!("{} {}{}", action.kind, action.name, changes.concat())
            })
            .collect();
        actions.join(", ")
    };
    let apply = |declaration: Declaration| {
        let store = &store;
        let options = &options;
        let lock = &lock;
        async move {
            let recorded = store
                .load()?
                .unwrap_or_else(|| RecordedState::new(declared::target_of(service)));
            let plan = declared::plan(service, &declaration, &recorded).await?;
            println!("plan: {}", describe(&plan));
            if !plan.is_empty() {
                let report = plan.apply(lock, store, options).await?;
                let outcome = if report.is_complete() {
                    "the service matches the declaration"
                } else {
                    "not finished"
                };
                println!("applied: {outcome}");
            }
            Ok::<(), Failure>(())
        }
    };
    apply(Declaration::new().pipe(pipe(1)?)).await?;
    apply(Declaration::new().pipe(pipe(1)?)).await?;
    apply(Declaration::new().pipe(pipe(2)?)).await?;
    apply(Declaration::new()).await?;
    Ok(())
}

fn step(title: &str) {
    println!("\n== {title}");
}

/// An optional value for a sentence: the value, or `fallback`.
fn or<T: std::fmt::Display>(value: Option<T>, fallback: &str) -> String {
    value.map_or_else(|| fallback.to_string(), |v| v.to_string())
}

#[tokio::main]
async fn main() -> Result<(), Failure> {
    let Target {
        obs,
        service,
        alert,
        _emulator,
    } = target().await?;
    let wait = WaitOptions::default()
        .interval(Duration::from_millis(200), Duration::from_secs(2))
        .timeout(Duration::from_secs(120));

    step("Start the service and wait until it runs");
    let answer = service.start().await?;
    println!(
        "start answered at once: {} is {} (request {})",
        answer.name,
        answer.state_name(),
        or(answer.meta().request_id.as_deref(), "without an id")
    );
    let running = service.start_and_wait(&wait).await?;
    let endpoints: Vec<String> = running.endpoints.iter().map(ToString::to_string).collect();
    println!(
        "{} is {} with {} replica(s), database {}",
        running.name,
        running.state_name(),
        or(running.num_replicas, "an unknown number of"),
        or(running.db_version.as_deref(), "of an unknown version"),
    );
    if !endpoints.is_empty() {
        println!("reachable at {}", endpoints.join(", "));
    }

    step("Create a Kafka pipe and an object storage pipe");
    // Unique names: a second tour against the same service must not collide with the first.
    let run = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_secs();
    let kafka = NewPipe::builder(format!("tour-orders-{run}"))
        .source(
            KafkaSource::new("b-1.orders.kafka.example:9098", "orders")
                .consumer_group("tour")
                .start_at(
                    Utc.with_ymd_and_hms(2026, 3, 1, 0, 0, 0)
                        .single()
                        .ok_or("a valid time")?,
                )
                .credentials("reader", "kafka-password"),
        )
        .destination(
            Destination::new("default")
                .table("tour_orders")
                .managed_table(true)
                .sorting_key(["order_id"]),
        )
        .mapped_column("id", "order_id", "UInt64")
        .mapped_column("amount", "amount", "Decimal(18, 2)")
        .scaling(
            Scaling::new()
                .replicas(2)
                .replica_cpu_millicores(500)
                .replica_memory_gb(2.0),
        )
        .build()?;
    let object_storage = NewPipe::builder(object_storage_name(&run))
        .source(
            ObjectStorageSource::url("https://tour-bucket.s3.example/events/*.csv.gz")
                .compression(Compression::Gzip)
                .continuous(true)
                .iam_role("arn:aws:iam::123456789012:role/tour-reader"),
        )
        .destination(
            Destination::new("default")
                .table("tour_events")
                .managed_table(true),
        )
        .mapped_column("event", "event", "String")
        .build()?;
    let orders = service.pipes().create(&kafka).await?.into_inner();
    println!(
        "created {} ({}) reading {}, now {}",
        orders.name, orders.id, orders.source, orders.state
    );
    println!("and {}, waiting until it runs:", object_storage_name(&run));
    let events = service
        .pipes()
        .create_and_wait(&object_storage, PipeState::Running, &wait)
        .await?;
    println!(
        "{} ({}) reading {} is {}",
        events.name, events.id, events.source, events.state
    );

    step("Wait until the Kafka pipe is Running too");
    let orders = service.pipe(orders.id);
    let running = orders.wait_until(PipeState::Running, &wait).await?;
    println!("{} is {}", running.name, running.state);

    step("Read a pipe and its settings");
    let read = orders.get().await?;
    if let PipeSource::Kafka(source) = &read.source {
        println!(
            "{} reads topic {} from {} (consumer group {}, from {})",
            read.name,
            source.topics,
            source.brokers,
            or(source.consumer_group.as_deref(), "chosen by the service"),
            or(
                source.offset.map(|t| t.format("%Y-%m-%d %H:%M UTC")),
                "the start"
            ),
        );
    }
    let columns: Vec<String> = read
        .destination
        .columns
        .iter()
        .map(|c| format!("{} {}", c.name, c.column_type))
        .collect();
    println!(
        "into {}.{} ({}), {} replica(s) of {} / {}, created {}",
        read.destination.database,
        or(read.destination.table.as_deref(), "(no table)"),
        columns.join(", "),
        or(read.scaling.replicas, "default"),
        or(read.scaling.replica_cpu, "default CPU"),
        or(read.scaling.replica_memory, "default memory"),
        or(
            read.created_at.map(|t| t.format("%Y-%m-%d %H:%M:%S UTC")),
            "at an unknown time"
        ),
    );
    let settings = orders.settings().await?;
    println!(
        "settings: inserts wait up to {} ms, {} object storage reader(s), {} extra setting(s)",
        or(settings.streaming_max_insert_wait_ms, "the default"),
        or(settings.object_storage_concurrency, "the default number of"),
        settings.extra.len()
    );

    step("List reverse private endpoints");
    let endpoints = service.reverse_private_endpoints().await?;
    if endpoints.is_empty() {
        println!("(none)");
    }
    for endpoint in endpoints.iter() {
        println!(
            "{}  {:<22} {:<10} {}",
            endpoint.id,
            or(endpoint.kind.as_ref(), "-"),
            endpoint.status.to_string(),
            endpoint.description
        );
    }

    step("Register a private endpoint");
    match service
        .create_private_endpoint("vpce-0123456789abcdef0", "tour runners")
        .await
    {
        Ok(endpoint) => println!("registered {}: {}", endpoint.id, endpoint.description),
        Err(e) if e.is_conflict() => println!("already registered: {e}"),
        Err(e) => return Err(e.into()),
    }

    step("Read an alert");
    let alert = obs.alert(alert).get().await?;
    println!("{} is {}", alert.name, alert.state_name());
    if let Some(message) = &alert.message {
        println!("  message: {message}");
    }
    if let (Some(kind), Some(threshold)) = (&alert.threshold_type, alert.threshold) {
        println!(
            "  fires {kind} {threshold}, checked every {}",
            or(alert.interval.as_ref(), "default interval")
        );
    }

    step("List dashboards");
    for dashboard in obs.dashboards().list().await?.iter() {
        let tags = if dashboard.tags.is_empty() {
            String::new()
        } else {
            format!(", tagged {}", dashboard.tags.join(", "))
        };
        println!(
            "{} ({}): {} tile(s){tags}",
            dashboard.name,
            dashboard.id,
            dashboard.tiles.len()
        );
        for tile in &dashboard.tiles {
            let series: Vec<String> = tile
                .series
                .iter()
                .map(|s| {
                    format!(
                        "{} of {}",
                        or(s.agg_fn.as_ref(), "values"),
                        or(s.metric_name.as_deref().or(s.field.as_deref()), "rows"),
                    )
                })
                .collect();
            println!(
                "  {:<24} at ({}, {}): {}",
                tile.name,
                or(tile.x, "?"),
                or(tile.y, "?"),
                series.join(", ")
            );
        }
    }

    step("Delete the pipes and wait until they are gone");
    orders.delete().await?;
    println!(
        "delete accepted; the pipe still answers as {}",
        orders.get().await?.state
    );
    orders.wait_until_gone(&wait).await?;
    match orders.get_opt().await? {
        None => println!("gone: a read now finds nothing"),
        Some(pipe) => println!("still there as {}", pipe.state),
    }
    let events = service.pipe(events.id);
    if events.delete_if_exists().await? {
        events.wait_until_gone(&wait).await?;
        println!("{} is gone too", object_storage_name(&run));
    }

    step("Declare a pipe, plan and apply, then declare nothing");
    declared_pipes(&service, run, &wait).await?;

    step("A validation error (nothing is sent)");
    let invalid = NewPipe::builder("")
        .source(KafkaSource::new("b-1:9098", "orders").iam_role("pipe-reader"))
        .destination(Destination::new("default").table("t").managed_table(true))
        .mapped_column("id", "id", "UInt64")
        .scaling(Scaling::new().replicas(64))
        .build();
    if let Err(error) = invalid {
        for problem in &error.problems {
            println!("  {}: {}", problem.path, problem.message);
        }
    }

    step("An API error");
    let missing = service.pipe("00000000-0000-4000-8000-000000000000".parse()?);
    if let Err(error) = missing.get().await {
        println!("{error}");
        println!(
            "  not found: {}, code {}, request id {}",
            error.is_not_found(),
            or(error.code(), "none"),
            or(error.request_id(), "none")
        );
    }

    println!("\nTour complete.");
    Ok(())
}
