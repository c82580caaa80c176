//! The canonical forms a production, database-backed server answers a stored pipe in (the seed's
//! `[server] canonical`, `--canonical`): column types in ClickHouse's canonical text, certificates
//! without their trailing newline, topic lists without spaces, enum values and UUIDs in upper case.
//!
//! Every rewrite is a pure function of the value, the same every time, and idempotent: the canonical
//! form of a canonical form is itself. None panics, whatever the request held.

use serde_json::Value;
use uuid::Uuid;

/// Rewrites a pipe (the API's JSON, as it is about to be stored) into the canonical forms:
///
/// - `destination.columns[].type`: [`column_type`];
/// - every `caCertificate` string anywhere under `source`: trailing whitespace and newlines trimmed;
/// - `source.kafka.topics`: the list written without spaces (`a, b ,c` -> `a,b,c`);
/// - `source.objectStorage.compression`: in upper case (`gzip` -> `GZIP`);
/// - `source.kafka.reversePrivateEndpointIds`: each string that parses as a UUID in its hyphenated
///   form, upper case.
///
/// Members of another type than the one expected are left as they are.
pub fn pipe(pipe: &mut Value) {
    if let Some(columns) = pipe
        .pointer_mut("/destination/columns")
        .and_then(Value::as_array_mut)
    {
        for column in columns {
            if let Some(Value::String(text)) = column.get_mut("type") {
                *text = column_type(text);
            }
        }
    }
    let Some(source) = pipe.get_mut("source") else {
        return;
    };
    trim_certificates(source);
    if let Some(Value::String(topics)) = source.pointer_mut("/kafka/topics") {
        *topics = topic_list(topics);
    }
    if let Some(Value::String(compression)) = source.pointer_mut("/objectStorage/compression") {
        compression.make_ascii_uppercase();
    }
    if let Some(ids) = source
        .pointer_mut("/kafka/reversePrivateEndpointIds")
        .and_then(Value::as_array_mut)
    {
        for id in ids {
            if let Value::String(text) = id
                && let Ok(uuid) = Uuid::parse_str(text)
            {
                *text = uuid.hyphenated().to_string().to_ascii_uppercase();
            }
        }
    }
}

