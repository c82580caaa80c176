//! The pacing rule every store shares, as pure arithmetic on a small state: a reservation in the
//! style of GCRA (each request takes the next free slot, one pacing interval after the last), a
//! block while a server-requested wait runs, a generation that turns every reservation made before
//! a 429 stale (so that no call booked before it goes out into the block), and a learned rate:
//! additive increase, multiplicative decrease (AIMD), as TCP finds a link's capacity.
//!
//! Times are nanoseconds of the store's clock (see `clock.rs`). A clock that goes back (a Redis
//! server's stepped clock, a reboot under a state file) moves every time of the state back with
//! it, so a state never waits for a time that will not come.

/// The slowest pace the rule learns: the configured interval this many times over.
pub const MAX_SLOWDOWN: f64 = 64.0;

/// What a 429 leaves of the rate: the rate it came at, times this.
pub const DECREASE: f64 = 0.8;

/// The climb after a 429, in windows of the limit: without another 429, the rate climbs back
/// linearly to the rate the last 429 came at in this many windows (slowly, where the server's
/// limit was found), and never slower than a line from the floor (one [`MAX_SLOWDOWN`]th) to the
/// configured rate over as many windows: so the configured rate is back within this many windows
/// of the last 429, whatever the depth of the cut.
pub const RECOVERY_WINDOWS: u32 = 32;

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

/// The shared state of one key's limit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PaceState {
    /// When the next request may go (the theoretical arrival time).
    pub next_slot: u64,
    /// No request goes before this (a server-requested wait of the whole key).
    pub blocked_until: u64,
    /// The share of the configured rate the last 429 left (1 = the configured rate).
    pub rate: f64,
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
            next_slot: 0,
            blocked_until: 0,
            rate: 1.0,
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
}

/// The pace of a limit: the interval between two requests, and its window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pace {
    /// Nanoseconds between two requests at the configured rate.
    pub interval: u64,
    /// Nanoseconds of the limit's window.
    pub window: u64,
}

impl Pace {
    /// The share of the configured rate at `now`: what the last 429 left, climbing back linearly to
    /// the rate it came at over [`RECOVERY_WINDOWS`] windows and on at that pace, but never below a
    /// line from the floor to 1 over as many windows: 1 within [`RECOVERY_WINDOWS`] windows.
    pub fn share(&self, state: &PaceState, now: u64) -> f64 {
        let floor = 1.0 / MAX_SLOWDOWN;
        if !state.rate.is_finite() || state.rate >= 1.0 || state.rate <= 0.0 {
            return 1.0;
        }
        let rate = state.rate.max(floor);
        let recovery = self
            .window
            .saturating_mul(u64::from(RECOVERY_WINDOWS))
            .max(1) as f64;
        let climbed = now.saturating_sub(state.throttled_at) as f64 / recovery;
        let towards_the_429 = rate * (1.0 + (1.0 / DECREASE - 1.0) * climbed);
        let bound = floor + (1.0 - floor) * climbed;
        towards_the_429.max(bound).min(1.0)
    }

    /// The interval between two requests at `now`.
    fn interval_at(&self, state: &PaceState, now: u64) -> u64 {
        (self.interval as f64 / self.share(state, now)).min(u64::MAX as f64) as u64
    }

