//! No piece of a secret in anything `cloudctl` prints: a pipe file's password, echoed by the server
//! with random JSON escapes, as HTML character references or as it is, in human and JSON mode, and
//! in `--dry-run`.

use api_emulator::{Fault, FaultRule, OperationId};
use proptest::prelude::*;

use crate::support::{Cloud, KAFKA_PIPE};

pub(crate) use api_test_support::encodings;

use encodings::{SECRET_ALPHABET, echoing, leaked_piece};

/// What cloudctl prints when the server answers the create with `answer` and the pipe file's
/// password is `secret`, in every mode.
fn printed(cloud: &Cloud, file: &str, secret: &str, answer: (u16, &'static str, String)) -> String {
    let mut all = String::new();
    let modes: [&[&str]; 3] = [
        &["-o", "json"],
        &["-o", "human"],
        &["--dry-run", "-o", "human"],
    ];
    for mode in modes {
        let args = [&["pipe", "create", "-f", file][..], mode].concat();
        if !mode.contains(&"--dry-run") {
            let (status, content_type, body) = answer.clone();
            cloud.inject(
                FaultRule::operation(OperationId::CreatePipe)
                    .then(Fault::body(status, body).content_type(content_type)),
            );
        }
        let run = cloud.run(cloud.command().env("KAFKA_PASSWORD", secret).args(&args));
        if !mode.contains(&"--dry-run") {
            assert_ne!(run.code, 0, "the server's error answered: {}", run.stdout);
        }
        all.push_str(&run.stdout);
        all.push_str(&run.stderr);
    }
    all
}

#[test]
fn no_piece_of_a_secret_is_printed_in_any_encoding() {
    let cloud = Cloud::start();
    let file = cloud.file("pipe.yaml", KAFKA_PIPE);
    let baseline: String = (0..3u8)
        .map(|kind| {
            printed(
                &cloud,
                &file,
                "~~~~~~~~~~",
                echoing("~~~~~~~~~~", &[0], kind),
            )
        })
        .collect();
    let config = ProptestConfig {
        cases: 12,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    proptest!(config, |(
        secret in SECRET_ALPHABET,
        picks in proptest::collection::vec(any::<u8>(), 24),
        kind in 0u8..3,
    )| {
        prop_assume!(leaked_piece(&secret, 6, &baseline).is_none());
        let shown = printed(&cloud, &file, &secret, echoing(&secret, &picks, kind));
        let leaked = leaked_piece(&secret, 6, &shown);
        prop_assert!(leaked.is_none(), "{leaked:?} of {secret:?} printed: {shown}");
    });
}
