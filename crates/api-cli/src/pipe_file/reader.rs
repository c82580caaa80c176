//! Typed reading of a document's mappings: every wrong type, unknown member or unset environment
//! variable is recorded as a problem with its path and line, and reading goes on, so that one run
//! lists every mistake.

use std::collections::BTreeMap;

use api_mgmt::Secret;

use super::document::{Entry, Node, Value};

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

/// Collects problems and the line of every path it has seen.
pub(crate) struct Reader<'a> {
    problems: Vec<FileProblem>,
    lines: BTreeMap<String, usize>,
    env: Lookup<'a>,
}

impl<'a> Reader<'a> {
    /// A reader that resolves `{"env": "VAR"}` secrets through `env`.
    pub fn new(env: Lookup<'a>) -> Self {
        Self {
            problems: Vec::new(),
            lines: BTreeMap::new(),
            env,
        }
    }

    /// Records a problem at `path`, on the line seen for it (or for its nearest parent).
    pub fn problem(&mut self, path: &str, message: impl Into<String>) {
        let line = self.line_of(path);
        self.problems.push(FileProblem {
            path: path.to_string(),
            line,
            message: message.into(),
        });
    }

    /// The line of `path`, or of the nearest parent path seen (a missing top-level member: the line
    /// where the file's mapping starts).
    pub fn line_of(&self, path: &str) -> Option<usize> {
        let mut candidate = path;
        loop {
            if let Some(line) = self.lines.get(candidate) {
                return Some(*line);
            }
            if candidate == "." {
                return None;
            }
            // Each step is shorter, down to the whole file (`.`), where the search ends.
            candidate = match candidate.rfind(['.', '[']) {
                Some(cut) => &candidate[..cut],
                None => ".",
            };
        }
    }

    /// Whether a problem was recorded at `path` or at one of its parents.
    pub fn has_problem_at_or_above(&self, path: &str) -> bool {
        self.problems.iter().any(|p| {
            p.path == path
                || path
                    .strip_prefix(p.path.as_str())
                    .is_some_and(|rest| rest.starts_with(['.', '[']))
        })
    }

    /// Whether nothing is wrong so far.
    pub fn has_no_problems(&self) -> bool {
        self.problems.is_empty()
    }

    /// The problems found.
    pub fn into_problems(self) -> Vec<FileProblem> {
        self.problems
    }

    fn seen(&mut self, path: &str, line: usize) {
        self.lines.entry(path.to_string()).or_insert(line);
    }

