//! An emulator started in-process for each test, and `cloudctl` run as a process against it with the
//! settings in its environment. Every run is checked for leaked secrets.

use std::path::Path;

use api_emulator::{Emulator, EmulatorOptions, FaultRule, LogEntry, PipeId, PipeState};
use tempfile::TempDir;

/// The Kafka password of the test pipe files (given through the environment).
pub const KAFKA_PASSWORD: &str = "kafka-pa55word-e2e";
/// The Kinesis secret key of the test pipe files (given through the environment).
pub const KINESIS_SECRET_KEY: &str = "kinesis-s3cret-key-e2e";
/// The Postgres password of the test pipe files (given through the environment).
pub const POSTGRES_PASSWORD: &str = "postgres-pa55-e2e";
/// The object storage connection string of the test pipe files.
pub const CONNECTION_STRING: &str =
    "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=c29tZS1henVyZS1rZXk=";

/// A valid Kafka pipe file; the password comes from `KAFKA_PASSWORD`.
pub const KAFKA_PIPE: &str = "\
name: orders
source:
  kafka:
    brokers: b-1.kafka.emulator.local:9098
    topics: orders
    credentials:
      username: reader
      password: {env: KAFKA_PASSWORD}
destination:
  database: default
  table: orders
  managedTable: true
  columns:
    - {name: id, type: UInt64}
    - {name: amount, type: Float64}
fieldMappings:
  - {sourceField: id, destinationField: id}
  - {sourceField: amount, destinationField: amount}
scaling: {replicas: 2}
settings: {db_max_threads: 8}
";

/// A Postgres pipe file: its password (and user name) are among what the API does not return.
pub const POSTGRES_PIPE: &str = "\
name: crm
source:
  postgres:
    host: crm-db.internal.example
    port: 5432
    database: crm
    credentials: {username: replicator, password: {env: POSTGRES_PASSWORD}}
    tableMappings:
      - {sourceSchemaName: public, sourceTable: customers, targetTable: crm_customers}
destination: {database: crm}
";

/// The emulator of one test, with the runtime that serves it and a home directory without a config
/// file.
pub struct Cloud {
    emulator: Option<Emulator>,
    runtime: tokio::runtime::Runtime,
    home: TempDir,
}

/// What one run of `cloudctl` did.
#[derive(Debug)]
pub struct Run {
    /// The exit code.
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Run {
    /// Asserts the exit code, showing both streams when it differs.
    #[track_caller]
    pub fn expect(self, code: i32) -> Self {
        assert_eq!(
            self.code, code,
            "exit code; stdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }

    /// Stdout as JSON, which writes numbers as the API does (`8`, never `8.0`).
    #[track_caller]
    pub fn json(&self) -> serde_json::Value {
        let value = serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", self.stdout));
        assert_whole_numbers_are_integers(&value, "$");
        value
    }

    /// The `error` object of a JSON-mode failure on stderr (which holds nothing else).
    #[track_caller]
    pub fn error(&self) -> serde_json::Value {
        let value: serde_json::Value = serde_json::from_str(self.stderr.trim())
            .unwrap_or_else(|e| panic!("stderr is not one JSON object ({e}):\n{}", self.stderr));
        assert!(self.stdout.is_empty(), "nothing on stdout: {}", self.stdout);
        assert_whole_numbers_are_integers(&value, "$");
        value["error"].clone()
    }
}

/// Fails on a whole number written as a float (`8.0`), naming where it is.
#[track_caller]
fn assert_whole_numbers_are_integers(value: &serde_json::Value, at: &str) {
    use serde_json::Value;
    match value {
        Value::Number(n) => assert!(
            !(n.is_f64() && n.as_f64().is_some_and(|f| f.fract() == 0.0)),
            "{at} is the whole number {n} written as a float"
        ),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                assert_whole_numbers_are_integers(item, &format!("{at}[{i}]"));
            }
        }
        Value::Object(members) => {
            for (name, member) in members {
                assert_whole_numbers_are_integers(member, &format!("{at}.{name}"));
            }
        }
        _ => {}
    }
}

impl Cloud {
    /// An emulator with instant transitions and no rate limits.
    pub fn start() -> Self {
        Self::with(EmulatorOptions::for_tests())
    }

    /// An emulator with these options.
    pub fn with(options: EmulatorOptions) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a runtime");
        let emulator = runtime
            .block_on(Emulator::start(options))
            .expect("the emulator starts");
        Self {
            emulator: Some(emulator),
            runtime,
            home: TempDir::new().expect("a home directory"),
        }
    }

