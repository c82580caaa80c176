use std::collections::HashMap;

use proptest::prelude::*;
use serde_json::json;

use super::*;
use super::{encoded, splice};
use api_test_support::encodings::{html_form, json_form, pieces};

fn redacts(secret: &str, text: &str, expected: &str) {
    assert_eq!(
        Redactor::new().secret(secret).text(text),
        expected,
        "{secret:?} in {text:?}"
    );
}

#[test]
fn a_secret_is_found_as_itself_and_in_every_json_escape() {
    redacts("hunter22", "pw hunter22 ok", "pw [REDACTED] ok");
    redacts(
        "p&ss<w>rd",
        r"x p\u0026ss\u003cw\u003erd y",
        "x [REDACTED] y",
    );
    redacts(
        "p&ss<w>rd",
        r"x p\u0026ss\u003Cw\u003Erd y",
        "x [REDACTED] y",
    );
    redacts("a/b\"c\\d", r#"x a\/b\"c\\d y"#, "x [REDACTED] y");
    redacts("a/b\"c\\d", r#"x a/b\u0022c\u005Cd y"#, "x [REDACTED] y");
    redacts("line\nbreak", r"x line\nbreak y", "x [REDACTED] y");
    redacts("tab\there", r"x tab\u0009here y", "x [REDACTED] y");
    // Any character at all, escaped or not, independently of its neighbours.
    redacts("hunter22", r"x \u0068unt\u0065r22 y", "x [REDACTED] y");
    redacts("café-pw", r"x caf\u00e9-pw y", "x [REDACTED] y");
    redacts("ok😀pass", r"x ok\ud83d\ude00pass y", "x [REDACTED] y");
    redacts("ok😀pass", r"x ok\uD83D\uDE00pass y", "x [REDACTED] y");
}

/// The WHATWG table of named character references, as another crate ships it (independent of the
/// generated table the redactor reads): each name (with its `&`, and its `;` unless it is a legacy
/// form without it) and the one character it stands for; names of two code points left out.
fn whatwg_names() -> impl Iterator<Item = (&'static str, char)> {
    entities::ENTITIES
        .iter()
        .filter_map(|entity| match entity.codepoints {
            entities::Codepoints::Single(code) => Some((entity.entity, char::from_u32(code)?)),
            entities::Codepoints::Double(..) => None,
        })
}

/// The named references of `c` in [`whatwg_names`].
fn names_of(c: char) -> &'static [&'static str] {
    static BY_CHAR: std::sync::OnceLock<HashMap<char, Vec<&'static str>>> =
        std::sync::OnceLock::new();
    BY_CHAR
        .get_or_init(|| {
            let mut by_char: HashMap<char, Vec<&'static str>> = HashMap::new();
            for (name, c) in whatwg_names() {
                by_char.entry(c).or_default().push(name);
            }
            by_char
        })
        .get(&c)
        .map_or(&[], Vec::as_slice)
}

/// The ways an HTML page may write `c`, `pick` choosing: any of its named references when it has
/// some (with its `;`, or without when the name is a legacy one), else the shared encoder's forms.
fn html_any_form(c: char, pick: u8) -> String {
    let names = names_of(c);
    if !names.is_empty() && pick.is_multiple_of(2) {
        names[usize::from(pick / 2) % names.len()].to_string()
    } else {
        html_form(c, pick / 2)
    }
}

/// A reading of every HTML character reference: numeric ones, and each name of [`whatwg_names`]
/// (the longest that matches, as HTML reads them).
fn html_fully_decoded(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let named = whatwg_names()
            .filter(|(name, _)| rest.starts_with(name))
            .max_by_key(|(name, _)| name.len());
        let (c, len) = match named {
            Some((name, c)) => (c, name.len()),
            None => numeric_reference(rest).unwrap_or(('&', 1)),
        };
        out.push(c);
        rest = &rest[len..];
    }
    out.push_str(rest);
    out
}

/// The character of the numeric reference that `text` begins with (`&#38;`, `&#x26`), and its
/// length.
fn numeric_reference(text: &str) -> Option<(char, usize)> {
    let body = text.strip_prefix("&#")?;
    let (radix, skip) = if body.starts_with(['x', 'X']) {
        (16, 1)
    } else {
        (10, 0)
    };
    let digits = body[skip..]
        .bytes()
        .take_while(|b| char::from(*b).is_digit(radix))
        .count();
    let code = u32::from_str_radix(&body[skip..skip + digits], radix).ok()?;
    let semicolon = usize::from(body[skip + digits..].starts_with(';'));
    Some((char::from_u32(code)?, 2 + skip + digits + semicolon))
}

#[test]
fn the_html_table_is_whatwg_s_whole_and_sorted() {
    let table = super::html_entities::names();
    assert!(
        table.windows(2).all(|pair| pair[0] < pair[1]),
        "sorted by character, then name, without repeats"
    );
    let expected: std::collections::BTreeSet<(char, &str)> = whatwg_names()
        .map(|(name, c)| (c, name.trim_start_matches('&').trim_end_matches(';')))
        .collect();
    let listed: std::collections::BTreeSet<(char, &str)> = table.iter().copied().collect();
    assert_eq!(listed, expected);
    assert_eq!(table.len(), 2032);
}

