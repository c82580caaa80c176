//! `cloudctl` in a real terminal: `apply`'s progress board as a person sees it, in a tmux session of
//! 120x40 of the test's own, sampled while it runs and after it ends.
//!
//! The test needs the `tmux` binary. Without it the test says so and passes, except in CI (`CI` set),
//! where it fails: CI installs tmux (`.ci/run`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use api_emulator::{EmulatorOptions, Timing};

use crate::support::{Cloud, KAFKA_PIPE};

/// The terminal's columns.
const WIDTH: usize = 120;
/// The terminal's rows.
const HEIGHT: usize = 40;

/// A pipe name longer than the board's name column: its line must still fit the terminal.
const LONG_NAME: &str = "shipments-to-every-warehouse-of-the-northern-region-with-a-name-far-longer-than-the-board-column-x";

/// A tmux server of the test's own (`tmux -L NAME`, its own socket), killed when dropped, also when
/// the test fails.
struct Tmux {
    /// The server's socket name.
    socket: String,
    /// The socket's path, removed with the server (tmux leaves it).
    socket_path: Option<PathBuf>,
}

impl Tmux {
    /// A server with one session of `WIDTH` x `HEIGHT` running `script`, whose pane stays (dead)
    /// when the script ends, so that it can still be read.
    fn start(script: &Path, config: &Path) -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let mut tmux = Self {
            socket: format!("cloudctl-e2e-{}-{nanos}", std::process::id()),
            socket_path: None,
        };
        let started = tmux.run(&[
            "-f",
            &config.to_string_lossy(),
            "new-session",
            "-d",
            "-x",
            &WIDTH.to_string(),
            "-y",
            &HEIGHT.to_string(),
            "-s",
            "board",
            &format!("sh {}", script.display()),
        ]);
        assert!(
            started.status.success(),
            "tmux starts: {}",
            String::from_utf8_lossy(&started.stderr)
        );
        let path = tmux.run(&["display-message", "-p", "#{socket_path}"]);
        let path = String::from_utf8_lossy(&path.stdout).trim().to_string();
        tmux.socket_path = (!path.is_empty()).then(|| PathBuf::from(path));
        tmux
    }

    /// Runs `tmux -L SOCKET args`.
    fn run(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .env_remove("TMUX")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux runs")
    }

    /// The screen's rows, with what scrolled off above them (`capture-pane -S -`), trailing blank
    /// rows dropped.
    fn screen(&self) -> Vec<String> {
        let captured = self.run(&["capture-pane", "-p", "-S", "-", "-t", "board"]);
        assert!(captured.status.success(), "capture-pane");
        let text = String::from_utf8_lossy(&captured.stdout).into_owned();
        let mut rows: Vec<String> = text.lines().map(str::to_string).collect();
        while rows.last().is_some_and(|row| row.trim().is_empty()) {
            rows.pop();
        }
        rows
    }

    /// Whether the pane's command has ended and tmux has read all it wrote.
    fn ended(&self) -> bool {
        let shown = self.run(&["display-message", "-p", "-t", "board", "#{pane_dead}"]);
        String::from_utf8_lossy(&shown.stdout).trim() == "1"
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
        if let Some(path) = &self.socket_path {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Whether the `tmux` binary can be run; without it, says why the test does nothing (and fails in
/// CI, which must have it).
fn tmux_available(test: &str) -> bool {
    match Command::new("tmux").arg("-V").output() {
        Ok(_) => true,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            assert!(
                std::env::var_os("CI").is_none(),
                "{test}: tmux is not installed, and CI must run this test (.ci/run installs it)"
            );
            eprintln!("SKIPPED {test}: the tmux binary is not installed (apt-get install tmux)");
            false
        }
        Err(e) => panic!("{test}: tmux cannot be run: {e}"),
    }
}

/// `text` quoted for `sh`.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// A script that runs `command` (a [`Cloud::process`]) with its environment and nothing else but
/// the terminal's `TERM`, in `dir`, then writes its exit status to `status` (tmux 3.3 does not
/// always know a dead pane's), and the terminal's settings (`stty -a`) to `status` with `.stty`
/// added. The shell outlives a Ctrl-C (its trap runs `true`; the command,
/// which does not inherit the trap, gets the signal as it would from a person's shell).
fn script(cloud: &Cloud, command: &Command, dir: &Path, status: &Path) -> PathBuf {
    let mut line = String::from("cd ");
    line.push_str(&quoted(&dir.to_string_lossy()));
    line.push_str(" && env -i TERM=\"$TERM\"");
    for (name, value) in command.get_envs() {
        if let Some(value) = value {
            line.push(' ');
            line.push_str(&quoted(&format!(
                "{}={}",
                name.to_string_lossy(),
                value.to_string_lossy()
            )));
        }
    }
    line.push(' ');
    line.push_str(&quoted(&command.get_program().to_string_lossy()));
    for arg in command.get_args() {
        line.push(' ');
        line.push_str(&quoted(&arg.to_string_lossy()));
    }
    line.push_str("; echo $? > ");
    line.push_str(&quoted(&status.to_string_lossy()));
    // The terminal's settings as the command left them.
    line.push_str("; stty -a > ");
    line.push_str(&quoted(&format!("{}.stty", status.to_string_lossy())));
    PathBuf::from(cloud.file("run.sh", &format!("#!/bin/sh\ntrap true INT\n{line}\n")))
}

/// `cloudctl apply --yes` of a directory with a Kafka pipe file per name of `names` (each file
/// named for the name's first word), with `env` added, running in a terminal of its own; and the
/// file its exit status goes to.
fn apply_in_a_terminal(cloud: &Cloud, names: &[&str], env: &[(&str, &str)]) -> (Tmux, PathBuf) {
    for name in names {
        cloud.file(
            &format!("pipes/{}.yaml", name.split('-').next().unwrap_or(name)),
            &KAFKA_PIPE.replacen("name: orders", &format!("name: {name}"), 1),
        );
    }
    let dir = cloud.home().join("pipes");
    let mut command = cloud.process();
    command
        .envs(env.iter().copied())
        .args(["apply", "-f", &dir.to_string_lossy(), "--yes"]);
    let status_file = cloud.home().join("status");
    let script = script(cloud, &command, cloud.home(), &status_file);
    let config = cloud.file(
        "tmux.conf",
        "set -g remain-on-exit on\nset -g default-terminal screen\nset -g history-limit 1000\n",
    );
    (Tmux::start(&script, Path::new(&config)), status_file)
}

/// The name (of `heads`, the first characters of each) whose board line `row` is: a spinner frame
/// (a braille pattern, or a blank once the line's action ended), a space, then the name.
fn board_line<'a>(row: &str, heads: &[&'a str]) -> Option<&'a str> {
    let mut chars = row.chars();
    let spinner = chars.next()?;
    if !matches!(spinner, '\u{2800}'..='\u{28ff}' | ' ') || chars.next() != Some(' ') {
        return None;
    }
    let rest = chars.as_str();
    heads.iter().copied().find(|head| rest.starts_with(head))
}

