//! Secrets used by the leak tests, and requests that carry every kind of them.

use api_mgmt::{
    NewPipe,
    pipes::{
        Destination, KafkaSource, KinesisSource, ObjectStorageSource, PostgresSource,
        PostgresTableMapping,
    },
};

use super::{KEY_SECRET, TOKEN};

/// Every secret value the leak tests use; no output may contain any of them.
pub const SECRETS: [&str; 7] = [
    KEY_SECRET,
    TOKEN,
    "kafka-pa55word",
    "registry-pa55word",
    "AKIA-s3cret-key",
    "AccountKey=c29tZWtleQ==",
    "pg-pa55word",
];

/// Fails when `text` contains a secret.
pub fn assert_clean(what: &str, text: &str) {
    for secret in SECRETS {
        assert!(
            !text.contains(secret),
            "{secret:?} leaked into {what}: {text}"
        );
    }
}

/// One pipe request per source kind, together carrying every kind of secret.
pub fn pipes_with_every_secret() -> Vec<NewPipe> {
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
                        api_mgmt::pipes::SchemaRegistry::new("https://r.example")
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
