//! No secret in the recorded state, in any form: an arbitrary secret planted in every string
//! position of a pipe of every source kind, in the shapes secrets take inside ordinary strings (a
//! URI's userinfo, a signature in a query, a `password="..."` in a setting's text, an Azure
//! connection string's `SharedAccessKey=`, `?key=` and `?code=`, `,password=`, a pair whose `=` is
//! `%3D`, a YAML `password:` line and flow member, a PEM private key) and as an array or object
//! under a secret name, leaves no piece of six characters in the state file, in any encoding,
//! whether it came in the declaration or in the server's answer; nor in a plan document that
//! deletes the pipe (its `before`) or creates it (its `after`).

#![cfg(feature = "declared")]

use api_mgmt::NewPipe;
use api_mgmt::declared::{self, Declaration, PlanOptions, Producer, RecordedState, StateTarget};
use api_mgmt::{Client, Credentials, ServiceHandle};
use api_test_support::encodings::percent;
use proptest::prelude::*;
use serde_json::{Value, json};

/// A pipe of each source kind, every optional string member present.
fn templates() -> Vec<Value> {
    let destination = json!({"database": "d", "table": "t", "managedTable": true,
                             "columns": [{"name": "c", "type": "String"}]});
    let mappings = json!([{"sourceField": "c", "destinationField": "c"}]);
    vec![
        json!({"name": "k", "source": {"kafka": {
            "brokers": "b:9092", "topics": "t", "consumerGroup": "g", "caCertificate": "cert",
            "credentials": {"username": "u", "password": "p4ssword"},
            "schemaRegistry": {"url": "https://registry", "caCertificate": "cert",
                               "credentials": {"username": "u", "password": "p4ssword"}}}},
            "destination": destination, "fieldMappings": mappings,
            "settings": {"kafka_sasl_jaas_config": "x", "kafka_client_id": "x"}}),
        json!({"name": "o", "source": {"objectStorage": {
            "url": "https://bucket/x.csv", "queueUrl": "https://queue", "path": "p", "delimiter": ",",
            "azureContainerName": "c", "connectionString": "AccountKey=k3yk3yk3y"}},
            "destination": destination, "fieldMappings": mappings}),
        json!({"name": "s", "source": {"kinesis": {
            "streamName": "s", "region": "r", "accessKey": {"accessKeyId": "a", "secretKey": "s3cr3tkey"}}},
            "destination": destination, "fieldMappings": mappings}),
        json!({"name": "p", "source": {"postgres": {
            "host": "h", "port": 5432, "database": "d",
            "credentials": {"username": "u", "password": "p4ssword"},
            "settings": {"publicationName": "pub", "replicationSlotName": "slot"},
            "tableMappings": [{"sourceSchemaName": "s", "sourceTable": "t", "targetTable": "t"}]}},
            "destination": {"database": "d"}}),
    ]
}

