//! The README's commands are the guide's: every shell command the README shows is one a guide
//! session runs (and so one the tests run, with its exit code checked).

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
