//! Credentials inside a URI: `scheme://user:password@host` loses its password, known or not, and
//! whatever escapes its separators: `\/` or `\u002F` in a JSON string, `&#x2F;` or `&sol;` in HTML,
//! `%2F` in a query, each of them escaped once more (`%252F`, `\\u002F`), and the same for `:` and
//! `@`.

use super::encoded::Written;

/// The bytes that may begin an escaped separator: JSON's, HTML's and percent-encoding's.
fn may_escape(byte: u8) -> bool {
    matches!(byte, b'\\' | b'&' | b'%')
}

/// What ends an authority besides a separator: `/`, `?`, `#`, a double quote, markup, a
/// backslash, white space (written as they are, or escaped). Not a `'`: RFC 3986 allows one in a
/// password, unescaped.
const ENDS_AUTHORITY: [char; 11] = ['/', '?', '#', '"', '<', '>', '\\', ' ', '\t', '\n', '\r'];

/// What ends an authority only where it cannot be a password's: in a URI whose separators are
/// escaped, an escaped `/`, `?` or `#` after the password began and before its `@` may be the
/// password's own (a JSON string escapes every `/`): the password runs on to the `@`, if one
/// comes before the authority ends otherwise.
const ENDS_PATH: [char; 3] = ['/', '?', '#'];

/// `text` with the password of every URI's user information replaced by
/// [`REDACTED`](super::REDACTED); `None` when there is none.
pub(super) fn redact_passwords(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let written = Written::new(bytes);
    let mut spans = Vec::new();
    let mut pos = 0;
    while pos < bytes.len() {
        if (bytes[pos] == b':' || may_escape(bytes[pos]))
            && has_scheme(bytes, pos)
            && let Some(after_colon) = separator(&written, bytes, pos, ':')
            && let Some(authority) = after_slashes(&written, bytes, after_colon)
            && let Some((password_start, at_sign)) =
                user_information(&written, bytes, authority, Level::of(bytes, pos, authority))
        {
            if at_sign > password_start {
                spans.push((password_start, at_sign));
            }
            pos = at_sign;
        } else {
            pos += 1;
        }
    }
    (!spans.is_empty()).then(|| super::splice(text, &spans))
}

/// Where `c` ends when it stands at `pos` as itself or escaped (never `+` for a space: a password
/// may hold a `+`).
fn separator(written: &Written<'_>, bytes: &[u8], pos: usize, c: char) -> Option<usize> {
    let byte = *bytes.get(pos)?;
    if u32::from(byte) == u32::from(c) {
        Some(pos + 1)
    } else if may_escape(byte) {
        written.char_at(pos, c)
    } else {
        None
    }
}

/// How a URI's separators are written: as themselves (then an escaped `/` or `@` inside the user
/// information is part of the password, as RFC 3986 requires a `/` there to be written), or escaped
/// (the URI sits inside a JSON string, an HTML page, a query: any escape counts).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Plain,
    Escaped,
}

impl Level {
    /// The level of the `://` written from `colon` to `authority`.
    fn of(bytes: &[u8], colon: usize, authority: usize) -> Self {
        if bytes.get(colon..authority) == Some(b"://".as_slice()) {
            Self::Plain
        } else {
            Self::Escaped
        }
    }
}

/// Where `c` ends when it stands at `pos` at the URI's escape level.
fn separator_at(
    written: &Written<'_>,
    bytes: &[u8],
    pos: usize,
    c: char,
    level: Level,
) -> Option<usize> {
    match level {
        Level::Plain => bytes
            .get(pos)
            .filter(|b| u32::from(**b) == u32::from(c))
            .map(|_| pos + 1),
        Level::Escaped => separator(written, bytes, pos, c),
    }
}

/// Where the authority begins after the two slashes at `from`.
fn after_slashes(written: &Written<'_>, bytes: &[u8], from: usize) -> Option<usize> {
    let first = separator(written, bytes, from, '/')?;
    separator(written, bytes, first, '/')
}

/// Whether a URI scheme (`ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`) ends at `colon`: the run of
/// scheme characters before it holds a letter, where the scheme begins (so that `%22postgres` or
/// `\u0022postgres`, a quote escaped before it, still has the scheme `postgres`).
fn has_scheme(bytes: &[u8], colon: usize) -> bool {
    bytes[..colon]
        .iter()
        .rev()
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
        .any(u8::is_ascii_alphabetic)
}

