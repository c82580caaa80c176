//! Strings the spec constrains with a `pattern`, checked by hand-written code instead of a regular
//! expression engine: [`Arn`], [`OffsetTimestamp`], [`AlertId`].
//!
//! The generated code would compile each pattern with `regress`, which was about 5 s of every
//! downstream crate's cold build, on its critical path, for three short patterns. The tests of this
//! module read each pattern from `spec/` and check that the hand-written rule accepts exactly what the
//! pattern accepts.

use std::fmt;

/// A string that does not match the pattern of its type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatternError {
    /// The type, e.g. `Arn`.
    pub type_name: &'static str,
    /// The spec's pattern.
    pub pattern: &'static str,
}

impl fmt::Display for PatternError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "not a valid {}: doesn't match pattern {:?}",
            self.type_name, self.pattern
        )
    }
}

impl std::error::Error for PatternError {}

macro_rules! patterned_string {
    ($(#[$meta:meta])* $name:ident, pattern = $pattern:literal, check = $check:path) => {
        $(#[$meta])*
        #[derive(Clone, Debug, Eq, Hash, Ord, PartialEq, PartialOrd, serde::Serialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// The spec's pattern for this type.
            pub const PATTERN: &'static str = $pattern;

            /// Whether `text` matches the pattern: the one check of this rule, for every crate
            /// that needs it (the SDK, the emulator, the CLI).
            pub fn matches(text: &str) -> bool {
                $check(text)
            }

            /// The string.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl std::ops::Deref for $name {
            type Target = String;
            fn deref(&self) -> &String {
                &self.0
            }
        }

        impl From<$name> for String {
            fn from(value: $name) -> Self {
                value.0
            }
        }

        impl std::str::FromStr for $name {
            type Err = PatternError;
            fn from_str(value: &str) -> Result<Self, PatternError> {
                value.to_string().try_into()
            }
        }

        impl TryFrom<&str> for $name {
            type Error = PatternError;
            fn try_from(value: &str) -> Result<Self, PatternError> {
                value.to_string().try_into()
            }
        }

        impl TryFrom<String> for $name {
            type Error = PatternError;
            fn try_from(value: String) -> Result<Self, PatternError> {
                if $check(&value) {
                    Ok(Self(value))
                } else {
                    Err(PatternError {
                        type_name: stringify!($name),
                        pattern: $pattern,
                    })
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                String::deserialize(deserializer)?
                    .try_into()
                    .map_err(serde::de::Error::custom)
            }
        }
    };
}

#[cfg(feature = "management")]
patterned_string!(
    /// Role or resource identifier in ARN form: `arn:<partition>:<service>:<region>:<account>:<resource>`.
    ///
    /// ```
    /// use api_raw::support::Arn;
    ///
    /// assert!(Arn::try_from("arn:aws:iam::123456789012:role/pipes").is_ok());
    /// assert!(Arn::try_from("role/pipes").is_err());
    /// ```
    Arn,
    pattern = "^arn:[^:]+:[^:]*:[^:]*:[^:]*:.+$",
    check = is_arn
);

#[cfg(feature = "management")]
patterned_string!(
    /// Start of a Kafka-style source at a point in time: `YYYY-MM-DDTHH:MM`, minute precision, UTC
    /// implied, no seconds, no zone. Only the shape is checked, as the spec's pattern does.
    ///
    /// ```
    /// use api_raw::support::OffsetTimestamp;
    ///
    /// assert!(OffsetTimestamp::try_from("2026-03-01T12:30").is_ok());
    /// assert!(OffsetTimestamp::try_from("2026-03-01T12:30:00Z").is_err());
    /// ```
    OffsetTimestamp,
    pattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}$",
    check = is_offset_timestamp
);

#[cfg(feature = "observability")]
patterned_string!(
    /// Alert identifier, 24 lowercase hexadecimal digits (e.g. `66a1f0c2d4e5f60718293a4b`).
    ///
    /// ```
    /// use api_raw::support::AlertId;
    ///
    /// assert!(AlertId::try_from("66a1f0c2d4e5f60718293a4b").is_ok());
    /// assert!(AlertId::try_from("66A1F0C2D4E5F60718293A4B").is_err());
    /// ```
    AlertId,
    pattern = "^[0-9a-f]{24}$",
    check = is_alert_id
);

/// The pattern of a CPU quantity string (`"500m"`, `"1.5"`).
#[cfg(feature = "management")]
pub const CPU_QUANTITY_PATTERN: &str = r"^[0-9]+(\.[0-9]+)?m?$";

/// The pattern of a memory quantity string (`"2Gi"`, `"512Mi"`, `"0.5"`).
#[cfg(feature = "management")]
pub const MEMORY_QUANTITY_PATTERN: &str = r"^[0-9]+(\.[0-9]+)?(Gi|Mi|G|M)?$";

/// A hand-written check of a pattern.
pub type Check = fn(&str) -> bool;

/// The hand-written check of each `pattern` the specs use, so that nothing needs a regular
/// expression engine to validate against them (the emulator's request validator uses this);
/// `None` for a pattern no type of this build implements.
pub fn check_for_pattern(pattern: &str) -> Option<Check> {
    known_pattern(pattern).map(|(check, _)| check)
}

/// What a value matching `pattern` is, in words (`an ARN (arn:<partition>:...)`), for messages.
pub fn describe_pattern(pattern: &str) -> Option<&'static str> {
    known_pattern(pattern).map(|(_, described)| described)
}

