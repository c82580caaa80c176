//! The request log: what the code under test sent, and what it was answered.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::operation::OperationId;

/// One request the emulator received on an API path (control endpoints are not logged).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct LogEntry {
    /// When it arrived (the emulator's clock: deterministic in deterministic mode).
    pub at: DateTime<Utc>,
    /// The method.
    pub method: String,
    /// The path.
    pub path: String,
    /// The operation the method and path match; `None` when they match none.
    pub operation_id: Option<OperationId>,
    /// The request headers, names in lower case; credentials (`Authorization`, cookies, tokens)
    /// are `"[REDACTED]"`.
    pub headers: BTreeMap<String, String>,
    /// The request body as JSON with every secret value `"[REDACTED]"`; `None` without a body. A
    /// body that is not JSON is described (`"<12 bytes, not JSON>"`), never shown, and so is one
    /// larger than [`LOG_BODY_LIMIT`](crate::LOG_BODY_LIMIT).
    pub body: Option<Value>,
    /// The status answered; 0 when the connection was closed on purpose without an answer.
    pub status: u16,
    /// The request id answered (`x-request-id`, and `requestId` in management bodies).
    pub request_id: String,
    /// Whether an injected fault answered it.
    pub faulted: bool,
}

impl LogEntry {
    /// Its size serialized as JSON, which is what counts against the log's budget.
    pub(crate) fn json_len(&self) -> usize {
        let mut counter = ByteCounter(0);
        // Serializing strings, maps of strings, numbers and a JSON value cannot fail.
        let _ = serde_json::to_writer(&mut counter, self);
        counter.0
    }
}

/// Counts the bytes written to it.
struct ByteCounter(usize);

impl std::io::Write for ByteCounter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0 += bytes.len();
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The requests received, oldest first, with helpers to find those of one operation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestLog(Vec<LogEntry>);

impl RequestLog {
    pub(crate) fn new(entries: Vec<LogEntry>) -> Self {
        Self(entries)
    }

    /// Every request of `operation`, oldest first.
    pub fn of(&self, operation: OperationId) -> Vec<&LogEntry> {
        self.0
            .iter()
            .filter(|entry| entry.operation_id == Some(operation))
            .collect()
    }

    /// The last request of `operation`.
    pub fn last_of(&self, operation: OperationId) -> Option<&LogEntry> {
        self.0
            .iter()
            .rev()
            .find(|entry| entry.operation_id == Some(operation))
    }

    /// How many requests of `operation` there were.
    pub fn count_of(&self, operation: OperationId) -> usize {
        self.of(operation).len()
    }

    /// Their size serialized as JSON, as counted against the log's budget
    /// ([`LOG_BUDGET`](crate::LOG_BUDGET) unless the options say otherwise).
    pub fn bytes(&self) -> usize {
        self.0.iter().map(LogEntry::json_len).sum()
    }

    /// All of them.
    pub fn entries(&self) -> &[LogEntry] {
        &self.0
    }

    /// All of them, owned.
    pub fn into_entries(self) -> Vec<LogEntry> {
        self.0
    }
}

impl std::ops::Deref for RequestLog {
    type Target = [LogEntry];

    fn deref(&self) -> &[LogEntry] {
        &self.0
    }
}

impl IntoIterator for RequestLog {
    type Item = LogEntry;
    type IntoIter = std::vec::IntoIter<LogEntry>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a> IntoIterator for &'a RequestLog {
    type Item = &'a LogEntry;
    type IntoIter = std::slice::Iter<'a, LogEntry>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(operation: Option<OperationId>, status: u16) -> LogEntry {
        LogEntry {
            at: DateTime::<Utc>::default(),
            method: "GET".into(),
            path: "/".into(),
            operation_id: operation,
            headers: BTreeMap::new(),
            body: None,
            status,
            request_id: String::new(),
            faulted: false,
        }
    }

    #[test]
    fn helpers_find_the_requests_of_one_operation() {
        let log = RequestLog::new(vec![
            entry(Some(OperationId::CreatePipe), 503),
            entry(Some(OperationId::GetPipe), 200),
            entry(Some(OperationId::CreatePipe), 200),
            entry(None, 404),
        ]);
        assert_eq!(log.count_of(OperationId::CreatePipe), 2);
        assert_eq!(
            log.last_of(OperationId::CreatePipe).map(|e| e.status),
            Some(200)
        );
        assert_eq!(log.of(OperationId::CreatePipe)[0].status, 503);
        assert_eq!(log.count_of(OperationId::DeletePipe), 0);
        assert!(log.last_of(OperationId::DeletePipe).is_none());
        assert_eq!(log.len(), 4);
        let serialized: usize = log
            .iter()
            .map(|e| serde_json::to_vec(e).unwrap().len())
            .sum();
        assert_eq!(log.bytes(), serialized);
        let json = serde_json::to_value(&log[3]).unwrap();
        assert!(json["operationId"].is_null() && json["requestId"] == "");
    }
}
