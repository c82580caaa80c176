//! Where the emulator's time and generated ids come from: the wall clock and random UUIDs, or, in
//! deterministic mode, a clock that advances one second per API request and ids drawn from a seeded
//! generator, so the same requests in the same order get byte-identical answers.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use chrono::{DateTime, TimeZone, Utc};
use uuid::Uuid;

/// How far the deterministic clock moves on each API request.
pub const DETERMINISTIC_STEP: Duration = Duration::from_secs(1);

/// Time and ids of a running emulator.
#[derive(Debug)]
pub struct Clock {
    mode: Mode,
}

#[derive(Debug)]
enum Mode {
    Wall {
        started: Instant,
    },
    Deterministic {
        epoch: DateTime<Utc>,
        state: Mutex<(u64, fastrand::Rng)>,
    },
}

impl Clock {
    /// The wall clock and random ids.
    pub fn wall() -> Self {
        Self {
            mode: Mode::Wall {
                started: Instant::now(),
            },
        }
    }

    /// Time from 2026-01-01T00:00:00Z, one second more on each [`Clock::tick`], and ids from `seed`.
    pub fn deterministic(seed: u64) -> Self {
        let epoch = Utc
            .with_ymd_and_hms(2026, 1, 1, 0, 0, 0)
            .single()
            .unwrap_or_default();
        Self {
            mode: Mode::Deterministic {
                epoch,
                state: Mutex::new((0, fastrand::Rng::with_seed(seed))),
            },
        }
    }

    /// Marks the start of an API request: the deterministic clock moves one step.
    pub fn tick(&self) {
        if let Mode::Deterministic { state, .. } = &self.mode {
            let mut state = state.lock().unwrap_or_else(|p| p.into_inner());
            state.0 = state.0.saturating_add(1);
        }
    }

    /// The time now.
    pub fn now(&self) -> DateTime<Utc> {
        match &self.mode {
            Mode::Wall { .. } => Utc::now(),
            Mode::Deterministic { epoch, .. } => {
                let elapsed = self.elapsed();
                *epoch + chrono::Duration::from_std(elapsed).unwrap_or(chrono::Duration::MAX)
            }
        }
    }

    /// Time since the start, for rate limit windows.
    pub fn elapsed(&self) -> Duration {
        match &self.mode {
            Mode::Wall { started } => started.elapsed(),
            Mode::Deterministic { state, .. } => {
                let ticks = state.lock().unwrap_or_else(|p| p.into_inner()).0;
                DETERMINISTIC_STEP.saturating_mul(u32::try_from(ticks).unwrap_or(u32::MAX))
            }
        }
    }

    /// A new id: a random version 4 UUID, or the next one of the seeded generator.
    pub fn new_id(&self) -> Uuid {
        match &self.mode {
            Mode::Wall { .. } => Uuid::new_v4(),
            Mode::Deterministic { state, .. } => {
                let bits = state.lock().unwrap_or_else(|p| p.into_inner()).1.u128(..);
                uuid::Builder::from_random_bytes(bits.to_le_bytes()).into_uuid()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_ids_and_times() {
        let run = |seed| {
            let clock = Clock::deterministic(seed);
            (0..3)
                .map(|_| {
                    clock.tick();
                    (clock.now(), clock.new_id())
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));
        let first = run(7)[0];
        assert_eq!(first.0.to_rfc3339(), "2026-01-01T00:00:01+00:00");
        assert_eq!(first.1.get_version_num(), 4);
    }

    #[test]
    fn the_wall_clock_gives_fresh_ids() {
        let clock = Clock::wall();
        assert_ne!(clock.new_id(), clock.new_id());
        clock.tick();
        assert!((Utc::now() - clock.now()).num_seconds().abs() < 5);
    }
}
