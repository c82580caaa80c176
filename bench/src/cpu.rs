//! CPU time of the whole process (every thread: the client's runtime and the canned server's), from
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
}
