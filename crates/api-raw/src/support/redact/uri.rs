//! Credentials inside a URI: `scheme://user:password@host` loses its password, known or not.

/// `text` with the password of every URI's user information replaced by
/// [`REDACTED`](super::REDACTED) (also in a
/// JSON string that writes `/` as `\/`); `None` when there is none.
pub(super) fn redact_passwords(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut spans = Vec::new();
    let mut search = 0;
    while let Some(offset) = text[search..].find(':') {
        let colon = search + offset;
        search = colon + 1;
        let Some(authority) = after_slashes(bytes, colon + 1) else {
            continue;
        };
        if !has_scheme(bytes, colon) {
            continue;
        }
        let Some((password_start, at_sign)) = user_information(bytes, authority) else {
            continue;
        };
        if at_sign > password_start {
            spans.push((password_start, at_sign));
        }
        search = at_sign;
    }
    (!spans.is_empty()).then(|| super::splice(text, &spans))
}

/// Where the authority begins after `//` (or the JSON-escaped `\/\/`) at `from`.
fn after_slashes(bytes: &[u8], from: usize) -> Option<usize> {
    let rest = bytes.get(from..)?;
    if rest.starts_with(b"//") {
        Some(from + 2)
    } else if rest.starts_with(b"\\/\\/") {
        Some(from + 4)
    } else {
        None
    }
}

/// Whether a URI scheme (`ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`) ends at `colon`.
fn has_scheme(bytes: &[u8], colon: usize) -> bool {
    let start = bytes[..colon]
        .iter()
        .rposition(|b| !(b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')))
        .map_or(0, |at| at + 1);
    start < colon && bytes[start].is_ascii_alphabetic()
}

/// The password's start and the `@` that ends the user information of an authority at `from`:
/// `user:password@`, the last `@` before any `/`, `?`, `#`, space or quote (a password with an
/// unencoded `@` is still covered whole).
fn user_information(bytes: &[u8], from: usize) -> Option<(usize, usize)> {
    let rest = bytes.get(from..)?;
    let end = rest
        .iter()
        .position(|b| {
            matches!(b, b'/' | b'?' | b'#' | b'"' | b'\'' | b'<' | b'>' | b'\\')
                || b.is_ascii_whitespace()
        })
        .unwrap_or(rest.len());
    let authority = &rest[..end];
    let at_sign = authority.iter().rposition(|b| *b == b'@')?;
    let colon = authority[..at_sign].iter().position(|b| *b == b':')?;
    Some((from + colon + 1, from + at_sign))
}