#[test]
fn every_whatwg_name_of_one_character_is_known() {
    // Every name of HTML's table (whatwg.org), as written: with its `;`, or a legacy one without.
    let mut count = 0;
    for (name, c) in whatwg_names() {
        let secret = format!("key{c}word");
        redacts(&secret, &format!("x key{name}word y"), "x [REDACTED] y");
        count += 1;
    }
    assert_eq!(count, 2231 - 93);
}

#[test]
fn named_references_beyond_ascii_are_known() {
    redacts("café-pw-1", "<p>caf&eacute;-pw-1</p>", "<p>[REDACTED]</p>");
    redacts("Über-pw-1", "<p>&Uuml;ber-pw-1</p>", "<p>[REDACTED]</p>");
    redacts("grün-pw-1", "<p>gr&uuml;n-pw-1</p>", "<p>[REDACTED]</p>");
    redacts("cost-5€-pw", "<p>cost-5&euro;-pw</p>", "<p>[REDACTED]</p>");
    redacts("cost-5£-pw", "<p>cost-5&pound;-pw</p>", "<p>[REDACTED]</p>");
    redacts(
        "ÉCOLE-pw-1",
        "<p>&Eacute;COLE-pw-1</p>",
        "<p>[REDACTED]</p>",
    );
    // Without the `;`: a legacy name as HTML reads it, and any other name all the same.
    redacts("café-pw-1", "<p>caf&eacute-pw-1</p>", "<p>[REDACTED]</p>");
    redacts("no\u{a0}break", "x no&nbspbreak y", "x [REDACTED] y");
    redacts("cost-5€-pw", "<p>cost-5&euro-pw</p>", "<p>[REDACTED]</p>");
    // A name is case-sensitive: `&eacute;` is not `É`.
    redacts(
        "ÉCOLE-pw-1",
        "<p>&eacute;COLE-pw-1</p>",
        "<p>&eacute;COLE-pw-1</p>",
    );
    // A name whose character is outside the BMP, and one inside HTML inside JSON.
    redacts("math-𝔄-pw", "x math-&Afr;-pw y", "x [REDACTED] y");
    redacts("café-pw-1", r"caf\u0026eacute;-pw-1", "[REDACTED]");
}

#[test]
fn every_short_json_escape_and_named_reference_is_known() {
    redacts(
        "a\u{8}b\u{c}c\rd\te",
        r"x a\bb\fc\rd\te y",
        "x [REDACTED] y",
    );
    redacts("no\u{a0}break", "x no&nbsp;break y", "x [REDACTED] y");
    // HTML5's named references for punctuation, with or without the semicolon.
    redacts(
        "a/b:c@d!e",
        "x a&solb&colon;c&commat;d&excl;e y",
        "x [REDACTED] y",
    );
    redacts(
        "p|w{1}",
        "<p>p&verbar;w&lcub;1&rcub;</p>",
        "<p>[REDACTED]</p>",
    );
    redacts("nul\0char", "x nul&#0;char y", "x [REDACTED] y");
    redacts("nul\0char", "x nul&#x000;char y", "x [REDACTED] y");
    redacts("nul\0char", "x nul&#;char y", "x nul&#;char y");
}

#[test]
fn only_a_first_byte_or_an_escape_may_begin_an_occurrence() {
    let secrets: Vec<Box<[char]>> = vec!["élan-1".chars().collect(), "x-ray1".chars().collect()];
    let starts = encoded::StartBytes::new(&secrets);
    for byte in [b'\\', b'&', b'%', b'+', b'x', "é".as_bytes()[0]] {
        assert!(starts.may_start(byte), "{byte}");
    }
    for byte in [b'a', b' ', "é".as_bytes()[1], b'y'] {
        assert!(!starts.may_start(byte), "{byte}");
    }
}

