//! Ctrl-C (SIGINT) and SIGTERM during an apply: the first stops it (nothing new starts, the calls
//! in flight end, what was done is recorded, the report and the spans go out, exit 130 or 143);
//! a second exits at once, with the code of the signal (each create under way stays pending in
//! the state, as after a kill).

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use api_mgmt::declared::StopSignal;

use crate::exit::Exit;
use crate::progress::say;

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
    }
}

/// Which signal: its exit code (128 + its number).
async fn next_signal() -> u8 {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut interrupt), Ok(mut terminate)) = (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        ) else {
            // No handler could be installed: the signals keep their default action.
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

async fn listen(stop: StopSignal, exit: Arc<AtomicU8>) {
    let first = next_signal().await;
    exit.store(first, Ordering::SeqCst);
    stop.stop();
    // Past the apply's board, if one is drawn (a line written under it would be redrawn over).
    say(
        "\nStopping: nothing new starts; the calls under way end and are recorded. Press Ctrl-C \
         again to exit at once (a create under way then stays pending in the state).",
    );
    let second = next_signal().await;
    say("\nExiting at once; `cloudctl plan` shows what is left.");
    crate::control_echo::restore();
    std::process::exit(i32::from(second));
}
