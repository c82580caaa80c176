//! The front door agrees with what it describes: every shell command the README shows is one a
//! guide session runs (and so one the tests run, with its exit code checked); the crate maps of the
//! README and the guide list the workspace's published packages, and say how many there are; the
//! guide's introduction lists the chapters of its table of contents.

/// Where the guide's sessions live: beside the tests of the crate whose binary runs them.
const SESSIONS: [&str; 2] = [
    "crates/api-cli/tests/sessions",
    "crates/api-emulator/tests/sessions",
];

/// A command without its trailing comment, and the exit code the comment names (0 by default).
fn command_of(line: &str) -> (&str, &str) {
    let (command, comment) = line.split_once(" # ").unwrap_or((line, ""));
    let exit = comment
        .strip_prefix("exit ")
        .map_or("0", |rest| rest.split(':').next().unwrap_or(rest));
    (command.trim(), exit)
}

/// The README's shell blocks (but its two commands, run by CI as they are) hold only commands the
/// guide's sessions run: a command of the front door cannot rot apart from the tests.
#[test]
fn every_command_of_the_readme_is_run_by_a_guide_session() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let sessions: Vec<String> = SESSIONS
        .iter()
        .flat_map(|dir| std::fs::read_dir(root.join(dir)).unwrap())
        .map(|entry| std::fs::read_to_string(entry.unwrap().path()).unwrap())
        .collect();
    assert!(sessions.len() >= 5, "{} sessions", sessions.len());
    let run: Vec<(&str, &str)> = sessions
        .iter()
        .flat_map(|s| s.lines().map(command_of))
        .collect();
    let mut checked = 0;
    for block in readme.split("```sh\n").skip(1) {
        let block = block.split("```").next().unwrap();
        if block.contains("cargo run --example tour") {
            continue;
        }
        for line in block.lines().map(command_of).filter(|l| !l.0.is_empty()) {
            assert!(
                run.contains(&line),
                "README runs `{}` (exit {}), which no guide session does with that exit code",
                line.0,
                line.1
            );
            checked += 1;
        }
    }
    assert!(checked >= 10, "{checked} commands");
}

/// The workspace's root.
fn root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The published packages: the workspace's members under `crates/`, by their manifests' names.
fn packages() -> Vec<String> {
    let manifest = read("Cargo.toml");
    let mut names: Vec<String> = manifest
        .lines()
        .filter_map(|line| line.trim().strip_prefix("\"crates/"))
        .map(|member| {
            let dir = member.trim_end_matches(['"', ',']);
            let own = read(&format!("crates/{dir}/Cargo.toml"));
            own.lines()
                .find_map(|l| l.strip_prefix("name = \""))
                .map(|n| n.trim_end_matches('"').to_string())
                .unwrap_or_else(|| panic!("crates/{dir}: no name"))
        })
        .collect();
    names.sort();
    names
}

/// The first column of the table that follows `heading` in `text`: the crates it lists.
fn crate_map(text: &str, heading: &str) -> Vec<String> {
    let after = text
        .split_once(heading)
        .unwrap_or_else(|| panic!("no {heading:?}"))
        .1;
    let mut names: Vec<String> = after
        .lines()
        .skip_while(|line| !line.starts_with("| crate |"))
        .skip(2)
        .take_while(|line| line.starts_with('|'))
        .map(|row| {
            row.split('|')
                .nth(1)
                .unwrap_or_default()
                .trim()
                .trim_matches('`')
                .to_string()
        })
        .collect();
    names.sort();
    names
}

const NUMBERS: [&str; 10] = [
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
];

#[test]
fn the_crate_maps_list_every_published_package_and_count_them_right() {
    let packages = packages();
    assert!(packages.len() >= 7, "{packages:?}");
    assert_eq!(
        crate_map(&read("README.md"), "## Crate map"),
        packages,
        "README.md"
    );
    assert_eq!(
        crate_map(&read("guide/src/getting-started.md"), "## "),
        packages,
        "guide/src/getting-started.md"
    );
    // Wherever a text counts the packages or the crates, in words, it counts them all.
    let count = NUMBERS[packages.len()];
    for path in [
        "README.md",
        "guide/src/versions.md",
        "CONTRIBUTING.md",
        "CHANGELOG.md",
    ] {
        let text = read(path);
        // Past releases are as they were.
        let current = match path {
            "CHANGELOG.md" => text.split("\n## [").next().unwrap_or(&text),
            _ => &text,
        };
        let unreleased = current.split_whitespace().collect::<Vec<_>>().join(" ");
        for (i, _) in unreleased
            .match_indices(" packages")
            .chain(unreleased.match_indices(" crates"))
        {
            let before = unreleased[..i]
                .rsplit(' ')
                .next()
                .unwrap_or_default()
                .to_lowercase();
            if NUMBERS.contains(&before.as_str()) {
                assert_eq!(
                    before,
                    count,
                    "{path} says {before} {}: the workspace has {count}",
                    &unreleased[i + 1..].split(' ').next().unwrap_or_default()
                );
            }
        }
    }
}

