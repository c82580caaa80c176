//! The pacing rule every store shares, as pure arithmetic on a small state: a sliding log of the
//! slots booked on the key (at most `MAX` calls in any interval of the window, so a burst of up to
//! `MAX` goes at once, safe under fixed-window and sliding-window servers alike), a block while a
//! server-requested wait runs, a generation that turns every reservation made before a 429 stale
//! (so that no call booked before it goes out into the block), and a learned rate: after a 429,
//! calls go one at a time at a share of the configured rate, which climbs back to just under the
//! rate that drew the 429 and only then, slowly, above it.
//!
//! Each sharer reads the one log with its own configuration: a process configured lower than the
//! others waits longer itself, and its slots count once each for the others.
//!
//! Times are nanoseconds of the store's clock (see `clock.rs`). A clock that goes back (a Redis
//! server's stepped clock, a reboot under a state file) moves every time of the state back with
//! it, so a state never waits for a time that will not come.

/// The slowest pace the rule learns: the configured interval this many times over.
pub const MAX_SLOWDOWN: f64 = 64.0;

/// What a 429 leaves of the rate: the rate it came at, times this (or less, when the request it
/// answered was one of only a few in its window: the server's limit is no more than those).
pub const DECREASE: f64 = 0.8;

/// The climb after a 429, in windows of the limit: without another 429, the rate climbs back from
/// the rate the 429 left to its aim (just under the rate that drew the 429, or that drew the first
/// of a run of them) in this many windows, whatever the depth of the cut; then on above it, slowly
/// (see [`ABOVE_WINDOWS`]), to the configured rate.
pub const RECOVERY_WINDOWS: u32 = 32;

/// How slowly the rate climbs above the aim of the climb after a 429: a fourth more (`1 /`
/// [`DECREASE`]) every this many times [`RECOVERY_WINDOWS`] windows, so that a limit the server
/// keeps below the configured one draws a 429 now and then, not every few windows. After one 429
/// at the configured rate, the configured rate is back in 91 windows.
pub const ABOVE_WINDOWS: u32 = 8;

/// Where the climb after a 429 aims: this share of the rate that drew it (just under it), before it
/// goes on, slowly, above.
pub(crate) const BELOW_THE_TROUBLE: f64 = 0.95;

/// How much longer than the window (and its 2%) the log's span is: [`MAX_BURST`] calls that go
/// together meet the server's window together, and the clocks of a host's processes differ by up
/// to 10 ms.
pub(crate) const JITTER_NS: u64 = 25_000_000;

/// The most calls of one burst the log keeps apart: a limit of more than this many calls per window
/// is kept as this many (or fewer) per a share of the window (`100/1m` as 25 per 15 s).
pub const MAX_BURST: u32 = 32;

/// The longest shared block after a 429, in windows of the limit, whatever the server's answer
/// says (a misread header must not stall a whole fleet).
pub const BLOCK_WINDOWS: u32 = 4;

/// The longest block any sharer's state is believed to hold, whatever the reader's own window:
/// one hour. Processes with different configurations share a key (a `10/10s` tool
/// beside a `20/2s` one): a block written within the writer's [`BLOCK_WINDOWS`] windows is kept by
/// every reader up to this bound (or up to its own longest block, when that is longer), and only a
/// state beyond both, which no configuration of the API's limits builds, is forgotten as corrupt.
pub const MAX_SHARED_BLOCK: std::time::Duration = std::time::Duration::from_secs(3_600);

/// [`MAX_SHARED_BLOCK`] in nanoseconds.
pub(crate) const MAX_SHARED_BLOCK_NS: u64 = MAX_SHARED_BLOCK.as_secs() * 1_000_000_000;

/// The longest queue a state may hold: reservations at the slowest pace. A state further ahead
/// than that (from a corrupt file) is forgotten; any queue callers can build short of it is kept.
pub const MAX_QUEUE: u64 = 1 << 16;

/// How many slots the shared log holds: the newest; a slot booked ahead that makes room is kept
/// as the log's floor (no slot is booked before it), so that a queue longer than the log is never
/// overtaken.
pub(crate) const LOG_CAP: usize = 2 * MAX_BURST as usize;

/// The slots booked on a key, earliest first.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Log {
    len: usize,
    at: [u64; LOG_CAP],
}

impl Default for Log {
    fn default() -> Self {
        Self {
            len: 0,
            at: [0; LOG_CAP],
        }
    }
}

impl std::fmt::Debug for Log {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.slots()).finish()
    }
}

impl Log {
    /// A log of `slots` (sorted here; the newest [`LOG_CAP`] kept).
    pub(crate) fn of(slots: &[u64]) -> Self {
        let mut log = Self::default();
        for &slot in slots {
            log.insert(slot);
        }
        log
    }

    /// The slots, earliest first.
    pub fn slots(&self) -> &[u64] {
        &self.at[..self.len]
    }

    /// Adds `slot` in its place; when the log is full, the earliest slot makes room and is
    /// returned.
    fn insert(&mut self, slot: u64) -> Option<u64> {
        let place = self.slots().partition_point(|&t| t <= slot);
        if self.len == LOG_CAP {
            if place == 0 {
                return Some(slot);
            }
            let dropped = self.at[0];
            self.at.copy_within(1..place, 0);
            self.at[place - 1] = slot;
            return Some(dropped);
        }
        self.at.copy_within(place..self.len, place + 1);
        self.at[place] = slot;
        self.len += 1;
        None
    }

    /// Keeps the slots `keep` holds for.
    fn retain(&mut self, keep: impl Fn(u64) -> bool) {
        let mut kept = 0;
        for i in 0..self.len {
            if keep(self.at[i]) {
                self.at[kept] = self.at[i];
                kept += 1;
            }
        }
        self.len = kept;
    }

    /// Every slot `back` nanoseconds earlier.
    fn shift_back(&mut self, back: u64) {
        for slot in &mut self.at[..self.len] {
            *slot = slot.saturating_sub(back);
        }
    }

    /// How many slots lie after `from`, up to `to` (a slot at `to` counted).
    fn within(&self, from: u64, to: u64) -> u32 {
        let count = self
            .slots()
            .iter()
            .filter(|&&t| t > from && t <= to)
            .count();
        u32::try_from(count).unwrap_or(u32::MAX)
    }

