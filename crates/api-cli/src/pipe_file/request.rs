//! From a pipe file's document to the create request: the document becomes the request's JSON
//! through the spec's own shape (`{env: VARIABLE}` read from the environment where a string goes),
//! then the SDK checks it as it checks every request ([`NewPipe::from_json`]: the spec's schema, then
//! the rules beyond it). Each problem keeps the line of its path.

use std::collections::BTreeMap;

use api_mgmt::NewPipe;
use api_mgmt::declared::Lifecycle;
use api_mgmt::redact::REDACTED;
use api_mgmt::schema::{SchemaSet, Shape};
use serde_json::{Map, Value};

use super::document::{Entry, Node, Value as Yaml};

/// A mistake in the file: its path in the API's create shape, the line, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileProblem {
    /// The path, e.g. `source.kafka.brokers` (`.` for the whole file).
    pub path: String,
    /// The line (1-based), when the format tells.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

/// Reads the environment (injected, so tests need not change the process environment).
pub(crate) type Lookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The line of every path seen in a document.
#[derive(Debug, Clone, Default)]
pub(crate) struct Lines(BTreeMap<String, usize>);

impl Lines {
    /// The line of `path`, or of its nearest parent seen (the whole file: `.`).
    pub fn line_of(&self, path: &str) -> Option<usize> {
        let mut candidate = path;
        loop {
            if let Some(line) = self.0.get(candidate) {
                return Some(*line);
            }
            if candidate == "." {
                return None;
            }
            candidate = match candidate.rfind(['.', '[']) {
                Some(cut) => &candidate[..cut],
                None => ".",
            };
        }
    }
}

/// The key of a pipe file that is cloudctl's own, never sent to the API.
const LIFECYCLE: &str = "lifecycle";

/// The request of a pipe file, checked, with the lines of its members and its lifecycle (the
/// `lifecycle:` key, taken out of the request).
pub(crate) fn read(
    document: &Node,
    env: Lookup<'_>,
) -> Result<(NewPipe, Lines, Lifecycle), Vec<FileProblem>> {
    let mut lifecycle_problems = Vec::new();
    let mut lifecycle = Lifecycle::default();
    let mut request_document = document.clone();
    if let Yaml::Map(entries) = &mut request_document.value
        && let Some(at) = entries.iter().position(|e| e.key == LIFECYCLE)
    {
        let entry = entries.remove(at);
        match lifecycle_of(&entry) {
            Ok(read) => lifecycle = read,
            Err(problems) => lifecycle_problems = problems,
        }
    }
    let (pipe, lines) = match read_request(&request_document, env) {
        Ok(read) if lifecycle_problems.is_empty() => read,
        Ok(_) => return Err(lifecycle_problems),
        Err(mut problems) => {
            problems.extend(lifecycle_problems);
            problems.sort_by_key(|p| p.line.unwrap_or(usize::MAX));
            return Err(problems);
        }
    };
    Ok((pipe, lines, lifecycle))
}

/// `lifecycle: {protect: BOOL, retainOnDelete: BOOL}`, every problem by path and line.
fn lifecycle_of(entry: &Entry) -> Result<Lifecycle, Vec<FileProblem>> {
    let problem = |path: &str, line: usize, message: String| FileProblem {
        path: path.to_string(),
        line: Some(line),
        message,
    };
    let Yaml::Map(members) = &entry.node.value else {
        return Err(vec![problem(
            LIFECYCLE,
            entry.line,
            format!(
                "expected a mapping ({{protect: true, retainOnDelete: true}}), got {}",
                entry.node.value.kind()
            ),
        )]);
    };
    let mut lifecycle = Lifecycle::default();
    let mut problems = Vec::new();
    for member in members {
        let path = format!("{LIFECYCLE}.{}", member.key);
        let flag = match &member.node.value {
            Yaml::Bool(flag) => *flag,
            other => {
                problems.push(problem(
                    &path,
                    member.line,
                    format!("expected true or false, got {}", other.kind()),
                ));
                continue;
            }
        };
        match member.key.as_str() {
            "protect" => lifecycle.protect = flag,
            "retainOnDelete" => lifecycle.retain_on_delete = flag,
            other => problems.push(problem(
                &path,
                member.line,
                format!(
                    "unknown member {other:?} of cloudctl's lifecycle; expected protect or \
                     retainOnDelete"
                ),
            )),
        }
    }
    if problems.is_empty() {
        Ok(lifecycle)
    } else {
        Err(problems)
    }
}