#[test]
fn the_introduction_lists_every_chapter_of_the_summary() {
    // The chapters linked after `from`, as links under `prefix` (the guide's own pages, by name).
    let chapters = |text: &str, from: &str, prefix: &str| -> Vec<String> {
        let mut found: Vec<String> = text
            .split(from)
            .nth(1)
            .unwrap_or_else(|| panic!("no {from:?}"))
            .split("](")
            .skip(1)
            .filter_map(|rest| rest.split([')', '#']).next())
            .filter_map(|link| link.strip_prefix(prefix))
            .filter(|page| {
                page.ends_with(".md") && !page.contains('/') && *page != "introduction.md"
            })
            .map(str::to_string)
            .collect();
        found.sort();
        found.dedup();
        found
    };
    let summary = chapters(
        &read("guide/src/SUMMARY.md"),
        "[Introduction](introduction.md)",
        "",
    );
    let introduction = chapters(
        &read("guide/src/introduction.md"),
        "Each chapter is a task:",
        "",
    );
    // The benchmarks page is a part of the performance chapter.
    let summary: Vec<String> = summary
        .into_iter()
        .filter(|c| c != "benchmarks.md")
        .collect();
    assert_eq!(
        introduction, summary,
        "the introduction's chapters against SUMMARY.md"
    );
    let readme = chapters(&read("README.md"), "## The guide", "guide/src/");
    assert_eq!(readme, summary, "the README's chapters against SUMMARY.md");
}

/// The workspace's integration test binaries, as their files: `tests/NAME.rs` and
/// `tests/NAME/main.rs` of each member.
fn test_binaries() -> Vec<String> {
    let manifest = read("Cargo.toml");
    let members: Vec<String> = manifest
        .split("members = [")
        .nth(1)
        .and_then(|rest| rest.split(']').next())
        .unwrap_or_default()
        .split(',')
        .map(|m| m.trim().trim_matches('"').to_string())
        .filter(|m| !m.is_empty())
        .collect();
    let mut binaries = Vec::new();
    for member in members {
        let Ok(entries) = std::fs::read_dir(root().join(&member).join("tests")) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = entry.path();
            if path.is_file() && name.ends_with(".rs") {
                binaries.push(format!("{member}/tests/{name}"));
            } else if path.join("main.rs").is_file() {
                binaries.push(format!("{member}/tests/{name}/main.rs"));
            }
        }
    }
    binaries.sort();
    binaries
}

/// CONTRIBUTING.md says how long each test binary takes: a new one appears there, with its time,
/// or this fails.
#[test]
fn contributing_lists_every_test_binary() {
    let contributing = read("CONTRIBUTING.md");
    let section = contributing
        .split("## How long the tests take")
        .nth(1)
        .expect("CONTRIBUTING.md has a section \"How long the tests take\"");
    let mut listed: Vec<String> = section
        .lines()
        .take_while(|line| !line.starts_with("## "))
        .filter(|line| line.starts_with("| `"))
        .filter_map(|line| line.split('`').nth(1))
        .filter(|path| path.ends_with(".rs"))
        .map(str::to_string)
        .collect();
    listed.sort();
    assert_eq!(
        listed,
        test_binaries(),
        "the test binaries CONTRIBUTING.md times, against the workspace's"
    );
}

/// The packages of `cargo tree` with `args`, each with its features (`NAME vVERSION [FEATURES]`).
fn tree(args: &[&str]) -> std::collections::BTreeSet<String> {
    let mut all = vec!["-e", "normal,build,dev", "-f", "{p} [{f}]"];
    all.extend_from_slice(args);
    crate::feature_isolation::cargo_tree(&all)
        .lines()
        .map(|line| line.trim_end_matches(" (*)").to_string())
        .collect()
}

/// `cargo run --example tour`, the README's first command, builds every dependency with the features
/// `cargo test --workspace`, its second, builds it with: the second reuses the first's build (and
/// CI's tour step the tests' build) instead of building 222 crates again. Each package and feature
/// set of the tour's tree is one of the workspace's.
#[test]
fn the_tour_builds_its_dependencies_as_the_tests_do() {
    let workspace = tree(&["--workspace"]);
    let tour = tree(&["-p", "api-tests"]);
    let apart: Vec<&String> = tour.difference(&workspace).collect();
    assert!(
        apart.is_empty(),
        "the tour builds these with features the tests' build does not give them; turn the \
         workspace's on in tests/Cargo.toml's dev-dependencies:\n{}\n(the workspace builds them so:\n{})",
        apart
            .iter()
            .map(|p| format!("  {p}"))
            .collect::<Vec<_>>()
            .join("\n"),
        apart
            .iter()
            .flat_map(|p| {
                let name = p.split(" [").next().unwrap_or_default();
                workspace
                    .iter()
                    .filter(move |w| w.split(" [").next() == Some(name))
            })
            .map(|w| format!("  {w}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(
        tour.len() > 100,
        "{} packages in the tour's tree",
        tour.len()
    );
}