    /// Whether `slot` may join the log with at most `most` slots in any interval of `window`: every
    /// `most + 1` slots in a row that it would be one of span at least `window`.
    fn admits(&self, slot: u64, most: usize, window: u64) -> bool {
        let slots = self.slots();
        let place = slots.partition_point(|&t| t <= slot);
        // The slots in a row with the new one at `place`: `merged(i)`.
        let merged = |i: usize| match i.cmp(&place) {
            std::cmp::Ordering::Less => slots[i],
            std::cmp::Ordering::Equal => slot,
            std::cmp::Ordering::Greater => slots[i - 1],
        };
        let total = slots.len() + 1;
        (place.saturating_sub(most)..=place)
            .filter(|first| first + most < total)
            .all(|first| merged(first + most) - merged(first) >= window)
    }

    /// The earliest slot from `from` on that the log admits under `most` per `window`: `from`, or
    /// the end of one slot's window (the last slot's always admits).
    fn earliest(&self, from: u64, most: usize, window: u64) -> u64 {
        std::iter::once(from)
            .chain(
                self.slots()
                    .iter()
                    .map(|&t| t.saturating_add(window))
                    .filter(|&t| t > from),
            )
            .find(|&t| self.admits(t, most, window))
            .unwrap_or(u64::MAX)
    }
}

/// The shared state of one key's limit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PaceState {
    /// The slots booked, earliest first.
    pub log: Log,
    /// No slot is booked before this (the latest slot booked ahead that made room in the log).
    pub floor: u64,
    /// No request goes before this (a server-requested wait of the whole key).
    pub blocked_until: u64,
    /// The share of the configured rate the last 429 left (1 = the configured rate).
    pub rate: f64,
    /// The share of the configured rate at which the trouble of the last 429 began.
    pub trouble: f64,
    /// When the last 429 that lowered the rate came.
    pub throttled_at: u64,
    /// How many 429s the state has seen: a reservation made under an older generation is stale.
    pub generation: u64,
    /// The latest time the state was used at (to notice a clock that went back).
    pub seen: u64,
}

impl Default for PaceState {
    fn default() -> Self {
        Self {
            log: Log::default(),
            floor: 0,
            blocked_until: 0,
            rate: 1.0,
            trouble: 1.0,
            throttled_at: 0,
            generation: 0,
            seen: 0,
        }
    }
}

/// A reservation: how long to wait before sending, and the generation it was made under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ticket {
    /// Nanoseconds to wait.
    pub wait: u64,
    /// The state's generation when the slot was reserved.
    pub generation: u64,
    /// Whether a block (a 429, here or anywhere the state is shared) was in force when it was
    /// reserved: the wait is the block's, not only the queue's.
    pub blocked: bool,
    /// How many slots of the key lay within the configured window before it when it was booked:
    /// a 429 to its request says the server's limit is no more than one call more.
    pub before: u32,
}

/// The pace of a limit as one sharer configured it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pace {
    /// The most calls in any interval of [`span`](Self::span) (at most [`MAX_BURST`]).
    pub burst: u32,
    /// Nanoseconds of the log's interval: the configured window (over how many parts a limit of
    /// more than [`MAX_BURST`] was kept in), 2% longer for network jitter, and 25 ms more (at most
    /// a tenth of it) for the clocks of a host's processes.
    pub span: u64,
    /// Nanoseconds between two requests at the configured rate (the window's part, 2% longer,
    /// over the burst).
    pub interval: u64,
    /// Nanoseconds of the limit's window, which blocks and the climb are counted in.
    pub window: u64,
}

impl Pace {
    /// At most `max` calls per `window` nanoseconds: kept as at most [`MAX_BURST`] calls per a
    /// share of the window where `max` is larger, with a 2% margin and 25 ms more.
    pub fn new(max: u32, window: u64) -> Self {
        let max = max.max(1);
        let parts = max.div_ceil(MAX_BURST);
        let burst = max / parts;
        let part = (window as f64 * 1.02 / f64::from(parts)).min(u64::MAX as f64) as u64;
        // A burst goes at once, so its calls meet the server's window together: the clocks of a
        // host's processes differ by up to 10 ms (`clock::host`), and a process wakes late now
        // and then. The log's span is longer by that much (at most a tenth of it).
        let span = if burst > 1 {
            part.saturating_add(JITTER_NS.min(part / 10))
        } else {
            part
        };
        Self {
            burst,
            span,
            interval: part / u64::from(burst),
            window,
        }
    }

    /// The share of the configured rate at `now`: what the last 429 left, climbing back to the
    /// climb's aim over [`RECOVERY_WINDOWS`] windows (quickly at first, slowly near it: the gap
    /// shrinks with the square of the time left), then on, slowly, above it: a fourth more
    /// (`1 / DECREASE`) every [`ABOVE_WINDOWS`] times as many windows, up to 1.
    pub fn share(&self, state: &PaceState, now: u64) -> f64 {
        if !state.rate.is_finite() || state.rate >= 1.0 || state.rate <= 0.0 {
            return 1.0;
        }
        let rate = state.rate.max(1.0 / MAX_SLOWDOWN);
        let trouble = self.trouble(state);
        let recovery = self
            .window
            .saturating_mul(u64::from(RECOVERY_WINDOWS))
            .max(1) as f64;
        let climbed = now.saturating_sub(state.throttled_at) as f64 / recovery;
        let share = if climbed <= 1.0 {
            trouble - (trouble - rate) * ((1.0 - climbed) * (1.0 - climbed))
        } else {
            trouble * (1.0 / DECREASE).powf((climbed - 1.0) / f64::from(ABOVE_WINDOWS))
        };
        share.min(1.0)
    }

    /// The aim of the climb after the last 429: at least the rate the 429 left.
    fn trouble(&self, state: &PaceState) -> f64 {
        let rate = state.rate.max(1.0 / MAX_SLOWDOWN);
        if state.trouble.is_finite() && state.trouble >= rate {
            state.trouble.min(1.0)
        } else {
            (rate / DECREASE).min(1.0)
        }
    }

    /// How many calls in any interval of how long at `share` of the configured rate: the burst in
    /// the span at the configured rate; one at a time at a learned rate (a burst is what the server
    /// refused).
    pub fn allowance(&self, share: f64) -> (usize, u64) {
        if share >= 1.0 {
            (self.burst as usize, self.span)
        } else {
            (
                1,
                (self.interval as f64 / share.max(1.0 / MAX_SLOWDOWN)).min(u64::MAX as f64) as u64,
            )
        }
    }