/// The request of a pipe file (without its lifecycle), checked, with the lines of its members.
fn read_request(document: &Node, env: Lookup<'_>) -> Result<(NewPipe, Lines), Vec<FileProblem>> {
    let mut reading = Reading {
        lines: Lines::default(),
        problems: Vec::new(),
        env,
    };
    reading.lines.0.insert(".".into(), document.line);
    match &document.value {
        Yaml::Map(_) => {}
        Yaml::Null => {
            reading.problem(".", "the file is empty; expected a pipe create request");
            return Err(reading.problems);
        }
        other => {
            reading.problem(
                ".",
                format!(
                    "expected a mapping (the API's create request), got {}",
                    other.kind()
                ),
            );
            return Err(reading.problems);
        }
    }
    let shape = SchemaSet::management().schema("PipeCreateRequest");
    let request = reading
        .value(document, shape, &mut String::new())
        .unwrap_or(Value::Null);
    let mut problems = reading.problems;
    let lines = reading.lines;
    match NewPipe::from_json(request) {
        Ok(pipe) if problems.is_empty() => Ok((pipe, lines)),
        Ok(_) => Err(problems),
        Err(invalid) => {
            let told: Vec<String> = problems.iter().map(|p| p.path.clone()).collect();
            for problem in invalid.problems {
                // A member the file got wrong (an unset variable) is told once, as the file's.
                if !told.iter().any(|path| problem.is_within(path)) {
                    let mut message = problem.message;
                    // YAML reads `port: 5432` and `on: true` as a number and a boolean.
                    if message.starts_with("expected a string, found a number")
                        || message.starts_with("expected a string, found a boolean")
                    {
                        message.push_str("; quote it to make it text");
                    }
                    problems.push(FileProblem {
                        line: lines.line_of(&problem.path),
                        path: problem.path,
                        message,
                    });
                }
            }
            problems.sort_by_key(|p| p.line.unwrap_or(usize::MAX));
            Err(problems)
        }
    }
}

/// One document being turned into JSON.
struct Reading<'a> {
    lines: Lines,
    problems: Vec<FileProblem>,
    env: Lookup<'a>,
}

impl Reading<'_> {
    fn problem(&mut self, path: &str, message: impl Into<String>) {
        self.problems.push(FileProblem {
            path: path.to_string(),
            line: self.lines.line_of(path),
            message: message.into(),
        });
    }

    /// The JSON of `node`, whose schema is `shape` (when the spec has one here); `None` for a
    /// value left out (an unset variable, a number JSON cannot hold).
    fn value(&mut self, node: &Node, shape: Option<Shape<'_>>, path: &mut String) -> Option<Value> {
        let at = if path.is_empty() {
            ".".to_string()
        } else {
            path.clone()
        };
        self.lines.0.entry(at.clone()).or_insert(node.line);
        match &node.value {
            Yaml::Map(entries) => {
                if let Some(variable) = env_variable(entries).filter(|_| takes_text(shape)) {
                    return match (self.env)(variable) {
                        Some(value) if value.contains(REDACTED) => {
                            self.problem(&at, marker_problem(&format!("the variable {variable}")));
                            None
                        }
                        Some(value) if !value.is_empty() => Some(Value::String(value)),
                        _ => {
                            self.problem(
                                &at,
                                format!("the environment variable {variable} is not set"),
                            );
                            None
                        }
                    };
                }
                let mut members = Map::new();
                for entry in entries {
                    let length = path.len();
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(&entry.key);
                    self.lines.0.insert(path.clone(), entry.line);
                    let inner = shape.and_then(|s| s.member(&entry.key));
                    if let Some(value) = self.value(&entry.node, inner, path) {
                        members.insert(entry.key.clone(), value);
                    }
                    path.truncate(length);
                }
                Some(Value::Object(members))
            }
            Yaml::Seq(items) => {
                let inner = shape.and_then(|s| s.items());
                let mut values = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    let length = path.len();
                    path.push_str(&format!("[{i}]"));
                    self.lines.0.insert(path.clone(), item.line);
                    // An item left out would shift the others' paths: keep a null in its place.
                    values.push(self.value(item, inner, path).unwrap_or(Value::Null));
                    path.truncate(length);
                }
                Some(Value::Array(values))
            }
            Yaml::Null => Some(Value::Null),
            Yaml::Bool(b) => Some(Value::Bool(*b)),
            Yaml::Int(i) => Some(
                i64::try_from(*i)
                    .map(Value::from)
                    .or_else(|_| u64::try_from(*i).map(Value::from))
                    .unwrap_or_else(|_| Value::from(*i as f64)),
            ),
            Yaml::Float(f) => match serde_json::Number::from_f64(*f) {
                Some(number) => Some(Value::Number(number)),
                None => {
                    self.problem(&at, format!("must be a finite number, got {f}"));
                    None
                }
            },
            Yaml::Str(text) if text.contains(REDACTED) => {
                self.problem(&at, marker_problem("the value"));
                None
            }
            Yaml::Str(text) => Some(Value::String(text.clone())),
        }
    }
}

/// The problem of a value holding the redaction marker: text cloudctl showed in place of a secret,
/// copied back into a file, would be sent as it is.
fn marker_problem(what: &str) -> String {
    format!(
        "{what} holds {REDACTED}, the text cloudctl shows in place of a secret, not the secret: \
         give the value itself (from the environment: {{env: VARIABLE}})"
    )
}

/// `{env: VARIABLE}`: the variable's name.
fn env_variable(entries: &[Entry]) -> Option<&str> {
    match entries {
        [Entry { key, node, .. }] if key == "env" => match &node.value {
            Yaml::Str(name) if !name.trim().is_empty() => Some(name.trim()),
            _ => None,
        },
        _ => None,
    }
}

/// Whether a string can go where `shape` is: anything but an object of the spec (an unknown member
/// takes nothing; the schema check says so).
fn takes_text(shape: Option<Shape<'_>>) -> bool {
    shape.is_some_and(|s| s.members().next().is_none() && !s.is_open())
}
