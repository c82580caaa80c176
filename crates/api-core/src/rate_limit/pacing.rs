//! The pacing rule every store shares, as pure arithmetic on a small state: a reservation in the
//! style of GCRA (each request takes the next free slot, one pacing interval after the last), a
//! block while a server-requested wait runs, and a slowdown after a 429 that fades.
//!
//! Times are nanoseconds of the wall clock since the Unix epoch, so that processes on one host (a
//! state file) or on many (Redis, whose own clock is used there) share them.

/// How much a 429 slows the shared pace: the interval doubles, up to this factor.
pub const MAX_SLOWDOWN: f64 = 8.0;

/// How many windows of the limit it takes, without another 429, for a slowdown to fade away
/// (linearly).
pub const RECOVERY_WINDOWS: u32 = 4;

/// The shared state of one key's limit.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PaceState {
    /// When the next request may go (the theoretical arrival time).
    pub next_slot: u64,
    /// No request goes before this (a server-requested wait of the whole key).
    pub blocked_until: u64,
    /// The slowdown right after the last 429 (1 = none).
    pub slowdown: f64,
    /// When the last 429 was reported.
    pub throttled_at: u64,
}

/// The pace of a limit: the interval between two requests, and its window (for recovery).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pace {
    /// Nanoseconds between two requests at the configured rate.
    pub interval: u64,
    /// Nanoseconds of the limit's window.
    pub window: u64,
}

impl Pace {
    /// The slowdown at `now`: what the last 429 set, fading linearly to 1 over
    /// [`RECOVERY_WINDOWS`] windows.
    pub fn slowdown(&self, state: &PaceState, now: u64) -> f64 {
        let set = state.slowdown.clamp(1.0, MAX_SLOWDOWN);
        if !set.is_finite() || set <= 1.0 {
            return 1.0;
        }
        let recovery = self
            .window
            .saturating_mul(u64::from(RECOVERY_WINDOWS))
            .max(1);
        let since = now.saturating_sub(state.throttled_at);
        let left = 1.0 - (since as f64 / recovery as f64).min(1.0);
        1.0 + (set - 1.0) * left
    }

    /// Reserves the next slot at `now`: the state after it, and how long to wait before sending.
    pub fn reserve(&self, state: PaceState, now: u64) -> (PaceState, u64) {
        let state = self.sane(state, now);
        let interval =
            (self.interval as f64 * self.slowdown(&state, now)).min(u64::MAX as f64) as u64;
        let slot = state.next_slot.max(now).max(state.blocked_until);
        let next = PaceState {
            next_slot: slot.saturating_add(interval),
            ..state
        };
        (next, slot - now)
    }

    /// The state after a 429 at `now` whose answer asked to wait `wait` nanoseconds: nobody sends
    /// before the wait is over, and the pace slows down (doubling, at most [`MAX_SLOWDOWN`]).
    pub fn throttled(&self, state: PaceState, now: u64, wait: u64) -> PaceState {
        let state = self.sane(state, now);
        let current = self.slowdown(&state, now);
        PaceState {
            blocked_until: state.blocked_until.max(now.saturating_add(wait)),
            slowdown: (current * 2.0).min(MAX_SLOWDOWN),
            throttled_at: now,
            ..state
        }
    }

    /// A state that cannot be right (from a clock that jumped back, or a file nobody should trust)
    /// is forgotten: nothing may wait longer than the longest wait the rule can ask for.
    fn sane(&self, state: PaceState, now: u64) -> PaceState {
        let longest = self
            .window
            .saturating_mul(u64::from(RECOVERY_WINDOWS))
            .saturating_add(self.interval.saturating_mul(MAX_SLOWDOWN as u64 * 64))
            .saturating_add(3_600_000_000_000);
        let believable = state.slowdown.is_finite()
            && state.next_slot.saturating_sub(now) <= longest
            && state.blocked_until.saturating_sub(now) <= longest
            && state.throttled_at <= now.saturating_add(longest);
        if believable {
            state
        } else {
            PaceState::default()
        }
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

    #[test]
    fn requests_take_evenly_spaced_slots() {
        let pace = pace();
        let mut state = PaceState::default();
        let now = 10_000 * MS;
        let mut waits = Vec::new();
        for _ in 0..4 {
            let (next, wait) = pace.reserve(state, now);
            state = next;
            waits.push(wait / MS);
        }
        assert_eq!(waits, [0, 100, 200, 300]);
        // After a quiet spell the next request goes at once.
        let (_, wait) = pace.reserve(state, now + 5_000 * MS);
        assert_eq!(wait, 0);
    }

    #[test]
    fn a_429_blocks_everyone_then_slows_the_pace_until_it_fades() {
        let pace = pace();
        let now = 10_000 * MS;
        let state = pace.throttled(PaceState::default(), now, 2_000 * MS);
        let (state, wait) = pace.reserve(state, now + 500 * MS);
        assert_eq!(wait / MS, 1_500, "the server's wait holds for everyone");
        let (_, second) = pace.reserve(state, now + 500 * MS);
        // Then a slower pace: twice the interval at the 429, already fading half a second later
        // (1 + 1 x (1 - 500/4000) = 1.875 times).
        assert_eq!(second / MS, 1_500 + 187, "then a slower pace");
        assert_eq!(pace.slowdown(&state, now), 2.0);
        assert_eq!(pace.slowdown(&state, now + 2_000 * MS), 1.5);
        assert_eq!(
            pace.slowdown(&state, now + 4_000 * MS),
            1.0,
            "gone after four windows"
        );
        let mut again = state;
        for _ in 0..10 {
            again = pace.throttled(again, now, 0);
        }
        assert_eq!(pace.slowdown(&again, now), MAX_SLOWDOWN);
    }

    #[test]
    fn a_slowdown_that_is_no_number_is_none() {
        let pace = pace();
        for slowdown in [f64::NAN, 0.5, -3.0] {
            let state = PaceState {
                slowdown,
                ..PaceState::default()
            };
            assert_eq!(pace.slowdown(&state, 0), 1.0, "{slowdown}");
        }
    }

    #[test]
    fn an_unbelievable_state_is_forgotten() {
        let pace = pace();
        let now = 10_000 * MS;
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
                slowdown: f64::NAN,
                ..PaceState::default()
            },
        ] {
            assert_eq!(pace.reserve(state, now).1, 0, "{state:?}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn any_state_gives_a_bounded_wait_and_n_slots_span_n_intervals(
            next_slot in any::<u64>(), blocked in any::<u64>(), slowdown in any::<f64>(),
            throttled_at in any::<u64>(), now in 0u64..(u64::MAX / 2), n in 1usize..40,
        ) {
            let pace = pace();
            let state = PaceState { next_slot, blocked_until: blocked, slowdown, throttled_at };
            let (mut state, first) = pace.reserve(state, now);
            prop_assert!(first <= 3_600_000 * MS + 400 * 1_000 * MS + 64 * 8 * 100 * MS);
            let mut last = first;
            for _ in 1..n {
                let (next, wait) = pace.reserve(state, now);
                prop_assert!(wait >= last + pace.interval, "slots never overlap");
                prop_assert!(wait <= last + pace.interval * MAX_SLOWDOWN as u64 + 1);
                state = next;
                last = wait;
            }
        }
    }
}
