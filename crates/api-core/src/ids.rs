//! Typed identifiers: an organization id cannot be passed where a service id is expected.

use std::fmt;
use std::str::FromStr;

/// An identifier that could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {kind} {input:?}: expected {expected}")]
pub struct IdError {
    /// What the identifier names, e.g. `service id`.
    pub kind: &'static str,
    /// The text that was given (identifiers are not secret).
    pub input: String,
    /// The form that was expected.
    pub expected: &'static str,
}

macro_rules! uuid_id {
    ($(#[$meta:meta])* $name:ident, $kind:literal) => {
        $(#[$meta])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
        #[serde(transparent)]
        pub struct $name(uuid::Uuid);

        impl $name {
            /// Wraps a UUID.
            pub const fn from_uuid(id: uuid::Uuid) -> Self {
                Self(id)
            }

            /// The UUID.
            pub const fn as_uuid(&self) -> &uuid::Uuid {
                &self.0
            }
        }

        impl FromStr for $name {
            type Err = IdError;

            fn from_str(s: &str) -> Result<Self, IdError> {
                uuid::Uuid::parse_str(s.trim()).map(Self).map_err(|_| IdError {
                    kind: $kind,
                    input: s.to_string(),
                    expected: "a UUID such as 3f0c5e2a-8d41-4b7e-9a6c-1e2f3a4b5c6d",
                })
            }
        }

        impl TryFrom<&str> for $name {
            type Error = IdError;

            fn try_from(s: &str) -> Result<Self, IdError> {
                s.parse()
            }
        }

        impl From<uuid::Uuid> for $name {
            fn from(id: uuid::Uuid) -> Self {
                Self(id)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.0, f)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!(stringify!($name), "({})"), self.0)
            }
        }
    };
}

uuid_id!(
    /// Identifier of an organization (a UUID).
    OrganizationId,
    "organization id"
);
uuid_id!(
    /// Identifier of a service (a UUID).
    ServiceId,
    "service id"
);
uuid_id!(
    /// Identifier of a data pipe (a UUID).
    PipeId,
    "pipe id"
);
uuid_id!(
    /// Identifier of a reverse private endpoint (a UUID).
    ReversePrivateEndpointId,
    "reverse private endpoint id"
);

#[cfg(feature = "observability")]
macro_rules! hex24_id {
    ($(#[$meta:meta])* $name:ident, $kind:literal) => {
        $(#[$meta])*
        #[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
        #[serde(try_from = "String", into = "String")]
        pub struct $name(String);

        impl $name {
            /// The identifier as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl FromStr for $name {
            type Err = IdError;

            /// Reads an id as a person may write it (surrounding spaces, upper case) and keeps
            /// it in the spec's form, which the spec's pattern (`api_raw::support::AlertId`, the one
            /// check of the rule) accepts.
            fn from_str(s: &str) -> Result<Self, IdError> {
                let canonical = s.trim().to_ascii_lowercase();
                if api_raw::support::AlertId::matches(&canonical) {
                    Ok(Self(canonical))
                } else {
                    Err(IdError {
                        kind: $kind,
                        input: s.to_string(),
                        expected: "24 hexadecimal digits such as 66a1f0c2d4e5f60718293a4b",
                    })
                }
            }
        }

        impl TryFrom<&str> for $name {
            type Error = IdError;

            fn try_from(s: &str) -> Result<Self, IdError> {
                s.parse()
            }
        }

        impl TryFrom<String> for $name {
            type Error = IdError;

            fn try_from(s: String) -> Result<Self, IdError> {
                s.parse()
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> String {
                id.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!(stringify!($name), "({})"), self.0)
            }
        }
    };
}

#[cfg(feature = "observability")]
hex24_id!(
    /// Identifier of an alert (24 hexadecimal digits).
    AlertId,
    "alert id"
);
#[cfg(feature = "observability")]
hex24_id!(
    /// Identifier of a dashboard (24 hexadecimal digits).
    DashboardId,
    "dashboard id"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_ids_parse_and_name_their_kind_on_error() {
        let id: ServiceId = "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d".parse().unwrap();
        assert_eq!(id.to_string(), "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d");
        assert_eq!(
            format!("{id:?}"),
            "ServiceId(a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d)"
        );
        let err = "not-a-uuid".parse::<PipeId>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid pipe id \"not-a-uuid\": expected a UUID such as 3f0c5e2a-8d41-4b7e-9a6c-1e2f3a4b5c6d"
        );
    }

    #[cfg(feature = "observability")]
    #[test]
    fn hex_ids_are_24_hex_digits() {
        let id: AlertId = "66A1F0C2D4E5F60718293A4B".parse().unwrap();
        assert_eq!(id.as_str(), "66a1f0c2d4e5f60718293a4b");
        assert!("66a1f0c2d4e5f60718293a4".parse::<AlertId>().is_err());
        assert!("zza1f0c2d4e5f60718293a4b".parse::<DashboardId>().is_err());
        let back: AlertId = serde_json::from_str("\"66a1f0c2d4e5f60718293a4b\"").unwrap();
        assert_eq!(back, id);
        assert!(serde_json::from_str::<AlertId>("\"nope\"").is_err());
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

            #[test]
            fn uuid_ids_round_trip(bytes in any::<[u8; 16]>()) {
                let id = PipeId::from_uuid(uuid::Uuid::from_bytes(bytes));
                prop_assert_eq!(id.to_string().parse::<PipeId>().unwrap(), id);
                let json = serde_json::to_string(&id).unwrap();
                prop_assert_eq!(serde_json::from_str::<PipeId>(&json).unwrap(), id);
            }

            #[cfg(feature = "observability")]
            #[test]
            fn hex_ids_round_trip_in_lower_case(hex in "[0-9a-fA-F]{24}") {
                let id: AlertId = hex.parse().unwrap();
                prop_assert_eq!(id.as_str(), hex.to_ascii_lowercase());
                prop_assert_eq!(id.to_string().parse::<AlertId>().unwrap(), id);
            }

            #[test]
            fn any_text_parses_or_names_the_kind(text in ".{0,40}") {
                if let Err(e) = text.parse::<ServiceId>() {
                    prop_assert!(e.to_string().starts_with("invalid service id"));
                }
                #[cfg(feature = "observability")]
                match text.parse::<DashboardId>() {
                    Ok(id) => prop_assert_eq!(id.as_str().len(), 24),
                    Err(e) => prop_assert_eq!(e.kind, "dashboard id"),
                }
            }
        }
    }
}
