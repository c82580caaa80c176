//! Turning a generated value into a domain value: JSON paths for errors, and the checks that every
//! decoder shares (required identity, typed ids, integers that must fit).

use std::fmt;

use crate::error::DecodeError;

/// Where a value sits in a response body, built on the stack and only written out on error.
#[derive(Clone, Copy)]
pub(crate) enum Path<'a> {
    /// The member of the envelope that holds the resource: `result` or `data`.
    Root(&'static str),
    /// A member of an object.
    Field(&'a Path<'a>, &'static str),
    /// An item of an array.
    Index(&'a Path<'a>, usize),
}

impl<'a> Path<'a> {
    /// The member `name` of this object.
    pub(crate) fn field(&'a self, name: &'static str) -> Path<'a> {
        Path::Field(self, name)
    }

    /// The item `index` of this array.
    pub(crate) fn index(&'a self, index: usize) -> Path<'a> {
        Path::Index(self, index)
    }

    /// A decode error at this path.
    pub(crate) fn error(&self, message: impl Into<String>) -> Invalid {
        Invalid {
            path: self.to_string(),
            message: message.into(),
        }
    }
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Path::Root(name) => f.write_str(name),
            // A bare value (deserialized on its own) has an unnamed root: `serviceId`, not `.serviceId`.
            Path::Field(Path::Root(""), name) => f.write_str(name),
            Path::Field(parent, name) => write!(f, "{parent}.{name}"),
            Path::Index(parent, index) => write!(f, "{parent}[{index}]"),
        }
    }
}

/// Implements `Deserialize` for a domain type from the API's wire shape: the generated type's
/// tolerant reading, then the same `decode` as a call (required identity, typed ids, whole
/// numbers), an error naming the JSON path from the value's root.
macro_rules! deserialize_from_wire {
    ($ty:ty, $raw:ty, |$value:ident, $at:ident| $decode:expr) => {
        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let $value = $crate::decode::read_wire::<$raw, D>(deserializer)?;
                let $at = $crate::decode::Path::Root("");
                let decoded: Result<$ty, $crate::decode::Invalid> = $decode;
                decoded.map_err(|invalid| serde::de::Error::custom(invalid.described()))
            }
        }
    };
}
pub(crate) use deserialize_from_wire;

/// Reads the generated wire type, an error naming the JSON path where it broke off (a wrong type,
/// a malformed id or time), as the later decoding's errors do.
pub(crate) fn read_wire<'de, T, D>(deserializer: D) -> Result<T, D::Error>
where
    T: serde::Deserialize<'de>,
    D: serde::Deserializer<'de>,
{
    serde_path_to_error::deserialize(deserializer).map_err(|error| {
        let path = error.path().to_string();
        let inner = error.into_inner();
        if path == "." {
            inner
        } else {
            serde::de::Error::custom(format!("`{path}`: {inner}"))
        }
    })
}

/// A value that does not decode: where, and why. The operation is added by [`Invalid::at`].
#[derive(Debug)]
pub(crate) struct Invalid {
    path: String,
    message: String,
}

impl Invalid {
    /// `` `path`: message ``, for a serde error.
    pub(crate) fn described(&self) -> String {
        format!("`{}`: {}", self.path, self.message)
    }

    /// The decode error of operation `operation`.
    pub(crate) fn at(self, operation: &'static str) -> DecodeError {
        DecodeError::new(operation, self.path, self.message)
    }
}

/// A member that identifies the resource: absent is an error.
pub(crate) fn required<T>(value: Option<T>, at: Path<'_>) -> Result<T, Invalid> {
    value.ok_or_else(|| at.error("required: the resource cannot be identified without it"))
}