    /// Runs `future` on the runtime that serves the emulator (for servers of a test's own, such as
    /// a recording proxy, that must keep serving while cloudctl runs).
    pub fn block_on<F: std::future::Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }

    /// The emulator's base URL.
    pub fn base_url(&self) -> String {
        self.emulator().base_url().to_string()
    }

    /// The id of the admin key cloudctl calls with.
    #[allow(dead_code)] // the fleet tests name the Redis key with it
    pub fn key_id(&self) -> String {
        self.emulator().admin_key().0.to_string()
    }

    fn emulator(&self) -> &Emulator {
        self.emulator.as_ref().expect("running")
    }

    /// The organization of the admin key.
    pub fn organization(&self) -> String {
        self.emulator().organization_id().to_string()
    }

    /// The first service in `state` (`running`, `stopped`).
    pub fn service(&self, state: &str) -> String {
        self.emulator()
            .service_id(state)
            .expect("a service in that state")
            .to_string()
    }

    /// The home directory of the runs (its config directory holds no file unless a test writes one).
    pub fn home(&self) -> &Path {
        self.home.path()
    }

    /// Every secret of the emulator's seed and of the test files: none may ever be printed.
    pub fn secrets(&self) -> Vec<String> {
        let seed = self.emulator().seed();
        let mut secrets: Vec<String> = seed.api_keys.iter().map(|k| k.secret.clone()).collect();
        secrets.extend(seed.observability_tokens.iter().map(|t| t.token.clone()));
        secrets.push(KAFKA_PASSWORD.to_string());
        secrets.push(KINESIS_SECRET_KEY.to_string());
        secrets.push(POSTGRES_PASSWORD.to_string());
        secrets.push(CONNECTION_STRING.to_string());
        secrets.push("c29tZS1henVyZS1rZXk=".to_string());
        secrets
    }

    /// A `cloudctl` command with every setting in the environment (the running service) and
    /// nothing else from this process's environment.
    pub fn command(&self) -> assert_cmd::Command {
        assert_cmd::Command::from_std(self.process())
    }

    /// The same as a plain process command, to spawn (and kill) it.
    pub fn process(&self) -> std::process::Command {
        let emulator = self.emulator();
        let (key_id, key_secret) = emulator.admin_key();
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_cloudctl"));
        command
            .env_clear()
            .env("HOME", self.home())
            .env("XDG_CONFIG_HOME", self.home().join(".config"))
            .env("CLOUD_API_URL", emulator.base_url())
            .env("CLOUD_API_KEY_ID", key_id)
            .env("CLOUD_API_KEY_SECRET", key_secret)
            .env("CLOUD_ORGANIZATION_ID", self.organization())
            .env("CLOUD_SERVICE_ID", self.service("running"))
            .env("CLOUD_OBSERVABILITY_URL", emulator.base_url())
            .env("CLOUD_OBSERVABILITY_TOKEN", emulator.observability_token())
            // The emulator of these tests counts no limit; cloudctl still paces through its default
            // host store (in the test's home), at a rate that keeps the runs quick.
            .env("CLOUD_RATE_LIMIT", "1000/1s")
            // Its transitions take a few hundred milliseconds at most: waits poll at that scale.
            .env("CLOUD_POLL_INTERVAL", "100ms")
            .env("KAFKA_PASSWORD", KAFKA_PASSWORD)
            .env("KINESIS_SECRET_KEY", KINESIS_SECRET_KEY)
            .env("POSTGRES_PASSWORD", POSTGRES_PASSWORD)
            .env("AZURE_CONNECTION_STRING", CONNECTION_STRING);
        command
    }

    /// Runs `cloudctl args`.
    pub fn cloudctl(&self, args: &[&str]) -> Run {
        self.run(self.command().args(args))
    }

    /// Runs a prepared command, and checks that neither stream shows a secret.
    pub fn run(&self, command: &mut assert_cmd::Command) -> Run {
        let output = command.output().expect("cloudctl runs");
        let run = Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        };
        for secret in self.secrets() {
            assert!(
                !run.stdout.contains(&secret) && !run.stderr.contains(&secret),
                "a secret was printed:\nstdout:\n{}\nstderr:\n{}",
                run.stdout,
                run.stderr
            );
        }
        run
    }

    /// Writes a file in the home directory and returns its path.
    pub fn file(&self, name: &str, text: &str) -> String {
        let path = self.home().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("a directory");
        }
        std::fs::write(&path, text).expect("the file is written");
        path.to_string_lossy().into_owned()
    }

    /// Creates the pipe of [`KAFKA_PIPE`] with `cloudctl pipe create` and returns its id.
    pub fn create_kafka_pipe(&self) -> String {
        let file = self.file("pipe.yaml", KAFKA_PIPE);
        let created = self
            .cloudctl(&["pipe", "create", "-f", &file, "-o", "json"])
            .expect(0)
            .json();
        created["id"].as_str().expect("the pipe's id").to_string()
    }

    /// The requests served so far.
    pub fn requests(&self) -> Vec<LogEntry> {
        self.emulator().requests().into_entries()
    }

    /// Arms a fault rule.
    pub fn inject(&self, rule: FaultRule) {
        self.emulator().inject(rule).expect("a valid fault rule");
    }

    /// Disarms every fault rule.
    pub fn clear_faults(&self) {
        self.emulator().clear_faults();
    }

    /// Forgets the requests served so far.
    pub fn clear_requests(&self) {
        self.emulator().clear_requests();
    }

    /// The pipes on the server (not yet gone), by creation time.
    pub fn pipes(&self) -> Vec<api_emulator::PipeView> {
        self.emulator().pipes()
    }

    /// Changes the pipe `id` out of band (a JSON merge patch, as a console edit would).
    pub fn patch_pipe(&self, id: &str, patch: serde_json::Value) {
        let id: PipeId = id.parse().expect("a pipe id");
        self.emulator()
            .patch_pipe(id, &patch)
            .expect("the patch is taken");
    }

    /// Puts the running service in `state` now.
    pub fn set_service_state(&self, state: &str) {
        let id = self.service("running").parse().expect("a service id");
        let set = self
            .emulator()
            .set_service_state(id, state.into())
            .expect("the state is set");
        assert!(set, "the service exists");
    }

    /// Forces the pipe `id` into `state` (a failure a real service could report).
    pub fn force_pipe_state(&self, id: &str, state: PipeState) {
        let id: PipeId = id.parse().expect("a pipe id");
        let forced = self
            .emulator()
            .force_pipe_state(id, Some(state))
            .expect("the state is forced");
        assert!(forced, "the pipe exists");
    }
}

