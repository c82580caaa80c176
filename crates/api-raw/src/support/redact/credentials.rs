//! The forms of a credential a server or a log might show: one list for the SDK's clients, the
//! emulator's seed and the recorder's cassettes.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

/// Every form of HTTP Basic credentials `key_id` / `secret` a server might echo: the secret, the
/// `id:secret` pair, and the pair in base64 (the `Authorization` header's value).
pub fn basic_forms(key_id: &str, secret: &str) -> [String; 3] {
    let pair = format!("{key_id}:{secret}");
    [secret.to_string(), STANDARD.encode(&pair), pair]
}

/// Every secret form of an `Authorization` header's value: for `Basic`, its encoded value and
/// [`basic_forms`] of what it decodes to; for any other scheme (`Bearer`), its credentials.
pub fn authorization_forms(header_value: &str) -> Vec<String> {
    let (scheme, credentials) = header_value
        .trim()
        .split_once(' ')
        .unwrap_or(("", header_value));
    let credentials = credentials.trim();
    let mut forms = vec![credentials.to_string()];
    if scheme.eq_ignore_ascii_case("basic")
        && let Ok(decoded) = STANDARD.decode(credentials)
        && let Ok(pair) = String::from_utf8(decoded)
        && let Some((id, secret)) = pair.split_once(':')
    {
        forms.extend(basic_forms(id, secret));
    }
    forms
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_and_bearer_credentials_give_every_form() {
        let [secret, encoded, pair] = basic_forms("key-id-1", "very-secret");
        assert_eq!(secret, "very-secret");
        assert_eq!(pair, "key-id-1:very-secret");
        assert_eq!(encoded, "a2V5LWlkLTE6dmVyeS1zZWNyZXQ=");
        let header = format!("Basic {encoded}");
        let forms = authorization_forms(&header);
        for form in [&encoded, &secret, &pair] {
            assert!(forms.contains(form), "{form} in {forms:?}");
        }
        assert_eq!(authorization_forms("Bearer tok-123"), ["tok-123"]);
        assert_eq!(authorization_forms("Basic not-base64!"), ["not-base64!"]);
    }
}