    /// Reserves the next slot at `now`: the state after it, and the ticket.
    pub fn reserve(&self, state: PaceState, now: u64) -> (PaceState, Ticket) {
        let mut state = self.sane(state, now);
        let (most, window) = self.allowance(self.share(&state, now));
        let mut from = now.max(state.blocked_until).max(state.floor);
        if state.log.slots().len() == LOG_CAP {
            // A full log makes room with its earliest slot: a new one goes after its latest, so
            // that the slot that makes room is never one the new one should have counted.
            from = from.max(state.log.slots()[LOG_CAP - 1]);
        }
        let slot = state.log.earliest(from, most, window);
        let before = state.log.within(slot.saturating_sub(self.span), slot);
        if let Some(dropped) = state.log.insert(slot)
            && dropped > now
        {
            state.floor = state.floor.max(dropped);
        }
        let ticket = Ticket {
            wait: slot - now,
            generation: state.generation,
            blocked: state.blocked_until > now,
            before,
        };
        (state, ticket)
    }

    /// Just before sending on `ticket`, at its slot: `None` when no 429 came since it was
    /// reserved (go), else a new reservation (the old slot is no longer the caller's).
    pub fn confirm(
        &self,
        state: PaceState,
        now: u64,
        ticket: Ticket,
    ) -> (PaceState, Option<Ticket>) {
        let state = self.sane(state, now);
        if state.generation == ticket.generation {
            (state, None)
        } else {
            let (state, ticket) = self.reserve(state, now);
            (state, Some(ticket))
        }
    }

    /// The state after a 429 at `now` whose answer asked to wait `wait` nanoseconds, to a request
    /// sent on `sent` (`None`: not known): nobody sends before the wait is over (at most
    /// [`BLOCK_WINDOWS`] windows), every reservation made before it is stale (its slot leaves the
    /// log), and the rate drops to [`DECREASE`] times the rate that drew it: its own, or, when
    /// lower, the share of one call more than the request's span held before it when it was
    /// booked (the server refused that many). The climb back aims just under that rate
    /// ([`BELOW_THE_TROUBLE`]), or, for one of a run of 429s, where the run's first aimed.
    /// A 429 answering a request sent into a block already known, or before another 429 cut the
    /// rate (its generation is older), cuts nothing more (ten 429s of requests in flight together
    /// cut the rate once, not ten times), but what its window held still lowers what was learned.
    pub fn throttled(
        &self,
        state: PaceState,
        now: u64,
        wait: u64,
        sent: Option<Ticket>,
    ) -> PaceState {
        let state = self.sane(state, now);
        let wait = wait.min(self.longest_block());
        let since_the_last_cut = sent.is_none_or(|ticket| ticket.generation == state.generation);
        let share = self.share(&state, now);
        let floor = 1.0 / MAX_SLOWDOWN;
        // The share of one call more than the request's span held before it when it was booked:
        // the server refused that many (when the requests reached it in the order they were
        // booked).
        let known = sent
            .map(|ticket| ticket.before)
            .filter(|before| *before >= 1)
            .map(|before| f64::from(before + 1) / f64::from(self.burst));
        let learned = state.rate > 0.0 && state.rate < 1.0;
        // The share the climb aims for, as the state had it before this 429.
        let aim = self.trouble(&state);
        let (rate, trouble, throttled_at) = if now >= state.blocked_until && since_the_last_cut {
            // One of a run of 429s (within a block's length of the last cut, while the rate
            // climbs back): the trouble began where the run's began. Else just under the rate
            // that drew this 429: its own, or the known one, if lower.
            let in_a_run = learned
                && share < aim
                && now.saturating_sub(state.throttled_at) < self.longest_block();
            let refused = known.map_or(share, |known| share.min(known));
            let rate = (refused * DECREASE).max(floor);
            let trouble = if in_a_run {
                known.map_or(aim, |known| aim.min(known * BELOW_THE_TROUBLE))
            } else {
                refused * BELOW_THE_TROUBLE
            };
            (rate, trouble.max(rate), now)
        } else if let Some(known) = known
            && learned
            && known * BELOW_THE_TROUBLE < aim
        {
            // A 429 that cuts nothing more (sent before the last cut, or into a block) still says
            // how many calls its window held: the learned rate keeps under that too.
            let rate = state.rate.min(known * DECREASE).max(floor);
            (
                rate,
                (known * BELOW_THE_TROUBLE).max(rate),
                state.throttled_at,
            )
        } else {
            (state.rate, state.trouble, state.throttled_at)
        };
        let blocked_until = state.blocked_until.max(now.saturating_add(wait));
        let mut log = state.log;
        log.retain(|slot| slot <= now);
        PaceState {
            log,
            floor: state.floor.min(now),
            blocked_until,
            rate,
            trouble,
            throttled_at,
            generation: state.generation.wrapping_add(1),
            seen: now,
        }
    }

    /// The longest shared block: [`BLOCK_WINDOWS`] windows.
    fn longest_block(&self) -> u64 {
        self.window.saturating_mul(u64::from(BLOCK_WINDOWS))
    }

    /// The state at `now`: moved back with a clock that went back, and forgotten when it cannot
    /// be one the rule built (a queue longer than [`MAX_QUEUE`] reservations at the slowest pace,
    /// a block longer than any sharer could write, a rate that is no number).
    fn sane(&self, state: PaceState, now: u64) -> PaceState {
        let back = state.seen.saturating_sub(now);
        let mut log = state.log;
        log.shift_back(back);
        // A slot an hour old matters to no sharer's window.
        log.retain(|slot| slot.saturating_add(MAX_SHARED_BLOCK_NS) > now);
        let state = PaceState {
            log,
            floor: state.floor.saturating_sub(back),
            blocked_until: state.blocked_until.saturating_sub(back),
            throttled_at: state.throttled_at.saturating_sub(back),
            seen: now,
            ..state
        };
        if self.believable(&state, now) {
            state
        } else {
            PaceState {
                seen: now,
                ..PaceState::default()
            }
        }
    }

