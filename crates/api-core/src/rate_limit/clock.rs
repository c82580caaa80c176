//! The clocks of the stores, in nanoseconds. Each store reads the one clock every sharer of its
//! state reads: this process's monotonic clock for the process store, the host's for the state
//! file, the Redis server's for Redis (read by the script, in `redis.rs`). A clock that goes back
//! (a stepped wall clock, a reboot) is handled by the rule (`pacing.rs`), never trusted blindly.

use std::sync::OnceLock;
use std::time::Instant;

/// Nanoseconds of this process's monotonic clock (`Instant`) since its first reading.
pub(crate) fn process() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    super::ns(START.get_or_init(Instant::now).elapsed())
}

/// Nanoseconds of a clock every process of this host shares and that does not step: Linux's
/// `CLOCK_BOOTTIME` (it counts a suspend too, so a wait the server asked for still ends on time
/// after one), `CLOCK_MONOTONIC` on other Unix systems; elsewhere the wall clock, whose steps back
/// the rule absorbs (a step forward only shortens the waits).
pub(crate) fn host() -> u64 {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let time = rustix::time::clock_gettime(rustix::time::ClockId::Boottime);
    #[cfg(all(unix, not(any(target_os = "linux", target_os = "android"))))]
    let time = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    #[cfg(unix)]
    {
        u64::try_from(time.tv_sec)
            .unwrap_or(0)
            .saturating_mul(1_000_000_000)
            .saturating_add(u64::try_from(time.tv_nsec).unwrap_or(0))
    }
    #[cfg(not(unix))]
    {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| super::ns(since))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn both_clocks_move_forward_with_real_time() {
        let (process_then, host_then) = (process(), host());
        std::thread::sleep(Duration::from_millis(20));
        let (process_now, host_now) = (process(), host());
        for (then, now) in [(process_then, process_now), (host_then, host_now)] {
            let moved = now - then;
            assert!((20_000_000..2_000_000_000).contains(&moved), "{moved} ns");
        }
        #[cfg(target_os = "linux")]
        {
            // The host clock counts from boot, as /proc/uptime does (to its hundredth of a second).
            let uptime: f64 = std::fs::read_to_string("/proc/uptime")
                .unwrap()
                .split_whitespace()
                .next()
                .unwrap()
                .parse()
                .unwrap();
            let host_secs = host() as f64 / 1e9;
            assert!((host_secs - uptime).abs() < 1.0, "{host_secs} vs {uptime}");
        }
    }
}
