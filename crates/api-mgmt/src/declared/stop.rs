//! [`StopSignal`]: asking an apply under way to stop (a Ctrl-C, a SIGTERM from a CI runner).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::Notify;

/// Asks an apply to stop ([`ApplyOptions::stop_signal`](super::ApplyOptions::stop_signal)): from
/// then on it starts nothing new (no create, delete or service command), lets the calls in flight
/// end, stops waiting (for a pipe to run, to be gone, for the service), records what was done (a
/// created pipe with its id, and with its observed form from one read), and returns its report
/// with [`ApplyReport::interrupted`](super::ApplyReport::interrupted) set.
///
/// Clones share one signal: keep one to stop, give another to the apply.
///
/// ```
/// use api_mgmt::declared::{ApplyOptions, StopSignal};
///
/// let stop = StopSignal::new();
/// let options = ApplyOptions::default().stop_signal(stop.clone());
/// // In a signal handler: stop.stop();
/// assert!(!stop.is_stopped());
/// # let _ = options;
/// ```
#[derive(Clone, Default)]
pub struct StopSignal(Arc<Inner>);

#[derive(Default)]
struct Inner {
    stopped: AtomicBool,
    notify: Notify,
}

impl std::fmt::Debug for StopSignal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StopSignal")
            .field("stopped", &self.is_stopped())
            .finish()
    }
}

impl StopSignal {
    /// A signal not given yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks every apply holding a clone of this signal to stop (once is enough; later calls change
    /// nothing).
    pub fn stop(&self) {
        self.0.stopped.store(true, Ordering::SeqCst);
        self.0.notify.notify_waiters();
    }

    /// Whether the apply was asked to stop.
    pub fn is_stopped(&self) -> bool {
        self.0.stopped.load(Ordering::SeqCst)
    }

    /// Ends once the signal is given (at once if it was).
    pub(crate) async fn stopped(&self) {
        loop {
            let notified = self.0.notify.notified();
            tokio::pin!(notified);
            // Registered before the flag is read, so a stop in between is not missed.
            notified.as_mut().enable();
            if self.is_stopped() {
                return;
            }
            notified.await;
        }
    }
}

/// `work`, unless `stop` is given first (`None`): the work is then dropped where it is.
pub(crate) async fn unless_stopped<T>(
    stop: Option<&StopSignal>,
    work: impl Future<Output = T>,
) -> Option<T> {
    match stop {
        None => Some(work.await),
        Some(stop) => {
            tokio::select! {
                biased;
                () = stop.stopped() => None,
                done = work => Some(done),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn work_ends_at_the_signal_and_a_signal_given_before_ends_it_at_once() {
        let stop = StopSignal::new();
        let giver = stop.clone();
        let waited = tokio::spawn(async move {
            unless_stopped(Some(&stop), tokio::time::sleep(Duration::from_secs(600))).await
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        giver.stop();
        assert_eq!(waited.await.unwrap(), None, "cut short by the signal");
        assert!(giver.is_stopped());
        assert_eq!(
            unless_stopped(Some(&giver), async { 7 }).await,
            None,
            "a signal given before: nothing more runs to its end"
        );
        assert_eq!(unless_stopped(None, async { 7 }).await, Some(7));
        assert_eq!(
            unless_stopped(Some(&StopSignal::new()), async { 7 }).await,
            Some(7)
        );
    }
}