    /// Whether the rule could have built `state` by `now` (its clock already moved back).
    fn believable(&self, state: &PaceState, now: u64) -> bool {
        let slowest = (self.interval as f64 * MAX_SLOWDOWN).min(u64::MAX as f64) as u64;
        let queue = slowest.saturating_mul(MAX_QUEUE);
        let latest = state
            .log
            .slots()
            .last()
            .copied()
            .unwrap_or(0)
            .max(state.floor);
        state.rate.is_finite()
            && !state.trouble.is_nan()
            && latest.saturating_sub(now) <= queue
            && state.blocked_until.saturating_sub(now)
                <= self.longest_block().max(MAX_SHARED_BLOCK_NS)
            && state.throttled_at <= now
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MS: u64 = 1_000_000;

    /// `10/1s`: bursts of 10 in any 1.02 s.
    fn pace() -> Pace {
        Pace::new(10, 1_000 * MS)
    }

    fn waits(pace: &Pace, state: &mut PaceState, now: u64, n: usize) -> Vec<u64> {
        (0..n)
            .map(|_| {
                let (next, ticket) = pace.reserve(*state, now);
                *state = next;
                ticket.wait / MS
            })
            .collect()
    }

    #[test]
    fn a_limit_is_kept_as_a_burst_in_a_span() {
        let twenty = Pace::new(20, 2_000 * MS);
        assert_eq!(
            (twenty.burst, twenty.span),
            (20, 2_065 * MS),
            "2% and 25 ms longer"
        );
        assert_eq!(twenty.interval, 102 * MS);
        // More than MAX_BURST per window: fewer per a share of it, never more in the window.
        let hundred = Pace::new(100, 60_000 * MS);
        assert_eq!((hundred.burst, hundred.span), (25, 15_325 * MS));
        assert_eq!(
            Pace::new(1, 100 * MS).span,
            102 * MS,
            "one at a time: 2% longer"
        );
        assert_eq!(
            Pace::new(10, 100 * MS).span,
            112_200_000,
            "a tenth longer at most"
        );
        let odd = Pace::new(33, 1_000 * MS);
        assert_eq!(odd.burst, 16, "16 per half window: 32 of 33 in the window");
    }

    #[test]
    fn a_burst_of_max_goes_at_once_then_the_window_holds() {
        let pace = pace();
        let mut state = PaceState::default();
        let now = 10_000 * MS;
        assert_eq!(waits(&pace, &mut state, now, 10), [0; 10]);
        // The next ten go when the first ten's window is over, at once again.
        assert_eq!(waits(&pace, &mut state, now, 10), [1_045; 10]);
        assert_eq!(waits(&pace, &mut state, now, 1), [2_090]);
        // Half-way through, the log is full: the next waits for the first's window to end.
        let mut state = PaceState::default();
        waits(&pace, &mut state, now, 5);
        waits(&pace, &mut state, now + 500 * MS, 5);
        assert_eq!(
            waits(&pace, &mut state, now + 600 * MS, 6),
            [445; 5].iter().copied().chain([945]).collect::<Vec<_>>()
        );
        // After a quiet spell the next request goes at once.
        assert_eq!(pace.reserve(state, now + 5_000 * MS).1.wait, 0);
    }

    /// Two sharers of a key, one configured `1/1m`: it waits a minute after the key's latest slot,
    /// and its slots count once each in the other's `20/2s` window; the other is never held back
    /// by its configuration.
    #[test]
    fn a_sharer_configured_lower_waits_alone() {
        let fast = Pace::new(20, 2_000 * MS);
        let slow = Pace::new(1, 60_000 * MS);
        let now = 10_000 * MS;
        let (state, first) = slow.reserve(PaceState::default(), now);
        assert_eq!(first.wait, 0);
        let (mut state, second) = slow.reserve(state, now);
        assert_eq!(
            second.wait,
            61_200 * MS,
            "the slow one waits its own minute"
        );
        // The slow one's first slot is one of the fast one's 20 in its window; its second, a
        // minute ahead, is not.
        assert_eq!(
            waits(&fast, &mut state, now + 10 * MS, 19),
            [0; 19],
            "the fast one goes on"
        );
        assert_eq!(
            waits(&fast, &mut state, now + 10 * MS, 1),
            [2_055],
            "its window holds 20"
        );
        assert_eq!(state.log.slots().len(), 22);
    }

    #[test]
    fn a_429_blocks_everyone_and_turns_every_older_reservation_stale() {
        // One at a time, 102 ms apart, in windows of a second.
        let pace = Pace {
            burst: 1,
            span: 102 * MS,
            interval: 102 * MS,
            window: 1_000 * MS,
        };
        let now = 10_000 * MS;
        let mut state = PaceState::default();
        let booked: Vec<Ticket> = (0..4)
            .map(|_| {
                let (next, ticket) = pace.reserve(state, now);
                state = next;
                ticket
            })
            .collect();
        assert_eq!(state.log.slots().len(), 4);
        // The first went at once and drew a 429 asking for 2 s: the slots booked ahead leave the
        // log, their tickets are stale.
        state = pace.throttled(state, now + 10 * MS, 2_000 * MS, None);
        assert_eq!(state.log.slots(), [now]);
        // The second wakes at its slot: its reservation is stale, it books again after the block.
        let (next, again) = pace.confirm(state, now + 102 * MS, booked[1]);
        state = next;
        let again = again.expect("a stale reservation books again");
        assert_eq!(again.wait, 2_010 * MS - 102 * MS, "after the server's wait");
        assert!(again.blocked);
        // The third books after it, at the slower pace the 429 left (102 ms / DECREASE).
        let (next, third) = pace.confirm(state, now + 204 * MS, booked[2]);
        state = next;
        let slower = (third.unwrap().wait - (2_010 * MS - 204 * MS)) as f64;
        let expected = 102.0 * MS as f64 / DECREASE;
        assert!((slower - expected).abs() < MS as f64, "{slower}");
        // A reservation made after the 429 is not stale: it goes at its slot.
        let (next, fresh) = pace.reserve(state, now + 300 * MS);
        assert_eq!(
            pace.confirm(next, now + 300 * MS + fresh.wait, fresh).1,
            None
        );
    }

    #[test]
    fn a_block_written_under_one_configuration_holds_for_another() {
        // A `10/10s` tool and a `20/2s` one share a key.
        let slow = Pace::new(10, 10_000 * MS);
        let fast = Pace::new(20, 2_000 * MS);
        let now = 1_000_000 * MS;
        let state = slow.throttled(PaceState::default(), now, 40_000 * MS, None);
        assert_eq!(
            state.blocked_until,
            now + 40_000 * MS,
            "within slow's 4 windows"
        );
        // The fast one's own longest block is 8 s: it keeps the 40 s block, the learned rate and
        // the generation, and books after the block.
        let (kept, ticket) = fast.reserve(state, now + 1_000 * MS);
        assert_eq!(ticket.wait, 39_000 * MS);
        assert!(ticket.blocked);
        assert_eq!(ticket.generation, state.generation);
        assert_eq!(kept.rate, state.rate);
        assert!(kept.rate < 1.0);
        // A block beyond what any sharer writes (an hour, or the reader's own longest when
        // longer) is a corrupt state: forgotten.
        let corrupt = PaceState {
            blocked_until: now + MAX_SHARED_BLOCK_NS + 1_000 * MS,
            ..state
        };
        let (forgotten, ticket) = fast.reserve(corrupt, now);
        assert_eq!(ticket.wait, 0);
        assert_eq!(forgotten.generation, 0);
        let hour_long_windows = Pace::new(60, MAX_SHARED_BLOCK_NS);
        let (_, ticket) = hour_long_windows.reserve(corrupt, now);
        assert!(
            ticket.wait > MAX_SHARED_BLOCK_NS,
            "within its own 4 windows"
        );
    }

    fn ticket(generation: u64, before: u32) -> Ticket {
        Ticket {
            wait: 0,
            generation,
            blocked: false,
            before,
        }
    }

    #[test]
    fn ten_429s_of_requests_in_flight_together_cut_the_rate_once() {
        let pace = pace();
        let now = 10_000 * MS;
        // Ten requests sent on slots of generation 0; no answer says how long to wait (the block is
        // one interval), and the answers come spread over a second.
        let mut state = PaceState::default();
        for answer in 0..10u64 {
            state = pace.throttled(
                state,
                now + answer * 150 * MS,
                pace.interval,
                Some(ticket(0, 9)),
            );
        }
        let at = now + 9 * 150 * MS;
        let once = pace.throttled(PaceState::default(), now, pace.interval, Some(ticket(0, 9)));
        assert!(
            (pace.share(&state, at) - pace.share(&once, at)).abs() < 1e-9,
            "one cut: {} where one 429 leaves {}",
            pace.share(&state, at),
            pace.share(&once, at)
        );
        assert_eq!(
            state.generation, 10,
            "each made the bookings before it stale"
        );
        // Unknown generations (a caller's own 429s) cut each time, as before.
        let mut unknown = PaceState::default();
        for answer in 0..3u64 {
            unknown = pace.throttled(unknown, now + answer * 150 * MS, pace.interval, None);
        }
        assert!(pace.share(&unknown, now + 300 * MS) < DECREASE * DECREASE);
        // A request sent after the cut, on the new generation, cuts again when it draws a 429.
        let later = at + 150 * MS;
        let after = pace.throttled(
            state,
            later,
            pace.interval,
            Some(ticket(state.generation, 9)),
        );
        assert!((pace.share(&after, later) - pace.share(&state, later) * DECREASE).abs() < 1e-9);
    }

    /// A 429 to a request that had only one other in its span when it was booked: the server
    /// refused two per window, so the rate drops at once below that (not by a fifth per 429), and
    /// the climb aims just under it, then goes on, slowly. Here the first 429 answered had three
    /// before it, and a 429 of the same burst, which cuts nothing more, teaches the two.
    #[test]
    fn a_429_to_one_of_few_in_its_window_learns_the_limit_at_once() {
        let pace = Pace::new(20, 2_000 * MS);
        let now = 10_000 * MS;
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        let first = pace.throttled(PaceState::default(), now, 0, Some(ticket(0, 3)));
        assert!(close(first.trouble, 4.0 / 20.0 * BELOW_THE_TROUBLE));
        let state = pace.throttled(first, now + 5 * MS, 0, Some(ticket(0, 1)));
        assert_eq!(state.throttled_at, now, "no second cut");
        let aim = 2.0 / 20.0 * BELOW_THE_TROUBLE;
        assert!(close(state.trouble, aim));
        assert!(close(pace.share(&state, now), 2.0 / 20.0 * DECREASE));
        let recovery = pace.window * u64::from(RECOVERY_WINDOWS);
        // Three fourths of the way back half-way through: quickly at first, slowly near it.
        let halfway = aim - (aim - 0.1 * DECREASE) / 4.0;
        assert!(close(pace.share(&state, now + recovery / 2), halfway));
        assert!(close(pace.share(&state, now + recovery), aim));
        // Above it, a fourth more every ABOVE_WINDOWS recoveries.
        let period = recovery * u64::from(ABOVE_WINDOWS);
        assert!(close(
            pace.share(&state, now + recovery + period),
            aim / DECREASE
        ));
        // At a learned rate, one call at a time: the interval of the aim.
        let (state, _) = pace.reserve(state, now + recovery);
        let (_, next) = pace.reserve(state, now + recovery);
        assert_eq!(next.wait, (102.0 * MS as f64 / aim) as u64);
        // A 429 to the first in its span says nothing of the limit: a cut by DECREASE.
        let alone = pace.throttled(PaceState::default(), now, 0, Some(ticket(0, 0)));
        assert!(close(pace.share(&alone, now), DECREASE));
        assert!(close(alone.trouble, BELOW_THE_TROUBLE));
    }

    #[test]
    fn the_rate_decreases_per_block_and_climbs_back_to_the_trouble_then_slowly_on() {
        let pace = pace();
        let now = 10_000 * MS;
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        let state = pace.throttled(PaceState::default(), now, 500 * MS, None);
        assert_eq!(pace.share(&state, now), DECREASE);
        // A 429 answering a request sent before the block (it ends 500 ms on) lowers nothing more.
        let inflight = pace.throttled(state, now + 20 * MS, 500 * MS, None);
        assert_eq!(
            pace.share(&inflight, now + 20 * MS),
            pace.share(&state, now + 20 * MS)
        );
        assert_eq!(inflight.generation, 2, "but older reservations are stale");
        // The climb aims just under the rate of the 429: half-way through the recovery, three
        // fourths of the way there; then at it; then slowly on, to the configured rate.
        let recovery = 1_000 * MS * u64::from(RECOVERY_WINDOWS);
        let aim = BELOW_THE_TROUBLE;
        let halfway = aim - (aim - DECREASE) / 4.0;
        assert!(close(pace.share(&state, now + recovery / 2), halfway));
        assert!(close(pace.share(&state, now + recovery), aim));
        assert!(pace.share(&state, now + recovery * 2) > aim);
        assert!(close(pace.share(&state, now + recovery * 5), 1.0));
        // Another 429 within a block's length of the last cut, while the rate climbs back, is one
        // of a run: it cuts the rate it came at, and the climb aims where the run's first did.
        let soon = now + 3_000 * MS;
        let again = pace.throttled(state, soon, 0, None);
        assert!(close(
            pace.share(&again, soon),
            pace.share(&state, soon) * DECREASE
        ));
        assert!(close(again.trouble, aim));
        // Later, still climbing, a 429 says the trouble began lower: the climb aims under it.
        let later = now + recovery / 2;
        let lower = pace.throttled(state, later, 0, None);
        assert!(close(pace.share(&lower, later), halfway * DECREASE));
        assert!(close(lower.trouble, halfway * aim));
        assert!(close(pace.share(&lower, later + recovery), halfway * aim));
        // Never slower than MAX_SLOWDOWN times the interval.
        let mut slowest = PaceState::default();
        for step in 0..60 {
            slowest = pace.throttled(slowest, now + step * 10 * MS, 0, None);
        }
        let at = now + 59 * 10 * MS;
        assert_eq!(pace.share(&slowest, at), 1.0 / MAX_SLOWDOWN);
        assert_eq!(pace.allowance(pace.share(&slowest, at)), (1, 6_528 * MS));
    }

    /// The windows from a cut by one 429 (or a run of them) at the configured rate back to it: the
    /// climb to the aim, then from the aim to 1 at a fourth more every ABOVE_WINDOWS recoveries.
    fn windows_back() -> u64 {
        let above =
            f64::from(ABOVE_WINDOWS) * (1.0 / BELOW_THE_TROUBLE).ln() / (1.0 / DECREASE).ln();
        (f64::from(RECOVERY_WINDOWS) * (1.0 + above)).ceil() as u64
    }

    /// Whatever the depth of the cut (five minutes of 429s in a row, or another client of the key
    /// that does not use the SDK), the climb reaches its aim (just under the rate at which the
    /// run began, here the configured one) within RECOVERY_WINDOWS windows of the last 429, not
    /// sooner, and the configured rate about three times that later (91 windows in all).
    #[test]
    fn from_the_floor_the_rate_climbs_back_within_the_recovery_windows() {
        let pace = pace();
        let window = 1_000 * MS;
        let mut state = PaceState::default();
        let mut now = 10_000 * MS;
        for _ in 0..300 {
            now += 10 * MS;
            state = pace.throttled(state, now, 0, None);
        }
        assert_eq!(pace.share(&state, now), 1.0 / MAX_SLOWDOWN);
        assert_eq!(
            state.trouble, BELOW_THE_TROUBLE,
            "the run began at the configured rate"
        );
        let back = now + window * u64::from(RECOVERY_WINDOWS);
        assert!((pace.share(&state, back) - BELOW_THE_TROUBLE).abs() < 1e-9);
        assert!(
            pace.share(&state, back - window) < BELOW_THE_TROUBLE,
            "not sooner"
        );
        assert_eq!(windows_back(), 91);
        let configured = now + window * windows_back();
        assert_eq!(pace.share(&state, configured), 1.0);
        assert!(pace.share(&state, configured - window) < 1.0);
        // Reservations follow: after the climb, bursts again.
        let (state, _) = pace.reserve(state, configured);
        let (_, ticket) = pace.reserve(state, configured);
        assert_eq!(ticket.wait, 0);
    }

    proptest! {
        #[test]
        fn any_cut_is_climbed_back_within_the_recovery_windows(cuts in 1usize..400, gap in 0u64..20_000) {
            let pace = pace();
            let mut state = PaceState::default();
            let mut now = 10_000 * MS;
            for _ in 0..cuts {
                now += gap * MS;
                state = pace.throttled(state, now, 0, None);
            }
            // No 429 said how many calls its window held, and no cut goes below the floor.
            let aim = state.trouble;
            prop_assert!(aim >= BELOW_THE_TROUBLE / MAX_SLOWDOWN);
            let back = now + pace.window * u64::from(RECOVERY_WINDOWS);
            prop_assert!((pace.share(&state, back) - aim).abs() < 1e-9);
            // From the aim, a fourth more every ABOVE_WINDOWS recoveries, to the configured rate.
            let periods = (1.0 / aim).ln() / (1.0 / DECREASE).ln();
            let windows = f64::from(RECOVERY_WINDOWS) * (1.0 + f64::from(ABOVE_WINDOWS) * periods);
            let configured = now + pace.window * (windows.ceil() as u64 + 1);
            prop_assert_eq!(pace.share(&state, configured), 1.0);
        }
    }

    /// A server that admits `max` requests per fixed `window` (the emulator's count), and answers a
    /// 429 with the seconds left of the window (`X-RateLimit-Reset`).
    struct FixedWindows {
        max: u32,
        window: u64,
        start: u64,
        count: u32,
    }

    impl FixedWindows {
        /// Counts a request at `at`: whether it is admitted.
        fn admit(&mut self, at: u64) -> Result<(), ()> {
            if self.count == 0 || at - self.start >= self.window {
                self.start = at;
                self.count = 0;
            }
            if self.count >= self.max {
                return Err(());
            }
            self.count += 1;
            Ok(())
        }

        /// The wait a 429 at `at` asks for: the window's time left, in whole seconds.
        fn reset(&self, at: u64) -> u64 {
            let left = self.window - (at - self.start);
            left.div_ceil(1_000 * MS) * 1_000 * MS
        }
    }

    /// `sharers` processes of one configuration on one key, each making `calls` calls one after
    /// another (a call waits for its slot, checks it just before it goes, and after a 429 tells the
    /// rule and goes again), against `server`, its answers 20 ms after the request: the 429s to
    /// requests sent before the first 429 came back (the first burst), the 429s after those, and
    /// the calls served per second from the first to the last.
    fn fleet_against(
        pace: Pace,
        server: &mut FixedWindows,
        sharers: usize,
        calls: usize,
        jitter_ms: u64,
    ) -> (usize, usize, f64) {
        #[derive(Clone, Copy)]
        enum Next {
            Book,
            Send(Ticket),
            Arrive(Ticket),
            Answer(Ticket, Option<u64>),
        }
        const ANSWER: u64 = 20 * MS;
        // Each sharer's clock off by up to `jitter_ms`, and each request later by up to as much
        // again (deterministic).
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut random = move |below: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            if below == 0 { 0 } else { seed % below }
        };
        let skews: Vec<u64> = (0..sharers).map(|_| random(jitter_ms * MS)).collect();
        let mut state = PaceState::default();
        let start = 1_000_000 * MS;
        // (time, sharer, what it does next), taken earliest first.
        let mut queue: Vec<(u64, usize, Next)> =
            (0..sharers).map(|s| (start, s, Next::Book)).collect();
        let mut done = vec![0; sharers];
        let (mut first_burst, mut after, mut first_answer) = (0, 0, None::<u64>);
        let (mut first_served, mut last_served) = (None::<u64>, start);
        while let Some(i) = (0..queue.len()).min_by_key(|&i| (queue[i].0, queue[i].1)) {
            let (now, sharer, next) = queue.swap_remove(i);
            match next {
                Next::Book => {
                    let (next_state, ticket) = pace.reserve(state, now);
                    state = next_state;
                    queue.push((now + ticket.wait, sharer, Next::Send(ticket)));
                }
                Next::Send(ticket) => {
                    let (next_state, again) = if ticket.wait > 0 {
                        pace.confirm(state, now, ticket)
                    } else {
                        (state, None)
                    };
                    state = next_state;
                    match again {
                        Some(again) => queue.push((now + again.wait, sharer, Next::Send(again))),
                        None => {
                            let late = skews[sharer] + random(jitter_ms * MS);
                            queue.push((now + late, sharer, Next::Arrive(ticket)));
                        }
                    }
                }
                Next::Arrive(ticket) => {
                    if server.admit(now).is_ok() {
                        first_served.get_or_insert(now);
                        last_served = now;
                        queue.push((now + ANSWER, sharer, Next::Answer(ticket, None)));
                    } else {
                        let wait = server.reset(now);
                        if first_answer.is_none_or(|answered| now < answered) {
                            first_burst += 1;
                        } else {
                            after += 1;
                        }
                        queue.push((now + ANSWER, sharer, Next::Answer(ticket, Some(wait))));
                    }
                }
                Next::Answer(ticket, refused) => {
                    if let Some(wait) = refused {
                        first_answer.get_or_insert(now);
                        state = pace.throttled(state, now, wait, Some(ticket));
                        queue.push((now, sharer, Next::Book));
                    } else {
                        done[sharer] += 1;
                        if done[sharer] < calls {
                            queue.push((now, sharer, Next::Book));
                        }
                    }
                }
            }
        }
        let took = (last_served - first_served.unwrap_or(start)) as f64 / (1_000 * MS) as f64;
        let per_second = (sharers * calls - 1) as f64 / took;
        (first_burst, after, per_second)
    }

