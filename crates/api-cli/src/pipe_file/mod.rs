//! The pipe file: YAML or JSON in the API's create shape, read through the spec's own shape and
//! checked by the SDK as every request is, with every problem reported by path and line; a
//! directory of them declares a service's pipes; `pipe export` writes one.

mod directory;
mod document;
mod export;
mod request;
mod yaml;

use std::io::Read;
use std::path::Path;

use api_mgmt::NewPipe;
use api_mgmt::declared::Lifecycle;

pub(crate) use directory::{Declared, DirectoryError, read as read_directory};
pub(crate) use export::{ExportedFile, exported_file};
pub(crate) use request::{FileProblem, Lines, Lookup};
pub(crate) use yaml::to_yaml;

/// The largest pipe file read (the API takes request bodies up to 2 MiB).
const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// A pipe file that failed: where it came from and every problem.
#[derive(Debug, Clone)]
pub(crate) struct FileError {
    /// The file name as given (`<stdin>` for `-`).
    pub name: String,
    /// Every problem, in file order.
    pub problems: Vec<FileProblem>,
}

/// Reads and checks the pipe file at `path` (`-` for standard input); the request, with the line
/// of each of its members, and the file's lifecycle.
pub(crate) fn load(path: &Path, env: Lookup<'_>) -> Result<(NewPipe, Lines, Lifecycle), FileError> {
    let name = if path.as_os_str() == "-" {
        "<stdin>".to_string()
    } else {
        path.display().to_string()
    };
    let text = read(path).map_err(|message| FileError {
        name: name.clone(),
        problems: vec![FileProblem {
            path: ".".into(),
            line: None,
            message,
        }],
    })?;
    check(&text, env).map_err(|problems| FileError { name, problems })
}

/// Checks the text of a pipe file and builds the request; the file's lifecycle beside it.
pub(crate) fn check(
    text: &str,
    env: Lookup<'_>,
) -> Result<(NewPipe, Lines, Lifecycle), Vec<FileProblem>> {
    let document = document::parse(text).map_err(|e| {
        vec![FileProblem {
            path: ".".into(),
            line: e.line,
            message: format!("not valid YAML or JSON: {}", e.message),
        }]
    })?;
    request::read(&document, env)
}

fn read(path: &Path) -> Result<String, String> {
    let mut bytes = Vec::new();
    let result = if path.as_os_str() == "-" {
        std::io::stdin()
            .lock()
            .take(MAX_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
    } else {
        std::fs::File::open(path)
            .and_then(|file| file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes))
    };
    result.map_err(|e| format!("cannot read the file: {e}"))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(format!(
            "the file is larger than {} MiB; a pipe request is far smaller",
            MAX_FILE_BYTES / 1024 / 1024
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "the file is not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}

/// The request as it would be sent, through the SDK's one redaction rule: secret-named members
/// (settings included), the pipe's secret values wherever they appear, and URI passwords are
/// `[REDACTED]`.
pub(crate) fn redacted_request(pipe: &NewPipe) -> serde_json::Value {
    let mut redactor = api_mgmt::redact::Redactor::new();
    for secret in pipe.secrets() {
        redactor.add(secret.expose());
    }
    let mut json = serde_json::to_value(pipe.as_raw()).unwrap_or(serde_json::Value::Null);
    redactor.json(&mut json);
    json
}

#[cfg(test)]
mod tests;
