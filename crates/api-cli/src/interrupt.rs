//! Ctrl-C (SIGINT) and SIGTERM during an apply: the first stops it (nothing new starts, the calls
//! in flight end, what was done is recorded, the report and the spans go out, exit 130 or 143);
//! a second exits at once, with the code of the signal (each create under way stays pending in
//! the state, as after a kill). Outside an apply, when the run exports traces, the first ends
//! the command where it is ([`outside_apply`]): its spans end (the calls and waits under way as
//! `cancelled`) and go out before the exit.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

use api_mgmt::declared::StopSignal;

use crate::exit::{Exit, Failure};
use crate::progress::say;

/// Whether an apply watches the signals (it stops on them itself).
static APPLY_WATCHES: AtomicBool = AtomicBool::new(false);

/// The signals being watched while an apply runs; watching ends when dropped.
pub(crate) struct Interrupts {
    stop: StopSignal,
    exit: Arc<AtomicU8>,
    task: tokio::task::JoinHandle<()>,
}

impl Interrupts {
    /// Starts watching for SIGINT and SIGTERM (Ctrl-C elsewhere), giving `stop` at the first.
    pub fn watch(stop: StopSignal) -> Self {
        let exit = Arc::new(AtomicU8::new(0));
        APPLY_WATCHES.store(true, Ordering::SeqCst);
        let task = tokio::spawn(listen(stop.clone(), Arc::clone(&exit)));
        Self { stop, exit, task }
    }

    /// The exit of the signal that stopped the apply, if one did.
    pub fn exit(&self) -> Option<Exit> {
        if !self.stop.is_stopped() {
            return None;
        }
        Some(match self.exit.load(Ordering::SeqCst) {
            143 => Exit::Terminated,
            _ => Exit::Interrupted,
        })
    }
}

impl Drop for Interrupts {
    fn drop(&mut self) {
        self.task.abort();
        APPLY_WATCHES.store(false, Ordering::SeqCst);
    }
}

/// The failure of a command a signal stopped outside an apply: exit 130 or 143, `INTERRUPTED`.
pub(crate) fn stopped(exit: Exit) -> Failure {
    // A spinner dropped with the command gives the terminal's echo back; this is for the rest.
    crate::control_echo::restore();
    let signal = if exit == Exit::Terminated {
        "SIGTERM"
    } else {
        "SIGINT"
    };
    let mut failure = Failure::other("INTERRUPTED", format!("stopped by {signal}"));
    failure.exit = exit;
    failure
}

/// The exit of the first SIGINT or SIGTERM (Ctrl-C elsewhere) that comes while no apply watches
/// (an apply stops on it itself); never, where no handler can be installed.
pub(crate) async fn outside_apply() -> Exit {
    let mut signals = Signals::new();
    loop {
        let code = signals.next().await;
        if !APPLY_WATCHES.load(Ordering::SeqCst) {
            return if code == 143 {
                Exit::Terminated
            } else {
                Exit::Interrupted
            };
        }
    }
}

/// SIGINT and SIGTERM (Ctrl-C elsewhere), watched from when they are made.
struct Signals {
    #[cfg(unix)]
    watched: Option<(tokio::signal::unix::Signal, tokio::signal::unix::Signal)>,
}

impl Signals {
    fn new() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let watched = match (
                signal(SignalKind::interrupt()),
                signal(SignalKind::terminate()),
            ) {
                (Ok(interrupt), Ok(terminate)) => Some((interrupt, terminate)),
                // No handler could be installed: the signals keep their default action.
                _ => None,
            };
            Self { watched }
        }
        #[cfg(not(unix))]
        Self {}
    }

    /// The next signal: its exit code (128 + its number); never, where none can be watched.
    async fn next(&mut self) -> u8 {
        #[cfg(unix)]
        {
            let Some((interrupt, terminate)) = &mut self.watched else {
                return std::future::pending().await;
            };
            tokio::select! {
                _ = interrupt.recv() => 130,
                _ = terminate.recv() => 143,
            }
        }
        #[cfg(not(unix))]
        {
            if tokio::signal::ctrl_c().await.is_err() {
                return std::future::pending().await;
            }
            130
        }
    }
}

async fn listen(stop: StopSignal, exit: Arc<AtomicU8>) {
    let mut signals = Signals::new();
    let first = signals.next().await;
    exit.store(first, Ordering::SeqCst);
    stop.stop();
    // Past the apply's board, if one is drawn (a line written under it would be redrawn over).
    say(
        "\nStopping: nothing new starts; the calls under way end and are recorded. Press Ctrl-C \
         again to exit at once (a create under way then stays pending in the state).",
    );
    let second = signals.next().await;
    say("\nExiting at once; `cloudctl plan` shows what is left.");
    crate::control_echo::restore();
    std::process::exit(i32::from(second));
}
