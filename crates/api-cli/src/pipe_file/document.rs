//! A YAML or JSON document read into a tree whose every node knows its line in the file.
//!
//! JSON is YAML 1.2 in flow style, so one parser (saphyr-parser, YAML 1.2, pure Rust) reads both.
//! Plain scalars are typed by the YAML 1.2 core schema (`null`, `true`, `42`, `0.5`); quoted ones are
//! always strings. Aliases are expanded, within limits that keep a hostile file from exhausting memory.

use std::collections::BTreeMap;

use saphyr_parser::{Event, Parser, ScalarStyle, Span, Tag};

/// The deepest nesting a pipe file may have (a pipe request is about six levels deep).
const MAX_DEPTH: usize = 64;

/// The most nodes a file may expand to, aliases included.
const MAX_NODES: usize = 100_000;

/// A value of the document and the line (1-based) where it starts.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node {
    /// The value.
    pub value: Value,
    /// The line where the value starts.
    pub line: usize,
}

/// A mapping entry: the key, the line of the key, and the value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    /// The key.
    pub key: String,
    /// The line of the key.
    pub line: usize,
    /// The value.
    pub node: Node,
}

/// What a node holds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    /// `null`, `~` or nothing.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A whole number.
    Int(i128),
    /// A number with a fraction or an exponent.
    Float(f64),
    /// Text.
    Str(String),
    /// A sequence.
    Seq(Vec<Node>),
    /// A mapping, in file order.
    Map(Vec<Entry>),
}

impl Value {
    /// What kind of value this is, for messages (`a string`, `a mapping`, ...).
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Int(_) | Value::Float(_) => "a number",
            Value::Str(_) => "a string",
            Value::Seq(_) => "a list",
            Value::Map(_) => "a mapping",
        }
    }

    /// The value as JSON.
    #[cfg(test)]
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as Json;
        match self {
            Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Int(i) => i64::try_from(*i)
                .map(Json::from)
                .or_else(|_| u64::try_from(*i).map(Json::from))
                .unwrap_or_else(|_| Json::from(*i as f64)),
            Value::Float(f) => serde_json::Number::from_f64(*f).map_or(Json::Null, Json::Number),
            Value::Str(s) => Json::String(s.clone()),
            Value::Seq(items) => Json::Array(items.iter().map(|n| n.value.to_json()).collect()),
            Value::Map(entries) => Json::Object(
                entries
                    .iter()
                    .map(|e| (e.key.clone(), e.node.value.to_json()))
                    .collect(),
            ),
        }
    }
}

/// Why a file could not be read as a document: a syntax error, or a shape no pipe file has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SyntaxError {
    /// The line (1-based), when known.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl SyntaxError {
    fn at(span: Span, message: impl Into<String>) -> Self {
        Self {
            line: Some(span.start.line()),
            message: message.into(),
        }
    }
}

/// A container being filled while the events arrive.
enum Open {
    Seq {
        line: usize,
        anchor: usize,
        items: Vec<Node>,
    },
    Map {
        line: usize,
        anchor: usize,
        entries: Vec<Entry>,
        key: Option<(String, usize)>,
    },
}