    /// The node as a mapping; a problem if it is anything else. `null` counts as absent.
    pub fn mapping<'n>(&mut self, node: &'n Node, path: &str) -> Option<Fields<'n>> {
        self.seen(path, node.line);
        match &node.value {
            Value::Map(entries) => Some(Fields::new(entries, path)),
            Value::Null => None,
            other => {
                self.problem(path, format!("expected a mapping, got {}", other.kind()));
                None
            }
        }
    }

    /// The node as a list; a problem if it is anything else. `null` counts as absent.
    pub fn list<'n>(&mut self, node: &'n Node, path: &str) -> &'n [Node] {
        self.seen(path, node.line);
        match &node.value {
            Value::Seq(items) => {
                for (i, item) in items.iter().enumerate() {
                    self.seen(&format!("{path}[{i}]"), item.line);
                }
                items
            }
            Value::Null => &[],
            other => {
                self.problem(path, format!("expected a list, got {}", other.kind()));
                &[]
            }
        }
    }

    /// The node as text.
    pub fn text(&mut self, node: &Node, path: &str) -> Option<String> {
        match &node.value {
            Value::Str(text) => Some(text.clone()),
            Value::Null => None,
            Value::Int(_) | Value::Float(_) | Value::Bool(_) => {
                self.problem(
                    path,
                    format!(
                        "expected a string, got {}; quote it to make it text",
                        node.value.kind()
                    ),
                );
                None
            }
            other => {
                self.problem(path, format!("expected a string, got {}", other.kind()));
                None
            }
        }
    }

    /// The node as a list of strings.
    pub fn texts(&mut self, node: &Node, path: &str) -> Vec<String> {
        let items = self.list(node, path);
        items
            .iter()
            .enumerate()
            .filter_map(|(i, item)| self.text(item, &format!("{path}[{i}]")))
            .collect()
    }

    /// The node as a whole number, at least 0.
    pub fn unsigned(&mut self, node: &Node, path: &str) -> Option<u64> {
        match &node.value {
            Value::Int(i) => match u64::try_from(*i) {
                Ok(value) => Some(value),
                Err(_) if *i < 0 => {
                    self.problem(path, format!("must not be negative, got {i}"));
                    None
                }
                Err(_) => {
                    self.problem(path, format!("{i} is too large"));
                    None
                }
            },
            Value::Null => None,
            other => {
                self.problem(
                    path,
                    format!("expected a whole number, got {}", other.kind()),
                );
                None
            }
        }
    }

    /// The node as a whole number that may be negative.
    pub fn signed(&mut self, node: &Node, path: &str) -> Option<i64> {
        match &node.value {
            Value::Int(i) => {
                let value = i64::try_from(*i).ok();
                if value.is_none() {
                    self.problem(path, format!("{i} is out of range"));
                }
                value
            }
            Value::Null => None,
            other => {
                self.problem(
                    path,
                    format!("expected a whole number, got {}", other.kind()),
                );
                None
            }
        }
    }

    /// The node as a number (whole or not).
    pub fn number(&mut self, node: &Node, path: &str) -> Option<f64> {
        match &node.value {
            #[allow(clippy::cast_precision_loss)]
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) if f.is_finite() => Some(*f),
            Value::Float(f) => {
                self.problem(path, format!("must be a finite number, got {f}"));
                None
            }
            Value::Null => None,
            other => {
                self.problem(path, format!("expected a number, got {}", other.kind()));
                None
            }
        }
    }

    /// The node as `true` or `false`.
    pub fn boolean(&mut self, node: &Node, path: &str) -> Option<bool> {
        match &node.value {
            Value::Bool(b) => Some(*b),
            Value::Null => None,
            other => {
                self.problem(
                    path,
                    format!("expected true or false, got {}", other.kind()),
                );
                None
            }
        }
    }

    /// A secret: text in the file, or `{env: VARIABLE}` read from the environment.
    pub fn secret(&mut self, node: &Node, path: &str) -> Option<Secret> {
        match &node.value {
            Value::Str(text) => Some(Secret::new(text.as_str())),
            Value::Map(entries) => {
                let variable = match entries.as_slice() {
                    [Entry { key, node, .. }] if key == "env" => match &node.value {
                        Value::Str(name) if !name.trim().is_empty() => Some(name.trim()),
                        _ => None,
                    },
                    _ => None,
                };
                let Some(variable) = variable else {
                    self.problem(
                        path,
                        "expected a string, or {env: VARIABLE} to read it from the environment",
                    );
                    return None;
                };
                match (self.env)(variable) {
                    Some(value) if !value.is_empty() => Some(Secret::new(value)),
                    _ => {
                        self.problem(
                            path,
                            format!("the environment variable {variable} is not set"),
                        );
                        None
                    }
                }
            }
            Value::Null => None,
            other => {
                self.problem(
                    path,
                    format!(
                        "expected a string or {{env: VARIABLE}}, got {}",
                        other.kind()
                    ),
                );
                None
            }
        }
    }
}

/// The members of one mapping, taken one by one; [`Fields::finish`] reports the ones nobody took.
pub(crate) struct Fields<'n> {
    entries: &'n [Entry],
    taken: Vec<bool>,
    path: String,
}

impl<'n> Fields<'n> {
    fn new(entries: &'n [Entry], path: &str) -> Self {
        Self {
            entries,
            taken: vec![false; entries.len()],
            path: path.to_string(),
        }
    }

    /// The path of this mapping (`.` for the whole file).
    pub fn own_path(&self) -> &str {
        &self.path
    }

    /// Whether member `name` is present and not `null`.
    pub fn has(&self, name: &str) -> bool {
        self.entries
            .iter()
            .any(|e| e.key == name && e.node.value != Value::Null)
    }