/// The JSON pointers of every string of `value`.
fn string_positions(value: &Value, at: String, out: &mut Vec<String>) {
    match value {
        Value::String(_) => out.push(at),
        Value::Object(members) => {
            for (name, member) in members {
                string_positions(member, format!("{at}/{name}"), out);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                string_positions(item, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// The ways a secret stands inside an ordinary string.
fn shapes(secret: &str) -> Vec<String> {
    let quoted = secret.replace('\\', "\\\\").replace('"', "\\\"");
    vec![
        format!(
            "https://reader:{}@registry.example:8081/subjects",
            percent(secret)
        ),
        format!(
            "https://acct.blob.example/c/x.csv?sv=2024-05-04&sig={}&se=2030",
            percent(secret)
        ),
        format!(
            "https://bucket.example/x.csv?X-Amz-Date=20260101&X-Amz-Signature={}",
            percent(secret)
        ),
        format!(
            "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"{quoted}\";"
        ),
        format!(
            "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey={}",
            base64(secret)
        ),
        format!("https://maps.example/api?KEY={}&q=x", percent(secret)),
        format!("https://fn.example/api/run?Code={}", percent(secret)),
        format!("host=h,user=u,password={},port=1", percent(secret)),
        format!(
            "https%3A%2F%2Fh%2Fx%3Fuser%3Du%26password%3D{}%26n%3D1",
            percent(&percent(secret))
        ),
        format!("user: u\npassword: \"{quoted}\"\nhost: h"),
        format!(
            "{{username: u, password: '{}', port: 1}}",
            secret.replace('\'', "''")
        ),
        format!(
            "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
            base64(secret)
        ),
    ]
}

/// `text` in base64, as a key is written (a connection string's, a PEM body's).
fn base64(text: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(text)
}

/// Every 6-character window of `secret`, as it is and in the encodings a state file or a URI could
/// hold it in.
fn pieces(secret: &str) -> Vec<String> {
    let chars: Vec<char> = secret.chars().collect();
    let mut pieces = Vec::new();
    for window in chars.windows(6) {
        let piece: String = window.iter().collect();
        pieces.push(
            serde_json::to_string(&piece)
                .unwrap()
                .trim_matches('"')
                .to_string(),
        );
        pieces.push(percent(&piece));
        pieces.push(percent(&percent(&piece)));
        pieces.push(piece);
    }
    // A key written in base64 (the connection string's, the PEM body's): its own pieces.
    let encoded: Vec<char> = base64(secret).chars().collect();
    pieces.extend(encoded.windows(8).map(|w| w.iter().collect::<String>()));
    pieces
}

fn target() -> StateTarget {
    StateTarget {
        api_url: "http://127.0.0.1:8080".into(),
        organization_id: "3f0c5e2a-8d41-4b7e-9a6c-1e2f3a4b5c6d".parse().unwrap(),
        service_id: "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d".parse().unwrap(),
    }
}

/// A handle of the target's service, made once (a client loads its TLS roots); a plan without a
/// refresh makes no call with it.
fn service() -> &'static ServiceHandle {
    static SERVICE: std::sync::OnceLock<ServiceHandle> = std::sync::OnceLock::new();
    SERVICE.get_or_init(|| {
        let target = target();
        Client::builder(target.api_url.as_str())
            .credentials(Credentials::basic("key", "not-the-planted-secret"))
            .build()
            .expect("a client")
            .service(target.organization_id, target.service_id)
    })
}

thread_local! {
    /// Each thread's runtime for its plans.
    static RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
}

/// The plan document of `declaration` against `state`, made without a call.
fn document(declaration: &Declaration, state: &RecordedState) -> String {
    let options = PlanOptions::default().refresh(false);
    let plan = RUNTIME
        .with(|runtime| {
            runtime.block_on(declared::plan_with(service(), declaration, state, &options))
        })
        .expect("a plan");
    plan.save(declaration, Producer::sdk()).to_json()
}

/// The state file after an import of `request` (the declaration) with `answer` as the server's,
/// checked with the document of a plan that deletes the pipe (and, `with_create`, of one that
/// creates it); `None` when the import is refused (a name holding `secret`: the refusal says
/// nothing of it).
fn state_file(request: &Value, answer: &Value, secret: &str) -> Option<String> {
    state_file_and_documents(request, answer, secret, false)
}

fn state_file_and_documents(
    request: &Value,
    answer: &Value,
    secret: &str,
    with_create: bool,
) -> Option<String> {
    let pipe = NewPipe::from_json(request.clone()).ok()?;
    let mut state = RecordedState::new(target());
    let id = "0f9e8d7c-6b5a-4f3e-9d2c-1b0a9f8e7d6c".parse().unwrap();
    match state.import(id, &pipe, answer) {
        Ok(_) => {
            let deleting = document(&Declaration::new(), &state);
            assert!(deleting.contains("\"action\": \"delete\""), "{deleting}");
            assert_no_piece(&deleting, secret, "the document of a delete");
            if with_create {
                let creating = document(
                    &Declaration::new().pipe(pipe),
                    &RecordedState::new(target()),
                );
                assert!(creating.contains("\"action\": \"create\""), "{creating}");
                assert_no_piece(&creating, secret, "the document of a create");
            }
            Some(state.to_json().unwrap())
        }
        // A name is the state's key: one that holds a secret is refused, and says nothing of it.
        Err(refused)
            if request["name"] != answer["name"] || refused.to_string().contains("name holds") =>
        {
            assert_no_piece(&refused.to_string(), secret, "the refusal");
            None
        }
        Err(other) => panic!("{other}"),
    }
}

#[track_caller]
fn assert_no_piece(text: &str, secret: &str, what: &str) {
    for piece in pieces(secret) {
        assert!(
            !text.contains(&piece),
            "{what}: {piece:?} of {secret:?} in\n{text}"
        );
    }
}

proptest! {
    // One secret a run (another each run), planted in about 700 places (each an import, Argon2id
    // per secret), on every core.
    #![proptest_config(ProptestConfig { cases: 1, ..ProptestConfig::default() })]

    #[test]
    fn no_piece_of_a_secret_in_any_string_reaches_the_state(
        secret in "[ -~\u{e9}\u{20ac}]{10,24}".prop_filter("six different characters", |s| {
            let mut seen: Vec<char> = s.chars().collect();
            seen.sort_unstable();
            seen.dedup();
            seen.len() >= 6
        }),
    ) {
        let planted = on_every_core(&secret);
        prop_assert!(planted > 150, "the secret was planted in {planted} places only");
    }
}

/// One place to plant a secret: a string position of a template (each shape in turn), or the
/// template's settings, under secret names.
enum Place {
    Position(usize, String),
    UnderSecretNames,
}

/// Every place of every template planted with `secret`, each thread taking the next place when it
/// is done with one (the Kafka template has about half the places and three secrets an import: one
/// thread per template left the other core idle for most of the run); answers how many states were
/// checked.
fn on_every_core(secret: &str) -> usize {
    let mut places = Vec::new();
    for template in templates() {
        let mut positions = Vec::new();
        string_positions(&template, String::new(), &mut positions);
        for (p, position) in positions.into_iter().enumerate() {
            places.push((template.clone(), Place::Position(p, position)));
        }
        places.push((template, Place::UnderSecretNames));
    }
    let places = std::sync::Mutex::new(places.into_iter());
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut planted = 0;
                    loop {
                        let next = places.lock().expect("no panic").next();
                        let Some((template, place)) = next else {
                            return planted;
                        };
                        planted += match place {
                            Place::Position(p, position) => {
                                plant_at(&template, p, &position, secret)
                            }
                            Place::UnderSecretNames => plant_under_secret_names(&template, secret),
                        };
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|worker| worker.join().expect("no panic"))
            .sum()
    })
}

/// Plants `secret` at the string `position` (the `p`th) of `template` in every shape; answers how
/// many states were checked.
fn plant_at(template: &Value, p: usize, position: &str, secret: &str) -> usize {
    let mut planted = 0;
    for (i, shape) in shapes(secret).into_iter().enumerate() {
        let mut request = template.clone();
        *request.pointer_mut(position).unwrap() = Value::String(shape.clone());
        // The declaration holds it, and the server answers it back. A create's document shows
        // the form a delete's does, made anew (Argon2id per secret): planned for one shape of
        // every eighth position.
        let create = i == 0 && p.is_multiple_of(8);
        let Some(text) = state_file_and_documents(&request, &request, secret, create) else {
            continue; // a value the member's own rules refuse (a name, a port)
        };
        planted += 1;
        assert_no_piece(&text, secret, &format!("{position}, shape {i}: {shape}"));
        // Only the server's answer holds it (one shape: each import costs Argon2id).
        if i == 0
            && let Some(text) = state_file(template, &request, secret)
        {
            assert_no_piece(&text, secret, position);
        }
    }
    planted
}

/// Plants `secret` as an array and an object under secret names of `template`'s settings (settings
/// take any member), where the source kind has settings; answers how many states were checked.
fn plant_under_secret_names(template: &Value, secret: &str) -> usize {
    if !(template["settings"].is_object() || template["source"]["kafka"].is_object()) {
        return 0;
    }
    let mut request = template.clone();
    request["settings"]["kafka_sasl_password"] = json!([secret, "second"]);
    request["settings"]["ssl_keystore_secret"] = json!({"key": secret});
    let text = state_file(&request, &request, secret).expect("settings take any member");
    assert_no_piece(&text, secret, "an array or object under a secret name");
    1
}
