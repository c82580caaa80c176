//! `open_enum!`: a string value set that keeps values it does not know, and [`UnknownValue`], the sealed
//! text of such a value.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;

/// The text of a value that this version of the SDK does not know, kept exactly as it came. `E` is
/// the value set it belongs to, so the text cannot move from one set into another.
///
/// It can only come from decoding or parsing: no public constructor exists, so an open enum's `Other`
/// variant never holds a value that has a named variant (`PipeState::from("Running")` is always
/// `PipeState::Running`).
pub struct UnknownValue<E>(String, PhantomData<fn() -> E>);

impl<E> UnknownValue<E> {
    /// The value as it came.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Only `open_enum!` builds one, and only for text that matches no known value of `E`.
    pub(crate) fn new(value: String) -> Self {
        Self(value, PhantomData)
    }
}

impl<E> Clone for UnknownValue<E> {
    fn clone(&self) -> Self {
        Self::new(self.0.clone())
    }
}

impl<E> PartialEq for UnknownValue<E> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl<E> Eq for UnknownValue<E> {}

impl<E> Hash for UnknownValue<E> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

impl<E> fmt::Display for UnknownValue<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<E> fmt::Debug for UnknownValue<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

/// Declares an open enum: one variant per known wire value plus `Other(UnknownValue)`, which keeps any
/// other value exactly as it came so that it survives decoding and re-serialisation.
///
/// The enum serialises as its wire string, implements `Display` (the wire string), `FromStr`
/// (infallible) and `From<&str>`/`From<String>`, and lists its known values in `KNOWN`. A known value
/// always maps to its variant, whatever way it arrives. Declared `any_case;` (the states a waiter
/// reads), a known value also maps to its variant in any ASCII letter case (a server upgraded to
/// write `RUNNING` or `failed` still means `Running` and `Failed`): the exact spelling first, then
/// the letter case ignored. Elsewhere a value in another case is kept as it came, so that the
/// emulator answers it exactly as its server writes it.
macro_rules! open_enum {
    (any_case; $($body:tt)*) => {
        open_enum!(@with true; $($body)*);
    };
    (@with $any_case:literal;
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $value:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )+
            /// A value this version of the SDK does not know, kept exactly as it came. It cannot be built
            /// from a known value: parse or decode the text instead.
            Other($crate::support::UnknownValue<$name>),
        }

        impl $name {
            /// Every value this version of the SDK knows, as sent on the wire.
            pub const KNOWN: &'static [&'static str] = &[$($value),+];

            /// The value as sent on the wire.
            pub fn as_str(&self) -> &str {
                match self {
                    $( Self::$variant => $value, )+
                    Self::Other(value) => value.as_str(),
                }
            }

            /// Whether this is a value this version of the SDK does not know.
            pub fn is_other(&self) -> bool {
                matches!(self, Self::Other(_))
            }

            fn known(value: &str) -> Option<Self> {
                match value {
                    $( $value => Some(Self::$variant), )+
                    _ if $any_case => {
                        $( if value.eq_ignore_ascii_case($value) {
                            return Some(Self::$variant);
                        } )+
                        None
                    }
                    _ => None,
                }
            }
        }

        impl From<&str> for $name {
            fn from(value: &str) -> Self {
                Self::known(value)
                    .unwrap_or_else(|| Self::Other($crate::support::UnknownValue::new(value.to_string())))
            }
        }

        impl From<String> for $name {
            fn from(value: String) -> Self {
                Self::known(&value).unwrap_or_else(|| Self::Other($crate::support::UnknownValue::new(value)))
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = ::std::convert::Infallible;

            fn from_str(value: &str) -> Result<Self, Self::Err> {
                Ok(Self::from(value))
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                String::deserialize(deserializer).map(Self::from)
            }
        }
    };
    ($($body:tt)*) => {
        open_enum!(@with false; $($body)*);
    };
}

#[cfg(all(test, feature = "management"))]
mod tests {
    use std::collections::HashSet;

    use crate::support::{PipeState, ServiceState};

    #[test]
    fn unknown_values_compare_hash_and_print_by_their_text() {
        let (a, b) = (PipeState::from("Hibernating"), PipeState::from("Thawing"));
        let (PipeState::Other(text_a), PipeState::Other(text_b)) = (&a, &b) else {
            panic!("both are unknown")
        };
        assert_ne!(text_a, text_b);
        assert_eq!(text_a, &text_a.clone());
        let set: HashSet<PipeState> = [a.clone(), b.clone(), a.clone()].into_iter().collect();
        assert_eq!(set.len(), 2);
        let hash = |value: &PipeState| {
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            std::hash::Hash::hash(value, &mut hasher);
            std::hash::Hasher::finish(&hasher)
        };
        assert_ne!(hash(&a), hash(&b), "the text takes part in the hash");
        assert_eq!(hash(&a), hash(&a.clone()));
        assert_eq!(text_a.to_string(), "Hibernating");
        assert_eq!(format!("{text_a:?}"), "\"Hibernating\"");
        assert_eq!(format!("{a:?}"), "Other(\"Hibernating\")");
        assert_eq!(ServiceState::from("sleeping").to_string(), "sleeping");
    }

    #[test]
    fn a_known_value_in_another_letter_case_is_that_value() {
        for (text, state) in [
            ("RUNNING", PipeState::Running),
            ("failed", PipeState::Failed),
            ("internalerror", PipeState::InternalError),
            ("Running", PipeState::Running),
        ] {
            assert_eq!(PipeState::from(text), state, "{text}");
            let decoded: PipeState = serde_json::from_str(&format!("\"{text}\"")).unwrap();
            assert_eq!(decoded, state, "{text}");
        }
        assert!(PipeState::from("FAILED").is_failed());
        assert!(PipeState::from("RUNNING").is_running());
        assert_eq!(ServiceState::from("Stopped"), ServiceState::Stopped);
        // Not a value of another letter case: kept as it came.
        assert!(PipeState::from("Runnin").is_other());
        // A set not declared `any_case` keeps another spelling as it came.
        let compression = crate::support::Compression::from("GZIP");
        assert!(compression.is_other() && compression.as_str() == "GZIP");
    }
}