/// Reads `text` (YAML or JSON) into a tree. An empty document is `Null`.
pub(crate) fn parse(text: &str) -> Result<Node, SyntaxError> {
    let mut parser = Parser::new_from_str(text);
    let mut stack: Vec<Open> = Vec::new();
    let mut anchors: BTreeMap<usize, Node> = BTreeMap::new();
    let mut root: Option<Node> = None;
    let mut documents = 0usize;
    let mut nodes = 0usize;
    while let Some(event) = parser.next_event() {
        let (event, span) = event.map_err(|e| SyntaxError {
            line: Some(e.marker().line()),
            message: e.info().to_string(),
        })?;
        let line = span.start.line();
        let finished = match event {
            Event::DocumentStart(_) => {
                documents += 1;
                if documents > 1 {
                    return Err(SyntaxError::at(
                        span,
                        "the file holds more than one document; a pipe file holds one",
                    ));
                }
                None
            }
            Event::Scalar(text, style, anchor, tag) => {
                let node = Node {
                    value: scalar(&text, style, tag.as_deref()),
                    line,
                };
                remember(&mut anchors, anchor, &node);
                Some(node)
            }
            Event::Alias(anchor) => match anchors.get(&anchor) {
                Some(node) => {
                    nodes = nodes.saturating_add(count(node));
                    Some(Node {
                        value: node.value.clone(),
                        line,
                    })
                }
                None => return Err(SyntaxError::at(span, "an alias names no anchor")),
            },
            Event::SequenceStart(anchor, _) => {
                stack.push(Open::Seq {
                    line,
                    anchor,
                    items: Vec::new(),
                });
                None
            }
            Event::MappingStart(anchor, _) => {
                stack.push(Open::Map {
                    line,
                    anchor,
                    entries: Vec::new(),
                    key: None,
                });
                None
            }
            Event::SequenceEnd | Event::MappingEnd => match stack.pop() {
                Some(Open::Seq {
                    line,
                    anchor,
                    items,
                }) => {
                    let node = Node {
                        value: Value::Seq(items),
                        line,
                    };
                    remember(&mut anchors, anchor, &node);
                    Some(node)
                }
                Some(Open::Map {
                    line,
                    anchor,
                    entries,
                    ..
                }) => {
                    let node = Node {
                        value: Value::Map(entries),
                        line,
                    };
                    remember(&mut anchors, anchor, &node);
                    Some(node)
                }
                None => None,
            },
            Event::StreamStart | Event::StreamEnd | Event::DocumentEnd | Event::Nothing => None,
        };
        if stack.len() > MAX_DEPTH {
            return Err(SyntaxError::at(span, "the file is nested too deeply"));
        }
        let Some(node) = finished else { continue };
        nodes = nodes.saturating_add(1);
        if nodes > MAX_NODES {
            return Err(SyntaxError::at(
                span,
                "the file expands to too many values (aliases included)",
            ));
        }
        match stack.last_mut() {
            None => root = Some(node),
            Some(Open::Seq { items, .. }) => items.push(node),
            Some(Open::Map { entries, key, .. }) => match key.take() {
                None => match &node.value {
                    Value::Str(text) => *key = Some((text.clone(), node.line)),
                    Value::Int(i) => *key = Some((i.to_string(), node.line)),
                    Value::Bool(b) => *key = Some((b.to_string(), node.line)),
                    Value::Null => *key = Some((String::new(), node.line)),
                    other => {
                        return Err(SyntaxError::at(
                            span,
                            format!("a key must be text, not {}", other.kind()),
                        ));
                    }
                },
                Some((text, key_line)) => {
                    if entries.iter().any(|e| e.key == text) {
                        return Err(SyntaxError {
                            line: Some(key_line),
                            message: format!("the key `{text}` appears twice in one mapping"),
                        });
                    }
                    entries.push(Entry {
                        key: text,
                        line: key_line,
                        node,
                    });
                }
            },
        }
    }
    Ok(root.unwrap_or(Node {
        value: Value::Null,
        line: 1,
    }))
}

fn remember(anchors: &mut BTreeMap<usize, Node>, anchor: usize, node: &Node) {
    if anchor > 0 {
        anchors.insert(anchor, node.clone());
    }
}

/// How many nodes a tree holds.
fn count(node: &Node) -> usize {
    match &node.value {
        Value::Seq(items) => 1usize.saturating_add(items.iter().map(count).sum::<usize>()),
        Value::Map(entries) => {
            1usize.saturating_add(entries.iter().map(|e| count(&e.node)).sum::<usize>())
        }
        _ => 1,
    }
}

/// What `text` written as a plain scalar reads as.
pub(crate) fn scalar_of(text: &str) -> Value {
    scalar(text, ScalarStyle::Plain, None)
}

/// Types a scalar by the YAML 1.2 core schema: only plain scalars are anything but text.
fn scalar(text: &str, style: ScalarStyle, tag: Option<&Tag>) -> Value {
    let forced_text = tag.is_some_and(|t| t.is_yaml_core_schema() && t.suffix == "str");
    if style != ScalarStyle::Plain || forced_text {
        return Value::Str(text.to_string());
    }
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return Value::Float(f64::INFINITY);
        }
        "-.inf" | "-.Inf" | "-.INF" => return Value::Float(f64::NEG_INFINITY),
        ".nan" | ".NaN" | ".NAN" => return Value::Float(f64::NAN),
        _ => {}
    }
    if let Some(int) = integer(text) {
        return Value::Int(int);
    }
    if let Some(float) = is_float(text).then(|| text.parse::<f64>().ok()).flatten() {
        return Value::Float(float);
    }
    Value::Str(text.to_string())
}

/// `[-+]?[0-9]+`, `0o[0-7]+` or `0x[0-9a-fA-F]+`.
fn integer(text: &str) -> Option<i128> {
    if let Some(octal) = text.strip_prefix("0o") {
        return i128::from_str_radix(octal, 8)
            .ok()
            .filter(|_| !octal.is_empty());
    }
    if let Some(hex) = text.strip_prefix("0x") {
        return i128::from_str_radix(hex, 16)
            .ok()
            .filter(|_| !hex.is_empty());
    }
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse::<i128>().ok()
}

