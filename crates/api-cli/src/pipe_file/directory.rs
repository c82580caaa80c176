//! A directory of declared pipes: one pipe file each (`*.yaml`, `*.yml`, `*.json`), and an optional
//! `service.yaml` with the service's state. Files whose names start with a dot (the state file) are
//! never read as pipe files; files of other extensions are left alone.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use api_mgmt::declared::{Declaration, ServiceTarget};

use super::document::{self, Value as Yaml};
use super::{FileError, FileProblem, Lookup};

/// The names of the service file (the first found is read).
const SERVICE_FILES: [&str; 3] = ["service.yaml", "service.yml", "service.json"];

/// The pipe files' extensions.
const EXTENSIONS: [&str; 3] = ["yaml", "yml", "json"];

/// A directory read and checked.
#[derive(Debug)]
pub(crate) struct Declared {
    /// The declaration: every pipe by name, and the service's state.
    pub declaration: Declaration,
}

/// Why a directory could not be read.
#[derive(Debug)]
pub(crate) enum DirectoryError {
    /// The directory itself (missing, not a directory, unreadable): what is wrong.
    Unusable(String),
    /// Its files, with every problem of each.
    Files(Vec<FileError>),
}

/// Reads every pipe file of `dir` and its service file; every problem of every file, or the
/// declaration.
pub(crate) fn read(dir: &Path, env: Lookup<'_>) -> Result<Declared, DirectoryError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(DirectoryError::Unusable(format!(
                "{} does not exist",
                dir.display()
            )));
        }
        Err(e) => {
            return Err(DirectoryError::Unusable(format!(
                "{} cannot be read as a directory: {e}",
                dir.display()
            )));
        }
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.is_file())
        .collect();
    paths.sort();

    let mut errors = Vec::new();
    let mut declaration = Declaration::new();
    let mut files: BTreeMap<String, PathBuf> = BTreeMap::new();
    let mut name_lines: BTreeMap<PathBuf, Option<usize>> = BTreeMap::new();
    let mut duplicates: Vec<(String, PathBuf, PathBuf)> = Vec::new();
    for path in &paths {
        let file_name = path.file_name().unwrap_or_default().to_string_lossy();
        let extension = path.extension().unwrap_or_default().to_string_lossy();
        if file_name.starts_with('.') || !EXTENSIONS.contains(&extension.as_ref()) {
            continue;
        }
        if SERVICE_FILES.contains(&file_name.as_ref()) {
            match service_state(path) {
                Ok(state) => declaration = declaration.service_state(state),
                Err(error) => errors.push(error),
            }
            continue;
        }
        match super::load(path, env) {
            Ok((pipe, lines, lifecycle)) => {
                let name = pipe.as_raw().name.to_string();
                name_lines.insert(path.clone(), lines.line_of("name"));
                match files.get(&name) {
                    Some(first) => duplicates.push((name, first.clone(), path.clone())),
                    None => {
                        files.insert(name.clone(), path.clone());
                        declaration.insert(pipe);
                        declaration.set_lifecycle(name.clone(), lifecycle);
                        declaration.set_origin(name, path.display().to_string());
                    }
                }
            }
            Err(error) => errors.push(error),
        }
    }
    for (name, first, second) in duplicates {
        for (this, other) in [(&first, &second), (&second, &first)] {
            errors.push(FileError {
                name: this.display().to_string(),
                problems: vec![FileProblem {
                    path: "name".into(),
                    line: name_lines.get(this).copied().flatten(),
                    message: format!(
                        "the pipe {name:?} is declared twice: also in {}",
                        other.display()
                    ),
                }],
            });
        }
    }
    if errors.is_empty() {
        Ok(Declared { declaration })
    } else {
        Err(DirectoryError::Files(errors))
    }
}

/// `state: running` or `state: stopped`.
fn service_state(path: &Path) -> Result<ServiceTarget, FileError> {
    let name = path.display().to_string();
    let fail = |line: Option<usize>, path: &str, message: String| FileError {
        name: name.clone(),
        problems: vec![FileProblem {
            path: path.into(),
            line,
            message,
        }],
    };
    let text = super::read(path).map_err(|message| fail(None, ".", message))?;
    let document = document::parse(&text).map_err(|e| {
        fail(
            e.line,
            ".",
            format!("not valid YAML or JSON: {}", e.message),
        )
    })?;
    let Yaml::Map(entries) = &document.value else {
        return Err(fail(
            Some(document.line),
            ".",
            "expected `state: running` or `state: stopped`".into(),
        ));
    };
    let mut state = None;
    for entry in entries {
        match (entry.key.as_str(), &entry.node.value) {
            ("state", Yaml::Str(text)) if text.eq_ignore_ascii_case("running") => {
                state = Some(ServiceTarget::Running);
            }
            ("state", Yaml::Str(text)) if text.eq_ignore_ascii_case("stopped") => {
                state = Some(ServiceTarget::Stopped);
            }
            ("state", _) => {
                return Err(fail(
                    Some(entry.line),
                    "state",
                    "must be running or stopped".into(),
                ));
            }
            (other, _) => {
                return Err(fail(
                    Some(entry.line),
                    other,
                    "unknown member; expected one of: state".into(),
                ));
            }
        }
    }
    state.ok_or_else(|| fail(Some(document.line), "state", "is required".into()))
}