/// The password's start and the `@` that ends the user information of an authority at `from`:
/// `user:password@`, the last `@` before the authority ends (at one of [`ENDS_AUTHORITY`], or of
/// [`ENDS_PATH`] once the `@` came), after the first `:` (a password with an unencoded `@` is
/// still covered whole).
fn user_information(
    written: &Written<'_>,
    bytes: &[u8],
    from: usize,
    level: Level,
) -> Option<(usize, usize)> {
    let mut password_start = None;
    let mut at_sign = None;
    let mut pos = from;
    while pos < bytes.len() {
        // An HTML numeric reference that ends in `;` is read whole, as a browser reads it
        // (`&#101;` is `e`, never `&#10` and a `1`): the character it writes stands for itself.
        // Without the `;` its digits may run into the text's (`&#x40db`), and each reading of
        // them is tried below.
        let in_password = password_start.is_some() && at_sign.is_none();
        if let Some((c, end)) =
            numeric_reference(bytes, pos).filter(|(_, end)| bytes[end - 1] == b';')
        {
            match c {
                '@' if level == Level::Escaped => at_sign = Some(pos),
                ':' if level == Level::Escaped => {
                    password_start.get_or_insert(end);
                }
                c if level == Level::Escaped && ends_here(c, level, in_password) => break,
                _ => {}
            }
            pos = end;
            continue;
        }
        if let Some(end) = separator_at(written, bytes, pos, '@', level) {
            at_sign = Some(pos);
            pos = end;
        } else if let Some(end) = separator_at(written, bytes, pos, ':', level) {
            password_start.get_or_insert(end);
            pos = end;
        } else if ENDS_AUTHORITY
            .iter()
            .filter(|c| ends_here(**c, level, in_password))
            .any(|c| ends_authority(written, bytes, pos, *c, level))
        {
            break;
        } else {
            // Anything else, an escape of another character too (`\u00e4`), is part of it. Every
            // separator is ASCII, so a step inside a character finds none.
            pos += 1;
        }
    }
    let (password_start, at_sign) = (password_start?, at_sign?);
    (password_start <= at_sign).then_some((password_start, at_sign))
}

/// Whether `c` ends the authority where it stands: one of [`ENDS_AUTHORITY`], but not one of
/// [`ENDS_PATH`] inside the password (`in_password`: after its `:`, before its `@`) of a URI whose
/// separators are escaped.
fn ends_here(c: char, level: Level, in_password: bool) -> bool {
    ENDS_AUTHORITY.contains(&c)
        && !(level == Level::Escaped && in_password && ENDS_PATH.contains(&c))
}

/// The character an HTML numeric reference (`&#39;`, `&#x27;`, the `;` optional) that begins at
/// `pos` writes, its digits read to their end, and where it ends; `None` when none begins there.
fn numeric_reference(bytes: &[u8], pos: usize) -> Option<(char, usize)> {
    if bytes.get(pos..pos + 2) != Some(b"&#".as_slice()) {
        return None;
    }
    let mut end = pos + 2;
    let radix = if matches!(bytes.get(end), Some(b'x' | b'X')) {
        end += 1;
        16
    } else {
        10
    };
    let digits = bytes[end..]
        .iter()
        .take_while(|b| (**b as char).is_digit(radix))
        .count();
    let text = std::str::from_utf8(&bytes[end..end + digits]).ok()?;
    let c = u32::from_str_radix(text, radix)
        .ok()
        .and_then(char::from_u32)?;
    end += digits;
    if bytes.get(end) == Some(&b';') {
        end += 1;
    }
    Some((c, end))
}

/// Whether `c` of [`ENDS_AUTHORITY`] stands at `pos`. A backslash counts only escaped (`\\`):
/// alone it begins an escape, of a character of the password maybe (`\u00e4`).
fn ends_authority(written: &Written<'_>, bytes: &[u8], pos: usize, c: char, level: Level) -> bool {
    if c == '\\' {
        level == Level::Escaped
            && bytes.get(pos).copied().is_some_and(may_escape)
            && written.char_at(pos, c).is_some_and(|end| end > pos + 1)
    } else {
        separator_at(written, bytes, pos, c, level).is_some()
    }
}
