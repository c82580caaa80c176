//! [`CapturedLog`]: a log writer that keeps what is written in memory, for a test to read.

use std::sync::{Arc, Mutex, PoisonError};

/// A writer that keeps every byte written to it; its clones share one buffer. Give a clone to a
/// `tracing-subscriber` formatter (`.with_writer(move || log.clone())`) and read the log with
/// [`CapturedLog::text`].
///
/// ```
/// use std::io::Write;
///
/// let log = api_test_support::captured_log::CapturedLog::default();
/// let mut writer = log.clone();
/// writer.write_all(b"WARN the cassette's last line was cut short\n").unwrap();
/// assert_eq!(log.text(), "WARN the cassette's last line was cut short\n");
/// ```
#[derive(Clone, Debug, Default)]
pub struct CapturedLog(Arc<Mutex<Vec<u8>>>);

impl CapturedLog {
    /// Everything written so far, as text (a byte that is not UTF-8 is shown as `�`).
    pub fn text(&self) -> String {
        let bytes = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

impl std::io::Write for CapturedLog {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