    /// Eight processes configured `20/2s` against a server that allows a tenth of it (`1/1s`),
    /// 240 calls between them, with each process's clock and requests up to 0, 10 or 20 ms late (a
    /// host's processes differ by up to 10 ms, and wake late under load): the first burst draws a
    /// 429 for each of its requests past the first (they went before any answer came back), those
    /// 429s learn the limit from the calls that were in the refused ones' windows, and from then on
    /// at most three 429s, with the server's limit served within a tenth.
    #[test]
    fn a_fleet_configured_ten_times_too_high_learns_the_limit_and_keeps_to_it() {
        for jitter_ms in [0, 10, 20] {
            let mut server = FixedWindows {
                max: 1,
                window: 1_000 * MS,
                start: 0,
                count: 0,
            };
            let (first_burst, after, per_second) =
                fleet_against(Pace::new(20, 2_000 * MS), &mut server, 8, 30, jitter_ms);
            eprintln!(
                "{jitter_ms} ms late: first burst {first_burst}, after {after}, {per_second:.3}/s"
            );
            // Seven of the eight first requests, and the next call of the one served: all sent
            // before the first 429 came back.
            assert!(first_burst <= 8, "{first_burst} 429s in the first burst");
            assert!(
                after <= 3,
                "{jitter_ms} ms: {after} 429s after the first burst"
            );
            assert!(
                per_second >= 0.9,
                "{jitter_ms} ms: {per_second:.3} calls a second of 1"
            );
        }
    }

