//! [`Bookings`]: how many slots one limiter (a client, with its clones) holds booked in its store at
//! once, and the slots its callers gave up before their time, handed on to the next caller.
//!
//! A shared store's queue only moves on: a slot booked there is spent whether or not a request goes
//! in it. So a limiter (a client and its clones, or one `RateLimit::bind`) books at most
//! [`MAX_BOOKED`] slots ahead (its other callers wait their turn in the process), and a killed
//! process, or a thousand callers that all give up, costs the others sharing the key at most that
//! many intervals per limiter it had on the key. A caller that gives up while it waits for its slot
//! (its `acquire()` dropped by a `select!`, a timeout, a cancelled call) leaves the slot to the next
//! caller of the same limiter, which goes at that slot's time as if it had booked it; one dropped
//! while its reservation or confirmation is on its way to the store loses that one slot.
//!
//! A turn lasts from the reservation to the confirmation, two exchanges with the store: one
//! limiter sends at most [`MAX_BOOKED`] requests per store round trip (50 a second through a Redis
//! 40 ms away), far above the API's documented limits.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use tokio::sync::{Semaphore, SemaphorePermit};
use tokio::time::Instant;

use super::pacing::Ticket;

/// Which store a state lives in: each keeps counters (generations) of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StoreKind {
    Process,
    Host,
    #[cfg_attr(not(feature = "redis"), allow(dead_code))]
    Redis,
}

impl StoreKind {
    /// The name a wait span gives it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Process => "process",
            Self::Host => "host",
            Self::Redis => "redis",
        }
    }
}

/// A slot booked, and the store that booked it: only that store's generation says whether a 429
/// came since.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Booked {
    pub(crate) ticket: Ticket,
    pub(crate) store: StoreKind,
}

/// The most slots one limiter (a client and its clones, or one `bind`) holds booked in its store at
/// once: a process killed while it waits for them, however many callers it had, stalls the others
/// sharing the key by at most this many pacing intervals per limiter. Two, so that the next caller
/// has its slot while the one before waits for its own: the pace holds while the store's round
/// trip is shorter than the interval.
pub const MAX_BOOKED: u32 = 2;

/// The bookings of one limiter.
#[derive(Debug)]
pub(crate) struct Bookings {
    turns: Semaphore,
    /// How many callers wait for a turn.
    queued: AtomicUsize,
    /// Slots given up before their time, earliest first: the next caller's, while their time has
    /// not come.
    spare: Mutex<VecDeque<(Booked, Instant)>>,
}

impl Default for Bookings {
    fn default() -> Self {
        Self {
            turns: Semaphore::new(MAX_BOOKED as usize),
            queued: AtomicUsize::new(0),
            spare: Mutex::default(),
        }
    }
}

impl Bookings {
    /// Waits for a turn to book (one of [`MAX_BOOKED`]), and says how long it waited (zero when
    /// one was free); the turn ends when the [`Turn`] drops. When it has to wait, `queued` is told
    /// first how many callers wait ahead of it.
    pub(crate) async fn turn(&self, queued: impl FnOnce(usize)) -> (Turn<'_>, std::time::Duration) {
        let (permit, waited) = match self.turns.try_acquire() {
            Ok(permit) => (permit, std::time::Duration::ZERO),
            Err(_) => {
                let asked = Instant::now();
                let in_queue = InQueue::join(&self.queued);
                queued(in_queue.ahead);
                let permit = self
                    .turns
                    .acquire()
                    .await
                    .unwrap_or_else(|_| unreachable!("the semaphore is never closed"));
                drop(in_queue);
                (permit, asked.elapsed())
            }
        };
        let turn = Turn {
            bookings: self,
            holding: None,
            _permit: permit,
        };
        (turn, waited)
    }

    /// A slot another caller gave up whose time has not come, with the wait left until it.
    fn take_spare(&self) -> Option<Booked> {
        let mut spare = self.spare.lock().unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        while let Some((mut booked, at)) = spare.pop_front() {
            if at > now {
                booked.ticket.wait = u64::try_from((at - now).as_nanos()).unwrap_or(u64::MAX);
                return Some(booked);
            }
        }
        None
    }

    fn give_back(&self, booked: Booked, at: Instant) {
        let mut spare = self.spare.lock().unwrap_or_else(PoisonError::into_inner);
        let place = spare.partition_point(|(_, other)| *other <= at);
        spare.insert(place, (booked, at));
    }
}

/// A caller counted among those waiting for a turn while it waits (a dropped one too).
struct InQueue<'a> {
    queued: &'a AtomicUsize,
    ahead: usize,
}

impl<'a> InQueue<'a> {
    fn join(queued: &'a AtomicUsize) -> Self {
        let ahead = queued.fetch_add(1, Ordering::Relaxed);
        Self { queued, ahead }
    }
}