/// `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`
fn is_float(text: &str) -> bool {
    let body = text.strip_prefix(['-', '+']).unwrap_or(text);
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(at) => (&body[..at], Some(&body[at + 1..])),
        None => (body, None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = match mantissa.split_once('.') {
        Some((whole, fraction)) => {
            (digits(whole) && (fraction.is_empty() || digits(fraction)))
                || (whole.is_empty() && digits(fraction))
        }
        None => digits(mantissa),
    };
    let exponent_ok = exponent.is_none_or(|e| digits(e.strip_prefix(['-', '+']).unwrap_or(e)));
    mantissa_ok && exponent_ok
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(node: &Node) -> &[Entry] {
        match &node.value {
            Value::Map(entries) => entries,
            other => panic!("not a mapping: {other:?}"),
        }
    }

    #[test]
    fn yaml_values_are_typed_and_keep_their_lines() {
        let doc = parse(
            "name: orders\nport: 5432\nmemory: 0.5\non: true\nnothing: ~\nquoted: \"42\"\nlist:\n  - a\n  - b\n",
        )
        .unwrap();
        let entries = map(&doc);
        let get = |key: &str| entries.iter().find(|e| e.key == key).unwrap();
        assert_eq!(get("name").node.value, Value::Str("orders".into()));
        assert_eq!(get("port").node.value, Value::Int(5432));
        assert_eq!(get("port").line, 2);
        assert_eq!(get("memory").node.value, Value::Float(0.5));
        assert_eq!(get("on").node.value, Value::Bool(true));
        assert_eq!(get("nothing").node.value, Value::Null);
        assert_eq!(get("quoted").node.value, Value::Str("42".into()));
        let Value::Seq(items) = &get("list").node.value else {
            panic!("a list")
        };
        assert_eq!(items[1].line, 9);
    }

    #[test]
    fn json_is_read_with_lines() {
        let doc =
            parse("{\n  \"name\": \"orders\",\n  \"scaling\": {\"replicas\": 2}\n}\n").unwrap();
        let entries = map(&doc);
        assert_eq!(entries[0].line, 2);
        assert_eq!(entries[1].key, "scaling");
        assert_eq!(entries[1].line, 3);
        assert_eq!(
            doc.value.to_json(),
            serde_json::json!({"name": "orders", "scaling": {"replicas": 2}})
        );
    }

    #[test]
    fn scalars_follow_the_core_schema() {
        let plain = |s| scalar(s, ScalarStyle::Plain, None);
        assert_eq!(plain("0x1F"), Value::Int(31));
        assert_eq!(plain("0o17"), Value::Int(15));
        assert_eq!(plain("-3"), Value::Int(-3));
        assert_eq!(plain("1e3"), Value::Float(1000.0));
        assert_eq!(plain(".5"), Value::Float(0.5));
        assert_eq!(plain("1.2.3"), Value::Str("1.2.3".into()));
        assert_eq!(plain("yes"), Value::Str("yes".into()));
        assert_eq!(plain("0x"), Value::Str("0x".into()));
        assert_eq!(plain("-"), Value::Str("-".into()));
        assert_eq!(plain("e5"), Value::Str("e5".into()));
        assert_eq!(
            scalar("true", ScalarStyle::SingleQuoted, None),
            Value::Str("true".into())
        );
    }

    #[test]
    fn bad_documents_are_errors_with_lines() {
        let err = parse("a: 1\na: 2\n").unwrap_err();
        assert_eq!(err.line, Some(2));
        assert!(err.message.contains("appears twice"), "{err:?}");
        let err = parse("a: [1, 2\nb: 3\n").unwrap_err();
        assert!(err.line.is_some());
        assert!(parse("a: 1\n---\nb: 2\n").is_err());
        assert!(parse("a: *nothing\n").is_err());
        let deep = "[".repeat(200) + &"]".repeat(200);
        assert!(
            parse(&deep)
                .unwrap_err()
                .message
                .contains("nested too deeply")
        );
        let bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n";
        assert!(parse(bomb).unwrap_err().message.contains("too many values"));
        assert_eq!(parse("").unwrap().value, Value::Null);
    }

    #[test]
    fn anchors_are_expanded() {
        let doc = parse("base: &b {x: 1}\ncopy: *b\n").unwrap();
        assert_eq!(map(&doc)[1].node.value, map(&doc)[0].node.value);
    }

    #[test]
    fn arbitrary_input_never_panics() {
        for text in [
            "\t",
            "- - -",
            "{",
            "}",
            "]",
            "? a\n: b",
            "a: |\n  x\n",
            "&a a: *a",
            "!!binary x",
            "\u{feff}a: 1",
            "a:\n\t- b",
            "'unterminated",
            "%YAML 1.2\n---\na: 1",
            "[[[[",
            ":",
        ] {
            let _ = parse(text);
        }
    }
}