fn known_pattern(pattern: &str) -> Option<(Check, &'static str)> {
    let known: &[(&str, Check, &str)] = &[
        #[cfg(feature = "management")]
        (
            Arn::PATTERN,
            is_arn,
            "an ARN (arn:<partition>:<service>:<region>:<account>:<resource>)",
        ),
        #[cfg(feature = "management")]
        (
            OffsetTimestamp::PATTERN,
            is_offset_timestamp,
            "a UTC time in the form YYYY-MM-DDTHH:MM",
        ),
        #[cfg(feature = "management")]
        (
            CPU_QUANTITY_PATTERN,
            is_cpu_quantity,
            "a CPU quantity (500m, or cores: 1, 0.25)",
        ),
        #[cfg(feature = "management")]
        (
            MEMORY_QUANTITY_PATTERN,
            is_memory_quantity,
            "a memory quantity (2Gi, 512Mi, 2G, 512M)",
        ),
        #[cfg(feature = "observability")]
        (AlertId::PATTERN, is_alert_id, "24 hexadecimal digits"),
    ];
    known
        .iter()
        .find(|(known, _, _)| *known == pattern)
        .map(|(_, check, described)| (*check, *described))
}

/// `^[0-9]+(\.[0-9]+)?m?$`.
#[cfg_attr(not(feature = "management"), allow(dead_code))]
fn is_cpu_quantity(text: &str) -> bool {
    let number = text.strip_suffix('m').unwrap_or(text);
    is_decimal(number)
}

/// `^[0-9]+(\.[0-9]+)?(Gi|Mi|G|M)?$`.
#[cfg_attr(not(feature = "management"), allow(dead_code))]
fn is_memory_quantity(text: &str) -> bool {
    let number = ["Gi", "Mi", "G", "M"]
        .iter()
        .find_map(|unit| text.strip_suffix(unit))
        .unwrap_or(text);
    is_decimal(number)
}

/// `[0-9]+(\.[0-9]+)?`, whole.
fn is_decimal(text: &str) -> bool {
    let digits = |part: &str| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
    match text.split_once('.') {
        Some((whole, fraction)) => digits(whole) && digits(fraction),
        None => digits(text),
    }
}

/// `^arn:[^:]+:[^:]*:[^:]*:[^:]*:.+$`: four colon-free fields (the first not empty), then a resource
/// of at least one character with no line terminator (what `.` does not match).
#[cfg_attr(not(feature = "management"), allow(dead_code))]
fn is_arn(text: &str) -> bool {
    let Some(rest) = text.strip_prefix("arn:") else {
        return false;
    };
    let mut fields = rest.splitn(5, ':');
    let partition = fields.next().unwrap_or_default();
    let (Some(_service), Some(_region), Some(_account), Some(resource)) =
        (fields.next(), fields.next(), fields.next(), fields.next())
    else {
        return false;
    };
    !partition.is_empty()
        && !resource.is_empty()
        && !resource.contains(['\n', '\r', '\u{2028}', '\u{2029}'])
}

/// `^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}$`.
#[cfg_attr(not(feature = "management"), allow(dead_code))]
fn is_offset_timestamp(text: &str) -> bool {
    text.len() == 16
        && text.bytes().enumerate().all(|(i, b)| match i {
            4 | 7 => b == b'-',
            10 => b == b'T',
            13 => b == b':',
            _ => b.is_ascii_digit(),
        })
}

/// `^[0-9a-f]{24}$`.
#[cfg_attr(not(feature = "observability"), allow(dead_code))]
fn is_alert_id(text: &str) -> bool {
    text.len() == 24 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[cfg(test)]
mod tests;
