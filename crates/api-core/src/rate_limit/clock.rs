//! The clocks of the stores, in nanoseconds. Each store reads the one clock every sharer of its
//! state reads: this process's monotonic clock for the process store, the host's for the state
//! file, the Redis server's for Redis (read by the script, in `redis.rs`). A clock that goes back
//! (a stepped wall clock, a reboot) is handled by the rule (`pacing.rs`), never trusted blindly.

use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Nanoseconds of this process's monotonic clock (`Instant`) since its first reading.
pub(crate) fn process() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    ns(START.get_or_init(Instant::now).elapsed())
}

/// Nanoseconds of a clock every process of this host shares and that does not step: on Linux, the
/// time since boot with a suspend counted (what `CLOCK_BOOTTIME` counts, so a wait the server asked
/// for still ends on time after one), read from `/proc/uptime` and carried between its hundredths
/// of a second by this process's `Instant` ([`Uptime`]); elsewhere the wall clock, whose steps back
/// the rule absorbs (a step forward only shortens the waits).
///
/// Two processes' readings differ from the true uptime, and so from each other, by less than
/// `/proc/uptime`'s hundredth of a second: far inside the pacing's margin (a slot is 1/50 longer
/// than the limit's share). The standard library has no such clock, and a system-call crate for
/// this one call cost every downstream build 2.5 s of CPU.
pub(crate) fn host() -> u64 {
    static UPTIME: Mutex<Uptime> = Mutex::new(Uptime { anchor: None });
    let read = read_uptime();
    let now = Instant::now();
    UPTIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .reading(read, now)
        .unwrap_or_else(wall)
}

/// Nanoseconds since the Unix epoch by the wall clock.
fn wall() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, ns)
}

/// `/proc/uptime`'s first number (seconds since boot, a suspend counted, in hundredths) in
/// nanoseconds; `None` where there is no such file (not Linux) or it does not read as one.
fn read_uptime() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/uptime").ok()?;
    parse_uptime(&text)
}

/// `12345.67 4321.00` -> 12,345,670,000,000 ns.
fn parse_uptime(text: &str) -> Option<u64> {
    let first = text.split_whitespace().next()?;
    let (seconds, fraction) = first.split_once('.').unwrap_or((first, ""));
    if fraction.len() > 9 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let seconds: u64 = seconds.parse().ok()?;
    let fraction: u64 = if fraction.is_empty() {
        0
    } else {
        fraction.parse::<u64>().ok()? * 10u64.pow(9 - u32::try_from(fraction.len()).ok()?)
    };
    seconds.checked_mul(1_000_000_000)?.checked_add(fraction)
}

/// The host clock between `/proc/uptime`'s ticks: the uptime last seen to move ahead of the
/// estimate, plus this process's `Instant` since. `Instant` does not count a suspend and the file
/// is rounded down, so the estimate is never ahead of the true uptime; a reading of the file ahead
/// of it (after a suspend, or at the file's next hundredth) moves the anchor up. So the readings
/// never go back, and trail the true uptime by less than a hundredth of a second.
#[derive(Debug)]
struct Uptime {
    /// The uptime (ns) at the instant it was read.
    anchor: Option<(u64, Instant)>,
}

impl Uptime {
    /// The clock at `now`, with `uptime` just read from the file. A read that failed (a process
    /// out of file descriptors in a bulk apply) is carried by the instant from the last good one,
    /// never answered by another clock; `None` only where the file was never read (not Linux).
    fn reading(&mut self, uptime: Option<u64>, now: Instant) -> Option<u64> {
        let estimate = self
            .anchor
            .map(|(base, at)| base.saturating_add(ns(now.saturating_duration_since(at))));
        match (estimate, uptime) {
            (Some(estimate), Some(uptime)) if estimate >= uptime => Some(estimate),
            (estimate, None) => estimate,
            (_, Some(uptime)) => {
                self.anchor = Some((uptime, now));
                Some(uptime)
            }
        }
    }
}

/// Nanoseconds of a duration, saturating.
pub(crate) fn ns(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn both_clocks_move_forward_with_real_time() {
        let (process_then, host_then) = (process(), host());
        std::thread::sleep(Duration::from_millis(20));
        let (process_now, host_now) = (process(), host());
        for (then, now) in [(process_then, process_now), (host_then, host_now)] {
            let moved = now - then;
            assert!((20_000_000..2_000_000_000).contains(&moved), "{moved} ns");
        }
    }

    /// On Linux the host clock is the uptime: never behind the file read before it, never ahead of
    /// the file read after it by its hundredth of a second.
    #[cfg(target_os = "linux")]
    #[test]
    fn the_host_clock_is_the_uptime_to_a_hundredth_of_a_second() {
        for _ in 0..200 {
            let before = read_uptime().unwrap();
            let host = host();
            let after = read_uptime().unwrap();
            assert!(host >= before, "{host} trails {before}");
            assert!(host <= after + 10 * MS, "{host} is ahead of {after}");
            std::thread::sleep(Duration::from_micros(700));
        }
    }

    #[test]
    fn between_ticks_the_instant_carries_the_clock_and_it_never_goes_back() {
        let start = Instant::now();
        let at = |ms: u64| start + Duration::from_millis(ms);
        let mut clock = Uptime { anchor: None };
        assert_eq!(clock.reading(Some(1_000 * MS), at(0)), Some(1_000 * MS));
        // The file still says 1000 ms (it moves in hundredths): the instant carries the clock.
        assert_eq!(clock.reading(Some(1_000 * MS), at(4)), Some(1_004 * MS));
        assert_eq!(clock.reading(Some(1_000 * MS), at(9)), Some(1_009 * MS));
        // The file ticks behind the estimate (it rounds down): the estimate stays.
        assert_eq!(clock.reading(Some(1_000 * MS), at(9)), Some(1_009 * MS));
        // The file ahead of the estimate (it was read just after a tick): the anchor moves up.
        assert_eq!(clock.reading(Some(1_012 * MS), at(11)), Some(1_012 * MS));
        assert_eq!(clock.reading(Some(1_010 * MS), at(13)), Some(1_014 * MS));
        // A suspend of a minute: `Instant` did not count it, the uptime did.
        assert_eq!(clock.reading(Some(61_020 * MS), at(20)), Some(61_020 * MS));
        assert_eq!(clock.reading(Some(61_020 * MS), at(25)), Some(61_025 * MS));
        // An instant older than the anchor (another thread read it first) adds nothing.
        assert_eq!(clock.reading(Some(61_020 * MS), at(19)), Some(61_020 * MS));
        // A read that failed: the instant carries the clock on, no other clock answers.
        assert_eq!(clock.reading(None, at(30)), Some(61_030 * MS));
        assert_eq!(clock.reading(Some(61_030 * MS), at(31)), Some(61_031 * MS));
        // Never read: no reading (the caller takes the wall clock).
        assert_eq!(Uptime { anchor: None }.reading(None, at(0)), None);
    }

    #[test]
    fn the_uptime_file_reads_in_nanoseconds_or_not_at_all() {
        assert_eq!(parse_uptime("12345.67 4321.00\n"), Some(12_345_670 * MS));
        assert_eq!(parse_uptime("5.5 1.0"), Some(5_500 * MS));
        assert_eq!(parse_uptime("7"), Some(7_000 * MS));
        for bad in [
            "",
            "x.10 1",
            "1.x 1",
            "-1.00 1",
            "1.0000000001 1",
            "99999999999999999999.0",
        ] {
            assert_eq!(parse_uptime(bad), None, "{bad:?}");
        }
    }
}
