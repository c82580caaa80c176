//! Where results go: stdout, as aligned text for people or as the domain value in JSON for scripts.

use std::io::{IsTerminal, Write};

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

/// Writes `text` and a newline to stdout. A closed pipe (`cloudctl ... | head`) is not an error.
pub(crate) fn write_stdout(text: &str) -> Result<(), Failure> {
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

/// Writes `text` and a newline to stderr, ignoring failures (there is nowhere left to report them).
pub(crate) fn write_stderr(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err
        .write_all(text.trim_end_matches('\n').as_bytes())
        .and_then(|()| err.write_all(b"\n"));
}