/// Looks at the screen every `every` until the pane's command ends, failing past `limit` from
/// `since`: the looks while it ran, its exit status (from `status_file`, as [`script`] writes it)
/// and the last screen.
fn samples_until_the_end(
    tmux: &Tmux,
    status_file: &Path,
    since: Instant,
    limit: Duration,
    every: Duration,
) -> (Vec<Sample>, i32, Sample) {
    let mut samples = Vec::new();
    loop {
        // Read before the screen: once the pane has ended, the screen is the last one.
        let ended = tmux.ended();
        let sample = Sample {
            rows: tmux.screen(),
            at: since.elapsed(),
        };
        if ended {
            let status = std::fs::read_to_string(status_file).unwrap_or_default();
            return (samples, status.trim().parse::<i32>().unwrap_or(-1), sample);
        }
        samples.push(sample);
        assert!(
            since.elapsed() < limit,
            "the command ends within {limit:?}; {}",
            samples.last().map(Sample::shown).unwrap_or_default()
        );
        std::thread::sleep(every);
    }
}

/// What one look at the screen showed.
struct Sample {
    /// The rows.
    rows: Vec<String>,
    /// When it was taken, from the start.
    at: Duration,
}

impl Sample {
    /// The rows after the plan (its last `+ create` row) and before the report (`Applied:`).
    fn between_plan_and_report(&self) -> &[String] {
        let start = self
            .rows
            .iter()
            .rposition(|row| row.starts_with("  + create    "))
            .map_or(self.rows.len(), |i| i + 1);
        let end = self.rows[start..]
            .iter()
            .position(|row| row.starts_with("Applied:"))
            .map_or(self.rows.len(), |i| start + i);
        &self.rows[start..end]
    }

    /// The screen, for a failure's message.
    fn shown(&self) -> String {
        format!(
            "at {:?}:\n{}",
            self.at,
            self.rows
                .iter()
                .enumerate()
                .map(|(i, row)| format!("{:>3}|{row}", i + 1))
                .collect::<Vec<_>>()
                .join("\n")
        )
    }
}

