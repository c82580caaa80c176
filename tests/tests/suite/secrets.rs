//! No generated type shows a secret in `Debug`, while the wire still carries it.

use api_raw::management::types::{
    AccessKey, KafkaSourceRequest, KinesisSourceRequest, ObjectStorageSourceRequest,
    PipeCreateRequest, PipeDestinationRequest, PipeSourceRequest, PostgresSourceRequest,
    PostgresTableMapping, SchemaRegistryRequest, UsernamePassword,
};
use api_raw::support::Secret;

const SECRETS: [&str; 6] = [
    "kafka-pa55word",
    "registry-pa55word",
    "AKIA-s3cret-key",
    "kinesis-s3cret-key",
    "DefaultEndpointsProtocol=https;AccountKey=c29tZWtleQ==",
    "pg-pa55word",
];

fn credentials(user: &str, password: &str) -> UsernamePassword {
    UsernamePassword {
        username: user.to_string(),
        password: Secret::new(password),
    }
}

fn access_key(secret: &str) -> AccessKey {
    AccessKey {
        access_key_id: "AKIAEXAMPLE".to_string(),
        secret_key: Secret::new(secret),
    }
}

/// A create request that carries every kind of secret the API accepts.
fn request_with_every_secret() -> PipeCreateRequest {
    PipeCreateRequest {
        name: "secrets".parse().expect("a valid name"),
        source: PipeSourceRequest {
            kafka: Some(KafkaSourceRequest {
                credentials: Some(credentials("kafka-user", SECRETS[0])),
                schema_registry: Some(SchemaRegistryRequest {
                    credentials: Some(credentials("registry-user", SECRETS[1])),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            object_storage: Some(ObjectStorageSourceRequest {
                access_key: Some(access_key(SECRETS[2])),
                connection_string: Some(Secret::new(SECRETS[4])),
                ..Default::default()
            }),
            kinesis: Some(KinesisSourceRequest {
                access_key: Some(access_key(SECRETS[3])),
                ..Default::default()
            }),
            postgres: Some(PostgresSourceRequest {
                host: "db.example".parse().expect("host"),
                port: std::num::NonZeroU16::new(5432).expect("port"),
                database: "crm".parse().expect("database"),
                credentials: credentials("pg-user", SECRETS[5]),
                settings: None,
                table_mappings: vec![PostgresTableMapping::default()],
            }),
            validate_samples: Some(true),
        },
        destination: PipeDestinationRequest {
            database: "default".parse().expect("database"),
            table: None,
            managed_table: None,
            table_definition: None,
            columns: Vec::new(),
            roles: vec!["writer".to_string()],
        },
        field_mappings: Vec::new(),
        scaling: None,
        settings: None,
    }
}

#[test]
fn debug_of_request_types_never_shows_a_secret() {
    let request = request_with_every_secret();
    let shown = [
        format!("{request:?}"),
        format!("{request:#?}"),
        format!("{:?}", request.source.kafka),
        format!("{:?}", request.source.object_storage),
        format!("{:?}", request.source.kinesis),
        format!("{:?}", request.source.postgres),
        format!("{:?}", credentials("u", SECRETS[0])),
        format!("{:?}", access_key(SECRETS[2])),
    ];
    for text in &shown {
        for secret in SECRETS {
            assert!(
                !text.contains(secret),
                "{secret:?} leaked into Debug output: {text}"
            );
        }
        assert!(text.contains("[REDACTED]"), "{text}");
    }
}

#[test]
fn the_wire_carries_every_secret() {
    let json = serde_json::to_string(&request_with_every_secret()).expect("serialises");
    for secret in SECRETS {
        assert!(
            json.contains(secret),
            "{secret:?} is missing from the request body"
        );
    }
}
