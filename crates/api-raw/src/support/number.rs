//! Numbers written as the API writes them (a JavaScript server): a whole number is `8`, never `8.0`.

use serde::Serializer;

/// The largest whole number a JavaScript number holds exactly (2^53); beyond it, the float is kept.
const MAX_SAFE_WHOLE: f64 = 9_007_199_254_740_992.0;

/// `value` as the integer a JavaScript server writes for it: `Some` when it is whole and exact as
/// an integer (within 2^53), `None` when it must stay a float. The one whole-number rule: the SDK's
/// request bodies and serde output, and every answer of the emulator, use it.
pub fn whole_number(value: f64) -> Option<i64> {
    // Exact: whole and within 2^53 (so the cast cannot lose anything).
    (value.fract() == 0.0 && value.abs() <= MAX_SAFE_WHOLE).then_some(value as i64)
}

/// Whether a JSON value is an integer as JSON Schema counts one: JSON does not tell `3` from `3.0`,
/// so a whole number is an integer however it is written. The one rule of the emulator's schema
/// validation and of `api-emulator cassette check`.
pub fn is_integer(value: &serde_json::Value) -> bool {
    match value {
        // Every integer serde_json holds is whole as an f64 too (if not exact beyond 2^53).
        serde_json::Value::Number(n) => n.as_f64().is_some_and(|f| f.fract() == 0.0),
        _ => false,
    }
}

/// Whether two JSON numbers are the same number however written (`3` and `3.0`, `0.5` and `0.50`,
/// `5e-1`); `false` when either is not a number. The one rule for comparing numbers by value.
pub fn same_number(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// Writes `value` as an integer when it is whole (and exact as one), else as a float.
pub fn serialize_number<S: Serializer>(value: f64, serializer: S) -> Result<S::Ok, S::Error> {
    match whole_number(value) {
        Some(whole) => serializer.serialize_i64(whole),
        None => serializer.serialize_f64(value),
    }
}

/// [`serialize_number`] for an optional field (`#[serde(serialize_with = "...")]`).
pub fn serialize_optional_number<S: Serializer>(
    value: &Option<f64>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match value {
        Some(value) => serialize_number(*value, serializer),
        None => serializer.serialize_none(),
    }
}

#[cfg(test)]
mod tests {
    use serde::Serialize;

    #[derive(Serialize)]
    struct Sample {
        #[serde(serialize_with = "super::serialize_optional_number")]
        n: Option<f64>,
    }

    fn written(n: Option<f64>) -> String {
        serde_json::to_string(&Sample { n }).unwrap()
    }

    #[test]
    fn numbers_are_the_same_however_written() {
        use serde_json::json;
        assert!(super::same_number(&json!(3), &json!(3.0)));
        assert!(super::same_number(
            &serde_json::from_str("0.50").unwrap(),
            &json!(0.5)
        ));
        assert!(!super::same_number(&json!(3), &json!(4)));
        assert!(
            !super::same_number(&json!("3"), &json!(3)),
            "text is not a number"
        );
    }

    #[test]
    fn the_whole_number_rule() {
        assert_eq!(super::whole_number(3.0), Some(3));
        assert_eq!(super::whole_number(-0.0), Some(0));
        assert_eq!(
            super::whole_number(9_007_199_254_740_992.0),
            Some(9_007_199_254_740_992)
        );
        assert_eq!(super::whole_number(9_007_199_254_740_994.0), None);
        for not_whole in [0.5, f64::NAN, f64::INFINITY, -f64::INFINITY, 1e300] {
            assert_eq!(super::whole_number(not_whole), None, "{not_whole}");
        }
    }

    #[test]
    fn integers_are_whole_numbers_however_written() {
        use serde_json::json;
        for integer in [
            json!(3),
            json!(-3),
            json!(3.0),
            json!(u64::MAX),
            json!(1e300),
        ] {
            assert!(super::is_integer(&integer), "{integer}");
        }
        for other in [
            json!(3.5),
            json!(-0.25),
            json!("3"),
            json!(null),
            json!([3]),
        ] {
            assert!(!super::is_integer(&other), "{other}");
        }
    }

    #[test]
    fn whole_numbers_are_written_as_integers_and_fractions_stay() {
        assert_eq!(written(Some(8.0)), r#"{"n":8}"#);
        assert_eq!(written(Some(-2.0)), r#"{"n":-2}"#);
        assert_eq!(written(Some(0.5)), r#"{"n":0.5}"#);
        assert_eq!(written(Some(1e300)), r#"{"n":1e+300}"#);
        assert_eq!(written(None), r#"{"n":null}"#);
    }
}
