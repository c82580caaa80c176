//! What a wait or an apply shows while it runs: on stderr, only when stderr is a terminal, and
//! cleared when it ends. While one is drawn, every other line for stderr goes through [`say`] (or
//! into the drawing): a line written past it would move it down the screen, and it would go on
//! redrawing where it was, leaving a copy of itself above at each such line.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::control_echo::QuietControls;

/// Shows what a wait is waiting for and the state last seen; does nothing when stderr is not a
/// terminal, so scripts and logs get no control characters.
pub(crate) struct Progress {
    bar: Option<ProgressBar>,
    what: String,
    /// No `^C` echoed into the drawing while it is drawn (restored after it is cleared).
    _quiet: Option<QuietControls>,
}

impl Progress {
    /// Starts a spinner for "waiting for `what`".
    pub fn start(what: impl Into<String>) -> Self {
        let what = what.into();
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            let style = ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
                .unwrap_or_else(|_| ProgressStyle::default_spinner());
            bar.set_style(style);
            bar.set_message(format!("waiting for {what}"));
            bar.enable_steady_tick(Duration::from_millis(120));
            *on_screen() = Some(Drawn::Spinner(bar.clone(), what.clone()));
            bar
        });
        let _quiet = bar.as_ref().and_then(|_| QuietControls::start());
        Self { bar, what, _quiet }
    }

    /// Shows the state last seen.
    pub fn state(&self, state: &str) {
        if let Some(bar) = &self.bar {
            bar.set_message(format!("waiting for {}: now {state}", self.what));
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            let mut drawn = on_screen();
            if matches!(&*drawn, Some(Drawn::Spinner(..))) {
                drawn.take();
            }
            bar.finish_and_clear();
        }
    }
}

/// One line per action of an apply, each with its step and the state last seen, on stderr and only
/// when stderr is a terminal (as [`Progress`]): redrawn in place, each line cut to the terminal's
/// width, and cleared when dropped, for the report to follow.
pub(crate) struct Board {
    lines: Option<Arc<Lines>>,
    /// No `^C` echoed into the drawing while it is drawn (restored after it is cleared).
    _quiet: Option<QuietControls>,
}

/// The lines of a [`Board`] on screen.
struct Lines {
    /// What draws them, together.
    multi: MultiProgress,
    /// One per action: the service's (no name) first, when there is one.
    lines: Vec<Line>,
}

/// One line of a [`Board`].
struct Line {
    /// The pipe's name; `None` for the service.
    name: Option<String>,
    /// The line.
    bar: ProgressBar,
    /// The step it shows (without a wait on the rate limit said after it), `None` while the action
    /// waits its turn.
    step: Mutex<Option<String>>,
}

/// The widest a name is shown on the board (longer ones are cut with an ellipsis), so that the
/// step fits beside it.
const NAME_COLUMN: usize = 32;

/// The steps after which an action does nothing more (its line stops spinning).
const LAST_STEPS: [&str; 6] = [
    "done",
    "failed",
    "pending",
    "skipped",
    "unreadable",
    "recorded",
];

impl Board {
    /// A line for the service (when `service`) and for each of `names`.
    pub fn start(service: bool, names: &[&str]) -> Self {
        if !std::io::stderr().is_terminal() {
            return Self {
                lines: None,
                _quiet: None,
            };
        }
        let mut named: Vec<Option<String>> = Vec::new();
        if service {
            named.push(None);
        }
        named.extend(names.iter().map(|name| Some((*name).to_string())));
        let column = named
            .iter()
            .map(|name| name.as_deref().unwrap_or(SERVICE).chars().count())
            .max()
            .unwrap_or(0)
            .min(NAME_COLUMN);
        // `wide_msg`: the step takes what the terminal's width leaves, and is cut there.
        let style = ProgressStyle::with_template("{spinner} {prefix} {elapsed:>4} {wide_msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner());
        // Drawn nowhere until every line is on it: the first frame on screen is the whole board.
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::hidden());
        let lines: Vec<Line> = named
            .into_iter()
            .map(|name| {
                // Added to the board before anything is drawn: it draws through the board only.
                let bar = multi.add(ProgressBar::hidden());
                bar.set_style(style.clone());
                bar.set_prefix(fitted(name.as_deref().unwrap_or(SERVICE), column));
                bar.set_message("waiting its turn");
                Line {
                    name,
                    bar,
                    step: Mutex::new(None),
                }
            })
            .collect();
        multi.set_draw_target(ProgressDrawTarget::stderr());
        for line in &lines {
            line.bar.enable_steady_tick(Duration::from_millis(120));
        }
        let lines = Arc::new(Lines { multi, lines });
        *on_screen() = Some(Drawn::Board(Arc::clone(&lines)));
        Self {
            lines: Some(lines),
            _quiet: QuietControls::start(),
        }
    }

