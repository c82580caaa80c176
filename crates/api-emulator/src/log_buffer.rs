//! The request log as a running emulator keeps it: the newest entries, within a byte budget. A body
//! is held as its (redacted) JSON text and read back when the log is read: held as a JSON value, a
//! body of many tiny values (`[[0],[0],...]`, `[{},{},...]`) would take twenty times its text.

use std::collections::VecDeque;

use serde_json::Value;

use crate::request_log::LogEntry;

/// The most bytes the request log keeps unless [`EmulatorOptions::log_budget`] says otherwise:
/// 16 MiB, counted as the size of each entry serialized as JSON (as `GET /_emulator/requests` shows
/// it), which is what it holds: its body as text, with [`ENTRY_OVERHEAD`] bytes more for the rest.
/// The oldest entries are evicted first; an entry larger than the whole budget is not kept.
///
/// [`EmulatorOptions::log_budget`]: crate::EmulatorOptions::log_budget
pub const LOG_BUDGET: usize = 16 * 1024 * 1024;

/// The largest request body the log keeps: 64 KiB. A larger body is logged as a marker string,
/// `"<1048576 bytes, not kept: larger than 65536>"`; the rest of its entry (headers, operation,
/// status, request id) is kept as usual.
pub const LOG_BODY_LIMIT: usize = 64 * 1024;

/// The most entries the log keeps, however small they are.
pub const LOG_MAX_ENTRIES: usize = 10_000;

/// What an entry holds besides its text, counted against the budget: the entry itself, its
/// headers' and body's allocations.
pub const ENTRY_OVERHEAD: usize = 512;

/// What the log shows instead of a body of `length` bytes, larger than [`LOG_BODY_LIMIT`].
pub(crate) fn body_not_kept(length: usize) -> Value {
    Value::String(format!(
        "<{length} bytes, not kept: larger than {LOG_BODY_LIMIT}>"
    ))
}

/// The entries kept, oldest first, each with its body as text and its size.
#[derive(Debug)]
pub(crate) struct LogBuffer {
    entries: VecDeque<Stored>,
    bytes: usize,
    budget: usize,
}

/// One entry as the log holds it.
#[derive(Debug)]
struct Stored {
    /// The entry without its body.
    entry: LogEntry,
    /// The body as compact JSON text.
    body: Option<Box<str>>,
    /// What it counts against the budget.
    size: usize,
}

impl Stored {
    /// The entry as it was logged, its body read back from its text.
    fn entry(&self) -> LogEntry {
        let mut entry = self.entry.clone();
        entry.body = self.body.as_deref().map(|text| {
            // The text was written from a JSON value: it reads back (a string else).
            serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.into()))
        });
        entry
    }
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
    pub(crate) fn push(&mut self, mut entry: LogEntry) {
        let size = entry.json_len() + ENTRY_OVERHEAD;
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
                Some(evicted) => self.bytes -= evicted.size,
                None => break,
            }
        }
        let body = entry
            .body
            .take()
            .map(|body| body.to_string().into_boxed_str());
        self.bytes += size;
        self.entries.push_back(Stored { entry, body, size });
    }

    /// Forgets every entry.
    pub(crate) fn clear(&mut self) {
        self.entries.clear();
        self.bytes = 0;
    }

    /// The entries, oldest first.
    pub(crate) fn entries(&self) -> impl Iterator<Item = LogEntry> + '_ {
        self.entries.iter().map(Stored::entry)
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
        let size = entry(&"x".repeat(1000)).json_len() + ENTRY_OVERHEAD;
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
        let counted: usize = log.entries().map(|e| e.json_len() + ENTRY_OVERHEAD).sum();
        assert_eq!(counted, log.bytes());
        log.clear();
        assert_eq!((log.len(), log.bytes()), (0, 0));
    }

    #[test]
    fn an_entry_larger_than_the_whole_budget_is_not_kept() {
        let mut log = LogBuffer::new(1_000);
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
    fn a_body_reads_back_as_it_was_logged() {
        let mut log = LogBuffer::new(usize::MAX);
        let mut logged = entry("");
        logged.body = Some(serde_json::json!({"a": [1, 2.5, {"b": null}], "c": "\u{e9}"}));
        log.push(logged.clone());
        log.push(entry("<12 bytes, not JSON>"));
        let read: Vec<LogEntry> = log.entries().collect();
        assert_eq!(read[0], logged);
        assert_eq!(
            read[1].body,
            Some(Value::String("<12 bytes, not JSON>".into()))
        );
    }

    #[test]
    fn the_marker_names_the_size_and_the_limit() {
        assert_eq!(
            body_not_kept(1_048_576),
            Value::String("<1048576 bytes, not kept: larger than 65536>".into())
        );
    }
}
