//! The one redaction rule on every path, as a property: for arbitrary secrets, written by a server
//! into its error answer with random valid JSON escapes, as HTML character references or as they
//! are, no 6-character piece of the secret appears in the SDK's error (message, body, `Display`,
//! `Debug`), its `tracing` output, or the emulator's request log and views.

mod support;

use api_emulator::{Emulator, EmulatorOptions, Fault, FaultRule, OperationId};
use api_mgmt::{
    NewPipe, ServiceHandle,
    pipes::{Destination, KafkaSource},
};
use api_test_support::captured_log::CapturedLog;
use api_test_support::encodings::{SECRET_ALPHABET, echoing, leaked_piece};
use proptest::prelude::*;
use support::emulated::{mgmt, running_service};

/// Every text a person or a file may see after a create that the server answers with `answer`,
/// the pipe's password being `secret`.
fn outputs(
    runtime: &tokio::runtime::Runtime,
    emulator: &Emulator,
    service: &ServiceHandle,
    secret: &str,
    answer: (u16, &'static str, String),
) -> Vec<(&'static str, String)> {
    let (status, content_type, body) = answer;
    emulator.clear_requests();
    emulator
        .inject(
            FaultRule::operation(OperationId::CreatePipe)
                .then(Fault::body(status, body).content_type(content_type)),
        )
        .unwrap();
    let pipe = NewPipe::builder("echoed")
        .source(KafkaSource::new("b-1:9098", "orders").credentials("reader", secret))
        .destination(Destination::new("default").table("t").managed_table(true))
        .mapped_column("id", "id", "UInt64")
        .build()
        .unwrap();
    let logs = CapturedLog::default();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer({
            let logs = logs.clone();
            move || logs.clone()
        })
        .finish();
    let error = {
        let _guard = tracing::subscriber::set_default(subscriber);
        runtime
            .block_on(service.pipes().create(&pipe))
            .expect_err("the server answers with an error")
    };
    let api = error.as_api().expect("an API error");
    let log = emulator.requests();
    vec![
        ("Display", error.to_string()),
        ("Debug", format!("{error:?} {error:#?}")),
        ("message", api.message.clone()),
        ("body", api.body.clone()),
        ("tracing", logs.text()),
        (
            "request log",
            serde_json::to_string(&log.entries()).unwrap(),
        ),
        ("request log Debug", format!("{log:?}")),
        (
            "pipes view",
            serde_json::to_string(&emulator.pipes()).unwrap(),
        ),
    ]
}

#[test]
fn no_piece_of_a_secret_reaches_any_output() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let emulator = runtime
        .block_on(Emulator::start(EmulatorOptions::for_tests()))
        .unwrap();
    let client = mgmt(&emulator).with_retry(api_mgmt::client::RetryPolicy::disabled());
    let service = running_service(&emulator, &client);
    // What the outputs say with a secret that cannot collide: a piece of a generated secret found
    // here is the outputs' own text, not a leak.
    let baseline: String = (0..3u8)
        .flat_map(|kind| {
            let answer = echoing("~~~~~~~~~~", &[0], kind);
            outputs(&runtime, &emulator, &service, "~~~~~~~~~~", answer)
        })
        .map(|(_, text)| text)
        .collect();

    let config = ProptestConfig {
        cases: 96,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    let checked = std::sync::atomic::AtomicUsize::new(0);
    proptest!(config, |(
        secret in SECRET_ALPHABET,
        picks in proptest::collection::vec(any::<u8>(), 24),
        kind in 0u8..3,
    )| {
        prop_assume!(leaked_piece(&secret, 6, &baseline).is_none());
        checked.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let answer = echoing(&secret, &picks, kind);
        for (what, text) in outputs(&runtime, &emulator, &service, &secret, answer) {
            let leaked = leaked_piece(&secret, 6, &text);
            prop_assert!(leaked.is_none(), "{leaked:?} of {secret:?} in the {what}: {text}");
        }
    });
    // The baseline filter leaves almost every case to check.
    let checked = checked.into_inner();
    assert!(checked >= 90, "only {checked} cases were checked");
}
