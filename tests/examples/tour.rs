//! A tour of the whole SDK: `cargo run --example tour`.
//!
//! Without configuration it starts the embedded emulator and runs against it. With `CLOUD_API_URL`,
//! `CLOUD_API_KEY_ID`, `CLOUD_API_KEY_SECRET`, `CLOUD_ORGANIZATION_ID`, `CLOUD_SERVICE_ID`,
//! `CLOUD_OBSERVABILITY_URL`, `CLOUD_OBSERVABILITY_TOKEN` and `CLOUD_ALERT_ID` set, it runs against that
//! deployment instead (it creates two pipes named `tour-*-<time>`, deletes both at the end, and paces
//! itself with the client-side rate limiter).

use std::time::Duration;

use api_emulator::{Emulator, EmulatorOptions, Timing};
use api_mgmt::{
    Compression, Destination, KafkaSource, NewPipe, ObjectStorageSource, PipeState, Scaling,
    ServiceHandle, WaitOptions,
};

type Failure = Box<dyn std::error::Error>;

struct Target {
    mgmt: api_mgmt::Client,
    obs: api_obs::Client,
    service: ServiceHandle,
    alert: api_obs::AlertId,
    _emulator: Option<Emulator>,
}

fn var(name: &str) -> Result<String, Failure> {
    std::env::var(name).map_err(|_| format!("the environment variable {name} is not set").into())
}

