//! `--help` of every command, as reviewed snapshots (CI fails on a stale one), and the guide's
//! cloudctl reference naming every command `--help` lists.

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
    let listed: Vec<String> = commands.iter().map(|c| c.join(" ")).collect();
    for command in every_command(&cloud) {
        assert!(
            listed.contains(&command),
            "`cloudctl {command} --help` has no snapshot: add it to the list above"
        );
    }
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

/// The commands `--help` lists under `path` (`help` aside).
fn subcommands(cloud: &Cloud, path: &[&str]) -> Vec<String> {
    let mut args = path.to_vec();
    args.push("--help");
    let help = cloud.cloudctl(&args).expect(0).stdout;
    help.split("Commands:\n")
        .nth(1)
        .map(|rest| {
            rest.lines()
                .take_while(|line| line.starts_with("  "))
                .filter_map(|line| line.split_whitespace().next())
                .filter(|name| *name != "help")
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Every command, as its words (`state unlock`), groups included, found by walking `--help`.
fn every_command(cloud: &Cloud) -> Vec<String> {
    let mut found = Vec::new();
    let mut queue: Vec<Vec<String>> = vec![Vec::new()];
    while let Some(path) = queue.pop() {
        let words: Vec<&str> = path.iter().map(String::as_str).collect();
        for name in subcommands(cloud, &words) {
            let mut next = path.clone();
            next.push(name);
            found.push(next.join(" "));
            queue.push(next);
        }
    }
    found.sort();
    found
}

/// The commands the guide's reference table names: `cloudctl WORDS` in its first column, with
/// `a\|b` alternatives spelled out (`cloudctl state init\|list -f DIR` names `state init` and
/// `state list`).
fn referenced() -> Vec<String> {
    let reference = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../guide/src/cloudctl.md"),
    )
    .expect("the cloudctl reference");
    let mut named = Vec::new();
    for row in reference.lines().filter(|l| l.starts_with("| `cloudctl ")) {
        let first = row.split(" | ").next().unwrap_or_default();
        for usage in first.split("`cloudctl ").skip(1) {
            let usage = usage.split('`').next().unwrap_or_default();
            let mut words: Vec<Vec<String>> = Vec::new();
            for word in usage.split_whitespace() {
                if word.starts_with(['-', '[', '<']) || word.chars().any(|c| c.is_ascii_uppercase())
                {
                    break;
                }
                words.push(word.split("\\|").map(str::to_string).collect());
            }
            // Every combination of the alternatives.
            let mut paths = vec![String::new()];
            for alternatives in &words {
                paths = paths
                    .iter()
                    .flat_map(|p| {
                        alternatives.iter().map(move |a| {
                            if p.is_empty() {
                                a.clone()
                            } else {
                                format!("{p} {a}")
                            }
                        })
                    })
                    .collect();
            }
            named.extend(paths.into_iter().filter(|p| !p.is_empty()));
        }
    }
    named
}

#[test]
fn the_reference_names_every_command() {
    let cloud = Cloud::start();
    let named = referenced();
    for command in every_command(&cloud) {
        // A group (`state`) is named by naming its commands.
        let covered = named
            .iter()
            .any(|n| *n == command || n.starts_with(&format!("{command} ")));
        assert!(
            covered,
            "guide/src/cloudctl.md does not name `cloudctl {command}` (named: {named:?})"
        );
    }
}