    /// Shows a step of the apply on its line.
    pub fn show(&self, progress: &api_mgmt::declared::Progress) {
        let Some(lines) = &self.lines else {
            return;
        };
        let Some(line) = lines.lines.iter().find(|line| line.name == progress.name) else {
            return;
        };
        let message = match &progress.state {
            Some(state) => format!("{}: {}", progress.step, crate::output::redacted(state)),
            None => progress.step.clone(),
        };
        // One line, whatever the state's text holds.
        let message = message.split_whitespace().collect::<Vec<_>>().join(" ");
        let mut step = line.step.lock().unwrap_or_else(PoisonError::into_inner);
        *step = Some(message.clone());
        if LAST_STEPS.contains(&progress.step.as_str()) {
            line.bar.finish_with_message(message);
        } else {
            line.bar.set_message(message);
        }
    }
}

impl Lines {
    /// Says a wait on the rate limit on the lines of the actions under way (any of them may be
    /// the one waiting, and all share the limit), until their next step.
    fn waiting(&self, said: &str) {
        for line in &self.lines {
            let step = line.step.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(step) = &*step
                && !line.bar.is_finished()
            {
                line.bar.set_message(format!("{step}; {said}"));
            }
        }
    }
}

impl Drop for Board {
    fn drop(&mut self) {
        let Some(lines) = self.lines.take() else {
            return;
        };
        {
            let mut drawn = on_screen();
            if matches!(&*drawn, Some(Drawn::Board(..))) {
                drawn.take();
            }
        }
        for line in &lines.lines {
            line.bar.finish_and_clear();
        }
        let _ = lines.multi.clear();
    }
}

/// The service's line on the board.
const SERVICE: &str = "service";

/// `name` in a column of `width` characters: padded, or cut with an ellipsis.
fn fitted(name: &str, width: usize) -> String {
    let count = name.chars().count();
    if count <= width {
        return format!("{name}{}", " ".repeat(width - count));
    }
    let kept: String = name.chars().take(width.saturating_sub(1)).collect();
    format!("{kept}\u{2026}")
}

/// What is drawn on stderr now.
enum Drawn {
    /// A wait's spinner, and what it waits for.
    Spinner(ProgressBar, String),
    /// An apply's board.
    Board(Arc<Lines>),
}

/// What is drawn on stderr now, if anything: a line for stderr goes above it, or into it.
static ON_SCREEN: Mutex<Option<Drawn>> = Mutex::new(None);

/// [`ON_SCREEN`], locked.
fn on_screen() -> std::sync::MutexGuard<'static, Option<Drawn>> {
    ON_SCREEN.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Writes `text` as a line on stderr (redacted, as [`write_stderr`](crate::output::write_stderr)),
/// above the spinner or the board when one is drawn, which is redrawn under it.
pub(crate) fn say(text: &str) {
    match &*on_screen() {
        Some(Drawn::Spinner(bar, _)) => bar.suspend(|| crate::output::write_stderr(text)),
        Some(Drawn::Board(lines)) => lines.multi.suspend(|| crate::output::write_stderr(text)),
        None => crate::output::write_stderr(text),
    }
}

/// Whether this run writes for people (human output): then waits on the rate limit are said.
static HUMAN: AtomicBool = AtomicBool::new(false);

/// Says waits on the shared rate limit on stderr from now on (human output only).
pub(crate) fn say_limit_waits(human: bool) {
    HUMAN.store(human, Ordering::Relaxed);
}

/// Which stores are out: bit 1 Redis (the host store paces), bit 2 the host file (this process
/// paces when it is the host store's turn); bit 4 once Redis was heard of (the store is Redis).
static OUT: AtomicU8 = AtomicU8::new(0);