/// `cloudctl apply` of four pipes in a terminal of 120x40, paced by a rate limit that makes it
/// wait (the SDK says waits over a second) while pipes provision for 3 s: while it runs, the board
/// is one line per pipe, redrawn in place, each within the terminal's width (one pipe's name is
/// longer than that); when it ends, the board is gone, and the plan and the report remain.
#[test]
fn the_apply_board_is_one_line_per_pipe_redrawn_in_place_then_cleared() {
    let test = "the_apply_board_is_one_line_per_pipe_redrawn_in_place_then_cleared";
    if !tmux_available(test) {
        return;
    }
    let timing = Timing {
        pipe_provisioning_ms: 3000,
        ..Timing::INSTANT
    };
    let cloud = Cloud::with(EmulatorOptions::for_tests().timing(timing));
    let names = ["orders", "payments", "refunds", LONG_NAME];
    // Five calls per 2 s: the creates and the polls of four pipes wait on it.
    let (tmux, status_file) = apply_in_a_terminal(&cloud, &names, &[("CLOUD_RATE_LIMIT", "5/2s")]);

    // The first characters of each name: the long one is cut to fit its column.
    let heads: Vec<&str> = names
        .iter()
        .map(|name| &name[..name.len().min(16)])
        .collect();
    let started = Instant::now();
    let (samples, status, last) = samples_until_the_end(
        &tmux,
        &status_file,
        started,
        Duration::from_secs(90),
        Duration::from_millis(100),
    );

    let secrets = cloud.secrets();
    let mut boards = 0;
    for sample in &samples {
        let shown = sample.shown();
        assert!(
            secrets
                .iter()
                .all(|secret| !sample.rows.iter().any(|row| row.contains(secret))),
            "a secret on screen {shown}"
        );
        if sample.rows.iter().any(|row| row.starts_with("Applied:")) {
            continue;
        }
        let region = sample.between_plan_and_report();
        let board: Vec<&String> = region
            .iter()
            .filter(|row| board_line(row, &heads).is_some())
            .collect();
        // A line wider than the terminal would go on in a row of its own (tmux wraps it), and a
        // line written past the board would be a row of its own too: neither is a board line.
        for row in region {
            assert!(
                board_line(row, &heads).is_some() || row.trim().is_empty(),
                "only the board's lines under the plan while it runs, not {row:?}; {shown}"
            );
        }
        if board.is_empty() {
            continue;
        }
        // indicatif draws a line once its bar first ticks, and at most every 50 ms: for that long
        // at the start the board may show its first lines only, each still waiting its turn. Such
        // a frame is the board appearing, not a board to check; any later one is whole.
        if board.len() < names.len()
            && board
                .iter()
                .all(|row| row.trim_end().ends_with("0s waiting its turn"))
        {
            continue;
        }
        boards += 1;
        assert_eq!(
            board.len(),
            names.len(),
            "one board line per pipe, no more; {shown}"
        );
        for head in &heads {
            let lines = board
                .iter()
                .filter(|row| board_line(row, &heads) == Some(head))
                .count();
            assert_eq!(lines, 1, "{head} on exactly one board line; {shown}");
        }
        let long = board
            .iter()
            .find(|row| board_line(row, &heads) == Some(&LONG_NAME[..16]))
            .map_or("", |row| row.as_str());
        assert!(
            long.contains('\u{2026}') && !long.contains(LONG_NAME),
            "the long name cut with an ellipsis; {shown}"
        );
        let mut distinct = board.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), board.len(), "no duplicated line; {shown}");
        assert_eq!(
            region.len(),
            board.len(),
            "the board's lines are together, right under the plan; {shown}"
        );
    }
    // The waits on the rate limit are said on the board, not as lines under it.
    assert!(
        samples.iter().any(|sample| sample
            .rows
            .iter()
            .any(|row| board_line(row, &heads).is_some() && row.contains("on the rate limit"))),
        "a wait on the rate limit shown on the board; {}",
        samples
            .iter()
            .map(Sample::shown)
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(
        boards >= 5,
        "the board was seen while the apply ran ({boards} of {} samples)",
        samples.len()
    );

    let shown = last.shown();
    assert_eq!(status, 0, "the apply succeeds; {shown}");
    let rows: Vec<&String> = last
        .rows
        .iter()
        .filter(|row| !row.starts_with("Pane is dead"))
        .collect();
    assert!(
        rows.iter().all(|row| board_line(row, &heads).is_none()),
        "no board line is left after the apply; {shown}"
    );
    assert!(
        rows.iter()
            .any(|row| row.starts_with("Plan for ") && row.contains("4 to create")),
        "the plan stays; {shown}"
    );
    for name in names {
        let planned = format!("  + create    {name}");
        assert!(
            rows.iter().any(|row| **row == planned),
            "{planned:?} in the plan; {shown}"
        );
    }
    let report = rows
        .iter()
        .position(|row| row.starts_with("Applied:"))
        .unwrap_or_else(|| panic!("the report; {shown}"));
    let created = rows[report..]
        .iter()
        .filter(|row| row.starts_with("  ok      created "))
        .count();
    assert_eq!(created, names.len(), "each pipe created; {shown}");
    assert!(
        last.between_plan_and_report()
            .iter()
            .all(|row| row.trim().is_empty()),
        "only the plan and the report remain, nothing between them; {shown}"
    );
    assert!(
        secrets
            .iter()
            .all(|secret| !last.rows.iter().any(|row| row.contains(secret))),
        "a secret on screen {shown}"
    );
}