    /// The path of member `name`.
    pub fn path(&self, name: &str) -> String {
        if self.path == "." || self.path.is_empty() {
            name.to_string()
        } else {
            format!("{}.{name}", self.path)
        }
    }

    /// Member `name` with its path, if present (a `null` member counts as absent); remembers its line.
    pub fn take(&mut self, reader: &mut Reader<'_>, name: &str) -> Option<(&'n Node, String)> {
        let index = self.entries.iter().position(|e| e.key == name)?;
        self.taken[index] = true;
        let entry = &self.entries[index];
        let path = self.path(name);
        reader.seen(&path, entry.line);
        (entry.node.value != Value::Null).then_some((&entry.node, path))
    }

    /// Member `name` as text.
    pub fn text(&mut self, reader: &mut Reader<'_>, name: &str) -> Option<String> {
        let (node, path) = self.take(reader, name)?;
        reader.text(node, &path)
    }

    /// Member `name` as a list of strings (empty when absent).
    pub fn texts(&mut self, reader: &mut Reader<'_>, name: &str) -> Vec<String> {
        match self.take(reader, name) {
            Some((node, path)) => reader.texts(node, &path),
            None => Vec::new(),
        }
    }

    /// Member `name` as a whole number, at least 0.
    pub fn unsigned(&mut self, reader: &mut Reader<'_>, name: &str) -> Option<u64> {
        let (node, path) = self.take(reader, name)?;
        reader.unsigned(node, &path)
    }

    /// Member `name` as a whole number that fits `T` (`u32`, `u16`).
    pub fn unsigned_as<T: TryFrom<u64>>(
        &mut self,
        reader: &mut Reader<'_>,
        name: &str,
    ) -> Option<T> {
        let path = self.path(name);
        let value = self.unsigned(reader, name)?;
        let converted = T::try_from(value).ok();
        if converted.is_none() {
            reader.problem(&path, format!("{value} is too large"));
        }
        converted
    }

    /// Member `name` as a whole number that may be negative.
    pub fn signed(&mut self, reader: &mut Reader<'_>, name: &str) -> Option<i64> {
        let (node, path) = self.take(reader, name)?;
        reader.signed(node, &path)
    }

    /// Member `name` as a number.
    pub fn number(&mut self, reader: &mut Reader<'_>, name: &str) -> Option<f64> {
        let (node, path) = self.take(reader, name)?;
        reader.number(node, &path)
    }

    /// Member `name` as `true` or `false`.
    pub fn boolean(&mut self, reader: &mut Reader<'_>, name: &str) -> Option<bool> {
        let (node, path) = self.take(reader, name)?;
        reader.boolean(node, &path)
    }

    /// Member `name` as a secret (text, or `{env: VARIABLE}`).
    pub fn secret(&mut self, reader: &mut Reader<'_>, name: &str) -> Option<Secret> {
        let (node, path) = self.take(reader, name)?;
        reader.secret(node, &path)
    }

