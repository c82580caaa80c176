//! Shell sessions run as written: the guide's (its chapters include them from the tests of the
//! crates that run them, `tests/sessions/*.sh`).
//!
//! A session is a shell script a person would type: one command per line (a `\` or an open quote
//! continues it, a here-document is passed through), comments for what the reader sees. Each command
//! must exit 0, or the code its trailing comment names (`cloudctl plan -f pipes   # exit 8: changes
//! to make`); anything else fails the test with the line. Addresses a session writes as its reader
//! would (`http://127.0.0.1:8080`) are replaced by the test's own.

use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The longest a session may run (a server that never starts, a wait that never ends).
const TIME_LIMIT: Duration = Duration::from_secs(300);

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
/// A command goes on over a `\\` at a line's end, an open quote, a here-document, and a compound
/// command (`for`/`while`/`until`/`if`/`case` to its `done`/`fi`/`esac`); a session that ends inside
/// one of them is refused, so that no command goes unchecked.
pub fn checked(script: &str) -> (String, usize) {
    let mut out = String::from(
        "set -o pipefail\n\
         trap 'kill $(jobs -p) 2>/dev/null' EXIT\n\
         __check() { if [ \"$1\" -ne \"$2\" ]; then echo \"session line $3: exit $1, expected $2\" >&2; exit 100; fi; }\n",
    );
    let mut commands = 0;
    // The here-document under way: its terminator, whether tabs may indent it (`<<-`), and the
    // check of its command, written once it ends.
    let mut heredoc: Option<(String, bool, String)> = None;
    let mut command = String::new();
    let mut first_line = 0;
    let mut depth = 0i32;
    for (number, line) in script.lines().enumerate() {
        let number = number + 1;
        out.push_str(line);
        out.push('\n');
        if let Some((end, tabs, check)) = &heredoc {
            let line = if *tabs {
                line.trim_start_matches('\t')
            } else {
                line
            };
            if line == end {
                out.push_str(check);
                heredoc = None;
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
        let code = code_of(line);
        depth = (depth + compound_depth(code)).max(0);
        let starts_heredoc = heredoc_start(code);
        if line.trim_end().ends_with('\\') || in_quotes(&command) || depth > 0 {
            assert!(
                starts_heredoc.is_none(),
                "session line {number}: a here-document inside a longer command is not supported"
            );
            continue;
        }
        let check = format!("__check $? {} {first_line}\n", expected_exit(&command));
        match starts_heredoc {
            Some((end, tabs)) => heredoc = Some((end, tabs, check)),
            None => out.push_str(&check),
        }
        commands += 1;
        command.clear();
    }
    assert!(
        heredoc.is_none() && command.is_empty(),
        "the session ends inside a command (line {first_line}): an open quote, here-document, `\\` \
         or compound command"
    );
    (out, commands)
}

/// `line` up to its comment (a `#` that begins a word, outside quotes).
fn code_of(line: &str) -> &str {
    let (comments, _) = scan(line);
    &line[..comments.first().map_or(line.len(), |comment| comment.start)]
}

/// The comments of `text` (each from a `#` that begins a word outside quotes to its line's end),
/// and whether it ends inside a quoted string: its quotes followed across lines, a comment's
/// characters no quotes.
fn scan(text: &str) -> (Vec<std::ops::Range<usize>>, bool) {
    let mut comments = Vec::new();
    let (mut single, mut double, mut escaped) = (false, false, false);
    let mut chars = text.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            _ if escaped => escaped = false,
            '\\' if !single => escaped = true,
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '#' if !single && !double && begins_word(text, i) => {
                let end = text[i..].find('\n').map_or(text.len(), |n| i + n);
                comments.push(i..end);
                for _ in text[i + 1..end].chars() {
                    chars.next();
                }
            }
            _ => {}
        }
    }
    (comments, single || double)
}

/// Whether the character at `i` begins a word: at the start, or after white space or an operator.
fn begins_word(line: &str, i: usize) -> bool {
    line[..i]
        .chars()
        .next_back()
        .is_none_or(|c| c.is_whitespace() || ";&|()".contains(c))
}

/// How many compound commands `code` opens, less those it closes.
fn compound_depth(code: &str) -> i32 {
    code.split(|c: char| c.is_whitespace() || c == ';')
        .map(|word| match word {
            "for" | "while" | "until" | "if" | "case" => 1,
            "done" | "fi" | "esac" => -1,
            _ => 0,
        })
        .sum()
}

