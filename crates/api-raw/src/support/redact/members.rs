//! Members that hold secrets, by name: in a JSON value, and inside text (`"password": "..."`,
//! `?token=...`), where a body no longer parses or a JSON string carries another document.

use serde_json::Value;

use super::REDACTED;

/// Words that make a member or header name secret when the name contains one, compared without
/// case, `_` and `-`: `clientSecret`, `api_key`, `X-Auth-Token`, `Set-Cookie` are all secret.
pub const SECRET_WORDS: [&str; 11] = [
    "password",
    "passwd",
    "passphrase",
    "secret",
    "token",
    "connectionstring",
    "apikey",
    "privatekey",
    "accountkey",
    "authorization",
    "signature",
];

/// Names that are secret as a whole word only: a shared access signature's query parameter (`sig`).
const SECRET_NAMES: [&str; 1] = ["sig"];

/// The header-only word: `Cookie` and `Set-Cookie` carry sessions.
const COOKIE: &str = "cookie";

/// Whether a member (or header) of this name holds a secret: a member the spec types as a secret
/// (`password`, `secretKey`, `connectionString`), or a name containing one of [`SECRET_WORDS`] or
/// `cookie`. Unknown source kinds and unknown settings are judged the same way, since nobody has
/// vetted their members.
pub fn is_secret_member(name: &str) -> bool {
    if SPEC_SECRETS.contains(&name) {
        return true;
    }
    let folded: String = name
        .chars()
        .filter(|c| !matches!(c, '_' | '-' | ' ' | '.'))
        .flat_map(char::to_lowercase)
        .collect();
    SECRET_WORDS.iter().any(|word| folded.contains(word))
        || folded.contains(COOKIE)
        || SECRET_NAMES.contains(&folded.as_str())
}

/// The members the spec types as `Secret`, generated from `spec/management.yaml` (none without the
/// management API).
#[cfg(feature = "management")]
const SPEC_SECRETS: &[&str] = crate::management::SECRET_MEMBERS;
#[cfg(not(feature = "management"))]
const SPEC_SECRETS: &[&str] = &[];

/// Replaces every scalar of `value` with [`REDACTED`] (a whole object or array under a secret name
/// loses all its values, keeping its shape); `null` stays `null`.
pub(super) fn blank(value: &mut Value) {
    match value {
        Value::Null => {}
        Value::Object(members) => members.values_mut().for_each(blank),
        Value::Array(items) => items.iter_mut().for_each(blank),
        scalar => *scalar = Value::String(REDACTED.into()),
    }
}

/// Calls `found` with every string under a secret-named member of `json`.
pub(super) fn each_secret_string(json: &Value, found: &mut dyn FnMut(&str)) {
    match json {
        Value::Object(members) => {
            for (name, member) in members {
                if is_secret_member(name) {
                    each_string(member, found);
                } else {
                    each_secret_string(member, found);
                }
            }
        }
        Value::Array(items) => items
            .iter()
            .for_each(|item| each_secret_string(item, found)),
        _ => {}
    }
}

fn each_string(json: &Value, found: &mut dyn FnMut(&str)) {
    match json {
        Value::String(text) => found(text),
        Value::Object(members) => members.values().for_each(|m| each_string(m, found)),
        Value::Array(items) => items.iter().for_each(|item| each_string(item, found)),
        _ => {}
    }
}

/// `text` with the value of every secret-named member replaced: quoted JSON members (`"password":
/// "x"`, also escaped inside a JSON string, `\"password\":\"x\"`) and `name=value` pairs of a query
/// or form. `None` when there is none.
pub(super) fn redact_member_values(text: &str) -> Option<String> {
    let mut spans = Vec::new();
    quoted_members(text, &mut spans);
    query_pairs(text, &mut spans);
    (!spans.is_empty()).then(|| super::splice(text, &spans))
}

