//! Field checks shared by the pipe builders. Each records a problem at its path and returns the
//! converted value when the input is valid.

use std::num::{NonZeroU16, NonZeroU64};

use crate::error::Problems;

/// An optional ARN field.
pub(crate) fn arn(
    p: &mut Problems,
    path: &str,
    value: &Option<String>,
) -> Option<api_raw::support::Arn> {
    let text = value.as_deref()?;
    // The spec's rule, in its one implementation.
    let converted = api_raw::support::Arn::try_from(text).ok();
    if converted.is_none() {
        p.add(path, format!("must be an ARN (arn:<partition>:<service>:<region>:<account>:<resource>), got {text:?}"));
    }
    converted
}

/// A required, non-empty string.
pub(crate) fn non_empty(p: &mut Problems, path: &str, value: &str) {
    p.check(
        !value.trim().is_empty(),
        path,
        "required; must not be empty",
    );
}

/// A port, 1 to 65535.
pub(crate) fn port(p: &mut Problems, path: &str, value: u16) -> Option<NonZeroU16> {
    let converted = NonZeroU16::new(value);
    if converted.is_none() {
        p.add(path, format!("must be between 1 and 65535, got {value}"));
    }
    converted
}

/// An integer setting within bounds, converted to the generated field type; a value the wire type
/// cannot hold is a problem too, never a silently changed number.
pub(crate) fn bounded<T: FromInteger>(
    p: &mut Problems,
    path: &str,
    value: Option<u64>,
    min: u64,
    max: Option<u64>,
) -> Option<T> {
    let v = value?;
    p.range(path, Some(v), min, max);
    let in_range = v >= min && max.is_none_or(|max| v <= max);
    if !in_range {
        return None;
    }
    let converted = T::from_integer(v);
    if converted.is_none() {
        p.add(path, format!("{v} is too large to send"));
    }
    converted
}

/// The integer types the generator uses for bounded request fields.
pub(crate) trait FromInteger: Sized {
    fn from_integer(value: u64) -> Option<Self>;
}

impl FromInteger for i64 {
    fn from_integer(value: u64) -> Option<Self> {
        i64::try_from(value).ok()
    }
}

impl FromInteger for NonZeroU64 {
    fn from_integer(value: u64) -> Option<Self> {
        NonZeroU64::new(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arns_follow_the_spec_pattern_as_api_raw_checks_it() {
        let check = |text: &str| {
            let mut p = Problems::new();
            let converted = arn(&mut p, "x.iamRole", &Some(text.to_string()));
            assert_eq!(converted.is_some(), p.finish("t").is_ok(), "{text}");
            assert_eq!(
                converted.is_some(),
                api_raw::support::Arn::matches(text),
                "{text}"
            );
            converted.is_some()
        };
        assert!(check("arn:aws:iam::123456789012:role/pipe-reader"));
        assert!(check(
            "arn:aws:kafka:eu-west-1:123456789012:cluster/orders/6a1b-1"
        ));
        assert!(check("arn:p::::x"), "the spec allows an empty service");
        assert!(!check("arn:aws:iam::123456789012"));
        assert!(!check("role/pipe-reader"));
        assert!(!check("arn::iam::1:role/x"));
    }

    #[test]
    fn bounded_values_convert_to_the_generated_types() {
        let mut p = Problems::new();
        assert_eq!(
            bounded::<NonZeroU64>(&mut p, "a", Some(5), 1, Some(35)).map(NonZeroU64::get),
            Some(5)
        );
        assert_eq!(bounded::<i64>(&mut p, "b", Some(0), 0, Some(64)), Some(0));
        assert_eq!(bounded::<i64>(&mut p, "c", Some(65), 0, Some(64)), None);
        assert_eq!(bounded::<i64>(&mut p, "d", None, 0, Some(64)), None);
        assert_eq!(bounded::<i64>(&mut p, "e", Some(u64::MAX), 1, None), None);
        let err = p.finish("x").unwrap_err();
        assert_eq!(err.problems.len(), 2);
        assert_eq!(err.problems[0].path, "c");
        assert_eq!(
            err.problems[1].message,
            "18446744073709551615 is too large to send"
        );
    }
}
