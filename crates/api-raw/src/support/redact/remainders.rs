//! What is left of a secret whose start an earlier redaction already replaced: a recorder redacts an
//! answer by name (`password =...` up to a `;`, `&` or `\\`) before it knows the value is a secret,
//! and the rest of the value then follows the marker. Once the secret is known, that rest goes too.

use super::{MIN_SECRET_CHARS, REDACTED};

/// `text` with every tail of a known secret (at least [`MIN_SECRET_CHARS`] characters, the secret's
/// end included) that directly follows a [`REDACTED`] marker removed; `None` when there is none.
pub(super) fn remove_after_markers(text: &str, secrets: &[Box<[char]>]) -> Option<String> {
    if !text.contains(REDACTED) {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut changed = false;
    while let Some(at) = rest.find(REDACTED) {
        let after = at + REDACTED.len();
        out.push_str(&rest[..after]);
        rest = &rest[after..];
        if let Some(len) = longest_tail(rest, secrets) {
            rest = &rest[len..];
            changed = true;
        }
    }
    out.push_str(rest);
    changed.then_some(out)
}

/// The byte length of the longest proper tail of a secret that `text` starts with.
fn longest_tail(text: &str, secrets: &[Box<[char]>]) -> Option<usize> {
    secrets
        .iter()
        .flat_map(|secret| (1..secret.len()).map(move |skip| &secret[skip..]))
        .filter(|tail| tail.len() >= MIN_SECRET_CHARS)
        .filter_map(|tail| {
            let mut bytes = 0;
            let mut chars = text.chars();
            for expected in tail.iter() {
                match chars.next() {
                    Some(c) if c == *expected => bytes += c.len_utf8(),
                    _ => return None,
                }
            }
            Some(bytes)
        })
        .max()
}

#[cfg(test)]
mod tests {
    use super::super::Redactor;

    #[test]
    fn the_rest_of_a_secret_after_a_marker_goes_once_the_secret_is_known() {
        // Redacted by name before the secret was known: the value stopped at the backslash.
        let before = Redactor::new()
            .text(r"password =0\~|0*0 is weak")
            .into_owned();
        assert_eq!(before, r"password =[REDACTED]\~|0*0 is weak");
        let known = Redactor::new().secret(r"=0\~|0*0");
        assert_eq!(known.text(&before), "password =[REDACTED] is weak");
        // At a `;` too, and a secret with characters beyond ASCII.
        let before = Redactor::new().text("token=ab;cdé😀fg rest").into_owned();
        assert_eq!(before, "token=[REDACTED];cdé😀fg rest");
        let known = Redactor::new().secret("ab;cdé😀fg");
        assert_eq!(known.text(&before), "token=[REDACTED] rest");
        // Text after a marker that is not a secret's tail stays, as does a tail too short to say.
        let known = Redactor::new().secret("abcdefgh");
        assert_eq!(
            known.text("[REDACTED] cdefgh [REDACTED]fgh"),
            "[REDACTED] cdefgh [REDACTED]fgh"
        );
        assert_eq!(known.text("x [REDACTED]cdefgh."), "x [REDACTED].");
    }
}
