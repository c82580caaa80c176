//! The guide's sessions against the emulator, with the `cloudctl` under test first on the PATH.

use std::path::Path;

use crate::support::Cloud;
pub use api_test_support::session::Ran;
use api_test_support::session::Session;

/// Runs the guide's session `name` (`tests/sessions/`, which the guide includes) against `cloud`,
/// with `env` besides a home of its own.
pub fn run(cloud: &Cloud, name: &str, env: &[(&str, &str)]) -> Ran {
    let home = cloud.home();
    let mut all: Vec<(String, String)> = [
        ("HOME", home.to_path_buf()),
        ("XDG_CONFIG_HOME", home.join(".config")),
        ("XDG_RUNTIME_DIR", home.join("run")),
        ("XDG_STATE_HOME", home.join(".local/state")),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.display().to_string()))
    .collect();
    all.extend(env.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/sessions")
        .join(name);
    Session {
        script: &script,
        replace: vec![("http://127.0.0.1:8080".into(), cloud.base_url())],
        path: vec![
            Path::new(env!("CARGO_BIN_EXE_cloudctl"))
                .parent()
                .expect("cloudctl's directory")
                .to_path_buf(),
        ],
        env: all,
        dir: home.join("session"),
    }
    .run()
}
