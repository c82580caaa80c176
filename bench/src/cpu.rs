//! CPU time of the benchmark's process (every thread of the client's; the canned server of the timed
//! runs is a process of its own), from
//! Linux's per-thread scheduler statistics. Less sensitive than wall time to other work on a shared
//! machine, so the tables show both. `None` where `/proc` has no such figures.

use std::time::Duration;

/// CPU time used so far by the threads alive now (the runtimes' threads live for the whole run).
pub fn process_cpu() -> Option<Duration> {
    let mut total = 0u64;
    for entry in std::fs::read_dir("/proc/self/task").ok()? {
        let path = entry.ok()?.path().join("schedstat");
        // A thread that ended since the listing has nothing more to add.
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        total += text.split_whitespace().next()?.parse::<u64>().ok()?;
    }
    Some(Duration::from_nanos(total))
}

/// CPU time (user and system) of the whole process so far, threads that ended included (Linux's
/// `/proc/self/stat`, in `USER_HZ` ticks, which the kernel's ABI fixes at 100 per second): for work
/// done on short-lived threads, such as a blocking pool's. `None` where `/proc` has no such figures.
pub fn process_cpu_total() -> Option<Duration> {
    const USER_HZ: u64 = 100;
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name, in parentheses, may hold spaces: the fields are counted after it.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    // utime and stime are the 14th and 15th fields; the 3rd (state) is the first after the name.
    let ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 1000 / USER_HZ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_grows_with_work() {
        let Some(before) = process_cpu() else {
            return; // not Linux
        };
        let mut x = 0u64;
        for i in 0..5_000_000u64 {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
        }
        assert!(process_cpu().unwrap() > before, "{x}");
    }

    #[test]
    fn the_total_keeps_the_time_of_threads_that_ended() {
        let Some(before) = process_cpu_total() else {
            return; // not Linux
        };
        std::thread::spawn(|| {
            let started = std::time::Instant::now();
            let mut x = 0u64;
            while started.elapsed() < Duration::from_millis(300) {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(1));
            }
        })
        .join()
        .unwrap();
        let spent = process_cpu_total().unwrap() - before;
        assert!(spent >= Duration::from_millis(150), "{spent:?}");
    }
}
