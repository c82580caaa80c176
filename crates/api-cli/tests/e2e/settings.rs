//! Settings: flags, environment, profile; `config show` in both modes, secrets redacted.

use crate::support::Cloud;

#[test]
fn config_show_tells_where_each_setting_came_from() {
    let cloud = Cloud::start();
    let json = cloud
        .cloudctl(&[
            "config",
            "show",
            "-o",
            "json",
            "--service",
            "b2c3d4e5-f6a7-4b8c-9d0e-1f2a3b4c5d6e",
        ])
        .expect(0)
        .json();
    assert_eq!(json["profile"], "default");
    assert_eq!(json["configFile"]["found"], false);
    assert_eq!(json["paced"], true);
    let settings = &json["settings"];
    assert_eq!(settings["api_url"]["source"], "env");
    assert_eq!(settings["api_url"]["from"], "CLOUD_API_URL");
    assert_eq!(settings["service_id"]["source"], "flag");
    assert_eq!(
        settings["service_id"]["value"],
        "b2c3d4e5-f6a7-4b8c-9d0e-1f2a3b4c5d6e"
    );
    assert_eq!(settings["api_key_secret"]["value"], "[REDACTED]");
    assert_eq!(settings["observability_token"]["value"], "[REDACTED]");

    let human = cloud
        .cloudctl(&["config", "show", "-o", "human"])
        .expect(0)
        .stdout;
    assert!(human.starts_with("SETTING              VALUE"), "{human}");
    assert!(human.contains("api_key_secret       [REDACTED]"), "{human}");
    assert!(human.contains("env CLOUD_API_KEY_SECRET"), "{human}");
    assert!(human.contains("Profile      default"), "{human}");
}

