//! Secrets as servers may write them back: random valid JSON escapes, HTML character references,
//! plain text; shared by the redaction properties of the SDK, the emulator and `cloudctl` (which
//! includes this file by path).

/// Arbitrary secrets: upper case, punctuation, markup and JSON characters, non-ASCII; no lower case
/// or digits, which the outputs' own text (ids, words) is made of.
pub const SECRET_ALPHABET: &str = "[A-Z&<>\"\\\\/é😀#%+!*(){}\\[\\]=:;,.?|~^ ]{8,24}";

/// The ways a JSON encoder may write `c` inside a string; `pick` chooses one.
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
        ('/', 0) => "\\/".into(),
        ('"', _) | ('\\', _) => escape(pick.is_multiple_of(2)),
        (_, 1) => escape(false),
        (_, 2) => escape(true),
        _ => c.to_string(),
    }
}

/// The ways an HTML page may write `c`; `pick` chooses one.
pub fn html_form(c: char, pick: u8) -> String {
    match (c, pick % 3) {
        ('&', 0) => "&amp;".into(),
        ('<', 0) => "&lt;".into(),
        ('>', 0) => "&gt;".into(),
        ('"', 0) => "&quot;".into(),
        (_, 1) => format!("&#{};", u32::from(c)),
        (_, 2) => format!("&#x{:x};", u32::from(c)),
        ('&' | '<' | '>' | '"', _) => format!("&#{};", u32::from(c)),
        _ => c.to_string(),
    }
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