/// Ctrl-C pressed in the terminal while `cloudctl apply` waits for two pipes to run: the
/// "Stopping" line is written once, past the board (never a board line twice, never a copy of the
/// board left above it), the apply ends within seconds with 130, no board line is left, and the
/// terminal's settings are as before.
#[test]
fn ctrl_c_during_an_apply_says_stopping_once_past_the_board_and_exits_130() {
    let test = "ctrl_c_during_an_apply_says_stopping_once_past_the_board_and_exits_130";
    if !tmux_available(test) {
        return;
    }
    let timing = Timing {
        pipe_provisioning_ms: 60_000,
        ..Timing::INSTANT
    };
    let cloud = Cloud::with(EmulatorOptions::for_tests().timing(timing));
    let names = ["orders", "payments"];
    let (tmux, status_file) = apply_in_a_terminal(&cloud, &names, &[]);
    let started = Instant::now();
    let board_of = |sample: &Sample| -> Vec<String> {
        sample
            .rows
            .iter()
            .filter(|row| board_line(row, &names).is_some())
            .cloned()
            .collect()
    };
    // Both pipes created and waited for: the board shows each.
    loop {
        let sample = Sample {
            rows: tmux.screen(),
            at: started.elapsed(),
        };
        if board_of(&sample).len() == names.len()
            && board_of(&sample)
                .iter()
                .all(|row| row.contains("waiting for Running") && !row.contains(" 0s "))
        {
            break;
        }
        assert!(
            !tmux.ended() && started.elapsed() < Duration::from_secs(30),
            "the board shows both pipes being waited for; {}",
            sample.shown()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let pressed = Instant::now();
    let sent = tmux.run(&["send-keys", "-t", "board", "C-c"]);
    assert!(sent.status.success(), "send-keys");
    let (samples, status, last) = samples_until_the_end(
        &tmux,
        &status_file,
        pressed,
        Duration::from_secs(20),
        Duration::from_millis(50),
    );
    let shown = last.shown();
    assert_eq!(status, 130, "exit 130 after Ctrl-C; {shown}");
    assert!(
        pressed.elapsed() < Duration::from_secs(10),
        "stopped within 10 s, not after the 60 s provisioning; {shown}"
    );
    for sample in samples.iter().chain([&last]) {
        let shown = sample.shown();
        let stopping = sample
            .rows
            .iter()
            .filter(|row| row.contains("Stopping: nothing new starts"))
            .count();
        assert!(stopping <= 1, "the Stopping line at most once; {shown}");
        let board = board_of(sample);
        for name in names {
            assert!(
                board
                    .iter()
                    .filter(|row| board_line(row, &names) == Some(name))
                    .count()
                    <= 1,
                "{name} on one board line at most; {shown}"
            );
        }
        // Once said, the board (while still drawn) is under the line, never above it.
        if let Some(said) = sample
            .rows
            .iter()
            .position(|row| row.contains("Stopping: nothing new starts"))
        {
            assert!(
                sample.rows[..said]
                    .iter()
                    .all(|row| board_line(row, &names).is_none()),
                "no board line left above the Stopping line; {shown}"
            );
        }
    }
    let rows: Vec<&String> = last
        .rows
        .iter()
        .filter(|row| !row.starts_with("Pane is dead"))
        .collect();
    assert!(
        rows.iter()
            .any(|row| row.contains("Stopping: nothing new starts")),
        "the Stopping line stays on screen; {shown}"
    );
    assert!(
        rows.iter().all(|row| board_line(row, &names).is_none()),
        "no board line is left after the apply; {shown}"
    );
    // The echo of control characters, off while the board was drawn, is back on.
    let stty =
        std::fs::read_to_string(format!("{}.stty", status_file.display())).unwrap_or_default();
    assert!(
        stty.split_whitespace().any(|flag| flag == "echoctl"),
        "the terminal's settings restored: {stty}"
    );
}
