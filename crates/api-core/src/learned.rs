//! [`Learned`]: what a client learns about its server while it runs, once for all its calls and
//! clones, so that a server's habit costs one refused request, not one per call.

use std::sync::atomic::{AtomicBool, Ordering};

/// What a client has learned about its server.
#[derive(Debug, Default)]
pub struct Learned {
    refuses_command_less_read: AtomicBool,
}

impl Learned {
    /// Whether the server refused the service state command without a command (400), the API's
    /// only read of a service: production may, the emulator answers it unless told not to.
    pub fn refuses_command_less_read(&self) -> bool {
        self.refuses_command_less_read.load(Ordering::Relaxed)
    }

    /// Records that the server refuses the state command without a command; `true` when this
    /// call taught it (said once in `tracing`), `false` when it was known.
    pub fn learn_command_less_read_refused(&self) -> bool {
        let new = !self.refuses_command_less_read.swap(true, Ordering::Relaxed);
        if new {
            tracing::info!(
                "the server refuses to read a service without a command; service waiters read it by sending their own command"
            );
        }
        new
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_habit_is_learned_once_and_kept() {
        let learned = Learned::default();
        assert!(!learned.refuses_command_less_read());
        learned.learn_command_less_read_refused();
        assert!(learned.refuses_command_less_read());
        learned.learn_command_less_read_refused();
        assert!(
            learned.refuses_command_less_read(),
            "learning again changes nothing"
        );
    }
}
