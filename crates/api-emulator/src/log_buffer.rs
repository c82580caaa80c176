//! The request log as a running emulator keeps it: the newest entries, within a byte budget.

use std::collections::VecDeque;

use serde_json::Value;

use crate::request_log::LogEntry;

/// The most bytes the request log keeps unless [`EmulatorOptions::log_budget`] says otherwise:
/// 16 MiB, counted as the size of each entry serialized as JSON (as `GET /_emulator/requests` shows
/// it). The oldest entries are evicted first; an entry larger than the whole budget is not kept.
///
/// [`EmulatorOptions::log_budget`]: crate::EmulatorOptions::log_budget
pub const LOG_BUDGET: usize = 16 * 1024 * 1024;

/// The largest request body the log keeps: 64 KiB. A larger body is logged as a marker string,
/// `"<1048576 bytes, not kept: larger than 65536>"`; the rest of its entry (headers, operation,
/// status, request id) is kept as usual.
pub const LOG_BODY_LIMIT: usize = 64 * 1024;

/// The most entries the log keeps, however small they are.
pub const LOG_MAX_ENTRIES: usize = 10_000;

/// What the log shows instead of a body of `length` bytes, larger than [`LOG_BODY_LIMIT`].
pub(crate) fn body_not_kept(length: usize) -> Value {
    Value::String(format!(
        "<{length} bytes, not kept: larger than {LOG_BODY_LIMIT}>"
    ))
}

/// The entries kept, oldest first, with their sizes.
#[derive(Debug)]
pub(crate) struct LogBuffer {
    entries: VecDeque<(LogEntry, usize)>,
    bytes: usize,
    budget: usize,
}

impl LogBuffer {
    /// An empty log that keeps at most `budget` bytes.
    pub(crate) fn new(budget: usize) -> Self {
        Self {
            entries: VecDeque::new(),
            bytes: 0,
            budget,
        }
    }

    /// Keeps `entry`, evicting the oldest entries until it fits.
    pub(crate) fn push(&mut self, entry: LogEntry) {
        let size = entry.json_len();
        if size > self.budget {
            tracing::warn!(
                size,
                budget = self.budget,
                "a request log entry larger than the log's whole budget is not kept"
            );
            return;
        }
        while self.entries.len() >= LOG_MAX_ENTRIES || self.bytes.saturating_add(size) > self.budget
        {
            match self.entries.pop_front() {
                Some((_, evicted)) => self.bytes -= evicted,
                None => break,
            }
        }
        self.bytes += size;
        self.entries.push_back((entry, size));
    }

    /// Forgets every entry.
    pub(crate) fn clear(&mut self) {
        self.entries.clear();
        self.bytes = 0;
    }

    /// The entries, oldest first.
    pub(crate) fn entries(&self) -> impl Iterator<Item = &LogEntry> {
        self.entries.iter().map(|(entry, _)| entry)
    }

    /// How many entries it keeps.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// The bytes it keeps, as counted against the budget.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use chrono::{DateTime, Utc};

    use super::*;

    fn entry(body: &str) -> LogEntry {
        LogEntry {
            at: DateTime::<Utc>::default(),
            method: "POST".into(),
            path: "/v1/x".into(),
            operation_id: None,
            headers: BTreeMap::new(),
            body: Some(Value::String(body.into())),
            status: 200,
            request_id: String::new(),
            faulted: false,
        }
    }

    #[test]
    fn the_oldest_entries_go_first_and_the_bytes_stay_within_the_budget() {
        let size = entry(&"x".repeat(1000)).json_len();
        let mut log = LogBuffer::new(size * 3 + size / 2);
        for n in 0..10 {
            log.push(entry(&format!("{n}{}", "x".repeat(999))));
            assert!(log.bytes() <= size * 3 + size / 2, "{} bytes", log.bytes());
        }
        assert_eq!(log.len(), 3);
        let kept: Vec<String> = log
            .entries()
            .map(|e| e.body.as_ref().unwrap().as_str().unwrap()[..1].to_string())
            .collect();
        assert_eq!(kept, ["7", "8", "9"]);
        assert_eq!(log.bytes(), 3 * size);
        let counted: usize = log.entries().map(LogEntry::json_len).sum();
        assert_eq!(counted, log.bytes());
        log.clear();
        assert_eq!((log.len(), log.bytes()), (0, 0));
    }

    #[test]
    fn an_entry_larger_than_the_whole_budget_is_not_kept() {
        let mut log = LogBuffer::new(500);
        log.push(entry("small"));
        log.push(entry(&"x".repeat(1000)));
        assert_eq!(
            log.len(),
            1,
            "the small entry stays, the large one is dropped"
        );
    }

    #[test]
    fn the_entry_count_is_bounded_too() {
        let mut log = LogBuffer::new(usize::MAX);
        for _ in 0..LOG_MAX_ENTRIES + 5 {
            log.push(entry(""));
        }
        assert_eq!(log.len(), LOG_MAX_ENTRIES);
    }

    #[test]
    fn the_marker_names_the_size_and_the_limit() {
        assert_eq!(
            body_not_kept(1_048_576),
            Value::String("<1048576 bytes, not kept: larger than 65536>".into())
        );
    }
}