/// Trims the trailing whitespace of every `caCertificate` string in `value`, at any depth.
fn trim_certificates(value: &mut Value) {
    match value {
        Value::Object(members) => {
            for (name, member) in members.iter_mut() {
                match member {
                    Value::String(text) if name == "caCertificate" => {
                        text.truncate(text.trim_end().len());
                    }
                    other => trim_certificates(other),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(trim_certificates),
        _ => {}
    }
}

/// A comma-separated list without spaces around its items: `a, b ,c` -> `a,b,c` (empty items kept).
fn topic_list(text: &str) -> String {
    text.split(',').map(str::trim).collect::<Vec<_>>().join(",")
}

/// The ClickHouse types whose canonical spelling a name matching it in any letter case takes.
const TYPE_NAMES: &[&str] = &[
    "AggregateFunction",
    "Array",
    "BFloat16",
    "Bool",
    "Date",
    "Date32",
    "DateTime",
    "DateTime32",
    "DateTime64",
    "Decimal",
    "Decimal128",
    "Decimal256",
    "Decimal32",
    "Decimal64",
    "Dynamic",
    "Enum",
    "Enum16",
    "Enum8",
    "FixedString",
    "Float32",
    "Float64",
    "IPv4",
    "IPv6",
    "Int128",
    "Int16",
    "Int256",
    "Int32",
    "Int64",
    "Int8",
    "JSON",
    "LineString",
    "LowCardinality",
    "Map",
    "MultiLineString",
    "MultiPolygon",
    "Nested",
    "Nothing",
    "Nullable",
    "Object",
    "Point",
    "Polygon",
    "Ring",
    "SimpleAggregateFunction",
    "String",
    "Time",
    "Time64",
    "Tuple",
    "UInt128",
    "UInt16",
    "UInt256",
    "UInt32",
    "UInt64",
    "UInt8",
    "UUID",
    "Variant",
];

/// One lexical piece of a type's text.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    /// A run of characters that are not whitespace, parentheses, commas or quotes.
    Word(String),
    /// A quoted string or identifier (`'UTC'`, `"a b"`, `` `c` ``), kept as written, quotes and
    /// escapes included; an unterminated one runs to the end.
    Quoted(String),
    Open,
    Close,
    Comma,
}

/// Splits `text` into tokens, each with whether whitespace came before it.
fn tokens(text: &str) -> Vec<(bool, Token)> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    let mut spaced = false;
    while let Some(c) = chars.next() {
        let token = match c {
            c if c.is_whitespace() => {
                spaced = true;
                continue;
            }
            '(' => Token::Open,
            ')' => Token::Close,
            ',' => Token::Comma,
            '\'' | '"' | '`' => {
                let mut quoted = String::from(c);
                while let Some(next) = chars.next() {
                    quoted.push(next);
                    if next == '\\' {
                        if let Some(escaped) = chars.next() {
                            quoted.push(escaped);
                        }
                    } else if next == c {
                        // A doubled quote is one quote inside the string.
                        if chars.peek() == Some(&c) {
                            chars.next();
                            quoted.push(c);
                        } else {
                            break;
                        }
                    }
                }
                Token::Quoted(quoted)
            }
            c => {
                let mut word = String::from(c);
                while let Some(&next) = chars.peek() {
                    if next.is_whitespace() || matches!(next, '(' | ')' | ',' | '\'' | '"' | '`') {
                        break;
                    }
                    word.push(next);
                    chars.next();
                }
                Token::Word(word)
            }
        };
        out.push((spaced, token));
        spaced = false;
    }
    out
}

/// A column type in ClickHouse's canonical text: known type names in their canonical case
/// (`nullable` -> `Nullable`, `decimal` -> `Decimal`), `, ` between arguments at every level, no
/// space just inside parentheses nor before an opening one, other runs of whitespace as one space,
/// quoted arguments (`'UTC'`) kept as written.
///
/// `decimal(18,2)` -> `Decimal(18, 2)`; `DateTime64(3,'UTC')` -> `DateTime64(3, 'UTC')`;
/// `Map(String,Array( Nullable(UInt8)))` -> `Map(String, Array(Nullable(UInt8)))`. A name in the
/// place of a type only (not the element name of `Tuple(a String)`) takes the canonical case; an
/// unknown name is kept, and only the spacing changes.
pub fn column_type(text: &str) -> String {
    let tokens = tokens(text);
    let mut out = String::with_capacity(text.len());
    let mut previous: Option<&Token> = None;
    for (i, (spaced, token)) in tokens.iter().enumerate() {
        let space = match (previous, token) {
            (None, _) | (Some(Token::Open), _) | (_, Token::Close | Token::Comma | Token::Open) => {
                false
            }
            (Some(Token::Comma), _) => true,
            _ => *spaced,
        };
        if space {
            out.push(' ');
        }
        match token {
            Token::Word(word) => {
                // A word followed by another word or a quoted string names something (a tuple
                // element); only a word in the place of a type is a type name.
                let names_a_type = !matches!(
                    tokens.get(i + 1),
                    Some((_, Token::Word(_) | Token::Quoted(_)))
                );
                let canonical = TYPE_NAMES
                    .iter()
                    .find(|name| names_a_type && name.eq_ignore_ascii_case(word));
                out.push_str(canonical.copied().unwrap_or(word));
            }
            Token::Quoted(quoted) => out.push_str(quoted),
            Token::Open => out.push('('),
            Token::Close => out.push(')'),
            Token::Comma => out.push(','),
        }
        previous = Some(token);
    }
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    #[test]
    fn column_types_take_clickhouse_canonical_text() {
        for (sent, canonical) in [
            ("decimal(18,2)", "Decimal(18, 2)"),
            ("DateTime64(3,'UTC')", "DateTime64(3, 'UTC')"),
            ("nullable(String)", "Nullable(String)"),
            (
                "Map(String,Array( Nullable(UInt8)))",
                "Map(String, Array(Nullable(UInt8)))",
            ),
            (
                "  lowcardinality ( nullable ( string ) )  ",
                "LowCardinality(Nullable(String))",
            ),
            ("uint64", "UInt64"),
            ("INT256", "Int256"),
            ("float32", "Float32"),
            ("bool", "Bool"),
            ("uuid", "UUID"),
            ("ipv4", "IPv4"),
            ("IPV6", "IPv6"),
            ("json", "JSON"),
            ("date32", "Date32"),
            ("datetime('Europe/Paris')", "DateTime('Europe/Paris')"),
            ("fixedstring(16)", "FixedString(16)"),
            ("decimal256(40)", "Decimal256(40)"),
            ("enum8('a' = 1,'b' = 2)", "Enum8('a' = 1, 'b' = 2)"),
            ("Enum16('x, y' = 1)", "Enum16('x, y' = 1)"),
            (
                "tuple(a string,b Nullable(uint8))",
                "Tuple(a String, b Nullable(UInt8))",
            ),
            ("Tuple(string String)", "Tuple(string String)"),
            ("Array(Tuple(date,  uuid))", "Array(Tuple(Date, UUID))"),
            ("MyType(a,b)", "MyType(a, b)"),
            ("geohash", "geohash"),
            ("DateTime64(3, 'UTC')", "DateTime64(3, 'UTC')"),
            ("", ""),
        ] {
            assert_eq!(column_type(sent), canonical, "{sent:?}");
            assert_eq!(
                column_type(canonical),
                canonical,
                "{canonical:?} is canonical"
            );
        }
    }

    #[test]
    fn quoted_arguments_are_kept_as_written() {
        assert_eq!(
            column_type("DateTime64(3,'Europe/Paris ' )"),
            "DateTime64(3, 'Europe/Paris ')"
        );
        assert_eq!(
            column_type(r"Enum8('it''s'=1,'a\'b'=2)"),
            r"Enum8('it''s'=1, 'a\'b'=2)"
        );
        assert_eq!(
            column_type("DateTime('UTC"),
            "DateTime('UTC",
            "unterminated"
        );
        assert_eq!(column_type("Nested(`a b` string)"), "Nested(`a b` String)");
    }

    #[test]
    fn a_pipe_takes_every_canonical_form() {
        let mut pipe = json!({
            "name": "p",
            "source": {
                "kafka": {
                    "topics": "a, b ,c",
                    "caCertificate": "-----BEGIN CERTIFICATE-----\nabc\n-----END CERTIFICATE-----\n\n",
                    "schemaRegistry": {"url": "u", "caCertificate": "pem\r\n"},
                    "reversePrivateEndpointIds": [
                        "5b1e8c7d-2f3a-4b6c-9d0e-1f2a3b4c5d6e", "not-a-uuid", 7,
                        "5B1E8C7D2F3A4B6C9D0E1F2A3B4C5D6F"
                    ],
                },
                "objectStorage": {"compression": "gzip", "caCertificate": "x \n"},
            },
            "destination": {"columns": [
                {"name": "a", "type": "decimal(18,2)"},
                {"name": "b", "type": 3},
                {"name": "c"},
            ]},
        });
        super::pipe(&mut pipe);
        assert_eq!(
            pipe,
            json!({
                "name": "p",
                "source": {
                    "kafka": {
                        "topics": "a,b,c",
                        "caCertificate": "-----BEGIN CERTIFICATE-----\nabc\n-----END CERTIFICATE-----",
                        "schemaRegistry": {"url": "u", "caCertificate": "pem"},
                        "reversePrivateEndpointIds": [
                            "5B1E8C7D-2F3A-4B6C-9D0E-1F2A3B4C5D6E", "not-a-uuid", 7,
                            "5B1E8C7D-2F3A-4B6C-9D0E-1F2A3B4C5D6F"
                        ],
                    },
                    "objectStorage": {"compression": "GZIP", "caCertificate": "x"},
                },
                "destination": {"columns": [
                    {"name": "a", "type": "Decimal(18, 2)"},
                    {"name": "b", "type": 3},
                    {"name": "c"},
                ]},
            })
        );
        let once = pipe.clone();
        super::pipe(&mut pipe);
        assert_eq!(pipe, once, "idempotent");
    }

    #[test]
    fn a_pipe_of_unexpected_shapes_is_left_alone() {
        for shape in [
            json!(null),
            json!("text"),
            json!({"source": null, "destination": {"columns": {"a": 1}}}),
            json!({"source": {"kafka": {"topics": 1, "reversePrivateEndpointIds": "x"}}}),
            json!({"source": [{"caCertificate": "a\n"}]}),
        ] {
            let mut value = shape.clone();
            super::pipe(&mut value);
            if shape.pointer("/source/0").is_none() {
                assert_eq!(value, shape);
            } else {
                assert_eq!(value, json!({"source": [{"caCertificate": "a"}]}));
            }
        }
    }

    proptest! {
        #[test]
        fn column_type_is_idempotent_on_any_text(text in any::<String>()) {
            let once = column_type(&text);
            prop_assert_eq!(column_type(&once), once);
        }

        #[test]
        fn column_type_is_idempotent_on_type_like_text(
            text in "[a-zA-Z0-9_ (),'\"`\\\\=\t\n]{0,48}"
        ) {
            let once = column_type(&text);
            prop_assert_eq!(column_type(&once), once.clone());
            // Nothing but whitespace is ever added or removed outside the quotes.
            let kept = |s: &str| s.chars().filter(|c| !c.is_whitespace()).count();
            prop_assert_eq!(kept(&once), kept(&text));
        }

        #[test]
        fn pipes_are_canonical_once(
            topics in "[a-z ,]{0,16}",
            certificate in "[a-z\n \t]{0,16}",
            compression in "[a-zA-Z]{0,8}",
            kind in "[a-zA-Z0-9(), ']{0,24}",
        ) {
            let mut pipe = json!({
                "source": {"kafka": {"topics": topics, "caCertificate": certificate},
                           "objectStorage": {"compression": compression}},
                "destination": {"columns": [{"name": "a", "type": kind}]},
            });
            super::pipe(&mut pipe);
            let once = pipe.clone();
            super::pipe(&mut pipe);
            prop_assert_eq!(pipe, once);
        }
    }
}
