//! What a server may do to a value without changing it: write it again the way a database rewrites
//! text. A plan that finds only that between the recorded observed form and the answer now records
//! the new form and changes nothing ([`Cause::Respelled`](super::Cause::Respelled)).
//!
//! Respellings: ASCII whitespace added, removed or changed where it separates no two words
//! (`Decimal(18,2)` and `Decimal(18, 2)`, a trailing newline, `a  b` and `a b`); the letter case of
//! a value of a set, a UUID or a string the spec marks `x-compare: case-insensitive` (a type
//! keyword); a number written as a string (`2` and `"2"`). Any other difference is a change.

use api_core::raw::support::schema::Comparison;
use serde_json::Value;

/// Whether `is` is `was` written again (and not the same text): see the [module](self) docs.
/// `comparison` is the schema's ([`Shape::comparison`](crate::schema::Shape::comparison)).
pub(crate) fn respelled(was: &Value, is: &Value, comparison: Comparison<'_>) -> bool {
    match (was, is) {
        (Value::String(was), Value::String(is)) => {
            let (was, is) = (normal_text(was), normal_text(is));
            if comparison == Comparison::CaseInsensitive {
                was.eq_ignore_ascii_case(&is)
            } else {
                was == is
            }
        }
        (Value::Number(number), Value::String(text))
        | (Value::String(text), Value::Number(number)) => text
            .trim()
            .parse::<f64>()
            .ok()
            .zip(number.as_f64())
            .is_some_and(|(text, number)| text == number),
        _ => false,
    }
}

/// `text` with its ASCII whitespace as a database keeps it: none at either end, none next to a
/// character that is not part of a word, one space between two words.
fn normal_text(text: &str) -> String {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = String::with_capacity(text.len());
    let mut space = false;
    for c in text.trim_matches(|c: char| c.is_ascii_whitespace()).chars() {
        if c.is_ascii_whitespace() {
            space = true;
            continue;
        }
        if space && out.chars().next_back().is_some_and(word) && word(c) {
            out.push(' ');
        }
        space = false;
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn whitespace_that_separates_no_words_and_a_trailing_newline_are_respellings() {
        for (was, is) in [
            ("Decimal(18,2)", "Decimal(18, 2)"),
            (
                "Map(String,Array( Nullable(UInt8)))",
                "Map(String, Array(Nullable(UInt8)))",
            ),
            ("orders, returns ,refunds", "orders,returns,refunds"),
            ("-----END CERTIFICATE-----\n", "-----END CERTIFICATE-----"),
            ("a  b", "a b"),
            ("a\tb", "a b"),
        ] {
            assert!(
                respelled(&json!(was), &json!(is), Comparison::Exact),
                "{was:?} {is:?}"
            );
        }
        for (was, is) in [("a b", "ab"), ("orders", "orders2"), ("x", "y")] {
            assert!(
                !respelled(&json!(was), &json!(is), Comparison::Exact),
                "{was:?} {is:?}"
            );
        }
    }

    #[test]
    fn letter_case_only_where_the_schema_allows_it() {
        let (upper, lower) = (json!("GZIP"), json!("gzip"));
        assert!(respelled(&upper, &lower, Comparison::CaseInsensitive));
        assert!(
            !respelled(&json!("Orders"), &json!("orders"), Comparison::Exact),
            "a table's name is case-sensitive"
        );
        assert!(respelled(
            &json!("decimal(18,2)"),
            &json!("Decimal(18, 2)"),
            Comparison::CaseInsensitive
        ));
    }

    #[test]
    fn a_number_and_its_text_are_one_value() {
        assert!(respelled(&json!(2), &json!("2"), Comparison::Exact));
        assert!(respelled(&json!(" 2.0"), &json!(2), Comparison::Exact));
        assert!(!respelled(&json!(2), &json!("3"), Comparison::Exact));
        assert!(!respelled(&json!(2), &json!(true), Comparison::Exact));
        assert!(!respelled(&json!([1]), &json!([1]), Comparison::Exact));
    }
}
