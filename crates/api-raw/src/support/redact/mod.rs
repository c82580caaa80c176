//! The one redaction rule of the workspace: which members hold secrets, and where a secret value
//! stands in a text, whatever form an encoder gave it.
//!
//! Every place that shows data uses this module: the SDK's error bodies, messages and `tracing`
//! events, the serde output of unknown source kinds, the emulator's request log, views and stored
//! data, and the command-line client's outputs. The rule:
//!
//! - **A member is secret by its name** ([`is_secret_member`]): a name the spec types as a secret
//!   (`password`, `secretKey`, `connectionString`), or one that contains, ignoring case, `_` and `-`,
//!   one of [`SECRET_WORDS`] (`password`, `secret`, `token`, `apikey`, `signature`, ...), or is `sig`
//!   (a shared access signature in a query). Its value is replaced by
//!   [`REDACTED`]; under an object or array every scalar inside is replaced.
//! - **A secret value is found in any encoding** ([`Redactor`]): as it is; with any character
//!   written as a JSON escape (`\u0026`, `\u00E9`, a surrogate pair, `\/`, `\"`, `\n`, upper or lower
//!   hex); as an HTML character reference (`&amp;`, `&#38;`, `&#x26;`, any name HTML's table
//!   gives one character: `&eacute;`, `&Eacute;`, `&euro;`, `&nbsp;`; with or without the `;`);
//!   as percent-encoded UTF-8 (`%26`, `+` for a space); and such forms escaped once more (a JSON
//!   string inside a JSON string: `\\u0026`). A secret cut off at the end of a text (a body read
//!   up to a bound) is found from its first [`PARTIAL_MIN`] whole characters on, to the end of the
//!   text, whether the cut falls between two characters or inside the form of the next one
//!   (`\u00`, `&#x`, `%C3`, `&eac`, or the `\u{FFFD}` that [`Redactor::bytes`] reads of a
//!   character's cut UTF-8): such a text shows at most `PARTIAL_MIN - 1` characters of it (and the
//!   start of an escape that does not decode). Values shorter than [`MIN_SECRET_CHARS`] characters
//!   are not searched for: they would redact ordinary words.
//! - **Credentials inside a URI** (`scheme://user:password@host`) lose their password, whether the
//!   password is known or not, and whatever writes the URI's `:`, `//` and `@`: JSON escapes
//!   (`\u002F`, `\/`), HTML references (`&#x2F;`, `&#64;`, `&colon;`), percent-encoding (`%2F`),
//!   and these escaped once more (`%252F`).
//! - **Cost**: a text costs at most its length times each secret's length squared in steps (each
//!   place where encodings branch is tried once per secret character), and its memory is
//!   the redacted copy and little more, whatever the number of secrets (an 8 MiB text and 20
//!   secrets: 1.01x the text at the peak, `tests/redaction_memory.rs`).
//! - **A member with a secret name inside text** (`"password": "..."`, also inside an escaped JSON
//!   string, and in bodies cut short that no longer parse) loses its value, and so does a pair of a
//!   query, a form or a connection string (`?token=`, `;SharedAccessKey=`, `,password=`, `=`
//!   written `%3D`; after `?` or `&`, `key` and `code` too, in any letter case), and a YAML member
//!   (`password: x` on its line or in a flow mapping).
//! - **A connection URL given whole** (a store's, from a flag or a variable) is shown without its
//!   user part, however its password is written ([`describe_url`]), and [`Redactor::url`] knows its
//!   password as written and decoded: a password may hold what ends a URI in running text.
//! - **A PEM private key** (`-----BEGIN ... PRIVATE KEY-----`) loses its body, whatever member holds
//!   it.
//!
//! ```
//! use api_raw::support::redact::{Redactor, REDACTED};
//!
//! let redactor = Redactor::new().secret("p&ss/word");
//! let body = r#"{"error":"BAD_REQUEST: password p\u0026ss\/word rejected"}"#;
//! assert_eq!(redactor.text(body), r#"{"error":"BAD_REQUEST: password [REDACTED] rejected"}"#);
//! assert_eq!(redactor.text("<p>p&amp;ss&#x2F;word</p>"), "<p>[REDACTED]</p>");
//! assert_eq!(redactor.text("postgres://app:hunter22@db:5432"), "postgres://app:[REDACTED]@db:5432");
//! assert_eq!(redactor.text("postgres%3A%2F%2Fapp%3Ahunter22%40db"), "postgres%3A%2F%2Fapp%3A[REDACTED]%40db");
//! # let _ = REDACTED;
//! ```

mod credentials;
mod encoded;
mod html_entities;
mod members;
mod pem;
mod remainders;
mod uri;
mod url;

use std::borrow::Cow;

use serde_json::Value;