    #[test]
    fn the_shared_block_is_at_most_a_few_windows() {
        let pace = pace();
        let now = 10_000 * MS;
        let hour = 3_600_000 * MS;
        let state = pace.throttled(PaceState::default(), now, hour, None);
        assert_eq!(
            state.blocked_until - now,
            1_000 * MS * u64::from(BLOCK_WINDOWS)
        );
        assert_eq!(pace.reserve(state, now).1.wait, 4_000 * MS);
    }

    #[test]
    fn a_clock_that_goes_back_takes_the_state_with_it() {
        let pace = Pace::new(1, 100 * MS);
        let mut state = PaceState::default();
        let now = 10_000_000 * MS;
        waits(&pace, &mut state, now, 3);
        // The clock steps back an hour (a stepped wall clock, a reboot under the file): the queue
        // is still 306 ms long, not an hour and 306 ms.
        let back = now - 3_600_000 * MS;
        assert_eq!(pace.reserve(state, back).1.wait, 306 * MS);
    }

    #[test]
    fn a_queue_longer_than_the_log_is_never_overtaken() {
        let pace = Pace::new(1, 100 * MS);
        let now = 10_000 * MS;
        let mut state = PaceState::default();
        let queued = waits(&pace, &mut state, now, 3 * LOG_CAP);
        let expected: Vec<u64> = (0..3 * LOG_CAP as u64).map(|i| i * 102).collect();
        assert_eq!(queued, expected);
        assert_eq!(state.log.slots().len(), LOG_CAP);
        assert!(state.floor > now, "the slots booked ahead that made room");
        // A sharer of a faster configuration books after the floor, not in the slots dropped.
        let fast = Pace::new(32, 100 * MS);
        let (_, ticket) = fast.reserve(state, now);
        assert!(ticket.wait >= state.floor - now, "{} ms", ticket.wait / MS);
    }

