//! The throwaway downstream crates of `cargo xtask compile-time`: each is a binary that calls one
//! operation, as a user's first program would, on the workspace's crates (path dependencies) or on the
//! peer crate `clickhouse-cloud-api` (the newest release in the registry).

use std::io;
use std::path::Path;

/// A downstream crate to build cold.
#[derive(Debug, Clone, Copy)]
pub struct Downstream {
    /// Its package name, also its directory.
    pub name: &'static str,
    /// What it is, for the table.
    pub label: &'static str,
    /// The cargo command that builds it.
    pub command: &'static [&'static str],
    /// The issue's target: at most this share of the peer's time.
    pub target: Option<f64>,
    /// Whether it is the peer crate (every ratio is against it).
    pub peer: bool,
    /// Whether to copy the workspace's `Cargo.lock` in, so it builds the versions the workspace tests.
    pub workspace_lock: bool,
    dependencies: &'static str,
    dev_dependencies: &'static str,
    main: &'static str,
    test: Option<&'static str>,
}

const BUILD: &[&str] = &["build"];
const BUILD_TESTS: &[&str] = &["test", "--no-run"];
const TOKIO: &str = r#"tokio = { version = "1", features = ["macros", "rt-multi-thread"] }"#;

const OBS_MAIN: &str = r#"//! Reads one alert.
#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let client = api_obs::Client::from_env()?;
    let alert = client.alert("66a1f0c2d4e5f60718293a4b".parse()?).get().await?;
    println!("{} is {}", alert.name, alert.state_name());
    Ok(())
}
"#;

const MGMT_MAIN: &str = r#"//! Reads one pipe.
#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let client = api_mgmt::Client::from_env()?;
    let service = client.service(
        "3f0c5e2a-8d41-4b7e-9a6c-1e2f3a4b5c6d".parse()?,
        "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d".parse()?,
    );
    let pipe = service.pipe("0f9e8d7c-6b5a-4f3e-9d2c-1b0a9f8e7d6c".parse()?).get().await?;
    println!("{} is {}", pipe.name, pipe.state);
    Ok(())
}
"#;

const BOTH_MAIN: &str = r#"//! Reads one pipe and one alert.
#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let management = api_mgmt::Client::from_env()?;
    let service = management.service(
        "3f0c5e2a-8d41-4b7e-9a6c-1e2f3a4b5c6d".parse()?,
        "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d".parse()?,
    );
    let pipe = service.pipe("0f9e8d7c-6b5a-4f3e-9d2c-1b0a9f8e7d6c".parse()?).get().await?;
    let observability = api_obs::Client::from_env()?;
    let alert = observability.alert("66a1f0c2d4e5f60718293a4b".parse()?).get().await?;
    println!("{} is {}; {} is {}", pipe.name, pipe.state, alert.name, alert.state_name());
    Ok(())
}
"#;

const EMULATOR_TEST: &str = r#"//! The same call against the emulator, in memory.
#[tokio::test]
async fn lists_the_reverse_private_endpoints_of_the_emulator() {
    let options = api_emulator::EmulatorOptions::for_tests();
    let emulator = api_emulator::Emulator::start(options).await.unwrap();
    let (key_id, key_secret) = emulator.admin_key();
    let client = api_mgmt::Client::builder(emulator.base_url())
        .credentials(api_mgmt::Credentials::basic(key_id, key_secret))
        .build()
        .unwrap();
    let running = emulator.service_id("running").unwrap();
    let service = client.service(emulator.organization_id(), running);
    assert!(!service.reverse_private_endpoints().await.unwrap().is_empty());
}
"#;

const PEER_MAIN: &str = r#"//! Reads one pipe.
#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let key_id = std::env::var("CLOUD_API_KEY_ID")?;
    let key_secret = std::env::var("CLOUD_API_KEY_SECRET")?;
    let client = clickhouse_cloud_api::Client::new(key_id, key_secret);
    let pipe = client
        .click_pipe_get(
            "3f0c5e2a-8d41-4b7e-9a6c-1e2f3a4b5c6d",
            "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d",
            "0f9e8d7c-6b5a-4f3e-9d2c-1b0a9f8e7d6c",
        )
        .await?;
    println!("{:?}", pipe.result.map(|p| p.name));
    Ok(())
}
"#;