/// Who the limit is shared with now: 0 as configured, 1 this host's processes (Redis out of
/// reach), 2 nobody (the host file unusable while it paces). With Redis up the host file's state
/// does not count: it is not asked, and says whether it recovered only when it is asked again.
fn fell_back_to() -> u8 {
    let out = OUT.load(Ordering::Relaxed);
    let (redis, host, via_redis) = (out & 1 != 0, out & 2 != 0, out & 4 != 0);
    match (redis, host) {
        (true, true) => 2,
        (true, false) => 1,
        (false, true) if !via_redis => 2,
        _ => 0,
    }
}

/// The rate limit's store changed: one that cannot be used (another paces instead) is a warning,
/// one that answers again a note, each on stderr (in every output mode: stdout stays the data);
/// waits are said as what they now are.
pub(crate) fn store_changed(change: &api_mgmt::rate_limit::StoreChange) {
    let bit = |to: api_mgmt::rate_limit::FallbackTo| match to {
        api_mgmt::rate_limit::FallbackTo::Host => 1,
        _ => 2,
    };
    let redis = |to: api_mgmt::rate_limit::FallbackTo| match to {
        api_mgmt::rate_limit::FallbackTo::Host => 4,
        _ => 0,
    };
    match change {
        api_mgmt::rate_limit::StoreChange::FellBack(fallback) => {
            OUT.fetch_or(
                bit(fallback.instead) | redis(fallback.instead),
                Ordering::Relaxed,
            );
            say(&format!("warning: {change}"));
        }
        api_mgmt::rate_limit::StoreChange::Recovered { from, .. } => {
            OUT.fetch_and(!bit(*from), Ordering::Relaxed);
            say(&format!("note: {change}"));
        }
        _ => {}
    }
}

/// A call is about to wait `wait` (over a second) for a slot of the rate limit: in the spinner, or
/// on the board's lines of the actions under way, when one is on screen (until the next state or
/// step it shows), else as a line. `shared` says whether the limit is shared with other processes
/// (the host or Redis store) or kept by this one.
pub(crate) fn waiting_on_the_limit(wait: Duration, shared: bool) {
    if HUMAN.load(Ordering::Relaxed) {
        let whose = match fell_back_to() {
            _ if !shared => Whose::Process,
            0 => Whose::Shared,
            1 => Whose::Host,
            _ => Whose::Process,
        };
        let said = limit_wait_text(wait, whose);
        match &*on_screen() {
            Some(Drawn::Spinner(bar, what)) => {
                bar.set_message(format!("waiting for {what}: {said}"));
            }
            Some(Drawn::Board(lines)) => lines.waiting(&said),
            None => crate::output::write_stderr(&said),
        }
    }
}

/// Whose rate limit a wait is on.
#[derive(Debug, Clone, Copy)]
enum Whose {
    /// Shared as configured (the host store, or Redis).
    Shared,
    /// Shared by this host's processes only (Redis fell back to the host store).
    Host,
    /// This process's alone.
    Process,
}

/// What a wait on the rate limit is said as.
fn limit_wait_text(wait: Duration, whose: Whose) -> String {
    let whose = match whose {
        Whose::Shared => "the rate limit this API key shares with other processes",
        Whose::Host => "the rate limit this API key shares with this host's processes",
        Whose::Process => "this process's rate limit",
    };
    format!("waiting {:.1} s on {whose}", wait.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_fills_its_column_or_is_cut_with_an_ellipsis() {
        assert_eq!(fitted("orders", 8), "orders  ");
        assert_eq!(fitted("payments", 8), "payments");
        assert_eq!(fitted("shipments-eu", 8), "shipmen\u{2026}");
        assert_eq!(fitted("shipments-eu", 8).chars().count(), 8);
    }

    #[test]
    fn a_wait_says_whose_limit_it_is() {
        assert_eq!(
            limit_wait_text(Duration::from_millis(1500), Whose::Shared),
            "waiting 1.5 s on the rate limit this API key shares with other processes"
        );
        assert_eq!(
            limit_wait_text(Duration::from_secs(2), Whose::Process),
            "waiting 2.0 s on this process's rate limit"
        );
        assert_eq!(
            limit_wait_text(Duration::from_secs(2), Whose::Host),
            "waiting 2.0 s on the rate limit this API key shares with this host's processes"
        );
    }
}
