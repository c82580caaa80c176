//! The spinner of a wait: the current state on stderr, only when stderr is a terminal.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Shows what a wait is waiting for and the state last seen; does nothing when stderr is not a
/// terminal, so scripts and logs get no control characters.
pub(crate) struct Progress {
    bar: Option<ProgressBar>,
    what: String,
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
            bar
        });
        Self { bar, what }
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
            bar.finish_and_clear();
        }
    }
}

/// Whether this run writes for people (human output): then waits on the rate limit are said.
static HUMAN: AtomicBool = AtomicBool::new(false);

/// Says waits on the shared rate limit on stderr from now on (human output only).
pub(crate) fn say_limit_waits(human: bool) {
    HUMAN.store(human, Ordering::Relaxed);
}

/// A call is about to wait `wait` (over a second) for a slot of the rate limit it shares with every
/// cloudctl (and SDK client) using the same API key.
pub(crate) fn waiting_on_the_limit(wait: Duration) {
    if HUMAN.load(Ordering::Relaxed) {
        crate::output::write_stderr(&format!(
            "waiting {:.1} s on the shared rate limit of this API key",
            wait.as_secs_f64()
        ));
    }
}