impl Cloud {
    /// Gives the pipe `id` back to its lifecycle after [`force_pipe_state`](Self::force_pipe_state).
    pub fn unforce_pipe_state(&self, id: &str) {
        let id: PipeId = id.parse().expect("a pipe id");
        let found = self
            .emulator()
            .force_pipe_state(id, None)
            .expect("the state is given back");
        assert!(found, "the pipe exists");
    }
}

impl Drop for Cloud {
    fn drop(&mut self) {
        if let Some(emulator) = self.emulator.take() {
            self.runtime.block_on(emulator.shutdown());
        }
    }
}

/// Emulators that answer as a production, database-backed server may (see the API decisions, "How
/// a production server answers what it stores"), and a pipe answer a client cannot decode.
#[allow(dead_code)] // each test module uses its own part
impl Cloud {
    /// An emulator (instant, no rate limits) that stores and answers created pipes in canonical
    /// forms: column types as ClickHouse writes them, certificates trimmed, topics without spaces,
    /// the compression and reverse private endpoint ids in upper case.
    pub fn canonical() -> Self {
        Self::with(EmulatorOptions::for_tests().canonical(true))
    }

    /// An emulator (instant, no rate limits) that answers as production may: canonical forms, and a
    /// second pipe with the name of a live one created rather than refused.
    pub fn production() -> Self {
        Self::with(
            EmulatorOptions::for_tests()
                .canonical(true)
                .duplicate_names(true),
        )
    }

    /// An emulator (instant, no rate limits) that creates a second pipe with the name of a live one
    /// rather than refuse it with 409, and answers pipes as sent.
    pub fn duplicates() -> Self {
        Self::with(EmulatorOptions::for_tests().duplicate_names(true))
    }

    /// Merges `overlay` (a JSON object: objects merged, anything else replaced) into the pipe `id`'s
    /// JSON in every later getPipe answer, e.g. `{"scaling": {"replicas": "three"}}`; the stored
    /// pipe does not change.
    pub fn set_raw_overlay(&self, id: &str, overlay: serde_json::Value) {
        let id: PipeId = id.parse().expect("a pipe id");
        let set = self
            .emulator()
            .set_raw_overlay(id, overlay)
            .expect("the overlay is a JSON object");
        assert!(set, "the pipe exists");
    }
}
