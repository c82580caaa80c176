//! Secrets as servers may write them back: random valid JSON escapes, HTML character references,
//! plain text; shared by the redaction properties of the SDK, the emulator and `cloudctl`.

/// Arbitrary secrets: upper case, punctuation, markup and JSON characters, non-ASCII; no lower case
/// or digits, which the outputs' own text (ids, words) is made of.
pub const SECRET_ALPHABET: &str = "[A-Z&<>\"\\\\/é😀#%+!*(){}\\[\\]=:;,.?|~^ ]{8,24}";

/// The ways a JSON encoder may write `c` inside a string; `pick` chooses one: as it is (where JSON
/// allows it), `\uXXXX` in lower or upper case (a surrogate pair beyond the BMP), or a short escape.
pub fn json_form(c: char, pick: u8) -> String {
    let escape = |upper: bool| {
        let mut units = [0u16; 2];
        c.encode_utf16(&mut units)
            .iter()
            .map(|u| {
                if upper {
                    format!("\\u{u:04X}")
                } else {
                    format!("\\u{u:04x}")
                }
            })
            .collect::<String>()
    };
    match (c, pick % 4) {
        ('"', 0) => "\\\"".into(),
        ('\\', 0) => "\\\\".into(),
        ('/', 0) => "\\/".into(),
        ('\n', 0) => "\\n".into(),
        (_, 1) => escape(false),
        (_, 2) => escape(true),
        _ if c == '"' || c == '\\' || c < ' ' => escape(false),
        _ => c.to_string(),
    }
}

/// The ways an HTML page may write `c`; `pick` chooses one: named, decimal, hexadecimal in either
/// case, or as it is where markup allows it.
pub fn html_form(c: char, pick: u8) -> String {
    let named = match c {
        '&' => Some("&amp;"),
        '<' => Some("&lt;"),
        '>' => Some("&gt;"),
        '"' => Some("&quot;"),
        _ => None,
    };
    match (pick % 5, named) {
        (0, Some(named)) => named.into(),
        (1, _) => format!("&#{};", u32::from(c)),
        (2, _) => format!("&#x{:X};", u32::from(c)),
        (3, _) => format!("&#x{:x};", u32::from(c)),
        (_, Some(_)) => format!("&#{};", u32::from(c)),
        _ => c.to_string(),
    }
}

/// A reading of HTML character references (numeric and the four named ones), to check decoded text.
pub fn html_decoded(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let end = rest.find(';').unwrap_or(0);
        let entity = &rest[1..end.max(1)];
        let decoded = match entity {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            _ => entity
                .strip_prefix("#x")
                .or_else(|| entity.strip_prefix("#X"))
                .and_then(|hex| u32::from_str_radix(hex, 16).ok())
                .or_else(|| entity.strip_prefix('#').and_then(|dec| dec.parse().ok()))
                .and_then(char::from_u32),
        };
        match decoded {
            Some(c) if end > 0 => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            _ => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Whether a piece of `len` characters of `secret` stands in `text`: the one found, if any.
pub fn leaked_piece(secret: &str, len: usize, text: &str) -> Option<String> {
    pieces(secret, len)
        .into_iter()
        .find(|piece| text.contains(piece))
}

/// An error answer that echoes `secret`: (status, content type, body).
pub fn echoing(secret: &str, picks: &[u8], kind: u8) -> (u16, &'static str, String) {
    let encode = |form: fn(char, u8) -> String| -> String {
        secret
            .chars()
            .zip(picks.iter().cycle())
            .map(|(c, p)| form(c, *p))
            .collect()
    };
    match kind % 3 {
        0 => (
            400,
            "application/json",
            format!(
                r#"{{"status":400,"error":"BAD_REQUEST: password {} is weak","requestId":"r"}}"#,
                encode(json_form)
            ),
        ),
        1 => {
            let html = encode(html_form);
            (
                502,
                "text/html",
                format!(
                    "<html><head><title>502 {html}</title></head><body>upstream: {html}</body></html>"
                ),
            )
        }
        _ => (
            503,
            "text/plain",
            format!("rejected {secret} at the gateway"),
        ),
    }
}

/// Every piece of `len` characters of `secret`.
pub fn pieces(secret: &str, len: usize) -> Vec<String> {
    let chars: Vec<char> = secret.chars().collect();
    chars
        .windows(len.min(chars.len()))
        .map(|w| w.iter().collect())
        .collect()
}

/// `text` percent-encoded as a URI carries it: every byte but the unreserved characters
/// (`A-Z a-z 0-9 - . _ ~`) as `%XX`.
pub fn percent(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}
