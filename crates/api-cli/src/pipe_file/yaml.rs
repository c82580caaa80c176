//! Writing a pipe file: a JSON value as block YAML that the file reader reads back to the same
//! value. A string is written plain where YAML would read it back as that string, else quoted as
//! JSON (which YAML reads too); `{env: VARIABLE}` stays on one line.

use serde_json::Value;

use super::document::{Value as Yaml, scalar_of};

/// `value` (a mapping) as a YAML document.
pub(crate) fn to_yaml(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::Object(members) if !members.is_empty() => mapping(members, 0, &mut out),
        other => {
            out.push_str(&inline(other));
            out.push('\n');
        }
    }
    out
}

fn mapping(members: &serde_json::Map<String, Value>, indent: usize, out: &mut String) {
    for (name, value) in members {
        out.push_str(&" ".repeat(indent));
        out.push_str(&text(name));
        out.push(':');
        block(value, indent, out);
    }
}

/// A member's value after its `key:` (or a list item's after `-`).
fn block(value: &Value, indent: usize, out: &mut String) {
    match value {
        Value::Object(members) if !members.is_empty() && !is_env(value) => {
            out.push('\n');
            mapping(members, indent + 2, out);
        }
        Value::Array(items) if !items.is_empty() => {
            out.push('\n');
            for item in items {
                out.push_str(&" ".repeat(indent + 2));
                out.push('-');
                match item {
                    Value::Object(members) if !members.is_empty() && !is_env(item) => {
                        // The first member on the dash's line, the others under it.
                        let mut lines = String::new();
                        mapping(members, indent + 4, &mut lines);
                        out.push(' ');
                        out.push_str(lines.trim_start());
                    }
                    Value::Array(inner) if !inner.is_empty() => block(item, indent + 2, out),
                    scalar => {
                        out.push(' ');
                        out.push_str(&inline(scalar));
                        out.push('\n');
                    }
                }
            }
        }
        scalar => {
            out.push(' ');
            out.push_str(&inline(scalar));
            out.push('\n');
        }
    }
}

/// `{"env": "NAME"}`: a value read from the environment.
fn is_env(value: &Value) -> bool {
    matches!(value, Value::Object(m) if m.len() == 1 && m.get("env").is_some_and(Value::is_string))
}

/// A value on one line.
fn inline(value: &Value) -> String {
    match value {
        Value::String(s) => text(s),
        Value::Object(members) if is_env(value) => {
            format!(
                "{{env: {}}}",
                text(members["env"].as_str().unwrap_or_default())
            )
        }
        Value::Object(_) => "{}".into(),
        Value::Array(_) => "[]".into(),
        other => other.to_string(),
    }
}

/// A string, plain where YAML reads it back as this string, else quoted (JSON's quoting is YAML's).
fn text(s: &str) -> String {
    let plain = !s.is_empty()
        && s.trim() == s
        && s.chars().all(|c| !c.is_control())
        && !s.starts_with(|c: char| "-?:,[]{}#&*!|>'\"%@`".contains(c))
        && !s.contains(": ")
        && !s.contains(" #")
        && !s.ends_with(':')
        && !s.contains(['{', '}', '[', ']', ','])
        && matches!(scalar_of(s), Yaml::Str(read) if read == s);
    if plain {
        s.to_string()
    } else {
        serde_json::to_string(s).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::document::parse;
    use super::*;

    #[test]
    fn what_is_written_reads_back_the_same() {
        let value = json!({
            "name": "orders-2026",
            "source": {"kafka": {"brokers": "b-1.kafka:9098,b-2.kafka:9098", "topics": "true",
                                 "credentials": {"username": "reader", "password": {"env": "ORDERS_KAFKA_PASSWORD"}},
                                 "reversePrivateEndpointIds": ["c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f"]}},
            "destination": {"database": "default", "table": "orders", "managedTable": true,
                            "columns": [{"name": "id", "type": "UInt64"}, {"name": "amount", "type": "Decimal(18, 2)"}],
                            "tableDefinition": {"sortingKey": ["id"], "engine": {}}},
            "scaling": {"replicas": 2, "replicaMemoryGb": 0.5},
            "settings": {"odd": " spaced ", "hash": "a #b", "colon": "k: v", "empty": "", "null": "null",
                         "number": "3", "quote": "it's \"x\"", "unicode": "naïve", "line": "a\nb",
                         "dash": "-x", "list": [[1, 2], []], "star": "*.csv", "url": "https://b/*.csv"},
        });
        let written = to_yaml(&value);
        assert!(
            written.contains("password: {env: ORDERS_KAFKA_PASSWORD}"),
            "{written}"
        );
        assert!(written.contains("  - name: id\n"), "{written}");
        let read = parse(&written).unwrap_or_else(|e| panic!("{e:?} in\n{written}"));
        assert_eq!(read.value.to_json(), value, "\n{written}");
    }
}
