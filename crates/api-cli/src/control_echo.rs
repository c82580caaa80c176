//! The terminal's echo of control characters (`ECHOCTL`: Ctrl-C shown as `^C`), turned off while a
//! spinner or the apply's board is drawn, and back on when it is cleared (or before cloudctl
//! exits at a second Ctrl-C).
//!
//! The drawing pads each line to the terminal's width and leaves the cursor at the right edge of
//! its last line, waiting to wrap. An echoed `^C` would wrap there onto a line of its own, and
//! every later redraw, which moves up by the lines it drew, would then start one line too low,
//! leaving the first line of the board above it for good. The `^C` byte itself is still echoed
//! (a terminal shows nothing for it), and the "Stopping" line says what the key did.

/// While it lives, control characters are not echoed as `^X` on stderr's terminal; its drop
/// restores the terminal's settings as they were.
pub(crate) struct QuietControls {
    _private: (),
}

impl QuietControls {
    /// Turns the echo of control characters off on stderr's terminal, if it is on; `None` when
    /// there is nothing to turn off (not a terminal, already off, another drawing holds it).
    pub(crate) fn start() -> Option<Self> {
        imp::quiet().then_some(Self { _private: () })
    }
}

impl Drop for QuietControls {
    fn drop(&mut self) {
        imp::restore();
    }
}

/// Restores the terminal's settings if a drawing changed them: for an exit that runs no
/// destructor (`std::process::exit`).
pub(crate) fn restore() {
    imp::restore();
}

#[cfg(unix)]
mod imp {
    use std::sync::{Mutex, PoisonError};

    use rustix::termios::{LocalModes, OptionalActions, Termios, tcgetattr, tcsetattr};

    /// The settings found before the echo was turned off, to put back.
    static SAVED: Mutex<Option<Termios>> = Mutex::new(None);

    pub(super) fn quiet() -> bool {
        let mut saved = SAVED.lock().unwrap_or_else(PoisonError::into_inner);
        if saved.is_some() {
            return false;
        }
        let stderr = std::io::stderr();
        let Ok(found) = tcgetattr(&stderr) else {
            return false;
        };
        if !found.local_modes.contains(LocalModes::ECHOCTL) {
            return false;
        }
        let mut quiet = found.clone();
        quiet.local_modes.remove(LocalModes::ECHOCTL);
        if tcsetattr(&stderr, OptionalActions::Now, &quiet).is_err() {
            return false;
        }
        *saved = Some(found);
        true
    }

    pub(super) fn restore() {
        let mut saved = SAVED.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(found) = saved.take() {
            let _ = tcsetattr(std::io::stderr(), OptionalActions::Now, &found);
        }
    }
}

#[cfg(not(unix))]
mod imp {
    pub(super) fn quiet() -> bool {
        false
    }

    pub(super) fn restore() {}
}