    #[test]
    fn a_long_queue_is_kept_and_an_impossible_state_is_forgotten() {
        let pace = Pace::new(1, 100 * MS);
        let now = 10_000 * MS;
        // At the slowest pace, a queue of 60 calls is more than six minutes long: kept.
        let mut state = PaceState {
            rate: 1.0 / MAX_SLOWDOWN,
            trouble: 1.0 / MAX_SLOWDOWN,
            throttled_at: now,
            ..PaceState::default()
        };
        let queued = waits(&pace, &mut state, now, 60);
        assert!(queued[59].abs_diff(59 * 6_528) <= 1, "{}", queued[59]);
        let next = pace.reserve(state, now).1.wait / MS;
        assert!(next.abs_diff(60 * 6_528) <= 1, "kept: {next}");
        for state in [
            PaceState {
                log: Log::of(&[u64::MAX]),
                ..PaceState::default()
            },
            PaceState {
                floor: u64::MAX,
                ..PaceState::default()
            },
            PaceState {
                blocked_until: now + 100 * 3_600_000 * MS,
                ..PaceState::default()
            },
            PaceState {
                rate: f64::NAN,
                log: Log::of(&[now + 1_000 * MS]),
                ..PaceState::default()
            },
            PaceState {
                throttled_at: now + 1,
                seen: now - 1,
                log: Log::of(&[now + 1_000 * MS]),
                ..PaceState::default()
            },
        ] {
            assert_eq!(pace.reserve(state, now).1.wait, 0, "{state:?}");
        }
    }