pub use credentials::{authorization_forms, basic_forms};
pub use members::{SECRET_WORDS, is_secret_member};
pub use url::{describe_url, percent_decoded, url_password};

/// What replaces a secret.
pub const REDACTED: &str = "[REDACTED]";

/// The shortest secret value searched for, in characters.
pub const MIN_SECRET_CHARS: usize = 4;

/// How many leading characters of a secret, cut off at the end of a text, are enough to redact it
/// (with what follows of the text, the start of the next character's escape too): the end of a
/// text shows at most `PARTIAL_MIN - 1` characters of a secret.
pub const PARTIAL_MIN: usize = 6;

/// The secret values to find, and the rule that finds them: see the [module](self) docs.
///
/// Cheap to build; [`text`](Self::text) and [`json`](Self::json) apply the name rule and the URI
/// rule even when it holds no value.
#[derive(Clone, Default)]
pub struct Redactor {
    /// The values, longest first (a longer secret that contains a shorter one is replaced whole).
    secrets: Vec<Box<[char]>>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Redactor({} secret value(s))", self.secrets.len())
    }
}

impl Redactor {
    /// A redactor that knows no secret value yet (the name and URI rules still apply).
    pub fn new() -> Self {
        Self::default()
    }

    /// With one more secret value.
    pub fn secret(mut self, value: &str) -> Self {
        self.add(value);
        self
    }

    /// Adds a secret value; one shorter than [`MIN_SECRET_CHARS`] is ignored.
    pub fn add(&mut self, value: &str) {
        let chars: Box<[char]> = value.chars().collect();
        if chars.len() < MIN_SECRET_CHARS || self.secrets.contains(&chars) {
            return;
        }
        self.secrets.push(chars);
        self.secrets
            .sort_by_key(|known| std::cmp::Reverse(known.len()));
    }

    /// Adds the string values of every member with a secret name in `json`, at any depth, so that
    /// they are found wherever else they appear.
    pub fn add_json_secrets(&mut self, json: &Value) {
        members::each_secret_string(json, &mut |value| self.add(value));
    }

    /// Adds every secret value of `other`, and answers a redactor of those it did not hold yet
    /// (empty when none was new): what to search for again in what was written before.
    pub fn absorb(&mut self, other: &Redactor) -> Redactor {
        let mut new = Redactor::new();
        for secret in &other.secrets {
            if !self.secrets.contains(secret) {
                let value: String = secret.iter().collect();
                self.add(&value);
                new.add(&value);
            }
        }
        new
    }

    /// Whether it holds no secret value.
    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// `text` with every secret value (in any encoding), every URI password and every value of a
    /// secret-named member replaced by [`REDACTED`]; borrowed when nothing was found.
    pub fn text<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let mut out = Cow::Borrowed(text);
        if !self.secrets.is_empty()
            && let Some(found) = encoded::replace_all(&out, &self.secrets)
        {
            out = Cow::Owned(found);
        }
        if let Some(found) = uri::redact_passwords(&out) {
            out = Cow::Owned(found);
        }
        if let Some(found) = members::redact_member_values(&out) {
            out = Cow::Owned(found);
        }
        if !self.secrets.is_empty()
            && let Some(found) = remainders::remove_after_markers(&out, &self.secrets)
        {
            out = Cow::Owned(found);
        }
        out
    }

    /// Bytes that may not be UTF-8 (a body as received): read lossily, then [`text`](Self::text).
    pub fn bytes(&self, bytes: &[u8]) -> String {
        self.text(&String::from_utf8_lossy(bytes)).into_owned()
    }

    /// Redacts a JSON value in place: members with a secret name by name, every other string by
    /// [`text`](Self::text).
    pub fn json(&self, value: &mut Value) {
        match value {
            Value::Object(members) => {
                for (name, member) in members.iter_mut() {
                    if is_secret_member(name) {
                        members::blank(member);
                    } else {
                        self.json(member);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|item| self.json(item)),
            Value::String(text) => {
                if let Cow::Owned(redacted) = self.text(text) {
                    *text = redacted;
                }
            }
            _ => {}
        }
    }

    /// A redacted copy of `value` (see [`json`](Self::json)).
    pub fn json_copy(&self, value: &Value) -> Value {
        let mut copy = value.clone();
        self.json(&mut copy);
        copy
    }
}

/// `text` with each span (byte ranges on character boundaries) replaced by [`REDACTED`]; spans that
/// overlap are merged.
fn splice(text: &str, spans: &[(usize, usize)]) -> String {
    let mut spans = spans.to_vec();
    spans.sort_unstable();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for (start, end) in spans {
        if start < copied {
            copied = copied.max(end);
            continue;
        }
        out.push_str(&text[copied..start]);
        out.push_str(REDACTED);
        copied = end;
    }
    out.push_str(&text[copied..]);
    out
}

#[cfg(test)]
mod tests;
