//! The guide's shell sessions (`guide/sessions/*.sh`, included into its chapters) run as written.
//!
//! A session is a shell script a person would type: one command per line (a `\` or an open quote
//! continues it, a here-document is passed through), comments for what the reader sees. Each command
//! must exit 0, or the code its trailing comment names (`cloudctl plan -f pipes   # exit 8: changes
//! to make`); anything else fails the test with the line. Addresses a session writes as its reader
//! would (`http://127.0.0.1:8080`) are replaced by the test's own.

use std::path::{Path, PathBuf};
use std::process::Command;

/// What a session's commands did.
pub struct Ran {
    /// Commands checked.
    pub commands: usize,
    /// What the session wrote.
    pub stdout: String,
    /// What it wrote to stderr.
    pub stderr: String,
}

/// The session with a check after each command: its exit code against the one its comment names.
pub fn checked(script: &str) -> (String, usize) {
    let mut out = String::from(
        "set -o pipefail\n\
         trap 'kill $(jobs -p) 2>/dev/null' EXIT\n\
         __check() { if [ \"$1\" -ne \"$2\" ]; then echo \"session line $3: exit $1, expected $2\" >&2; exit 100; fi; }\n",
    );
    let mut commands = 0;
    let mut heredoc: Option<String> = None;
    // The check of a command whose here-document has not ended yet.
    let mut after_heredoc: Option<String> = None;
    let mut command = String::new();
    let mut first_line = 0;
    for (number, line) in script.lines().enumerate() {
        let number = number + 1;
        out.push_str(line);
        out.push('\n');
        if let Some(end) = &heredoc {
            if line.trim() == end {
                heredoc = None;
                out.push_str(&after_heredoc.take().unwrap_or_default());
            }
            continue;
        }
        let trimmed = line.trim();
        if command.is_empty() && (trimmed.is_empty() || trimmed.starts_with('#')) {
            continue;
        }
        if command.is_empty() {
            first_line = number;
        }
        command.push_str(line);
        command.push('\n');
        if let Some(at) = line.find("<<") {
            let end = line[at + 2..]
                .trim_start_matches('-')
                .split_whitespace()
                .next()
                .unwrap_or("EOF")
                .trim_matches(|c| c == '\'' || c == '"');
            heredoc = Some(end.to_string());
        }
        if line.trim_end().ends_with('\\') || in_quotes(&command) {
            continue;
        }
        let check = format!("__check $? {} {first_line}\n", expected_exit(&command));
        if heredoc.is_some() {
            after_heredoc = Some(check);
        } else {
            out.push_str(&check);
        }
        commands += 1;
        command.clear();
    }
    (out, commands)
}

/// Whether `command` ends inside a quoted string (one that goes on on the next line).
fn in_quotes(command: &str) -> bool {
    let (mut single, mut double, mut escaped) = (false, false, false);
    for (i, c) in command.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if !single => escaped = true,
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            // A comment runs to the end of its line.
            '#' if !single
                && !double
                && (i == 0 || command[..i].ends_with(char::is_whitespace)) =>
            {
                return in_quotes_after_comment(&command[i..]);
            }
            _ => {}
        }
    }
    single || double
}

/// Goes on after a comment: from its next line, if there is one.
fn in_quotes_after_comment(rest: &str) -> bool {
    rest.split_once('\n')
        .is_some_and(|(_, next)| in_quotes(next))
}

/// The exit code a command's trailing comment names (`# exit N`), else 0.
fn expected_exit(command: &str) -> i32 {
    command
        .split("# exit ")
        .nth(1)
        .and_then(|rest| {
            rest.split(|c: char| !c.is_ascii_digit())
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or(0)
}

/// How to run a session.
pub struct Session<'a> {
    /// Its file under `guide/sessions/`.
    pub name: &'a str,
    /// Text replaced before it runs (an address as the reader writes it, the test's own).
    pub replace: Vec<(String, String)>,
    /// Directories put first on the PATH (the binaries under test).
    pub path: Vec<PathBuf>,
    /// Its environment besides PATH and LANG (nothing else is inherited).
    pub env: Vec<(String, String)>,
    /// Its working directory.
    pub dir: PathBuf,
}

impl Session<'_> {
    /// Runs it; fails the test, with the line, at the first command that exits otherwise than its
    /// comment says.
    pub fn run(&self) -> Ran {
        let file = Path::new(env!("CARGO_MANIFEST_DIR"))
            .ancestors()
            .map(|dir| dir.join("guide/sessions").join(self.name))
            .find(|file| file.exists())
            .unwrap_or_else(|| panic!("no guide/sessions/{} above this package", self.name));
        let mut script = std::fs::read_to_string(&file).expect("the session's script");
        for (from, to) in &self.replace {
            script = script.replace(from.as_str(), to);
        }
        let (checked, commands) = checked(&script);
        let mut path: Vec<String> = self.path.iter().map(|p| p.display().to_string()).collect();
        path.push(std::env::var("PATH").unwrap_or_default());
        std::fs::create_dir_all(&self.dir).expect("a working directory");
        let output = Command::new("bash")
            .arg("-c")
            .arg(&checked)
            .current_dir(&self.dir)
            .env_clear()
            .env("PATH", path.join(":"))
            .env("LANG", "C.UTF-8")
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .output()
            .expect("bash runs");
        let stdout = String::from_utf8_lossy(&output.stdout).to_string();
        let stderr = String::from_utf8_lossy(&output.stderr).to_string();
        assert!(
            output.status.success(),
            "session {} failed ({}):\n--- stderr\n{stderr}\n--- stdout\n{stdout}",
            self.name,
            output.status,
        );
        Ran {
            commands,
            stdout,
            stderr,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::checked;

    #[test]
    fn a_command_is_checked_against_the_exit_its_comment_names() {
        let (script, commands) = checked(
            "# a comment\nexport A=1\ncloudctl plan -f pipes   # exit 8: changes\ncat > f <<'EOF'\nx\nEOF\nls \\\n  -l\n",
        );
        assert_eq!(commands, 4);
        assert!(
            script.contains("cloudctl plan -f pipes   # exit 8: changes\n__check $? 8 3\n"),
            "{script}"
        );
        assert!(script.contains("x\nEOF\n__check $? 0 4\n"), "{script}");
        assert!(script.contains("  -l\n__check $? 0 7\n"), "{script}");
        // A quoted string that goes on over lines, and quotes inside a comment.
        let (script, commands) =
            checked("curl -d '{\"a\":\n  1}'   # exit 22: it's refused\necho \"it's\" # don't\n");
        assert_eq!(commands, 2, "{script}");
        assert!(
            script.contains("  1}'   # exit 22: it's refused\n__check $? 22 1\n"),
            "{script}"
        );
    }
}
