//! PEM private keys anywhere in a text: the body between `-----BEGIN ... PRIVATE KEY-----` and its
//! `-----END` line, whatever the member holding it is called (a `*_key` setting, a certificate
//! bundle with its key, a JSON string with `\n` escapes).

/// Adds the span of the body of every PEM private key block of `text` (its base64, from after the
/// header to the `-----END` that closes it, or to the end of a text cut short).
pub(super) fn private_key_bodies(text: &str, spans: &mut Vec<(usize, usize)>) {
    const BEGIN: &str = "-----BEGIN ";
    const HEADER_END: &str = "PRIVATE KEY-----";
    const END: &str = "-----END";
    let mut search = 0;
    while let Some(offset) = text[search..].find(BEGIN) {
        let begin = search + offset;
        search = begin + BEGIN.len();
        // The header is one line: `-----BEGIN [ENCRYPTED |RSA |EC ]PRIVATE KEY-----`.
        let line_end = text[search..]
            .find(['\n', '\\'])
            .map_or(text.len(), |at| search + at);
        let Some(header) = text[search..line_end].find(HEADER_END) else {
            continue;
        };
        let body_start = search + header + HEADER_END.len();
        let body_end = text[body_start..]
            .find(END)
            .map_or(text.len(), |at| body_start + at);
        if body_end > body_start {
            spans.push((body_start, body_end));
        }
        search = body_end.max(search);
    }
}