    #[test]
    fn a_state_forgotten_is_seen_now_so_a_clock_that_then_goes_back_takes_it_along() {
        let pace = Pace::new(1, 100 * MS);
        let now = 10_000_000 * MS;
        let corrupt = PaceState {
            rate: f64::NAN,
            log: Log::of(&[now + 1_000 * MS]),
            ..PaceState::default()
        };
        let (state, ticket) = pace.reserve(corrupt, now);
        assert_eq!(ticket.wait, 0, "forgotten");
        let back = now - 3_600_000 * MS;
        assert_eq!(pace.reserve(state, back).1.wait, pace.interval);
    }

    #[test]
    fn a_rate_that_is_no_share_is_the_configured_rate() {
        let pace = pace();
        for rate in [f64::NAN, 1.5, 0.0, -3.0, f64::INFINITY] {
            let state = PaceState {
                rate,
                ..PaceState::default()
            };
            assert_eq!(pace.share(&state, 0), 1.0, "{rate}");
        }
    }

    /// One step of a random run: reserve, confirm a ticket, or a 429, after some time (the clock
    /// may also go back).
    #[derive(Debug, Clone)]
    enum Step {
        Reserve,
        Confirm(usize),
        Throttled(u64),
    }

    fn step() -> impl Strategy<Value = (Step, i64)> {
        let step = prop_oneof![
            4 => Just(Step::Reserve),
            2 => any::<usize>().prop_map(Step::Confirm),
            1 => (0u64..10_000).prop_map(Step::Throttled),
        ];
        (step, -2_000i64..3_000)
    }

    proptest! {
        #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

        /// Whatever sharers of whatever configurations book at whatever times (fewer than the
        /// log holds), each slot keeps its sharer's rule over the slots booked before it: no
        /// interval of the sharer's span around it holds more than its burst. The server's count,
        /// whether it counts in fixed or sliding windows.
        #[test]
        fn no_span_holds_more_than_the_burst(
            bookings in proptest::collection::vec((0usize..3, 0u64..400), 1..LOG_CAP),
        ) {
            let paces = [
                Pace::new(20, 2_000 * MS),
                Pace::new(5, 500 * MS),
                Pace::new(1, 3_000 * MS),
            ];
            let mut state = PaceState::default();
            let mut now = 1_000_000 * MS;
            let mut slots: Vec<u64> = Vec::new();
            for (sharer, advance_ms) in bookings {
                now += advance_ms * MS;
                let pace = paces[sharer];
                let (next, ticket) = pace.reserve(state, now);
                state = next;
                let slot = now + ticket.wait;
                slots.push(slot);
                let mut sorted = slots.clone();
                sorted.sort_unstable();
                // Every interval [first, first + span) that holds the new slot.
                for first in sorted.iter().filter(|t| **t <= slot && slot - **t < pace.span) {
                    let within = sorted
                        .iter()
                        .filter(|t| **t >= *first && **t - first < pace.span)
                        .count();
                    prop_assert!(within <= pace.burst as usize, "{within} from {first} ({sharer})");
                }
            }
        }

        #[test]
        fn any_state_gives_a_bounded_wait(
            slot in any::<u64>(), blocked in any::<u64>(), rate in any::<f64>(),
            throttled_at in any::<u64>(), seen in any::<u64>(), now in 0u64..(u64::MAX / 2),
            n in 1usize..40,
        ) {
            let pace = Pace::new(1, 100 * MS);
            let state = PaceState {
                log: Log::of(&[slot]), floor: 0, blocked_until: blocked, rate, trouble: rate,
                throttled_at, generation: 0, seen,
            };
            let (mut state, first) = pace.reserve(state, now);
            prop_assert!(first.wait <= MAX_QUEUE * 6_528 * MS);
            let mut last = first.wait;
            for _ in 1..n {
                let (next, ticket) = pace.reserve(state, now);
                prop_assert!(ticket.wait >= last + pace.interval, "slots never overlap");
                prop_assert!(ticket.wait <= last + pace.interval * MAX_SLOWDOWN as u64 + 1);
                state = next;
                last = ticket.wait;
            }
        }

        /// Whatever the callers and the server do, and however the clock moves, the rule never
        /// builds a state it would forget.
        #[test]
        fn the_rule_never_forgets_a_state_it_built(steps in proptest::collection::vec(step(), 1..200)) {
            let pace = pace();
            let mut state = PaceState::default();
            let mut now = 1_000_000 * MS;
            let mut tickets = Vec::new();
            for (step, advance_ms) in steps {
                now = now.saturating_add_signed(advance_ms * MS as i64);
                state = match step {
                    Step::Reserve => {
                        let (next, ticket) = pace.reserve(state, now);
                        tickets.push(ticket);
                        next
                    }
                    Step::Confirm(i) if !tickets.is_empty() => {
                        let (next, again) = pace.confirm(state, now, tickets[i % tickets.len()]);
                        tickets.extend(again);
                        next
                    }
                    Step::Confirm(_) => state,
                    Step::Throttled(wait_ms) => pace.throttled(state, now, wait_ms * MS, None),
                };
                let back = state.seen.saturating_sub(now);
                let mut moved = state;
                moved.log.shift_back(back);
                moved.floor = state.floor.saturating_sub(back);
                moved.blocked_until = state.blocked_until.saturating_sub(back);
                moved.throttled_at = state.throttled_at.saturating_sub(back);
                prop_assert!(pace.believable(&moved, now), "{state:?} at {now}");
            }
        }
    }
}
