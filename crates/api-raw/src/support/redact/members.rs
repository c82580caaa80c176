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

/// Names that are secret as a whole word only: a shared access signature's query parameter (`sig`),
/// an Azure connection string's key (`SharedAccessKey`; its `SharedAccessKeyName` is not secret).
const SECRET_NAMES: [&str; 2] = ["sig", "sharedaccesskey"];

/// Names that are secret as a query parameter only (after `?` or `&`), in any letter case: an API
/// key (`?key=`), a function key (`?code=`). As a member of a document they are ordinary words.
const QUERY_SECRET_NAMES: [&str; 2] = ["key", "code"];

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
/// "x"`, also escaped inside a JSON string, `\"password\":\"x\"`), `name=value` pairs of a query,
/// a form or a connection string (`=` also written `%3D`), `name: value` lines and flow members of
/// YAML, and the body of a PEM private key. `None` when there is none.
pub(super) fn redact_member_values(text: &str) -> Option<String> {
    let mut spans = Vec::new();
    quoted_members(text, &mut spans);
    query_pairs(text, "=", &mut spans);
    query_pairs(text, "%3D", &mut spans);
    query_pairs(text, "%3d", &mut spans);
    colon_pairs(text, &mut spans);
    super::pem::private_key_bodies(text, &mut spans);
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
/// a config or `.env` line (`secret = "x"`, also in a parser's error snippet), a connection string
/// (`;SharedAccessKey=x;`), a list (`,password=x`). The name follows the start, a space, `?`, `&`,
/// `;`, `,` or `|` (or `%3F`, `%26`, `%3B` where the pair itself is percent-encoded); spaces may
/// stand around `equals`; a quoted value ends at its closing quote. After `?` or `&`, `key` and
/// `code` are secret names too.
fn query_pairs(text: &str, equals_sign: &str, spans: &mut Vec<(usize, usize)>) {
    let bytes = text.as_bytes();
    let encoded = equals_sign.len() > 1;
    let mut search = 0;
    while let Some(offset) = text[search..].find(equals_sign) {
        let equals = search + offset;
        search = equals + equals_sign.len();
        let name_end = equals - spaces_before(&bytes[..equals]);
        let name_start = bytes[..name_end]
            .iter()
            .rposition(|b| !(b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')))
            .map_or(0, |at| at + 1);
        // A separator may be percent-encoded (`%26sig=`): its hex digits were read as the name's.
        let (name_start, before) = match encoded_separator(bytes, name_start) {
            Some((start, separator)) => (start.min(name_end), Some(separator)),
            None => (name_start, name_start.checked_sub(1).map(|at| bytes[at])),
        };
        let name = &text[name_start..name_end];
        let after_separator = before.is_none_or(|b| {
            matches!(b, b'?' | b'&' | b';' | b',' | b'|') || b.is_ascii_whitespace()
        });
        let in_query = before.is_some_and(|b| matches!(b, b'?' | b'&'));
        let secret = is_secret_member(name)
            || (in_query
                && QUERY_SECRET_NAMES
                    .iter()
                    .any(|query| name.eq_ignore_ascii_case(query)));
        if name.is_empty() || !after_separator || !secret {
            continue;
        }
        let mut value_start = equals + equals_sign.len();
        value_start += spaces(&bytes[value_start..]);
        let (value_start, value_end) = match bytes.get(value_start) {
            Some(b'"' | b'\'') => quoted_value(bytes, value_start),
            _ => {
                // In a list (`,password=x,host=h`) a value ends at the next `,` too.
                let list = before == Some(b',');
                let mut len = bytes[value_start..]
                    .iter()
                    .take_while(|b| {
                        let ends = matches!(b, b'&' | b';' | b'"' | b'\'' | b'<' | b'\\')
                            || (list && **b == b',')
                            || b.is_ascii_whitespace();
                        !ends
                    })
                    .count();
                if encoded {
                    // An encoded pair ends at the encoded `&` or `;`.
                    len = ["%26", "%3B", "%3b"]
                        .iter()
                        .filter_map(|end| text[value_start..value_start + len].find(end))
                        .min()
                        .unwrap_or(len);
                }
                (value_start, value_start + len)
            }
        };
        if value_end > value_start {
            spans.push((value_start, value_end));
        }
        search = value_end.max(search);
    }
}

/// Where a name starts after a percent-encoded separator (`%3F`, `%26`, `%3B`) whose `%` stands just
/// before `at` (the scan of the name's characters took its two hex digits): the name's start and
/// the separator it stands for.
fn encoded_separator(bytes: &[u8], at: usize) -> Option<(usize, u8)> {
    let percent = at.checked_sub(1)?;
    if bytes.get(percent) != Some(&b'%') {
        return None;
    }
    let code = bytes.get(percent + 1..percent + 3)?;
    let separator = match code.to_ascii_uppercase().as_slice() {
        b"3F" => b'?',
        b"26" => b'&',
        b"3B" => b';',
        _ => return None,
    };
    Some((percent + 3, separator))
}

/// The spans of the values of `name: value` members with a secret name, as YAML writes them: at
/// the start of a line (after its indentation and a list's `- `), or inside a flow mapping (after
/// `{` or `,`). A quoted value ends at its quote; a plain one at the end of the line, or at `,` or
/// `}` in a flow mapping. A reference (`{env: NAME}`) or a list is not a value.
fn colon_pairs(text: &str, spans: &mut Vec<(usize, usize)>) {
    let bytes = text.as_bytes();
    let mut search = 0;
    while let Some(offset) = text[search..].find(':') {
        let colon = search + offset;
        search = colon + 1;
        let name_end = colon;
        let name_start = bytes[..name_end]
            .iter()
            .rposition(|b| !(b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-')))
            .map_or(0, |at| at + 1);
        if name_start == name_end || !is_secret_member(&text[name_start..name_end]) {
            continue;
        }
        // What stands before the name: a line's start (indentation, `- `), or a flow mapping's
        // `{` or `,`.
        let lead = &bytes[..name_start];
        let trimmed = lead.len()
            - lead
                .iter()
                .rev()
                .take_while(|b| matches!(b, b' ' | b'\t' | b'-'))
                .count();
        let flow = match trimmed.checked_sub(1).map(|at| bytes[at]) {
            None | Some(b'\n' | b'\r') => false,
            Some(b'{' | b',') => true,
            Some(_) => continue,
        };
        let mut value_start = colon + 1;
        if !bytes
            .get(value_start)
            .is_some_and(|b| *b == b' ' || *b == b'\t')
        {
            continue;
        }
        value_start += spaces_in_line(&bytes[value_start..]);
        let (start, end) = match bytes.get(value_start) {
            None | Some(b'{' | b'[' | b'\n' | b'\r') => continue,
            Some(b'"' | b'\'') => quoted_value(bytes, value_start),
            Some(_) => {
                let len = bytes[value_start..]
                    .iter()
                    .take_while(|b| {
                        !(matches!(b, b'\n' | b'\r') || (flow && matches!(b, b',' | b'}')))
                    })
                    .count();
                let value = &bytes[value_start..value_start + len];
                let kept = value.len()
                    - value
                        .iter()
                        .rev()
                        .take_while(|b| b.is_ascii_whitespace())
                        .count();
                (value_start, value_start + kept)
            }
        };
        if end > start {
            spans.push((start, end));
        }
        search = end.max(search);
    }
}

/// The span of a quoted value whose opening quote is at `at`: to its closing quote (`\"` escaped in
/// a double-quoted value, `''` doubled in a single-quoted one, as YAML and SQL write them), or to
/// the end of the line.
fn quoted_value(bytes: &[u8], at: usize) -> (usize, usize) {
    let quote = bytes[at];
    let open = at + 1;
    let mut i = open;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'\n' => break,
            b'\\' if quote == b'"' => i += 2,
            b'\'' if quote == b'\'' && bytes.get(i + 1) == Some(&b'\'') => i += 2,
            _ if b == quote => break,
            _ => i += 1,
        }
    }
    (open, i.min(bytes.len()))
}

/// How many spaces and tabs begin `bytes` (not crossing a line).
fn spaces_in_line(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .take_while(|b| **b == b' ' || **b == b'\t')
        .count()
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