    /// Member `name` as a mapping.
    pub fn mapping(&mut self, reader: &mut Reader<'_>, name: &str) -> Option<Fields<'n>> {
        let (node, path) = self.take(reader, name)?;
        reader.mapping(node, &path)
    }

    /// Member `name` as a list, each item with its path.
    pub fn list(&mut self, reader: &mut Reader<'_>, name: &str) -> Vec<(&'n Node, String)> {
        let Some((node, path)) = self.take(reader, name) else {
            return Vec::new();
        };
        reader
            .list(node, &path)
            .iter()
            .enumerate()
            .map(|(i, item)| (item, format!("{path}[{i}]")))
            .collect()
    }

    /// The members nobody took, with their nodes (for settings the CLI passes through).
    pub fn rest(&mut self, reader: &mut Reader<'_>) -> Vec<(&'n str, &'n Node)> {
        let entries = self.entries;
        let mut rest = Vec::new();
        for (index, entry) in entries.iter().enumerate() {
            if !self.taken[index] {
                self.taken[index] = true;
                reader.seen(&self.path(&entry.key), entry.line);
                rest.push((entry.key.as_str(), &entry.node));
            }
        }
        rest
    }

    /// Reports every member nobody took as unknown, naming the members that are known here.
    pub fn finish(self, reader: &mut Reader<'_>, known: &[&str]) {
        for (entry, taken) in self.entries.iter().zip(&self.taken) {
            if !taken {
                let path = self.path(&entry.key);
                reader.seen(&path, entry.line);
                reader.problem(
                    &path,
                    format!("unknown member; expected one of: {}", known.join(", ")),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::document::parse;
    use super::*;

    #[test]
    fn a_path_takes_the_line_of_its_nearest_parent_seen() {
        let env = |_: &str| None;
        let mut reader = Reader::new(&env);
        assert_eq!(reader.line_of("a.b[2].c"), None, "nothing seen yet");
        assert_eq!(reader.line_of("."), None);
        reader.seen(".", 2);
        reader.seen("a", 3);
        reader.seen("a.b[2]", 7);
        assert_eq!(reader.line_of("a.b[2].c"), Some(7));
        assert_eq!(reader.line_of("a.b[1].c"), Some(3));
        assert_eq!(reader.line_of("a"), Some(3));
        assert_eq!(reader.line_of("missing"), Some(2), "a top-level member");
        assert_eq!(reader.line_of("missing.x"), Some(2));
    }

    #[test]
    fn problems_have_paths_and_lines_and_reading_goes_on() {
        let doc = parse("a: 1\nb:\n  c: text\n  d: [1, x]\n  e: {env: NOPE}\n  f: oops\n").unwrap();
        let env = |_: &str| None;
        let mut reader = Reader::new(&env);
        let mut root = reader.mapping(&doc, ".").unwrap();
        assert_eq!(root.text(&mut reader, "a"), None);
        let mut b = root.mapping(&mut reader, "b").unwrap();
        assert_eq!(b.unsigned(&mut reader, "c"), None);
        assert_eq!(b.texts(&mut reader, "d"), vec!["x".to_string()]);
        assert!(b.secret(&mut reader, "e").is_none());
        b.finish(&mut reader, &["c", "d", "e"]);
        root.finish(&mut reader, &["a", "b"]);
        let problems = reader.into_problems();
        let shown: Vec<String> = problems
            .iter()
            .map(|p| format!("{}:{} {}", p.line.unwrap_or(0), p.path, p.message))
            .collect();
        assert_eq!(
            shown,
            [
                "1:a expected a string, got a number; quote it to make it text",
                "3:b.c expected a whole number, got a string",
                "4:b.d[0] expected a string, got a number; quote it to make it text",
                "5:b.e the environment variable NOPE is not set",
                "6:b.f unknown member; expected one of: c, d, e",
            ]
        );
    }

    #[test]
    fn secrets_come_from_the_environment() {
        let doc = parse("p: {env: KAFKA_PASSWORD}\nq: plain\nr: {env: A, x: 1}\n").unwrap();
        let env = |name: &str| (name == "KAFKA_PASSWORD").then(|| "from-env".to_string());
        let mut reader = Reader::new(&env);
        let mut root = reader.mapping(&doc, ".").unwrap();
        assert_eq!(
            root.secret(&mut reader, "p")
                .map(|s| s.expose().to_string()),
            Some("from-env".into())
        );
        assert_eq!(
            root.secret(&mut reader, "q")
                .map(|s| s.expose().to_string()),
            Some("plain".into())
        );
        assert!(root.secret(&mut reader, "r").is_none());
        assert_eq!(reader.into_problems().len(), 1);
    }

    #[test]
    fn numbers_are_checked_against_their_type() {
        let doc = parse("a: -1\nb: 70000\nc: 1.5\nd: 3\n").unwrap();
        let env = |_: &str| None;
        let mut reader = Reader::new(&env);
        let mut root = reader.mapping(&doc, ".").unwrap();
        assert_eq!(root.unsigned(&mut reader, "a"), None);
        assert_eq!(root.unsigned_as::<u16>(&mut reader, "b"), None);
        assert_eq!(root.unsigned(&mut reader, "c"), None);
        assert_eq!(root.number(&mut reader, "d"), Some(3.0));
        assert_eq!(reader.into_problems().len(), 3);
    }
}
