//! A connection URL given whole (a store's, from a flag, a variable or a setting): shown without
//! its user part, however its password is written, and its password known as a secret wherever
//! it turns up. A password may hold what ends a URI in running text (`'`, `"`, `<`, `>`, a space,
//! an unescaped `@` or `/`): a URL given whole needs no guess where it ends.

use super::{REDACTED, Redactor};

/// The user part of `url` (user name and password, as written): before the last `@` after the
/// `://` (a host and a port hold no `@`; a password may, unescaped, and a `/` too).
fn user_part(url: &str) -> Option<(usize, usize)> {
    let start = url.find("://")? + 3;
    let at = url[start..].rfind('@')?;
    Some((start, start + at))
}

/// `url` for messages: its user part replaced by [`REDACTED`] whole, then the rest through the
/// rule ([`Redactor::text`]).
///
/// ```
/// use api_raw::support::redact::describe_url;
///
/// assert_eq!(describe_url("redis://:p<a s>'w\"d@cache:6379/0"), "redis://[REDACTED]@cache:6379/0");
/// assert_eq!(describe_url("redis://cache:6379"), "redis://cache:6379");
/// ```
pub fn describe_url(url: &str) -> String {
    let shown = match user_part(url) {
        Some((start, at)) => format!("{}{REDACTED}{}", &url[..start], &url[at..]),
        None => url.to_string(),
    };
    Redactor::new().text(&shown).into_owned()
}

/// The password in `url`'s user part, as written (escaped or not), when there is one: for a
/// caller that keeps its own list of secrets.
pub fn url_password(url: &str) -> Option<&str> {
    let (start, at) = user_part(url)?;
    let (_, password) = url[start..at].split_once(':')?;
    (!password.is_empty()).then_some(password)
}

/// `text` with its `%XX` escapes decoded as UTF-8 (an escape that is not one kept as written, a
/// byte sequence that is not UTF-8 read lossily).
pub fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(high), Some(low)) = (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            )
        {
            out.push(u8::try_from(high * 16 + low).unwrap_or(b'%'));
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl Redactor {
    /// With a connection URL's secrets: the URL whole, and its password as written and as its
    /// escapes decode (`p%40ss` and `p@ss`), so that a message quoting either loses it.
    pub fn url(mut self, url: &str) -> Self {
        self.add(url);
        if let Some(password) = url_password(url) {
            self.add(password);
            let decoded = percent_decoded(password);
            if decoded != password {
                self.add(&decoded);
            }
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a URL's password may hold that ends a URI in running text.
    const HARD: [&str; 7] = [
        "p<a s>w",
        "it's'ok",
        "say\"hi\"",
        "a b c d",
        "p@ss@word",
        "ab/cd?ef#gh",
        "x%40y%2Fz",
    ];

    #[test]
    fn a_url_is_described_without_its_user_part_however_written() {
        for password in HARD {
            for url in [
                format!("redis://:{password}@cache:6379/0"),
                format!("rediss://user:{password}@cache"),
                format!("postgres://app:{password}@db:5432/x?sslmode=require"),
            ] {
                let shown = describe_url(&url);
                assert!(!shown.contains(password), "{url} -> {shown}");
                assert!(shown.contains("[REDACTED]@"), "{url} -> {shown}");
                assert!(
                    !shown.contains("user") && !shown.contains("app:"),
                    "{shown}"
                );
            }
        }
        assert_eq!(describe_url("redis://cache:6379"), "redis://cache:6379");
        assert_eq!(describe_url("not a url"), "not a url");
    }

    #[test]
    fn the_password_is_what_follows_the_first_colon_of_the_user_part() {
        for password in HARD {
            let url = format!("redis://user:{password}@cache:6379");
            assert_eq!(url_password(&url), Some(password), "{url}");
        }
        assert_eq!(url_password("redis://user@cache"), None);
        assert_eq!(url_password("redis://user:@cache"), None);
        assert_eq!(url_password("redis://cache:6379"), None);
        assert_eq!(url_password("cache:6379"), None);
    }

    #[test]
    fn a_message_quoting_the_password_either_way_loses_it() {
        let url = "redis://u:p%40ss%20w%3Crd@cache";
        let redactor = Redactor::new().url(url);
        for message in [
            format!("cannot connect to {url}: refused"),
            "auth failed for p%40ss%20w%3Crd".to_string(),
            "auth failed for p@ss w<rd".to_string(),
        ] {
            let shown = redactor.text(&message);
            assert!(
                !shown.contains("p%40ss") && !shown.contains("p@ss"),
                "{message} -> {shown}"
            );
        }
    }

    #[test]
    fn escapes_decode_as_utf8_and_a_broken_one_stays() {
        assert_eq!(percent_decoded("a%2Fb%C3%A9"), "a/bé");
        assert_eq!(percent_decoded("100%"), "100%");
        assert_eq!(percent_decoded("%zz%4"), "%zz%4");
    }
}
