//! The spinner of a wait: the current state on stderr, only when stderr is a terminal.

use std::io::IsTerminal;
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