/// A text id (`AlertId`, `DashboardId`, a reverse private endpoint id in a list): malformed is an error.
pub(crate) fn parse_id<T>(text: &str, at: Path<'_>) -> Result<T, Invalid>
where
    T: std::str::FromStr,
    T::Err: fmt::Display,
{
    text.parse().map_err(|e: T::Err| at.error(e.to_string()))
}

/// An integer that must fit `T` (a count, a port, a size): out of range is an error.
pub(crate) fn fit<T: TryFrom<i64>>(value: Option<i64>, at: Path<'_>) -> Result<Option<T>, Invalid> {
    value
        .map(|v| {
            T::try_from(v).map_err(|_| {
                at.error(format!(
                    "{v} is out of range for {}",
                    std::any::type_name::<T>()
                ))
            })
        })
        .transpose()
}

#[cfg(feature = "management")]
/// A whole number sent as a JSON number that may carry a fraction (`3` or `3.0`).
pub(crate) fn whole(value: Option<f64>, at: Path<'_>) -> Result<Option<u32>, Invalid> {
    value
        .map(|v| {
            api_raw::support::whole_number(v)
                .and_then(|whole| u32::try_from(whole).ok())
                .ok_or_else(|| at.error(format!("expected a whole number, got {v}")))
        })
        .transpose()
}

#[cfg(feature = "management")]
/// A memory amount in GB sent as a JSON number: negative or not finite is an error, never a silent 0.
pub(crate) fn gigabytes(
    value: Option<f64>,
    at: Path<'_>,
) -> Result<Option<api_raw::support::MemoryGb>, Invalid> {
    value
        .map(|gb| {
            if gb.is_finite() && gb >= 0.0 {
                Ok(api_raw::support::MemoryGb::new(gb))
            } else {
                Err(at.error(format!("expected a non-negative number of GB, got {gb}")))
            }
        })
        .transpose()
}

#[cfg(feature = "management")]
/// Serialises a secret of a domain value as `"[REDACTED]"`: serde output of what the server answered
/// never carries a secret. Sending one goes through the request types, which keep the value.
pub(crate) fn redacted<S: serde::Serializer, T>(
    value: &Option<T>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match value {
        Some(_) => serializer.serialize_str(api_raw::support::redact::REDACTED),
        None => serializer.serialize_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)] // read only to fail
    struct Wire {
        name: String,
        items: Vec<u8>,
    }

    #[test]
    fn wire_errors_name_their_path_and_a_root_error_stands_alone() {
        let read = |json: serde_json::Value| {
            read_wire::<Wire, _>(json)
                .map(|_| ())
                .unwrap_err()
                .to_string()
        };
        let nested = read(serde_json::json!({"name": "n", "items": [1, "two"]}));
        assert!(nested.starts_with("`items[1]`: invalid type"), "{nested}");
        let root = read(serde_json::json!(7));
        assert!(root.starts_with("invalid type: integer `7`"), "{root}");
    }

    #[test]
    fn paths_read_like_json_paths() {
        let root = Path::Root("result");
        let source = root.field("source");
        let kafka = source.field("kafka");
        let ids = kafka.field("reversePrivateEndpointIds");
        assert_eq!(
            ids.index(2).to_string(),
            "result.source.kafka.reversePrivateEndpointIds[2]"
        );
        assert_eq!(root.index(0).field("id").to_string(), "result[0].id");
    }

    #[cfg(feature = "management")]
    #[test]
    fn whole_numbers_accept_a_zero_fraction_only() {
        let at = Path::Root("result");
        assert_eq!(whole(Some(3.0), at).unwrap(), Some(3));
        assert_eq!(whole(None, at).unwrap(), None);
        for bad in [2.5, -1.0, f64::NAN, 1e20] {
            assert!(whole(Some(bad), at).is_err(), "{bad}");
        }
        assert_eq!(
            fit::<u16>(Some(65_536), at).unwrap_err().message,
            "65536 is out of range for u16"
        );
        assert_eq!(fit::<u16>(Some(8443), at).unwrap(), Some(8443));
    }

    #[test]
    fn a_missing_identity_names_its_path() {
        let root = Path::Root("result");
        let err = required::<u8>(None, root.field("id"))
            .unwrap_err()
            .at("getPipe");
        assert_eq!(err.path, "result.id");
        assert_eq!(err.operation, "getPipe");
    }
}
