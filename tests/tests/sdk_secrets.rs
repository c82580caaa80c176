//! No secret ever shows in `Debug` of clients, requests or errors, nor in tracing output.

mod support;

use std::io::Write;
use std::sync::{Arc, Mutex};

use api_mgmt::{
    Destination, KafkaSource, KinesisSource, NewPipe, ObjectStorageSource, PostgresSource,
    PostgresTableMapping,
};
use support::{KEY_SECRET, PIPE, Reply, ScriptServer, TOKEN, service};

const SECRETS: [&str; 7] = [
    KEY_SECRET,
    TOKEN,
    "kafka-pa55word",
    "registry-pa55word",
    "AKIA-s3cret-key",
    "AccountKey=c29tZWtleQ==",
    "pg-pa55word",
];

fn assert_clean(what: &str, text: &str) {
    for secret in SECRETS {
        assert!(
            !text.contains(secret),
            "{secret:?} leaked into {what}: {text}"
        );
    }
}

fn pipes_with_every_secret() -> Vec<NewPipe> {
    let destination = || {
        Destination::new("d")
            .table("t")
            .managed_table(true)
            .column("c", "String")
    };
    let base = |name: &str| {
        NewPipe::builder(name)
            .destination(destination())
            .field_mapping("c", "c")
    };
    vec![
        base("kafka")
            .source(
                KafkaSource::new("b:9092", "t")
                    .credentials("u", SECRETS[2])
                    .schema_registry(
                        api_mgmt::SchemaRegistry::new("https://r.example")
                            .credentials("r", SECRETS[3]),
                    ),
            )
            .build()
            .unwrap(),
        base("s3")
            .source(
                ObjectStorageSource::url("https://b.example/*.csv").access_key("AKIA", SECRETS[4]),
            )
            .build()
            .unwrap(),
        base("azure")
            .source(ObjectStorageSource::azure(SECRETS[5], "c", "p/*.csv"))
            .build()
            .unwrap(),
        base("kinesis")
            .source(KinesisSource::new("s", "r").access_key("AKIA", SECRETS[4]))
            .build()
            .unwrap(),
        NewPipe::builder("pg")
            .source(
                PostgresSource::new("h", 5432, "db")
                    .credentials("u", SECRETS[6])
                    .table(PostgresTableMapping::new("public", "a", "b")),
            )
            .destination(Destination::new("d"))
            .build()
            .unwrap(),
    ]
}

#[tokio::test]
async fn debug_of_clients_requests_and_errors_never_shows_a_secret() {
    let server = ScriptServer::start(vec![
        Reply::text(401, "text/plain", "Unauthorized"),
        Reply::mgmt_error(401, "UNAUTHORIZED", "bad key"),
    ])
    .await;
    let mgmt = server.mgmt();
    let obs = server.obs();
    assert_clean(
        "the management client",
        &format!("{mgmt:?} {:?}", service(&mgmt).pipe(PIPE.parse().unwrap())),
    );
    assert_clean(
        "the observability client",
        &format!("{obs:?} {:?}", obs.dashboards()),
    );
    for pipe in pipes_with_every_secret() {
        assert_clean("a pipe request", &format!("{pipe:?} {pipe:#?}"));
    }
    let obs_error = obs.dashboards().list().await.unwrap_err();
    let mgmt_error = service(&mgmt).stop().await.unwrap_err();
    for error in [obs_error, mgmt_error] {
        assert_clean("an error", &format!("{error:?} {error}"));
    }
    let config_error = api_mgmt::Client::builder("http://api.example.com")
        .credentials(api_mgmt::Credentials::basic("id", KEY_SECRET))
        .build()
        .unwrap_err();
    assert_clean(
        "a configuration error",
        &format!("{config_error:?} {config_error}"),
    );
}

/// A `tracing` writer that keeps everything in memory.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test(flavor = "current_thread")]
async fn tracing_output_has_the_call_but_no_secret() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .with_span_events(tracing_subscriber::fmt::format::FmtSpan::CLOSE)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let server = ScriptServer::start(vec![
        Reply::text(503, "text/plain", "busy"),
        Reply::fixture("create_pipe_kafka").header("x-request-id", "trace-req-1"),
        Reply::fixture("get_alert"),
    ])
    .await;
    let svc = service(&server.mgmt());
    svc.pipe(PIPE.parse().unwrap()).get().await.unwrap();
    server
        .obs()
        .alert("66a1f0c2d4e5f60718293a4b".parse().unwrap())
        .get()
        .await
        .unwrap();
    for pipe in pipes_with_every_secret() {
        let _ = svc.pipes().create(&pipe).await;
    }

    let text = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    assert!(text.contains("api.call"), "{text}");
    assert!(
        text.contains("operation=\"getPipe\"") || text.contains("operation=getPipe"),
        "{text}"
    );
    assert!(
        text.contains("retrying"),
        "the retry after 503 is traced: {text}"
    );
    assert!(
        text.contains("request_id=\"trace-req-1\""),
        "the request id is recorded: {text}"
    );
    assert!(
        text.contains("duration_ms="),
        "the duration is recorded: {text}"
    );
    assert_clean("tracing output", &text);
    assert!(!text.to_lowercase().contains("authorization"), "{text}");
}