#[test]
fn a_profile_supplies_what_the_flags_and_environment_do_not() {
    let cloud = Cloud::start();
    let (url, org, service) = (
        cloud.cloudctl(&["config", "show", "-o", "json"]).json()["settings"]["api_url"]["value"]
            .as_str()
            .unwrap()
            .to_string(),
        cloud.organization(),
        cloud.service("running"),
    );
    // The default place: <config dir>/cloudctl/config.toml.
    let config = cloud.file(
        ".config/cloudctl/config.toml",
        &format!(
            "[default]\napi_url = \"http://127.0.0.1:9\"\n\n[emulator]\napi_url = \"{url}\"\napi_key_id = \"emulator-admin-key\"\napi_key_secret = \"emulator-admin-secret\"\norganization_id = \"{org}\"\nservice_id = \"{service}\"\n"
        ),
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let only_profile = |args: &[&str]| {
        cloud.run(
            cloud
                .command()
                .env_remove("CLOUD_API_URL")
                .env_remove("CLOUD_API_KEY_ID")
                .env_remove("CLOUD_API_KEY_SECRET")
                .env_remove("CLOUD_ORGANIZATION_ID")
                .env_remove("CLOUD_SERVICE_ID")
                .args(args),
        )
    };
    let shown = only_profile(&["config", "show", "--profile", "emulator", "-o", "json"])
        .expect(0)
        .json();
    assert_eq!(shown["configFile"]["found"], true);
    assert_eq!(shown["settings"]["api_key_secret"]["source"], "profile");
    assert_eq!(shown["settings"]["api_key_secret"]["value"], "[REDACTED]");

    let list = only_profile(&["endpoint", "list", "--profile", "emulator", "-o", "json"])
        .expect(0)
        .json();
    assert_eq!(list.as_array().map(Vec::len), Some(2));

    // The environment wins over the profile: a wrong secret there is refused (exit 4).
    let overridden = cloud.run(
        cloud
            .command()
            .env_remove("CLOUD_API_URL")
            .env("CLOUD_API_KEY_SECRET", "not-the-secret")
            .args(["endpoint", "list", "--profile", "emulator", "-o", "json"]),
    );
    overridden.expect(4);

    // A flag wins over the profile: this URL has nothing listening.
    let flagged = only_profile(&[
        "endpoint",
        "list",
        "--profile",
        "emulator",
        "--api-url",
        "http://127.0.0.1:9",
        "-o",
        "json",
    ])
    .expect(1)
    .error();
    assert_eq!(flagged["code"], "CONNECTION_FAILED");
    // The default profile has no key: every missing setting is named, and nothing is sent.
    let missing = only_profile(&["endpoint", "list", "-o", "json"])
        .expect(2)
        .error();
    assert_eq!(missing["code"], "MISSING_SETTINGS");
    assert!(
        missing["message"]
            .as_str()
            .unwrap()
            .contains("api_key_id in profile \"default\""),
        "{missing}"
    );
    let no_such = only_profile(&["endpoint", "list", "--profile", "prod", "-o", "json"])
        .expect(2)
        .error();
    assert!(
        no_such["message"]
            .as_str()
            .unwrap()
            .contains("no profile \"prod\""),
        "{no_such}"
    );

    let explicit = cloud.file(
        "elsewhere.toml",
        "[default]\nobservability_url = \"http://127.0.0.1:9\"\n",
    );
    let shown = cloud
        .cloudctl(&["config", "show", "--config", &explicit, "-o", "json"])
        .expect(0)
        .json();
    assert_eq!(shown["configFile"]["path"], explicit.as_str());
    assert_eq!(
        shown["settings"]["observability_url"]["source"], "env",
        "the environment wins"
    );
}

#[test]
fn completion_scripts_for_every_shell() {
    let cloud = Cloud::start();
    for (shell, marker) in [
        ("bash", "_cloudctl()"),
        ("zsh", "#compdef cloudctl"),
        ("fish", "complete -c cloudctl"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        for output in ["human", "json"] {
            let script = cloud
                .cloudctl(&["completion", shell, "-o", output])
                .expect(0)
                .stdout;
            assert!(script.contains(marker), "{shell}: {marker} in\n{script}");
            assert!(script.contains("dry-run"), "{shell} completes flags");
        }
    }
    assert!(cloud.requests().is_empty());
}

#[test]
fn a_rate_limit_store_that_cannot_be_used_is_said_once_or_refused_at_start() {
    let cloud = Cloud::start();
    // Nothing listens on the port: the calls pace through the host store, and cloudctl says so
    // once on stderr, whatever the output mode (stdout stays the data).
    let closed = api_test_support::ports::free_port();
    // Its password holds what ends a URI in running text (an ElastiCache token may hold `<` and
    // `>`): no output shows any of it.
    let away = format!("redis://app:pw <redis> '9@127.0.0.1:{closed}");
    for mode in ["json", "human"] {
        let run = cloud
            .run(
                cloud
                    .command()
                    .args(["endpoint", "list", "-o", mode])
                    .env("CLOUD_RATE_LIMIT_STORE", &away),
            )
            .expect(0);
        let said = run
            .stderr
            .matches("warning: the rate limit store redis://[REDACTED]@")
            .count();
        assert_eq!(said, 1, "{mode}: {}", run.stderr);
        assert!(
            run.stderr
                .contains("pacing through the host store (this host's processes only)")
                && !run.stderr.contains("redis>")
                && !run.stderr.contains("app:"),
            "{}",
            run.stderr
        );
        let shown = cloud
            .run(
                cloud
                    .command()
                    .args(["config", "show", "-o", mode])
                    .env("CLOUD_RATE_LIMIT_STORE", &away),
            )
            .expect(0);
        let all = format!("{}{}", shown.stdout, shown.stderr);
        assert!(
            all.contains("redis://[REDACTED]@127.0.0.1:")
                && !all.contains("redis>")
                && !all.contains("pw ")
                && !all.contains("app:"),
            "{mode}: {all}"
        );
    }
    // A URL that cannot be used is refused before any call.
    let before = cloud.requests().len();
    let run = cloud
        .run(cloud.command().args(["endpoint", "list"]).env(
            "CLOUD_RATE_LIMIT_STORE",
            "redis://app:pw-redis-9@host:notaport",
        ))
        .expect(2);
    assert!(
        run.stderr.contains("is not a Redis URL that can be used")
            && !run.stderr.contains("pw-redis-9"),
        "{}",
        run.stderr
    );
    assert_eq!(cloud.requests().len(), before, "no call was made");
}