impl Drop for InQueue<'_> {
    fn drop(&mut self) {
        self.queued.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A caller's turn to hold a booking: the slot it waits for is given back if it drops first.
pub(crate) struct Turn<'a> {
    bookings: &'a Bookings,
    /// The ticket waited for, and its slot's time: given back when the turn drops before it.
    holding: Option<(Booked, Instant)>,
    _permit: SemaphorePermit<'a>,
}

impl Turn<'_> {
    /// A slot given up by another caller of this limiter, if one's time has not come.
    pub(crate) fn spare(&self) -> Option<Booked> {
        self.bookings.take_spare()
    }

    /// Waits for `booked`'s slot; a turn dropped meanwhile gives the slot back.
    pub(crate) async fn wait_for(&mut self, booked: Booked) {
        let at = Instant::now() + std::time::Duration::from_nanos(booked.ticket.wait);
        self.holding = Some((booked, at));
        tokio::time::sleep_until(at).await;
        // The slot's time came: it is this caller's to use, or lost with it.
        self.holding = None;
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        // Before the permit goes (fields drop after this), so that the caller it wakes finds it.
        if let Some((booked, at)) = self.holding.take() {
            self.bookings.give_back(booked, at);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn ticket(generation: u64) -> Booked {
        booked(0, generation)
    }

    fn booked(wait: u64, generation: u64) -> Booked {
        Booked {
            ticket: Ticket {
                wait,
                generation,
                blocked: false,
                before: 0,
            },
            store: StoreKind::Process,
        }
    }

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn a_slot_given_up_goes_to_the_next_caller_while_its_time_has_not_come() {
        let bookings = Bookings::default();
        let mut turn = bookings.turn(|_| {}).await.0;
        let waiting = tokio::time::timeout(
            Duration::from_millis(10),
            turn.wait_for(booked(100_000_000, 7)),
        );
        assert!(waiting.await.is_err(), "given up after 10 ms");
        drop(turn);
        let turn = bookings.turn(|_| {}).await.0;
        let spare = turn.spare().expect("the slot given up");
        assert_eq!(
            (spare.ticket.generation, spare.ticket.wait),
            (7, 90_000_000)
        );
        assert!(turn.spare().is_none(), "taken once");
        drop(turn);

        // A slot whose time passed before anyone asked is not handed on.
        let mut turn = bookings.turn(|_| {}).await.0;
        let waiting = tokio::time::timeout(
            Duration::from_millis(10),
            turn.wait_for(booked(50_000_000, 8)),
        );
        assert!(waiting.await.is_err());
        drop(turn);
        tokio::time::sleep(Duration::from_millis(60)).await;
        assert!(bookings.turn(|_| {}).await.0.spare().is_none());
    }

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn a_slot_used_is_not_given_back_and_spares_go_earliest_first() {
        let bookings = Bookings::default();
        let mut turn = bookings.turn(|_| {}).await.0;
        turn.wait_for(booked(5_000_000, 1)).await;
        drop(turn);
        assert!(
            bookings.turn(|_| {}).await.0.spare().is_none(),
            "its slot was used"
        );

        bookings.give_back(ticket(3), Instant::now() + Duration::from_millis(30));
        bookings.give_back(ticket(2), Instant::now() + Duration::from_millis(20));
        let turn = bookings.turn(|_| {}).await.0;
        assert_eq!(turn.spare().map(|b| b.ticket.generation), Some(2));
        assert_eq!(turn.spare().map(|b| b.ticket.generation), Some(3));
    }

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn at_most_max_booked_turns_at_once() {
        let bookings = Bookings::default();
        let held: Vec<_> = futures_turns(&bookings).await;
        assert_eq!(held.len(), MAX_BOOKED as usize);
        let told = std::cell::Cell::new(None);
        let next = tokio::time::timeout(
            Duration::from_secs(1),
            bookings.turn(|ahead| told.set(Some(ahead))),
        )
        .await;
        assert!(next.is_err(), "a third caller waits its turn");
        assert_eq!(told.get(), Some(0), "told it waits, none ahead");
        let (second, third) = (
            bookings.turn(|_| {}),
            bookings.turn(|ahead| told.set(Some(ahead))),
        );
        let waiting = tokio::time::timeout(Duration::from_secs(1), async {
            tokio::join!(second, third)
        });
        assert!(waiting.await.is_err());
        assert_eq!(told.get(), Some(1), "one ahead of the last");
        drop(held);
        assert!(
            tokio::time::timeout(Duration::from_secs(1), bookings.turn(|_| {}))
                .await
                .is_ok()
        );
    }

    async fn futures_turns(bookings: &Bookings) -> Vec<Turn<'_>> {
        let mut held = Vec::new();
        for _ in 0..MAX_BOOKED {
            held.push(bookings.turn(|_| {}).await.0);
        }
        held
    }
}
