//! The emulator's request log read as a rate: the requests of one operation it served, that rate as a
//! share of a limit, and the longest pause between two of them. Read by the fleet tests of cloudctl
//! and by the fleet benchmark (a `#[path]` module there, in an unpublished crate), so both measure
//! the same way.

use std::time::Duration;

use api_emulator::{LogEntry, OperationId};

/// The requests of `operation` the emulator served (200), in time order.
pub fn served(log: &[LogEntry], operation: OperationId) -> Vec<&LogEntry> {
    let mut served: Vec<&LogEntry> = log
        .iter()
        .filter(|e| e.operation_id == Some(operation) && e.status == 200)
        .collect();
    served.sort_by_key(|e| e.at);
    served
}

/// Served requests per second, from the first to the last, over `per_second`; 0 with fewer than two.
pub fn fraction(served: &[&LogEntry], per_second: f64) -> f64 {
    let (Some(first), Some(last)) = (served.first(), served.last()) else {
        return 0.0;
    };
    let span = (last.at - first.at).num_microseconds().unwrap_or(0) as f64 / 1e6;
    if span <= 0.0 {
        return 0.0;
    }
    (served.len() - 1) as f64 / span / per_second
}

/// The floor the key allows `served` (bursts of `max` once per `window`: the first `max` at once,
/// the next when the first's window is over) over the time they took, from the first to the last:
/// 1 at the floor, above 1 when a window held more than `max`; 0 with fewer than two.
#[allow(dead_code)] // not every user of this module measures against the floor
pub fn fraction_of_floor(served: &[&LogEntry], max: u32, window: Duration) -> f64 {
    let (Some(first), Some(last)) = (served.first(), served.last()) else {
        return 0.0;
    };
    let took = (last.at - first.at).num_microseconds().unwrap_or(0) as f64 / 1e6;
    let windows = (served.len() as f64 / f64::from(max.max(1))).ceil() - 1.0;
    if took <= 0.0 {
        return if windows <= 0.0 { 1.0 } else { f64::INFINITY };
    }
    windows * window.as_secs_f64() / took
}

/// The longest pause between two served requests (zero with fewer than two).
pub fn longest_pause(served: &[&LogEntry]) -> Duration {
    served
        .windows(2)
        .map(|pair| (pair[1].at - pair[0].at).to_std().unwrap_or_default())
        .max()
        .unwrap_or_default()
}

/// The real blocks of a rate limit in a log: runs of 429 answers with no served request between
/// them (the first 429 finds the block; the rest were sent into it).
#[allow(dead_code)] // not every user of this module counts blocks
pub fn blocks(log: &[LogEntry]) -> usize {
    let mut answers: Vec<&LogEntry> = log.iter().collect();
    answers.sort_by_key(|e| e.at);
    answers
        .windows(2)
        .filter(|pair| pair[1].status == 429 && pair[0].status != 429)
        .count()
        + usize::from(answers.first().is_some_and(|e| e.status == 429))
}

/// The 429s after the first block (after the first served request that follows the first 429):
/// those of the first are the answers to the calls in flight together when the server's limit was
/// first reached.
pub fn after_first_block(log: &[LogEntry]) -> usize {
    let mut answers: Vec<&LogEntry> = log.iter().collect();
    answers.sort_by_key(|e| e.at);
    let Some(first) = answers.iter().position(|e| e.status == 429) else {
        return 0;
    };
    let Some(served) = answers[first..].iter().position(|e| e.status == 200) else {
        return 0;
    };
    answers[first + served..]
        .iter()
        .filter(|e| e.status == 429)
        .count()
}
