//! `--help` of every command, as reviewed snapshots (CI fails on a stale one).

use crate::support::Cloud;

#[test]
fn help_of_every_command() {
    let cloud = Cloud::start();
    let commands: &[&[&str]] = &[
        &[],
        &["service"],
        &["service", "start"],
        &["service", "stop"],
        &["pipe"],
        &["pipe", "create"],
        &["pipe", "get"],
        &["pipe", "settings"],
        &["pipe", "delete"],
        &["pipe", "wait"],
        &["pipe", "export"],
        &["plan"],
        &["apply"],
        &["import"],
        &["state"],
        &["state", "init"],
        &["state", "list"],
        &["state", "resolve"],
        &["state", "forget"],
        &["state", "unlock"],
        &["state", "push"],
        &["endpoint"],
        &["endpoint", "list"],
        &["endpoint", "register"],
        &["alert"],
        &["alert", "get"],
        &["dashboard"],
        &["dashboard", "list"],
        &["completion"],
        &["config"],
        &["config", "show"],
    ];
    for command in commands {
        let mut args = command.to_vec();
        args.push("--help");
        let run = cloud.cloudctl(&args).expect(0);
        let name = if command.is_empty() {
            "cloudctl".to_string()
        } else {
            format!("cloudctl_{}", command.join("_"))
        };
        insta::assert_snapshot!(name, run.stdout);
    }
}
