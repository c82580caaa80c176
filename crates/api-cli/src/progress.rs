//! The spinner of a wait: the current state on stderr, only when stderr is a terminal.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

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
            *SPINNING.lock().unwrap_or_else(PoisonError::into_inner) =
                Some((bar.clone(), what.clone()));
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
            SPINNING
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            bar.finish_and_clear();
        }
    }
}

/// One line per action of an apply, each with its step and the state last seen, on stderr and only
/// when stderr is a terminal (as [`Progress`]); cleared when dropped, for the report to follow.
pub(crate) struct Board {
    bars: Vec<(Option<String>, ProgressBar)>,
}

impl Board {
    /// A line for the service (when `service`) and for each of `names`.
    pub fn start(service: bool, names: &[&str]) -> Self {
        if !std::io::stderr().is_terminal() {
            return Self { bars: Vec::new() };
        }
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
        let style = ProgressStyle::with_template("{spinner} {prefix:<24} {msg} ({elapsed})")
            .unwrap_or_else(|_| ProgressStyle::default_spinner());
        let mut lines: Vec<Option<String>> = Vec::new();
        if service {
            lines.push(None);
        }
        lines.extend(names.iter().map(|name| Some((*name).to_string())));
        let bars = lines
            .into_iter()
            .map(|name| {
                let bar = multi.add(ProgressBar::new_spinner());
                bar.set_style(style.clone());
                bar.set_prefix(name.clone().unwrap_or_else(|| "service".into()));
                bar.set_message("waiting its turn");
                bar.enable_steady_tick(Duration::from_millis(120));
                (name, bar)
            })
            .collect();
        Self { bars }
    }

    /// Shows a step of the apply on its line.
    pub fn show(&self, progress: &api_mgmt::declared::Progress) {
        let Some((_, bar)) = self.bars.iter().find(|(name, _)| name == &progress.name) else {
            return;
        };
        let message = match &progress.state {
            Some(state) => format!("{}: {}", progress.step, crate::output::redacted(state)),
            None => progress.step.clone(),
        };
        bar.set_message(message);
    }
}

impl Drop for Board {
    fn drop(&mut self) {
        for (_, bar) in &self.bars {
            bar.finish_and_clear();
        }
    }
}

/// The spinner on screen, if any, and what it waits for: a wait on the rate limit is said in it.
static SPINNING: Mutex<Option<(ProgressBar, String)>> = Mutex::new(None);

/// Whether this run writes for people (human output): then waits on the rate limit are said.
static HUMAN: AtomicBool = AtomicBool::new(false);

/// Says waits on the shared rate limit on stderr from now on (human output only).
pub(crate) fn say_limit_waits(human: bool) {
    HUMAN.store(human, Ordering::Relaxed);
}

/// Who the limit is shared with after a store fell back: 0 as configured, 1 this host's processes
/// (Redis out of reach), 2 nobody (the host file unusable).
static FELL_BACK_TO: AtomicU8 = AtomicU8::new(0);

/// The rate limit's store cannot be used and another paces instead: said once on stderr (in every
/// output mode: stdout stays the data), and waits are said as what they now are.
pub(crate) fn store_fell_back(fallback: &api_mgmt::StoreFallback) {
    let to = match fallback.instead {
        api_mgmt::FallbackTo::Host => 1,
        _ => 2,
    };
    if FELL_BACK_TO.fetch_max(to, Ordering::Relaxed) < to {
        crate::output::write_stderr(&format!("warning: {fallback}"));
    }
}

/// A call is about to wait `wait` (over a second) for a slot of the rate limit: in the spinner
/// when one is on screen (until the next state it shows), else as a line. `shared` says whether the
/// limit is shared with other processes (the host or Redis store) or kept by this one.
pub(crate) fn waiting_on_the_limit(wait: Duration, shared: bool) {
    if HUMAN.load(Ordering::Relaxed) {
        let whose = match FELL_BACK_TO.load(Ordering::Relaxed) {
            _ if !shared => Whose::Process,
            0 => Whose::Shared,
            1 => Whose::Host,
            _ => Whose::Process,
        };
        let said = limit_wait_text(wait, whose);
        match &*SPINNING.lock().unwrap_or_else(PoisonError::into_inner) {
            Some((bar, what)) => bar.set_message(format!("waiting for {what}: {said}")),
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