#[test]
fn overlapping_finds_are_replaced_once() {
    // A secret-named member whose value holds a query pair of another secret name.
    let none = Redactor::new();
    assert_eq!(
        none.text(r#"{"password":"a&token=b"} rest"#),
        r#"{"password":"[REDACTED]"} rest"#
    );
    assert_eq!(
        splice("0123456789", &[(5, 8), (1, 3), (2, 6)]),
        "0[REDACTED]89"
    );
    assert_eq!(splice("abc", &[(3, 3)]), "abc[REDACTED]");
}

#[test]
fn a_secret_is_found_in_html_percent_and_doubly_escaped_forms() {
    redacts(
        "p&ss<w>rd",
        "<p>p&amp;ss&lt;w&gt;rd</p>",
        "<p>[REDACTED]</p>",
    );
    redacts(
        "p&ss<w>rd",
        "<p>p&#38;ss&#60;w&#x3E;rd</p>",
        "<p>[REDACTED]</p>",
    );
    redacts(
        "p&ss<w>rd",
        "<p>p&#x26ss&#0060;w&#X3e;rd</p>",
        "<p>[REDACTED]</p>",
    );
    redacts("it's \"q\"", "v=it&apos;s &quot;q&quot;.", "v=[REDACTED].");
    redacts("p&ss w/rd", "u=p%26ss+w%2Frd&x=1", "u=[REDACTED]&x=1");
    redacts("p&ss w/rd", "u=p%26ss%20w%2frd", "u=[REDACTED]");
    redacts("pässword", "q=p%C3%A4ssword", "q=[REDACTED]");
    // A JSON document inside a JSON string: the escape's own backslash is escaped.
    redacts(
        "p&ss-word",
        r#"{"error":"body {\"x\":\"p\\u0026ss-word\"}"}"#,
        r#"{"error":"body {\"x\":\"[REDACTED]\"}"}"#,
    );
    // HTML inside JSON.
    redacts("p&ss-word", r"p\u0026amp;ss-word", "[REDACTED]");
}

#[test]
fn a_secret_cut_off_at_the_end_is_found_from_six_characters_on() {
    redacts("0123456789", "body ... 012345", "body ... [REDACTED]");
    redacts("0123456789", "body ... 01234", "body ... 01234");
    redacts("0123456789", "012345 and more", "012345 and more");
}

#[test]
fn a_secret_cut_inside_an_escape_is_found_from_six_whole_characters_on() {
    // Six whole characters, then the start of the seventh's escape: JSON, HTML, percent, a form
    // escaped once more, a surrogate pair cut between its halves, a name cut short.
    for text in [
        r"x hunter\u003",
        r"x hunter\u00",
        r"x hunter\u",
        r"x hunter\",
        "x hunter&#x3",
        "x hunter&#5",
        "x hunter&#005",
        "x hunter&#x0003",
        "x hunter&#",
        "x hunter&",
        "x hunter%3",
        "x hunter%",
        r"x hunter\\u003",
        r"x hunter\u0026#5",
        "x hunter%253",
        "x hunter&amp;#x",
    ] {
        redacts("hunter22", text, "x [REDACTED]");
    }
    for text in [
        "x hunter%C3",
        "x hunter%c3%a",
        "x hunter&eac",
        "x hunter&#xE",
        r"x hunter\u00e",
    ] {
        redacts("hunteré22", text, "x [REDACTED]");
    }
    redacts("hunter😀22", r"x hunter\ud83d", "x [REDACTED]");
    redacts("hunter😀22", r"x hunter\ud83d\ude", "x [REDACTED]");
    // A body read up to a bound in the middle of a character's UTF-8 bytes, read lossily.
    let redactor = Redactor::new().secret("hunteré22");
    assert_eq!(redactor.bytes(b"x hunter\xc3"), "x [REDACTED]");
    assert_eq!(redactor.bytes(b"x hunt\xc3"), "x hunt\u{fffd}");
    // Five whole characters and the start of the sixth's escape leave those five.
    redacts("hunter22", r"x hunte\u007", r"x hunte\u007");
    redacts("hunter22", "x hunte&#x", "x hunte&#x");
    // What does not begin an escape of the next character is no cut secret.
    redacts("hunter22", r"x hunter\u0033", r"x hunter\u0033");
    redacts("hunter22", "x hunter%4", "x hunter%4");
    redacts("hunter22", "x hunter&#x4", "x hunter&#x4");
    redacts("hunteré22", "x hunter%C4", "x hunter%C4");
    redacts("hunteré22", "x hunter&eg", "x hunter&eg");
    redacts("hunter22", "x hunter\u{fffd}", "x hunter\u{fffd}");
}

#[test]
fn the_redactor_shows_no_value_and_reads_raw_bytes_and_arrays() {
    let redactor = Redactor::new().secret("hunter22");
    assert!(!redactor.is_empty());
    assert_eq!(format!("{redactor:?}"), "Redactor(1 secret value(s))");
    assert_eq!(
        redactor.bytes(b"pw \xffhunter22\xfe"),
        "pw \u{fffd}[REDACTED]\u{fffd}"
    );
    let mut list = json!(["a hunter22 b", {"x": ["hunter22"]}, 3]);
    redactor.json(&mut list);
    assert_eq!(list, json!(["a [REDACTED] b", {"x": ["[REDACTED]"]}, 3]));
}

#[test]
fn short_values_are_not_searched_for_and_longer_secrets_win() {
    let redactor = Redactor::new()
        .secret("abc")
        .secret("abcd")
        .secret("abcdefgh");
    assert_eq!(
        redactor.text("abc abcd abcdefgh"),
        "abc [REDACTED] [REDACTED]"
    );
    assert!(Redactor::new().secret("xyz").is_empty());
    assert!(matches!(
        Redactor::new().text("nothing here"),
        Cow::Borrowed(_)
    ));
}

#[test]
fn uri_passwords_go_whether_known_or_not() {
    let none = Redactor::new();
    assert_eq!(
        none.text("connect postgres://app:s3cr3t@db.internal:5432/x failed"),
        "connect postgres://app:[REDACTED]@db.internal:5432/x failed"
    );
    assert_eq!(
        none.text(r#"{"u":"redis:\/\/me:pw@h:6379"}"#),
        r#"{"u":"redis:\/\/me:[REDACTED]@h:6379"}"#
    );
    assert_eq!(
        none.text("https://u:p@ss@host/"),
        "https://u:[REDACTED]@host/"
    );
    for plain in [
        "https://host:8443/path",
        "mailto:me@example.com",
        "user@host",
        "a://b@c",
        "at 10:30 // ok @x",
        // No scheme before the `://` (a scheme begins with a letter).
        "at 10://x:y@z",
        // An empty password: nothing to hide, nothing added.
        "postgres://app:@db:5432/x",
    ] {
        assert_eq!(none.text(plain), plain);
    }
}

#[test]
fn uri_passwords_go_whatever_writes_their_separators() {
    let none = Redactor::new();
    for (text, expected) in [
        (
            r"postgres:\u002F\u002Fapp:hunter22\u0040db:5432",
            r"postgres:\u002F\u002Fapp:[REDACTED]\u0040db:5432",
        ),
        (
            r"postgres\u003A\u002f\u002fapp\u003Ahunter22\u0040db",
            r"postgres\u003A\u002f\u002fapp\u003A[REDACTED]\u0040db",
        ),
        (
            "postgres%3A%2F%2Fapp%3Ahunter22%40db",
            "postgres%3A%2F%2Fapp%3A[REDACTED]%40db",
        ),
        (
            "next=postgres%3a%2f%2fapp%3ahunter22%40db%2Fx&page=2",
            "next=postgres%3a%2f%2fapp%3a[REDACTED]%40db%2Fx&page=2",
        ),
        (
            "postgres:&#x2F;&#x2F;app:hunter22&#64;db",
            "postgres:&#x2F;&#x2F;app:[REDACTED]&#64;db",
        ),
        (
            "postgres&#58;&#47;&#47;app&#58;hunter22&#x40db",
            "postgres&#58;&#47;&#47;app&#58;[REDACTED]&#x40db",
        ),
        (
            "postgres&colon;&sol;&sol;app&colon;hunter22&commat;db",
            "postgres&colon;&sol;&sol;app&colon;[REDACTED]&commat;db",
        ),
        // Escaped once more (a JSON string inside a JSON string, a query inside a query), and a
        // scheme after an escaped quote.
        (
            r"postgres:\\u002F\\u002Fapp:hunter22\\u0040db",
            r"postgres:\\u002F\\u002Fapp:[REDACTED]\\u0040db",
        ),
        (
            "u=postgres%253A%252F%252Fapp%253Ahunter22%2540db",
            "u=postgres%253A%252F%252Fapp%253A[REDACTED]%2540db",
        ),
        (
            "q=%22postgres%3A%2F%2Fapp%3Ahunter22%40db%22",
            "q=%22postgres%3A%2F%2Fapp%3A[REDACTED]%40db%22",
        ),
        // A password that holds a JSON escape of its own.
        (
            r#"{"u":"postgres:\/\/app:p\u00e4ss-1@db"}"#,
            r#"{"u":"postgres:\/\/app:[REDACTED]@db"}"#,
        ),
    ] {
        assert_eq!(none.text(text), expected, "{text}");
    }
    for plain in [
        "a%3Ab%40c",
        "a\\u003Ab\\u0040c",
        "at 10%3A30 %2F%2F ok %40x",
        "x&#58;&#47;&#47;user&#64;host",
        "https%3A%2F%2Fhost%3A8443%2Fpath",
        // An escaped quote ends the authority: a later `@` is not its user information's.
        r"https:\u002F\u002Fhost:1\u0022 then a@b",
        "https:&#x2F;&#x2F;host:1&quot; then a@b",
        "https%3A%2F%2Fhost%3A1%20then%20a%40b",
        r"https:\/\/host:1\\x:y@z",
        r"https:\/\/host:1&bsol;x:y@z",
    ] {
        assert_eq!(none.text(plain), plain);
    }
}

#[test]
fn secret_members_lose_their_values_in_text_and_json() {
    let none = Redactor::new();
    assert_eq!(
        none.text(r#"{"user":"u","password": "p1", "nested": "{\"secretKey\":\"k2\"}"}"#),
        r#"{"user":"u","password": "[REDACTED]", "nested": "{\"secretKey\":\"[REDACTED]\"}"}"#
    );
    // An escape inside the value is the value's: `\"` does not end it, `\\` does not hide its end.
    assert_eq!(
        none.text(r#"{"password":"a\"b\\","user":"u"}"#),
        r#"{"password":"[REDACTED]","user":"u"}"#
    );
    assert_eq!(
        none.text(r#"cut short {"token":"abc"#),
        r#"cut short {"token":"[REDACTED]"#
    );
    assert_eq!(
        none.text("GET /x?api_key=k-1&page=2"),
        "GET /x?api_key=[REDACTED]&page=2"
    );
    // A member of YAML: on its own line or in a flow mapping. A path to one in a message is not.
    assert_eq!(none.text("password: hunter22"), "password: [REDACTED]");
    assert_eq!(
        none.text("credentials.password: must be set"),
        "credentials.password: must be set"
    );
    assert_eq!(
        none.text("TOML parse error at line 3\n3 | secret = \"s3cr3t\n  |   ^"),
        "TOML parse error at line 3\n3 | secret = \"[REDACTED]\n  |   ^"
    );
    assert_eq!(
        none.text("API_KEY_SECRET=abc123 next"),
        "API_KEY_SECRET=[REDACTED] next"
    );
    assert_eq!(none.text("token = 'tok 1'; x"), "token = '[REDACTED]'; x");
    assert_eq!(none.text("a==b and x=1"), "a==b and x=1");
    assert_eq!(
        none.text(r#"{"password" : "p-1", "token":""}"#),
        r#"{"password" : "[REDACTED]", "token":""}"#
    );
    assert_eq!(none.text("mytoken=abc"), "mytoken=[REDACTED]");
    assert_eq!(
        none.text("x/token=abc"),
        "x/token=abc",
        "a name starts after a separator"
    );
    assert_eq!(
        none.text("?token=&next=1"),
        "?token=&next=1",
        "an empty value stays empty"
    );
    let mut body = json!({
        "name": "orders",
        "credentials": {"username": "reader", "password": "hunter22"},
        "futureKind": {"clientSecret": {"value": "v-1", "n": 3}, "tokens": ["t-1"], "other": null},
        "note": "uses redis://x:pw-9@h",
    });
    none.json(&mut body);
    assert_eq!(
        body,
        json!({
            "name": "orders",
            "credentials": {"username": "reader", "password": REDACTED},
            "futureKind": {"clientSecret": {"value": REDACTED, "n": REDACTED}, "tokens": [REDACTED], "other": null},
            "note": "uses redis://x:[REDACTED]@h",
        })
    );
}

#[test]
fn secret_values_are_collected_under_secret_names_at_any_depth() {
    let body = json!([
        {"passwords": ["p-one-1", {"old": "p-two-2"}], "name": "n"},
        {"nested": [{"apiKey": {"k": ["key-3333"]}}]},
    ]);
    let mut redactor = Redactor::new();
    redactor.add_json_secrets(&body);
    assert_eq!(
        redactor.text("p-one-1 p-two-2 key-3333 n"),
        "[REDACTED] [REDACTED] [REDACTED] n"
    );
}

#[test]
fn secret_values_collected_from_json_are_found_elsewhere() {
    let body = json!({"source": {"kafka": {"credentials": {"password": "hunter22"}}}, "name": "hunter22-pipe"});
    let mut redactor = Redactor::new();
    redactor.add_json_secrets(&body);
    assert_eq!(
        redactor.text("/pipes/hunter22-pipe"),
        "/pipes/[REDACTED]-pipe"
    );
    assert_eq!(redactor.json_copy(&body)["name"], "[REDACTED]-pipe");
}

#[test]
fn names_are_secret_by_the_spec_or_by_their_words() {
    for name in [
        "password",
        "secretKey",
        "connectionString",
        "clientSecret",
        "api_key",
        "X-Api-Key",
        "authorization",
        "Proxy-Authorization",
        "set-cookie",
        "sasToken",
        "private_key",
        "PASSPHRASE",
    ] {
        assert!(is_secret_member(name), "{name}");
    }
    for name in [
        "username",
        "accessKeyId",
        "name",
        "brokers",
        "credentials",
        "keyId",
        "host",
    ] {
        assert!(!is_secret_member(name), "{name}");
    }
}

#[cfg(feature = "management")]
#[test]
fn every_member_the_spec_types_as_secret_is_secret() {
    assert!(!crate::management::SECRET_MEMBERS.is_empty());
    for name in crate::management::SECRET_MEMBERS {
        assert!(is_secret_member(name), "{name}");
    }
}

#[test]
fn a_pathological_secret_ends_within_its_budget() {
    let secret = "\\".repeat(40) + "x";
    let text = "\\".repeat(2000);
    let started = std::time::Instant::now();
    let _ = Redactor::new().secret(&secret).text(&text);
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
}

#[test]
fn a_long_escaped_authority_ends_within_its_budget() {
    // A body read up to its bound (64 KiB) that is one URI whose authority never ends, made of
    // escapes: every position is asked whether a separator is written there.
    let text = format!("a://{}", "&amp;%41\\u0041:".repeat(64 * 1024 / 15));
    let started = std::time::Instant::now();
    let _ = Redactor::new().secret("hunter22").text(&text);
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
}

/// `c` as one of the encoders of the cut property writes it, `pick` choosing: JSON, HTML (any
/// name), percent-encoded UTF-8, or JSON inside a JSON string.
fn cut_form(kind: u8, c: char, pick: u8) -> String {
    match kind % 4 {
        0 => json_form(c, pick),
        1 => html_any_form(c, pick),
        2 => {
            let mut buf = [0; 4];
            if c == ' ' && pick.is_multiple_of(2) {
                return "+".into();
            }
            if c.is_ascii_alphanumeric() && pick.is_multiple_of(3) {
                return c.into();
            }
            c.encode_utf8(&mut buf)
                .bytes()
                .map(|b| {
                    if pick.is_multiple_of(2) {
                        format!("%{b:02X}")
                    } else {
                        format!("%{b:02x}")
                    }
                })
                .collect()
        }
        // The outer encoder escapes what a JSON string must (its escapes' hex digits stay).
        _ => json_form(c, pick)
            .chars()
            .map(|inner| match inner {
                '\\' | '"' => json_form(inner, pick / 4),
                _ => inner.to_string(),
            })
            .collect(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, failure_persistence: None, ..ProptestConfig::default() })]

    /// A body read up to a bound may end anywhere in an encoded secret, inside an escape too: what
    /// stays visible before the end is fewer than [`PARTIAL_MIN`] of its characters, as written.
    #[test]
    fn a_secret_cut_anywhere_leaves_fewer_than_partial_min_characters(
        secret in "[a-z0-9 -~éÉü€£😀\n\"\\\\/&<>]{4,14}",
        picks in proptest::collection::vec(any::<u8>(), 14),
        kind in 0u8..4,
    ) {
        let chars: Vec<char> = secret.chars().collect();
        let units: Vec<String> = chars
            .iter()
            .zip(picks.iter().cycle())
            .map(|(c, pick)| cut_form(kind, *c, *pick))
            .collect();
        let encoded = units.concat();
        let before = "rejected: ";
        for piece in pieces(&secret, PARTIAL_MIN) {
            prop_assume!(!format!("{before}{REDACTED}").contains(&piece));
        }
        let redactor = Redactor::new().secret(&secret);
        for cut in (0..=encoded.len()).filter(|cut| encoded.is_char_boundary(*cut)) {
            let body = format!("{before}{}", &encoded[..cut]);
            let out = redactor.text(&body);
            // The characters whose whole form stands before the cut.
            let whole = units
                .iter()
                .scan(0, |end, unit| {
                    *end += unit.len();
                    Some(*end)
                })
                .take_while(|end| *end <= cut)
                .count();
            for run in units[..whole].windows(PARTIAL_MIN) {
                let run = run.concat();
                prop_assert!(
                    !out.contains(&run),
                    "{run:?} of {secret:?} in {out:?} (cut at {cut} of {encoded:?})"
                );
            }
            if whole >= PARTIAL_MIN {
                let shown: String = chars[..whole].iter().collect();
                for piece in pieces(&shown, PARTIAL_MIN) {
                    prop_assert!(!out.contains(&piece), "{piece:?} of {secret:?} in {out:?}");
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn no_piece_of_a_secret_survives_in_any_encoding(
        secret in "[ -~é😀\n\"\\\\/&<>ÉüÜ€£\u{a0}∑α𝔄]{6,24}",
        picks in proptest::collection::vec(any::<u8>(), 24),
        which in 0u8..3,
    ) {
        let slot = "\u{1}";
        let (template, encoded) = match which {
            0 => (
                format!(r#"{{"status":400,"error":"BAD_REQUEST: password {slot} is weak","requestId":"r"}}"#),
                secret.chars().zip(picks.iter().cycle()).map(|(c, p)| json_form(c, *p)).collect::<String>(),
            ),
            1 => (
                format!("<html><title>502</title><body><pre>{slot}</pre></body></html>"),
                secret.chars().zip(picks.iter().cycle()).map(|(c, p)| html_any_form(c, *p)).collect::<String>(),
            ),
            _ => (format!("rejected {slot} at the gateway"), secret.clone()),
        };
        for piece in pieces(&secret, PARTIAL_MIN) {
            prop_assume!(!template.replace(slot, REDACTED).contains(&piece));
        }
        let body = template.replace(slot, &encoded);
        let out = Redactor::new().secret(&secret).text(&body).into_owned();
        let decoded = match which {
            0 => serde_json::from_str::<serde_json::Value>(&out)
                .ok()
                .and_then(|v| v["error"].as_str().map(str::to_string))
                .unwrap_or_default(),
            1 => html_fully_decoded(&out),
            _ => out.clone(),
        };
        for piece in pieces(&secret, PARTIAL_MIN) {
            prop_assert!(!out.contains(&piece), "{piece:?} of {secret:?} in {out:?}");
            prop_assert!(!decoded.contains(&piece), "{piece:?} of {secret:?} decoded in {decoded:?}");
        }
        prop_assert!(out.contains(REDACTED), "{out:?}");
    }

    #[test]
    fn any_text_is_redacted_without_panicking(text in ".{0,200}", secret in ".{0,12}") {
        let redactor = Redactor::new().secret(&secret);
        let out = redactor.text(&text);
        if secret.chars().count() >= MIN_SECRET_CHARS {
            prop_assert!(!out.contains(secret.as_str()));
        }
    }
}

#[test]
fn a_password_runs_to_its_at_sign_whatever_escapes_it_holds() {
    let none = Redactor::new();
    for (text, expected) in [
        // The `://` escaped (a JSON string): a `/`, `?` or `#` before the `@` is the password's.
        (
            r#"{"u":"redis:\/\/me:p\/w?x#y@h:6379"}"#,
            r#"{"u":"redis:\/\/me:[REDACTED]@h:6379"}"#,
        ),
        (
            "redis:&#x2F;&#x2F;me:p&#x2F;w&#63;x@h",
            "redis:&#x2F;&#x2F;me:[REDACTED]@h",
        ),
        (
            "postgres%3A%2F%2Fapp%3Ap%2Fw%3Fx%23y%40db%2Fcrm",
            "postgres%3A%2F%2Fapp%3A[REDACTED]%40db%2Fcrm",
        ),
        // A `'` is a password's character (RFC 3986), escaped or not.
        (
            "connect postgres://app:it's-me@db/x failed",
            "connect postgres://app:[REDACTED]@db/x failed",
        ),
        (
            r"postgres:\/\/app:it\u0027s@db",
            r"postgres:\/\/app:[REDACTED]@db",
        ),
        // An HTML numeric reference is a character of the user information, not its end (its
        // `#` is no fragment), in a URI written plainly too.
        (
            "postgres:&#x2F;&#x2F;us&#101;r:pw&#35;1&#64;db",
            "postgres:&#x2F;&#x2F;us&#101;r:[REDACTED]&#64;db",
        ),
        (
            "<a>postgres://app:p&#64;ss@db/x</a>",
            "<a>postgres://app:[REDACTED]@db/x</a>",
        ),
        // Once the `@` came, an escaped `/` ends the authority as before.
        (
            r"redis:\/\/me:pw-1@h\/0 for a@b",
            r"redis:\/\/me:[REDACTED]@h\/0 for a@b",
        ),
    ] {
        assert_eq!(none.text(text), expected, "{text}");
    }
    // Without an `@` there is no password: a port and a path stay.
    for plain in [
        r#"{"u":"https:\/\/host:8443\/path?q=1#top"}"#,
        "https%3A%2F%2Fhost%3A8443%2Fpath",
        "see 'https://host:8443/x'",
    ] {
        assert_eq!(none.text(plain), plain);
    }
}

/// A URI's separators and a password's `/`, `?`, `#` and `'` in one of the encodings a text may
/// give them: JSON's, HTML's, percent-encoding.
fn uri_form(c: char, encoding: u8) -> String {
    match (encoding, c) {
        (0, '/') => r"\/".to_string(),
        (0, '\'') => r"\u0027".to_string(),
        (0, other) => other.to_string(),
        (1, '/' | '?' | '#' | '\'' | ':' | '@') => format!("&#{};", u32::from(c)),
        (1, other) => other.to_string(),
        (_, '/' | '?' | '#' | '\'' | ':' | '@') => format!("%{:02X}", u32::from(c)),
        (_, other) => other.to_string(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    /// A password no one told the redactor of, inside a URI whose separators are escaped, is
    /// redacted whole whatever `/`, `?`, `#` and `'` it holds: the text keeps everything else.
    #[test]
    fn an_unknown_password_in_an_escaped_uri_goes_whole(
        password in "[a-f0-9/?#'!$()*+,;=._~-]{1,16}",
        encoding in 0u8..3,
    ) {
        let form = |text: &str| text.chars().map(|c| uri_form(c, encoding)).collect::<String>();
        let head = format!("connect postgres{}app{}", form("://"), form(":"));
        let tail = format!("{}db.internal{}5432{}crm failed", form("@"), form(":"), form("/"));
        let text = format!("{head}{}{tail}", form(&password));
        let out = Redactor::new().text(&text).into_owned();
        prop_assert_eq!(out, format!("{head}{REDACTED}{tail}"), "{}", text);
    }
}

#[test]
fn absorbing_answers_only_the_new_secrets() {
    let mut known = Redactor::new().secret("first-secret");
    let new = known.absorb(
        &Redactor::new()
            .secret("first-secret")
            .secret("second-secret"),
    );
    assert_eq!(
        new.text("first-secret second-secret"),
        "first-secret [REDACTED]"
    );
    assert_eq!(
        known.text("first-secret second-secret"),
        "[REDACTED] [REDACTED]"
    );
    assert!(
        known
            .absorb(&Redactor::new().secret("second-secret"))
            .is_empty()
    );
}

#[test]
fn a_uri_written_plainly_keeps_escaped_separators_inside_its_password() {
    let redactor = Redactor::new();
    for (text, expected) in [
        (
            "postgres://app:ab%2Fcd@db:5432/crm",
            "postgres://app:[REDACTED]@db:5432/crm",
        ),
        (
            "https://reader:p%40ss%3Aw%2F%3Frd@registry:8081/x",
            "https://reader:[REDACTED]@registry:8081/x",
        ),
        // Escaped `://`: any escape is a separator, as before.
        (
            "postgres%3A%2F%2Fapp%3Ahunter22%40db",
            "postgres%3A%2F%2Fapp%3A[REDACTED]%40db",
        ),
        (
            r"postgres:\/\/app:hunter22@db",
            r"postgres:\/\/app:[REDACTED]@db",
        ),
    ] {
        assert_eq!(redactor.text(text), expected, "{text}");
    }
}

/// A search remembers the failures where encodings branch (escape bytes), and forgets those behind
/// the position it searches from: over ten thousand `%` that may each begin an encoded `s` and
/// none does, it holds a handful, not one per `%` (the old rule kept them all, for the whole text).
#[test]
fn the_search_forgets_what_lies_behind_its_start() {
    let text = "%78y".repeat(10_000);
    let secret: Vec<char> = "sk-01-live-7f3a9c".chars().collect();
    let mut search = encoded::Search::new(text.as_bytes(), &secret);
    let mut most = 0;
    for pos in (0..text.len()).step_by(4) {
        assert_eq!(search.at(pos), None);
        most = most.max(search.remembered());
    }
    assert!(most > 0, "failures at escapes are remembered");
    assert!(most <= 4, "at most what one start reaches: {most}");
}

/// A URI's separators are asked for at each position of a text; what is worked out for one
/// position is kept only while the questions stay there: over a long escaped text it holds one
/// position's answers, not the whole text's.
#[test]
fn the_written_characters_are_remembered_for_one_position_at_a_time() {
    let text = "&#x2F;%2F\\u002F".repeat(1_000);
    let written = encoded::Written::new(text.as_bytes());
    let mut most = 0;
    let mut found = 0;
    for pos in 0..text.len() {
        for c in ['/', ':', '@'] {
            found += usize::from(written.char_at(pos, c).is_some());
        }
        most = most.max(written.remembered());
    }
    assert_eq!(found, 3_000, "each escaped `/` is read as one");
    assert!(most > 0, "a position's answers are shared");
    // (The forms tried at one position read the positions and depths they span: 21 answers here.)
    assert!(most <= 64, "one position's answers, not the text's: {most}");
}

/// One search serves every tail of a secret: a failure is kept with the character the search began
/// at, so a tail too short to stop at a cut end does not stop a longer one from doing so there.
#[test]
fn a_tail_s_failure_at_a_cut_end_does_not_hold_for_a_longer_tail() {
    // The text ends inside an escaped `i` (`\u0069` cut after `\u00`).
    let text = r"bcdefgh\u00";
    let secret: Vec<char> = "abcdefghijkl".chars().collect();
    let mut search = encoded::Search::new(text.as_bytes(), &secret);
    // From `d`: five whole characters before the cut, fewer than PARTIAL_MIN: no match.
    assert_eq!(search.tail_at(2, 3), None);
    // From `b`: seven, so the cut end is one.
    assert_eq!(search.tail_at(0, 1), Some(text.len()));
    // The other way round, the longer tail's success leaves the shorter one's answer as it was.
    let mut search = encoded::Search::new(text.as_bytes(), &secret);
    assert_eq!(search.tail_at(0, 1), Some(text.len()));
    assert_eq!(search.tail_at(2, 3), None);
    // And a search that began at `b` and failed is remembered for the tails after it.
    let cut_earlier = r"bcdefgh\u00x";
    let mut search = encoded::Search::new(cut_earlier.as_bytes(), &secret);
    assert_eq!(search.tail_at(0, 1), None);
    assert!(search.remembered() > 0);
    assert_eq!(search.tail_at(2, 3), None);
}

#[test]
fn the_shapes_secrets_take_in_ordinary_strings_lose_their_secret() {
    let none = Redactor::new();
    for (text, expected) in [
        // Azure Event Hubs and Service Bus connection strings: the key, not its name.
        (
            "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=abc+def/ghi=",
            "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=[REDACTED]",
        ),
        (
            "SharedAccessSignature=sv%3D2024%26sig%3Dxyz;Endpoint=x",
            "SharedAccessSignature=[REDACTED];Endpoint=x",
        ),
        // Query parameters that are secret in a query only, in any letter case.
        (
            "https://maps.example/api?KEY=k-123&q=x",
            "https://maps.example/api?KEY=[REDACTED]&q=x",
        ),
        (
            "https://fn.example/api/run?code=c0de99",
            "https://fn.example/api/run?code=[REDACTED]",
        ),
        (
            "https://x.example/?a=1&Sig=s1g&Token=t0k",
            "https://x.example/?a=1&Sig=[REDACTED]&Token=[REDACTED]",
        ),
        (
            "a list: user=u,password=p4ss,host=h",
            "a list: user=u,password=[REDACTED],host=h",
        ),
        // A pair whose `=` is percent-encoded, as in a URL carried inside another.
        (
            "next=https%3A%2F%2Fh%2Fx%3Fuser%3Du%26password%3Dp4ss%26n%3D1",
            "next=https%3A%2F%2Fh%2Fx%3Fuser%3Du%26password%3D[REDACTED]%26n%3D1",
        ),
        // YAML, on a line and in a flow mapping.
        (
            "user: u\n  password: s3cret value\nhost: h",
            "user: u\n  password: [REDACTED]\nhost: h",
        ),
        (
            "{username: u, password: 'it''s s3cret', port: 1}",
            "{username: u, password: '[REDACTED]', port: 1}",
        ),
        (
            "password: \"a\\\"b c\"\nnext: 1",
            "password: \"[REDACTED]\"\nnext: 1",
        ),
        (
            "{username: u, password: 'p w', port: 1}",
            "{username: u, password: '[REDACTED]', port: 1}",
        ),
        (
            "credentials: {username: u, password: {env: KAFKA_PASSWORD}}",
            "credentials: {username: u, password: {env: KAFKA_PASSWORD}}",
        ),
        // A PEM private key, whatever holds it.
        (
            "ssl_key: \"-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADAN\\n-----END PRIVATE KEY-----\\n\"",
            "ssl_key: \"-----BEGIN PRIVATE KEY-----[REDACTED]-----END PRIVATE KEY-----\\n\"",
        ),
        (
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nAKCAQ\n-----END RSA PRIVATE KEY-----",
            "-----BEGIN RSA PRIVATE KEY-----[REDACTED]-----END RSA PRIVATE KEY-----",
        ),
        (
            "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
            "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
        ),
        // Words that are secret only as a query's parameter stay in a document.
        (
            "{\"key\": \"orders\", \"code\": \"NOT_FOUND\"}",
            "{\"key\": \"orders\", \"code\": \"NOT_FOUND\"}",
        ),
        ("sortingKey=id code=7", "sortingKey=id code=7"),
    ] {
        assert_eq!(none.text(text), expected, "{text}");
    }
}
