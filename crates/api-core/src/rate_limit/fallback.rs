//! [`Fallback`]: a store that can fail (the host file, Redis) and the store that paces while it
//! rests after a failure, the one fallback rule; and the two chains a limit's store is built as.

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::host::{HostFile, HostStore};
use super::observers::{FallbackObserver, FallbackTo, StoreChange, StoreFallback};
use super::pacing::Pace;
use super::process::ProcessState;
use super::rest::Rest;
use super::store::{Answer, Op, Store};

/// How long the host store's file is left alone after it could not be used (a lock held too long,
/// a hung mount): the process paces alone meanwhile.
const HOST_REST: Duration = Duration::from_secs(30);

/// A store that can fail, and the store that paces while it rests after a failure: the one
/// fallback rule. A failure leaves the primary alone for a while (a hung mount or an unreachable
/// Redis then costs the calls that follow nothing), and every change is told: each fall back, and
/// each recovery when the primary answers again.
pub(crate) struct Fallback<P, F> {
    primary: P,
    fallback: F,
    /// The primary as events name it: `host (<file>)`, or the Redis URL with its password redacted.
    store: String,
    /// What the fallback is.
    instead: FallbackTo,
    /// How long the primary is left alone after a failure.
    rest: Duration,
    resting: Rest,
    /// Since when the primary has been out (a failure not yet followed by an answer).
    out: Mutex<Option<Instant>>,
    on_change: Option<FallbackObserver>,
}

impl<P, F> Fallback<P, F> {
    pub(crate) fn new(
        primary: P,
        fallback: F,
        store: String,
        instead: FallbackTo,
        rest: Duration,
        on_change: Option<FallbackObserver>,
    ) -> Self {
        Self {
            primary,
            fallback,
            store,
            instead,
            rest,
            resting: Rest::default(),
            out: Mutex::new(None),
            on_change,
        }
    }

    /// Whether the primary is out now (it failed and has not answered since).
    #[cfg(test)]
    pub(crate) fn is_out(&self) -> bool {
        self.out
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }

    /// The primary, for the tests.
    #[cfg(test)]
    pub(crate) fn primary(&self) -> &P {
        &self.primary
    }

    fn tell(&self, change: &StoreChange) {
        match change {
            StoreChange::FellBack(fallback) => {
                tracing::warn!(store = %fallback.store, error = %fallback.reason, "{change}");
            }
            _ => tracing::info!(store = %self.store, "{change}"),
        }
        if let Some(observer) = &self.on_change {
            observer(change);
        }
    }

    /// The primary failed: it rests, and a fall back is told unless it is out already. Told under
    /// the lock, so that the changes reach the observer in the order they happened.
    fn failed(&self, reason: String) {
        self.resting.rest_for(self.rest);
        let mut out = self.out.lock().unwrap_or_else(PoisonError::into_inner);
        if out.is_none() {
            *out = Some(Instant::now());
            self.tell(&StoreChange::FellBack(StoreFallback {
                store: self.store.clone(),
                instead: self.instead,
                reason,
            }));
        }
    }

    /// The primary answered a request sent at `sent`: a recovery when it was out, and the request
    /// went after the failure (one sent before it, answered late, says nothing of the store now).
    fn answered(&self, sent: Instant) {
        let mut out = self.out.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(since) = *out
            && sent > since
        {
            *out = None;
            self.tell(&StoreChange::Recovered {
                store: self.store.clone(),
                from: self.instead,
                after: since.elapsed(),
            });
        }
    }
}

impl<P, F> Store for Fallback<P, F>
where
    P: Store<Error = String>,
    F: Store,
{
    type Error = F::Error;

    async fn update(&self, pace: Pace, op: Op) -> Result<Answer, F::Error> {
        if !self.resting.is_resting() {
            let sent = Instant::now();
            match self.primary.update(pace, op).await {
                Ok(answer) => {
                    self.answered(sent);
                    return Ok(answer);
                }
                Err(reason) => self.failed(reason),
            }
        }
        self.fallback.update(pace, op).await
    }

    fn answering(&self) -> &'static str {
        if self.resting.is_resting() {
            self.fallback.answering()
        } else {
            self.primary.answering()
        }
    }
}

/// The host store, and this process while its file cannot be used.
pub(crate) type HostChain = Fallback<HostStore, ProcessState>;

/// Redis, and the host store while Redis cannot be reached.
#[cfg(feature = "redis")]
pub(crate) type RedisChain = Fallback<super::redis::RedisStore, HostChain>;

/// The host chain of the state file `name` in `dir` (the default directory for `None`).
pub(crate) fn host_chain(
    dir: Option<&std::path::Path>,
    name: &str,
    on_change: Option<FallbackObserver>,
) -> HostChain {
    let file = HostFile::new(dir, name);
    let store = format!("host ({})", file.path().display());
    Fallback::new(
        HostStore::new(file),
        ProcessState::default(),
        store,
        FallbackTo::Process,
        HOST_REST,
        on_change,
    )
}
