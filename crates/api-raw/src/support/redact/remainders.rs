//! What is left of a secret whose start an earlier redaction already replaced: a recorder redacts
//! an answer by name (`password =...` up to a `;`, an `&` or a backslash) before it knows the value
//! is a secret, and the rest of the value then follows the marker. Once the secret is known, that
//! rest goes too.

use super::encoded::Search;
use super::{MIN_SECRET_CHARS, REDACTED};

/// `text` with every tail of a known secret (at least [`MIN_SECRET_CHARS`] characters, the secret's
/// end included) that directly follows a [`REDACTED`] marker removed, in any encoding the redactor
/// knows (the marker then stands for the whole secret); `None` when there is none.
pub(super) fn remove_after_markers(text: &str, secrets: &[Box<[char]>]) -> Option<String> {
    if !text.contains(REDACTED) {
        return None;
    }
    // One search per secret for the whole text, asked for each of its tails: what it learns at one
    // marker or tail (the failures, the encodings met) holds at the next.
    let mut searches: Vec<(Search<'_>, usize)> = secrets
        .iter()
        .filter(|secret| secret.len() > MIN_SECRET_CHARS)
        .map(|secret| (Search::new(text.as_bytes(), secret), secret.len()))
        .collect();
    let mut spans = Vec::new();
    for (marker, _) in text.match_indices(REDACTED) {
        let after = marker + REDACTED.len();
        // Every tail of at least MIN_SECRET_CHARS characters but the whole secret; the longest end.
        let mut end = None;
        for (search, len) in &mut searches {
            for from in 1..=*len - MIN_SECRET_CHARS {
                end = end.max(search.tail_at(after, from));
            }
        }
        if let Some(end) = end.filter(|end| *end > after) {
            spans.push((marker, end));
        }
    }
    (!spans.is_empty()).then(|| super::splice(text, &spans))
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
        // The shortest tail that counts: MIN_SECRET_CHARS characters, the secret's end.
        assert_eq!(known.text("x [REDACTED]efgh."), "x [REDACTED].");
        // Written in another encoding after the marker: an HTML page, a JSON escape.
        let known = Redactor::new().secret("a&b<cdefg");
        assert_eq!(
            known.text("<p>token=[REDACTED]&amp;b&lt;cdefg</p>"),
            "<p>token=[REDACTED]</p>"
        );
        assert_eq!(
            known.text(r"token=[REDACTED]\u0026b\u003ccdefg rest"),
            "token=[REDACTED] rest"
        );
    }
}
