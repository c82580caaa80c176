//! [`Store`]: the one interface every store of a limit's state answers (the process, the host file,
//! Redis, and a [`Fallback`](super::fallback::Fallback) of two): [`Store::update`] with an [`Op`],
//! and the rule ([`Pace::apply`]) the stores in Rust run it by.

use std::future::Future;

use super::booking::{Booked, StoreKind};
use super::pacing::{Pace, PaceState};

/// One change of a limit's state.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Op {
    /// Book the next slot.
    Reserve,
    /// At the slot's time: go, unless a 429 came since it was booked (then book again). A slot
    /// booked in another store (before a fallback or a recovery) is booked again here.
    Confirm(Booked),
    /// A 429 that asked to wait this many nanoseconds, to a request sent on the slot `sent` (when
    /// known).
    Throttled {
        /// Nanoseconds to wait.
        wait: u64,
        /// The slot the request went on.
        sent: Option<Booked>,
    },
}

/// What a store answers an [`Op`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Answer {
    /// A slot to wait for.
    Booked(Booked),
    /// The confirmed slot is the caller's: send.
    Go,
    /// The 429 is recorded.
    Recorded,
}

impl Op {
    /// The op as a store of `kind` runs it: a confirmation of a slot another store booked is a
    /// new reservation, and a 429 to a request sent on one is of an unknown generation (this
    /// store's generation says nothing of it).
    pub(crate) fn in_store(self, kind: StoreKind) -> Self {
        match self {
            Self::Confirm(booked) if booked.store != kind => Self::Reserve,
            Self::Throttled {
                wait,
                sent: Some(booked),
            } if booked.store != kind => Self::Throttled { wait, sent: None },
            op => op,
        }
    }
}

impl Pace {
    /// Runs `op` on `state` at `now`, in a store of `kind`: the rule every store in Rust shares
    /// (the Redis store runs its Lua twin).
    pub(crate) fn apply(
        &self,
        kind: StoreKind,
        state: PaceState,
        now: u64,
        op: Op,
    ) -> (PaceState, Answer) {
        let booked = |ticket| {
            Answer::Booked(Booked {
                ticket,
                store: kind,
            })
        };
        match op.in_store(kind) {
            Op::Reserve => {
                let (state, ticket) = self.reserve(state, now);
                (state, booked(ticket))
            }
            Op::Confirm(held) => match self.confirm(state, now, held.ticket) {
                (state, None) => (state, Answer::Go),
                (state, Some(ticket)) => (state, booked(ticket)),
            },
            Op::Throttled { wait, sent } => (
                self.throttled(state, now, wait, sent.map(|b| b.ticket)),
                Answer::Recorded,
            ),
        }
    }
}

/// A store of a limit's state.
pub(crate) trait Store: Send + Sync {
    /// Why the store cannot be used now ([`Infallible`] for one that always can).
    type Error: Send;

    /// Runs `op` on the state.
    fn update(
        &self,
        pace: Pace,
        op: Op,
    ) -> impl Future<Output = Result<Answer, Self::Error>> + Send;

    /// The store that answers now, as a wait span names it.
    fn answering(&self) -> &'static str;
}