/// The terminator of a here-document `code` starts (`<<EOF`, `<<'EOF'`, `<<-EOF`; not a here
/// string, `<<<`), and whether tabs may indent it.
fn heredoc_start(code: &str) -> Option<(String, bool)> {
    let at = code.find("<<")?;
    let rest = &code[at + 2..];
    if rest.starts_with('<') {
        return None;
    }
    let tabs = rest.starts_with('-');
    let end = rest
        .trim_start_matches('-')
        .split_whitespace()
        .next()?
        .trim_matches(|c| c == '\'' || c == '"');
    (!end.is_empty()).then(|| (end.to_string(), tabs))
}

/// Whether `command` ends inside a quoted string (one that goes on on the next line).
fn in_quotes(command: &str) -> bool {
    scan(command).1
}

/// The exit code a comment of the command names (`# exit N`), else 0.
fn expected_exit(command: &str) -> i32 {
    scan(command)
        .0
        .into_iter()
        .find_map(|comment| command[comment].split("# exit ").nth(1))
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
    /// Its script: a file of the package whose tests run it (the guide includes the same file).
    pub script: &'a Path,
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
        let mut script = std::fs::read_to_string(self.script)
            .unwrap_or_else(|e| panic!("the session {}: {e}", self.script.display()));
        for (from, to) in &self.replace {
            script = script.replace(from.as_str(), to);
        }
        let (checked, commands) = checked(&script);
        let mut path: Vec<String> = self.path.iter().map(|p| p.display().to_string()).collect();
        path.push(std::env::var("PATH").unwrap_or_default());
        std::fs::create_dir_all(&self.dir).expect("a working directory");
        // Output into files, not pipes: a server the session left running cannot hold the test
        // up; and the whole session (its process group) is killed if it runs too long.
        let logs = tempfile::tempdir().expect("a directory for the output");
        let (out_path, err_path) = (logs.path().join("stdout"), logs.path().join("stderr"));
        let mut child = Command::new("bash")
            .arg("-c")
            .arg(&checked)
            .current_dir(&self.dir)
            .env_clear()
            .env("PATH", path.join(":"))
            .env("LANG", "C.UTF-8")
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&out_path).expect("the stdout file"))
            .stderr(std::fs::File::create(&err_path).expect("the stderr file"))
            .process_group(0)
            .spawn()
            .expect("bash runs");
        let started = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().expect("the session's status") {
                break Some(status);
            }
            if started.elapsed() > TIME_LIMIT {
                let _ = Command::new("kill")
                    .args(["-KILL", "--", &format!("-{}", child.id())])
                    .status();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let stdout = std::fs::read_to_string(&out_path).unwrap_or_default();
        let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
        match status {
            Some(status) => assert!(
                status.success(),
                "session {} failed ({status}):\n--- stderr\n{stderr}\n--- stdout\n{stdout}",
                self.script.display(),
            ),
            None => panic!(
                "session {} still ran after {TIME_LIMIT:?}, killed:\n--- stderr\n{stderr}\n--- stdout\n{stdout}",
                self.script.display()
            ),
        }
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
        // A compound command is one command; a here string is no here-document; `;#` begins a
        // comment; `# exit` inside quotes is no expectation.
        let (script, commands) = checked(
            "for a in 1 2; do\n  echo $a\ndone\ncat <<< 'x'\necho 'a # exit 3';# it's\nuntil true; do sleep 1; done\n",
        );
        assert_eq!(commands, 4, "{script}");
        assert!(script.contains("done\n__check $? 0 1\n"), "{script}");
        assert!(script.contains("cat <<< 'x'\n__check $? 0 4\n"), "{script}");
        assert!(script.contains("# it's\n__check $? 0 5\n"), "{script}");
        // A here-document's terminator is the whole line (indented only after `<<-`, by tabs).
        let (script, _) = checked("cat > f <<EOF\n  EOF\nEOF\nls\n");
        assert!(
            script.contains("  EOF\nEOF\n__check $? 0 1\nls\n__check $? 0 4\n"),
            "{script}"
        );
    }

    #[test]
    #[should_panic(expected = "ends inside a command")]
    fn a_session_that_ends_inside_a_command_is_refused() {
        checked("echo 'never closed\nls\n");
    }
}
