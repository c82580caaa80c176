//! Where results go: stdout, as aligned text for people or as the domain value in JSON for scripts.

use std::io::{IsTerminal, Write};
use std::sync::{Mutex, PoisonError};

use api_mgmt::redact::Redactor;
use serde::Serialize;

use crate::cli::OutputFormat;
use crate::exit::Failure;

/// The output format of this run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Output {
    /// Human or JSON.
    pub format: OutputFormat,
}

impl Output {
    /// The requested format, else human on a terminal and JSON otherwise.
    pub fn resolve(requested: Option<OutputFormat>) -> Self {
        let format = requested.unwrap_or(if std::io::stdout().is_terminal() {
            OutputFormat::Human
        } else {
            OutputFormat::Json
        });
        Self { format }
    }

    /// Whether JSON is written.
    pub fn is_json(self) -> bool {
        self.format == OutputFormat::Json
    }

    /// Writes `value`: as pretty JSON, or as `human` renders it.
    pub fn show<T: Serialize + ?Sized>(
        self,
        value: &T,
        human: impl FnOnce(&T) -> String,
    ) -> Result<(), Failure> {
        match self.format {
            OutputFormat::Json => {
                let text = serde_json::to_string_pretty(value).map_err(|e| {
                    Failure::other(
                        "OUTPUT_ERROR",
                        format!("cannot write the result as JSON: {e}"),
                    )
                })?;
                write_stdout(&text)
            }
            OutputFormat::Human => write_stdout(&human(value)),
        }
    }
}

/// The secret values this run has seen (the key secret, the token, a pipe file's secrets): everything
/// cloudctl writes passes through the SDK's one redaction rule with them, so no output can show one,
/// in any encoding, whatever path produced the text.
static SECRETS: Mutex<Option<Redactor>> = Mutex::new(None);

/// Adds a secret value that no output may show.
pub(crate) fn keep_secret(value: &str) {
    let mut secrets = SECRETS.lock().unwrap_or_else(PoisonError::into_inner);
    secrets.get_or_insert_with(Redactor::new).add(value);
}

/// `text` as it may be written: secret values in any encoding, URI passwords and secret-named
/// members replaced by `[REDACTED]`.
pub(crate) fn redacted(text: &str) -> String {
    let secrets = SECRETS.lock().unwrap_or_else(PoisonError::into_inner);
    match &*secrets {
        Some(redactor) => redactor.text(text).into_owned(),
        None => Redactor::new().text(text).into_owned(),
    }
}

/// Writes `text` and a newline to stdout, redacted. A closed pipe (`cloudctl ... | head`) is not an
/// error.
pub(crate) fn write_stdout(text: &str) -> Result<(), Failure> {
    let text = redacted(text);
    let mut out = std::io::stdout().lock();
    let written = out
        .write_all(text.trim_end_matches('\n').as_bytes())
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush());
    match written {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Failure::other(
            "OUTPUT_ERROR",
            format!("cannot write to stdout: {e}"),
        )),
    }
}

/// Writes `text` and a newline to stderr, redacted, ignoring failures (there is nowhere left to
/// report them).
pub(crate) fn write_stderr(text: &str) {
    let text = redacted(text);
    let mut err = std::io::stderr().lock();
    let _ = err
        .write_all(text.trim_end_matches('\n').as_bytes())
        .and_then(|()| err.write_all(b"\n"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn everything_written_is_redacted_with_the_secrets_seen() {
        keep_secret("s3cr3t-value");
        keep_secret("ab");
        let failure =
            Failure::usage("the key s3cr3t-value was refused").with_hint("not s3cr\\u0033t-value");
        let shown = redacted(&failure.human());
        assert!(
            !shown.contains("s3cr3t") && !shown.contains("u0033t"),
            "{shown}"
        );
        assert!(shown.contains("[REDACTED]"), "{shown}");
        assert_eq!(
            redacted("db at postgres://u:pw-42@h"),
            "db at postgres://u:[REDACTED]@h"
        );
        assert_eq!(redacted("ab cd"), "ab cd", "too short to search for");
    }
}