/// The spans of the values of quoted members with a secret name. A name is a run of name characters
/// between two quotes (`"` or the escaped `\"`), then `:`, then a value opened by the same quote.
fn quoted_members(text: &str, spans: &mut Vec<(usize, usize)>) {
    let bytes = text.as_bytes();
    let mut search = 0;
    while let Some(offset) = text[search..].find('"') {
        let open = search + offset;
        search = open + 1;
        let escaped = open > 0 && bytes[open - 1] == b'\\';
        let quote: &[u8] = if escaped { b"\\\"" } else { b"\"" };
        let name_start = open + 1;
        let name_len = bytes[name_start..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
            .count();
        let name_end = name_start + name_len;
        if name_len == 0 || !bytes[name_end..].starts_with(quote) {
            continue;
        }
        let mut at = name_end + quote.len();
        at += spaces(&bytes[at..]);
        if bytes.get(at) != Some(&b':') {
            continue;
        }
        at += 1;
        at += spaces(&bytes[at..]);
        if !bytes[at..].starts_with(quote) || !is_secret_member(&text[name_start..name_end]) {
            continue;
        }
        let value_start = at + quote.len();
        let value_end = if escaped {
            find(bytes, value_start, b"\\\"").unwrap_or(bytes.len())
        } else {
            closing_quote(bytes, value_start)
        };
        if value_end > value_start {
            spans.push((value_start, value_end));
        }
        search = value_end.max(search);
    }
}

/// The spans of the values of `name=value` pairs with a secret name: a query or form (`?token=x&`),
/// a config or `.env` line (`secret = "x"`, also in a parser's error snippet). The name follows the
/// start, a space, `?`, `&`, `;` or `|`; spaces may stand around `=`; a quoted value ends at its
/// closing quote.
fn query_pairs(text: &str, spans: &mut Vec<(usize, usize)>) {
    let bytes = text.as_bytes();
    let mut search = 0;
    while let Some(offset) = text[search..].find('=') {
        let equals = search + offset;
        search = equals + 1;
        let name_end = equals - spaces_before(&bytes[..equals]);
        let name_start = bytes[..name_end]
            .iter()
            .rposition(|b| !(b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')))
            .map_or(0, |at| at + 1);
        let after_separator = name_start == 0
            || matches!(bytes[name_start - 1], b'?' | b'&' | b';' | b'|')
            || bytes[name_start - 1].is_ascii_whitespace();
        if name_start == name_end
            || !after_separator
            || !is_secret_member(&text[name_start..name_end])
        {
            continue;
        }
        let mut value_start = equals + 1;
        value_start += spaces(&bytes[value_start..]);
        let (value_start, value_end) = match bytes.get(value_start) {
            Some(quote @ (b'"' | b'\'')) => {
                let open = value_start + 1;
                let close = bytes[open..]
                    .iter()
                    .position(|b| b == quote || *b == b'\n')
                    .map_or(bytes.len(), |at| open + at);
                (open, close)
            }
            _ => {
                let len = bytes[value_start..]
                    .iter()
                    .take_while(|b| {
                        !matches!(b, b'&' | b';' | b'"' | b'\'' | b'<' | b'\\')
                            && !b.is_ascii_whitespace()
                    })
                    .count();
                (value_start, value_start + len)
            }
        };
        if value_end > value_start {
            spans.push((value_start, value_end));
        }
        search = value_end.max(search);
    }
}

/// How many spaces end `bytes`.
fn spaces_before(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .rev()
        .take_while(|b| **b == b' ' || **b == b'\t')
        .count()
}

fn spaces(bytes: &[u8]) -> usize {
    bytes.iter().take_while(|b| b.is_ascii_whitespace()).count()
}

fn find(bytes: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    bytes
        .get(from..)?
        .windows(needle.len())
        .position(|window| window == needle)
        .map(|at| from + at)
}

/// The position of the `"` that closes a JSON string whose text begins at `from` (escapes skipped);
/// the end of the text when it is cut short.
fn closing_quote(bytes: &[u8], from: usize) -> usize {
    let mut at = from;
    while at < bytes.len() {
        match bytes[at] {
            b'\\' => at += 2,
            b'"' => return at,
            _ => at += 1,
        }
    }
    bytes.len()
}
