//! Where the emulator's time and generated ids come from: the wall clock and random UUIDs, or, in
//! deterministic mode, a clock that advances one second per API request and ids drawn from a seeded
//! generator, so the same requests in the same order get byte-identical answers.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use chrono::{DateTime, TimeZone, Utc};
use serde::{Deserialize, Serialize};
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
        seed: u64,
        epoch: DateTime<Utc>,
        state: Mutex<(u64, fastrand::Rng)>,
    },
}

/// Where a deterministic clock has got to: the store keeps it with every write, so that a restart on
/// the same data directory continues the time and the id sequence instead of replaying them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Position {
    /// The seed of the id generator.
    pub seed: u64,
    /// The requests ticked so far.
    pub ticks: u64,
    /// The id generator's state.
    pub generator: u64,
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
                seed,
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
                chrono::Duration::from_std(elapsed)
                    .ok()
                    .and_then(|elapsed| epoch.checked_add_signed(elapsed))
                    .unwrap_or(DateTime::<Utc>::MAX_UTC)
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

    /// Where a deterministic clock is now; `None` for the wall clock. (Only a store reads it.)
    #[cfg_attr(not(feature = "persistence"), allow(dead_code))]
    pub fn position(&self) -> Option<Position> {
        match &self.mode {
            Mode::Wall { .. } => None,
            Mode::Deterministic { seed, state, .. } => {
                let state = state.lock().unwrap_or_else(|p| p.into_inner());
                Some(Position {
                    seed: *seed,
                    ticks: state.0,
                    generator: state.1.get_seed(),
                })
            }
        }
    }

    /// Continues from a stored position: the time never goes back, and the ids go on from where
    /// they were. A position of another seed is refused: its store holds ids of that seed's sequence,
    /// and going on with this one would leave that sequence to be replayed from its start (and its
    /// pipes overwritten) by a later run with the stored seed. The wall clock ignores it.
    pub fn resume(&self, position: Position) -> Result<(), String> {
        if let Mode::Deterministic { seed, state, .. } = &self.mode {
            if position.seed != *seed {
                return Err(format!(
                    "the data directory goes on from a deterministic run with seed {stored}, not \
                     {seed}: start with --deterministic {stored} (EmulatorOptions::deterministic({stored})) \
                     to continue its ids, or use another data directory",
                    stored = position.seed
                ));
            }
            let mut state = state.lock().unwrap_or_else(|p| p.into_inner());
            state.0 = state.0.max(position.ticks);
            state.1 = fastrand::Rng::with_seed(position.generator);
        }
        Ok(())
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
    fn a_resumed_clock_continues_the_sequence_instead_of_replaying_it() {
        let first = Clock::deterministic(7);
        let before: Vec<Uuid> = (0..3)
            .map(|_| {
                first.tick();
                first.new_id()
            })
            .collect();
        let position = first.position().unwrap();
        let expected = (first.now(), first.new_id());

        let restarted = Clock::deterministic(7);
        restarted.resume(position).unwrap();
        assert_eq!((restarted.now(), restarted.new_id()), expected);
        assert!(!before.contains(&expected.1));

        let other_seed = Clock::deterministic(8);
        let refused = other_seed.resume(position).unwrap_err();
        assert!(
            refused.contains("seed 7, not 8") && refused.contains("--deterministic 7"),
            "{refused}"
        );
        assert_eq!(
            other_seed.new_id(),
            Clock::deterministic(8).new_id(),
            "a refused position changes nothing"
        );
        Clock::wall().resume(position).unwrap();
        assert_eq!(Clock::wall().position(), None);
    }

    #[test]
    fn the_wall_clock_gives_fresh_ids() {
        let clock = Clock::wall();
        assert_ne!(clock.new_id(), clock.new_id());
        clock.tick();
        assert!((Utc::now() - clock.now()).num_seconds().abs() < 5);
    }
}