async fn target() -> Result<Target, Failure> {
    if std::env::var_os(api_mgmt::env::MANAGEMENT_URL).is_some() {
        println!("Using the deployment at ${}", api_mgmt::env::MANAGEMENT_URL);
        // A real deployment counts 10 requests per 10 s per key: pace the tour instead of collecting 429s.
        let mgmt = api_mgmt::Client::builder(var(api_mgmt::env::MANAGEMENT_URL)?)
            .credentials(api_mgmt::Credentials::basic(
                var(api_mgmt::env::MANAGEMENT_KEY_ID)?,
                var(api_mgmt::env::MANAGEMENT_KEY_SECRET)?,
            ))
            .rate_limit(api_mgmt::RateLimit::management())
            .build()?;
        let obs = api_obs::Client::from_env()?;
        let service = mgmt.service(
            var("CLOUD_ORGANIZATION_ID")?.parse()?,
            var("CLOUD_SERVICE_ID")?.parse()?,
        );
        let alert = var("CLOUD_ALERT_ID")?.parse()?;
        return Ok(Target {
            mgmt,
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
    let emulator =
        Emulator::start(EmulatorOptions::new().timing(timing).rate_limits(false)).await?;
    println!(
        "Started the embedded emulator at {} (rate limits off for the tour)",
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
    let service = mgmt.service(emulator.organization_id().into(), stopped.into());
    let alert = "66a1f0c2d4e5f60718293a4b".parse()?;
    Ok(Target {
        mgmt,
        obs,
        service,
        alert,
        _emulator: Some(emulator),
    })
}

fn object_storage_name(run: &u64) -> String {
    format!("tour-events-{run}")
}

fn step(title: &str) {
    println!("\n== {title}");
}

#[tokio::main]
async fn main() -> Result<(), Failure> {
    let Target {
        mgmt,
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
        "start answered: {} is {:?} (request {:?})",
        answer.name(),
        answer.state(),
        answer.meta().request_id
    );
    let running = service.start_and_wait(&wait).await?;
    println!("now: {} is {:?}", running.name(), running.state());

    step("Create a Kafka pipe and an object storage pipe");
    // Unique names: a second tour against the same service must not collide with the first.
    let run = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_secs();
    let kafka = NewPipe::builder(format!("tour-orders-{run}"))
        .source(
            KafkaSource::new("b-1.orders.kafka.example:9098", "orders")
                .consumer_group("tour")
                .offset_timestamp("2026-03-01T00:00")
                .credentials("reader", "kafka-password"),
        )
        .destination(
            Destination::new("default")
                .table("tour_orders")
                .managed_table(true)
                .column("order_id", "UInt64")
                .column("amount", "Decimal(18, 2)")
                .sorting_key(["order_id"]),
        )
        .field_mapping("id", "order_id")
        .field_mapping("amount", "amount")
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
                .managed_table(true)
                .column("event", "String"),
        )
        .field_mapping("event", "event")
        .build()?;
    let kafka = service.pipes().create(&kafka).await?;
    let events = service.pipes().create(&object_storage).await?;
    for pipe in [&kafka, &events] {
        println!(
            "created {} ({:?}) in state {}",
            pipe.name(),
            pipe.id(),
            pipe.state()
        );
    }

    step("Wait until both pipes are Running");
    for pipe in [&kafka, &events] {
        let id = pipe.id().ok_or("a created pipe has an id")?;
        let running = service
            .pipe(id)
            .wait_until(PipeState::Running, &wait)
            .await?;
        println!("{} is {}", running.name(), running.state());
    }

    step("Read a pipe and its settings");
    let orders = service.pipe(kafka.id().ok_or("id")?);
    let read = orders.get().await?;
    let scaling = read.scaling.clone().unwrap_or_default();
    println!(
        "{}: source {:?}, {} replica(s) of {:?} millicores / {:?} GB, created {:?}",
        read.name(),
        read.source_kind(),
        scaling.replicas.unwrap_or_default(),
        scaling.replica_cpu_millicores.map(|c| c.get()),
        scaling.replica_memory_gb.map(|m| m.get()),
        read.created_at
    );
    let settings = orders.settings().await?;
    println!(
        "settings: streaming_max_insert_wait_ms={:?}, object_storage_concurrency={:?}, db_max_threads={:?}",
        settings.streaming_max_insert_wait_ms,
        settings.object_storage_concurrency,
        settings.db_max_threads
    );

    step("List reverse private endpoints");
    let endpoints = service.reverse_private_endpoints().await?;
    if endpoints.is_empty() {
        println!("(none)");
    }
    for endpoint in endpoints.iter() {
        println!(
            "{:?} {:?} {} {}",
            endpoint.id(),
            endpoint.kind(),
            endpoint.status(),
            endpoint.description.as_deref().unwrap_or("")
        );
    }

    step("Register a private endpoint");
    match service
        .create_private_endpoint("vpce-0123456789abcdef0", "tour runners")
        .await
    {
        Ok(endpoint) => println!("registered {:?}: {:?}", endpoint.id, endpoint.description),
        Err(e) if e.is_conflict() => println!("already registered: {e}"),
        Err(e) => return Err(e.into()),
    }

    step("Read an alert");
    let alert = obs.alert(alert).get().await?;
    println!(
        "{} is {:?}: {} (threshold {:?} {:?}, every {:?})",
        alert.name(),
        alert.state(),
        alert.message.as_deref().unwrap_or(""),
        alert.threshold_type,
        alert.threshold,
        alert.interval
    );

    step("List dashboards");
    for dashboard in obs.dashboards().list().await?.iter() {
        println!(
            "{} {:?}: {} tile(s), tags {:?}",
            dashboard.name(),
            dashboard.id(),
            dashboard.tiles().len(),
            dashboard.tags()
        );
        for tile in dashboard.tiles() {
            let series = tile.series.as_deref().unwrap_or_default();
            let kinds: Vec<String> = series
                .iter()
                .map(|s| format!("{:?} of {:?}", s.agg_fn, s.data_source))
                .collect();
            println!(
                "  tile {:?} at ({:?},{:?}): {}",
                tile.name,
                tile.x,
                tile.y,
                kinds.join(", ")
            );
        }
    }

    step("Delete the pipes and wait until they are gone");
    orders.delete().await?;
    println!(
        "delete accepted; the pipe still answers as {}",
        orders.get().await?.state()
    );
    orders.wait_until_gone(&wait).await?;
    println!(
        "gone: a read now answers {}",
        orders
            .get()
            .await
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    );
    let events = service.pipe(events.id().ok_or("id")?);
    if events.delete_if_exists().await? {
        events.wait_until_gone(&wait).await?;
        println!("{} is gone too", object_storage_name(&run));
    }

    step("A validation error (nothing is sent)");
    let invalid = NewPipe::builder("")
        .source(KafkaSource::new("b-1:9098", "orders").iam_role("pipe-reader"))
        .destination(
            Destination::new("default")
                .table("t")
                .managed_table(true)
                .column("id", "UInt64"),
        )
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
        let api = error.as_api();
        println!("{error}");
        println!(
            "  not found: {}, code: {:?}, request id: {:?}",
            error.is_not_found(),
            api.and_then(|a| a.code.clone()),
            error.request_id()
        );
    }

    println!("\nTour complete. The management client was {:?}", mgmt);
    Ok(())
}