    /// Reserves the next slot at `now`: the state after it, and the ticket.
    pub fn reserve(&self, state: PaceState, now: u64) -> (PaceState, Ticket) {
        let state = self.sane(state, now);
        let slot = state.next_slot.max(now).max(state.blocked_until);
        let next = PaceState {
            next_slot: slot.saturating_add(self.interval_at(&state, now)),
            ..state
        };
        let ticket = Ticket {
            wait: slot - now,
            generation: state.generation,
            blocked: state.blocked_until > now,
        };
        (next, ticket)
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
    /// sent on a slot of the generation `sent` (`None`: not known): nobody sends before the wait is
    /// over (at most [`BLOCK_WINDOWS`] windows), every reservation made before it is stale, and the
    /// rate drops to [`DECREASE`] times the rate it came at, unless the 429 answers a request sent
    /// into a block already known, or sent before another 429 cut the rate (its generation is
    /// older: ten 429s of requests in flight together cut the rate once, not ten times).
    pub fn throttled(&self, state: PaceState, now: u64, wait: u64, sent: Option<u64>) -> PaceState {
        let state = self.sane(state, now);
        let wait = wait.min(self.longest_block());
        let since_the_last_cut = sent.is_none_or(|generation| generation == state.generation);
        let (rate, throttled_at) = if now >= state.blocked_until && since_the_last_cut {
            let rate = (self.share(&state, now) * DECREASE).max(1.0 / MAX_SLOWDOWN);
            (rate, now)
        } else {
            (state.rate, state.throttled_at)
        };
        let blocked_until = state.blocked_until.max(now.saturating_add(wait));
        PaceState {
            next_slot: blocked_until,
            blocked_until,
            rate,
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
        let state = PaceState {
            next_slot: state.next_slot.saturating_sub(back),
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
        state.rate.is_finite()
            && state.next_slot.saturating_sub(now) <= slowest.saturating_mul(MAX_QUEUE)
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

    fn pace() -> Pace {
        Pace {
            interval: 100 * MS,
            window: 1_000 * MS,
        }
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
    fn requests_take_evenly_spaced_slots() {
        let pace = pace();
        let mut state = PaceState::default();
        let now = 10_000 * MS;
        assert_eq!(waits(&pace, &mut state, now, 4), [0, 100, 200, 300]);
        // After a quiet spell the next request goes at once.
        assert_eq!(pace.reserve(state, now + 5_000 * MS).1.wait, 0);
    }

    #[test]
    fn a_429_blocks_everyone_and_turns_every_older_reservation_stale() {
        let pace = pace();
        let now = 10_000 * MS;
        let mut state = PaceState::default();
        let booked: Vec<Ticket> = (0..4)
            .map(|_| {
                let (next, ticket) = pace.reserve(state, now);
                state = next;
                ticket
            })
            .collect();
        // The first went at once and drew a 429 asking for 2 s.
        state = pace.throttled(state, now + 10 * MS, 2_000 * MS, None);
        // The second wakes at its slot: its reservation is stale, it books again after the block.
        let (next, again) = pace.confirm(state, now + 100 * MS, booked[1]);
        state = next;
        let again = again.expect("a stale reservation books again");
        assert_eq!(again.wait, 2_010 * MS - 100 * MS, "after the server's wait");
        // The third books after it, at the slower pace the 429 left (100 ms / DECREASE).
        let (next, third) = pace.confirm(state, now + 200 * MS, booked[2]);
        state = next;
        let slower = (third.unwrap().wait - (2_010 * MS - 200 * MS)) as f64;
        let expected = 100.0 * MS as f64 / DECREASE;
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
        let slow = Pace {
            interval: 1_020 * MS,
            window: 10_000 * MS,
        };
        let fast = Pace {
            interval: 102 * MS,
            window: 2_000 * MS,
        };
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
        let hour_long_windows = Pace {
            interval: 60_000 * MS,
            window: MAX_SHARED_BLOCK_NS,
        };
        let (_, ticket) = hour_long_windows.reserve(corrupt, now);
        assert!(
            ticket.wait > MAX_SHARED_BLOCK_NS,
            "within its own 4 windows"
        );
    }

    #[test]
    fn ten_429s_of_requests_in_flight_together_cut_the_rate_once() {
        let pace = pace();
        let now = 10_000 * MS;
        // Ten requests sent on slots of generation 0; no answer says how long to wait (the block is
        // one interval), and the answers come spread over a second.
        let mut state = PaceState::default();
        for answer in 0..10u64 {
            state = pace.throttled(state, now + answer * 150 * MS, pace.interval, Some(0));
        }
        let at = now + 9 * 150 * MS;
        let once = pace.throttled(PaceState::default(), now, pace.interval, Some(0));
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
        let after = pace.throttled(state, at + 150 * MS, pace.interval, Some(state.generation));
        assert!(pace.share(&after, at + 150 * MS) < DECREASE * 0.81);
    }

    #[test]
    fn the_rate_decreases_per_block_and_climbs_back_linearly() {
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
        // Half-way through the recovery, half-way back to the rate of the 429; then at it; and
        // on, at that pace, to the configured rate (and no further).
        let recovery = 1_000 * MS * u64::from(RECOVERY_WINDOWS);
        let halfway = DECREASE + (1.0 - DECREASE) / 2.0;
        assert!(close(pace.share(&state, now + recovery / 2), halfway));
        assert!(close(pace.share(&state, now + recovery), 1.0));
        assert!(close(pace.share(&state, now + recovery * 5), 1.0));
        // A 429 after the block lowers the rate it came at again.
        let later = now + recovery / 2;
        let again = pace.throttled(state, later, 0, None);
        assert!(close(pace.share(&again, later), halfway * DECREASE));
        // From there, the climb goes at its pace, a quarter of the way in a quarter of the time;
        // and the line has it back at the configured rate when the recovery is over.
        assert!(close(
            pace.share(&again, later + recovery / 4),
            halfway * DECREASE * (1.0 + (1.0 / DECREASE - 1.0) / 4.0)
        ));
        assert!(close(pace.share(&again, later + recovery), 1.0));
        // Far down, the line from the floor is the faster: at 1/4 of the configured rate, half-way
        // through the recovery it is at the line's half-way point, not at 1/4 * 1.125.
        let deep = PaceState {
            rate: 0.25,
            throttled_at: now,
            ..state
        };
        let floor = 1.0 / MAX_SLOWDOWN;
        assert!(close(
            pace.share(&deep, now + recovery / 2),
            floor + (1.0 - floor) / 2.0
        ));
        assert!(close(
            pace.share(&deep, now + recovery / 8),
            0.25 * (1.0 + 0.25 / 8.0)
        ));
        // Never slower than MAX_SLOWDOWN times the interval.
        let mut slowest = PaceState::default();
        for step in 0..60 {
            slowest = pace.throttled(slowest, now + step * 10 * MS, 0, None);
        }
        let at = now + 59 * 10 * MS;
        assert_eq!(pace.share(&slowest, at), 1.0 / MAX_SLOWDOWN);
        assert_eq!(pace.interval_at(&slowest, at), 6_400 * MS);
    }

    /// Whatever the depth of the cut (five minutes of 429s, or another client of the key that
    /// does not use the SDK), the configured rate is back within RECOVERY_WINDOWS windows of the
    /// last 429: from the floor, in exactly that many (the climb alone took some 8,000).
    #[test]
    fn from_the_floor_the_rate_is_back_within_the_recovery_windows() {
        let pace = pace();
        let window = 1_000 * MS;
        let mut state = PaceState::default();
        let mut now = 10_000 * MS;
        for _ in 0..300 {
            now += 10 * MS;
            state = pace.throttled(state, now, 0, None);
        }
        assert_eq!(pace.share(&state, now), 1.0 / MAX_SLOWDOWN);
        let back = now + window * u64::from(RECOVERY_WINDOWS);
        assert_eq!(pace.share(&state, back), 1.0);
        let before = now + window * 31;
        assert!(
            pace.share(&state, before) < 1.0,
            "not sooner than the line allows"
        );
        // Reservations follow: after the climb, one interval apart again.
        let (state, _) = pace.reserve(state, back);
        let (_, ticket) = pace.reserve(state, back);
        assert_eq!(ticket.wait, pace.interval);
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
            let back = now + pace.window * u64::from(RECOVERY_WINDOWS);
            prop_assert_eq!(pace.share(&state, back), 1.0);
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
        let pace = pace();
        let mut state = PaceState::default();
        let now = 10_000_000 * MS;
        waits(&pace, &mut state, now, 3);
        // The clock steps back an hour (a stepped wall clock, a reboot under the file): the queue
        // is still 300 ms long, not an hour and 300 ms.
        let back = now - 3_600_000 * MS;
        assert_eq!(pace.reserve(state, back).1.wait, 300 * MS);
    }

    #[test]
    fn a_long_queue_is_kept_and_an_impossible_state_is_forgotten() {
        let pace = pace();
        let now = 10_000 * MS;
        // A bulk client with 600 calls booked, at the slowest pace: an hour and more of queue.
        let mut state = PaceState::default();
        for step in 0..60 {
            state = pace.throttled(state, now + step, 0, None);
            state.blocked_until = 0;
        }
        let at = now + 60;
        let queued = waits(&pace, &mut state, at, 600);
        assert!(queued[599].abs_diff(599 * 6_400) <= 1, "{}", queued[599]);
        let next = pace.reserve(state, at).1.wait / MS;
        assert!(next.abs_diff(600 * 6_400) <= 1, "kept: {next}");
        for state in [
            PaceState {
                next_slot: u64::MAX,
                ..PaceState::default()
            },
            PaceState {
                blocked_until: now + 100 * 3_600_000 * MS,
                ..PaceState::default()
            },
            PaceState {
                rate: f64::NAN,
                next_slot: now + 1_000 * MS,
                ..PaceState::default()
            },
            PaceState {
                throttled_at: now + 1,
                seen: now - 1,
                next_slot: now + 1_000 * MS,
                ..PaceState::default()
            },
        ] {
            assert_eq!(pace.reserve(state, now).1.wait, 0, "{state:?}");
        }
    }

    #[test]
    fn a_queue_longer_than_max_queue_intervals_at_the_configured_rate_is_kept_at_a_slow_pace() {
        // 70,000 intervals at the configured rate is more than MAX_QUEUE of them, but only about
        // 1,100 reservations at the slowest pace: a state the rule builds, so it stays.
        let pace = pace();
        let now = 10_000 * MS;
        let queue = 70_000 * pace.interval;
        let state = PaceState {
            rate: 1.0 / MAX_SLOWDOWN,
            throttled_at: now,
            next_slot: now + queue,
            ..PaceState::default()
        };
        assert_eq!(pace.reserve(state, now).1.wait, queue);
    }

    #[test]
    fn a_state_forgotten_is_seen_now_so_a_clock_that_then_goes_back_takes_it_along() {
        let pace = pace();
        let now = 10_000_000 * MS;
        let corrupt = PaceState {
            rate: f64::NAN,
            next_slot: now + 1_000 * MS,
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

        #[test]
        fn any_state_gives_a_bounded_wait_and_n_slots_span_n_intervals(
            next_slot in any::<u64>(), blocked in any::<u64>(), rate in any::<f64>(),
            throttled_at in any::<u64>(), seen in any::<u64>(), now in 0u64..(u64::MAX / 2),
            n in 1usize..40,
        ) {
            let pace = pace();
            let state = PaceState { next_slot, blocked_until: blocked, rate, throttled_at, generation: 0, seen };
            let (mut state, first) = pace.reserve(state, now);
            prop_assert!(first.wait <= MAX_QUEUE * 6_400 * MS);
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
                let moved = PaceState {
                    next_slot: state.next_slot.saturating_sub(back),
                    blocked_until: state.blocked_until.saturating_sub(back),
                    throttled_at: state.throttled_at.saturating_sub(back),
                    ..state
                };
                prop_assert!(pace.believable(&moved, now), "{state:?} at {now}");
            }
        }
    }
}