/// Every downstream crate, the peer first (the others are compared with it).
pub const ALL: [Downstream; 5] = [
    Downstream {
        name: "peer-clickhouse-cloud-api",
        label: "peer: `clickhouse-cloud-api`",
        command: BUILD,
        target: None,
        peer: true,
        workspace_lock: false,
        dependencies: r#"clickhouse-cloud-api = "*""#,
        dev_dependencies: "",
        main: PEER_MAIN,
        test: None,
    },
    Downstream {
        name: "only-api-obs",
        label: "only `api-obs`",
        command: BUILD,
        target: Some(0.47),
        peer: false,
        workspace_lock: true,
        dependencies: r#"api-obs = { path = "{root}/crates/api-obs" }"#,
        dev_dependencies: "",
        main: OBS_MAIN,
        test: None,
    },
    Downstream {
        name: "only-api-mgmt",
        label: "only `api-mgmt`",
        command: BUILD,
        target: Some(0.55),
        peer: false,
        workspace_lock: true,
        dependencies: r#"api-mgmt = { path = "{root}/crates/api-mgmt" }"#,
        dev_dependencies: "",
        main: MGMT_MAIN,
        test: None,
    },
    Downstream {
        name: "api-mgmt-and-api-obs",
        label: "`api-mgmt` and `api-obs`",
        command: BUILD,
        target: None,
        peer: false,
        workspace_lock: true,
        dependencies: "api-mgmt = { path = \"{root}/crates/api-mgmt\" }\n\
                       api-obs = { path = \"{root}/crates/api-obs\" }",
        dev_dependencies: "",
        main: BOTH_MAIN,
        test: None,
    },
    Downstream {
        name: "api-mgmt-with-emulator-tests",
        label: "`api-mgmt`, `api-emulator` as dev-dependency (`cargo test --no-run`)",
        command: BUILD_TESTS,
        target: Some(0.80),
        peer: false,
        workspace_lock: true,
        dependencies: r#"api-mgmt = { path = "{root}/crates/api-mgmt" }"#,
        dev_dependencies: r#"api-emulator = { path = "{root}/crates/api-emulator", default-features = false }"#,
        main: MGMT_MAIN,
        test: Some(EMULATOR_TEST),
    },
];

impl Downstream {
    /// Its `Cargo.toml`, with path dependencies into the workspace at `root`.
    pub fn manifest(&self, root: &Path) -> String {
        // A TOML basic string: the path with `\` and `"` escaped.
        let root = root.display().to_string();
        let root = root.replace('\\', "\\\\").replace('"', "\\\"");
        let dependencies = self.dependencies.replace("{root}", &root);
        let dev_dependencies = self.dev_dependencies.replace("{root}", &root);
        let mut manifest = format!(
            "[package]\nname = \"{}\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\n\n\
             [dependencies]\n{dependencies}\n{TOKIO}\n",
            self.name
        );
        if !dev_dependencies.is_empty() {
            manifest.push_str(&format!("\n[dev-dependencies]\n{dev_dependencies}\n"));
        }
        // Its own workspace, whatever directory holds it.
        manifest.push_str("\n[workspace]\n");
        manifest
    }

    /// Writes the crate into `dir` (its manifest, `src/main.rs`, its test, the workspace's lock file).
    pub fn write(&self, dir: &Path, root: &Path) -> io::Result<()> {
        std::fs::create_dir_all(dir.join("src"))?;
        std::fs::write(dir.join("Cargo.toml"), self.manifest(root))?;
        std::fs::write(dir.join("src/main.rs"), self.main)?;
        if let Some(test) = self.test {
            std::fs::create_dir_all(dir.join("tests"))?;
            std::fs::write(dir.join("tests/emulator.rs"), test)?;
        }
        if self.workspace_lock {
            std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock"))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_peer_comes_first_and_alone() {
        assert!(ALL[0].peer);
        assert_eq!(ALL.iter().filter(|d| d.peer).count(), 1);
    }

    #[test]
    fn manifests_point_into_the_workspace_and_stand_alone() {
        let manifest = ALL[4].manifest(Path::new("/src/sdk"));
        assert!(manifest.contains(r#"api-mgmt = { path = "/src/sdk/crates/api-mgmt" }"#));
        assert!(manifest.contains("[dev-dependencies]\napi-emulator = { path = \"/src/sdk/crates/api-emulator\", default-features = false }"));
        assert!(manifest.ends_with("[workspace]\n"));
        let peer = ALL[0].manifest(Path::new("/src/sdk"));
        assert!(peer.contains("clickhouse-cloud-api = \"*\""));
        assert!(!peer.contains("/src/sdk"));
    }

    #[test]
    fn a_path_with_quotes_stays_one_toml_string() {
        let manifest = ALL[1].manifest(Path::new(r#"/tmp/a "b"\c"#));
        assert!(manifest.contains(r#"path = "/tmp/a \"b\"\\c/crates/api-obs""#));
    }
}
