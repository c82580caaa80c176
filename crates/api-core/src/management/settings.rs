//! [`PipeSettings`]: the settings of a pipe, read back (with every setting the server sends, known or
//! not) or declared for a new pipe (each checked against its bounds).

use std::collections::BTreeMap;

use api_raw::management::types as raw;
use api_raw::support::redact::Redactor;
use serde::Serialize;

use crate::decode::{Invalid, Path, fit};
use crate::error::Problems;

/// Declares the pipe settings: integer settings with their bounds, and boolean settings.
macro_rules! pipe_settings {
    (
        integers { $($int:ident: $min:literal ..= $max:literal,)+ }
        booleans { $($flag:ident,)+ }
    ) => {
        /// Settings of a pipe. Units are in the names (`_ms` milliseconds, `_bytes` bytes); each setting
        /// is absent where the server's default applies. Settings this version of the SDK does not know
        /// are kept in [`extra`](Self::extra) and serialised back beside the others.
        ///
        /// For a new pipe, each integer setting is checked against its bounds ([`PipeSettings::BOUNDS`]).
        ///
        /// ```
        /// use api_core::management::PipeSettings;
        ///
        /// let settings = PipeSettings::new().streaming_max_insert_wait_ms(5_000).db_max_threads(8);
        /// assert_eq!(settings.db_max_threads, Some(8));
        /// ```
        #[derive(Clone, Default, PartialEq, Eq, Serialize)]
        #[non_exhaustive]
        pub struct PipeSettings {
            $(
                #[doc = concat!("`", stringify!($int), "`.")]
                #[serde(skip_serializing_if = "Option::is_none")]
                pub $int: Option<u64>,
            )+
            $(
                #[doc = concat!("`", stringify!($flag), "`.")]
                #[serde(skip_serializing_if = "Option::is_none")]
                pub $flag: Option<bool>,
            )+
            /// Every other setting the server sent, by name, exactly as it came. Sent back unchanged
            /// when these settings are given to a new pipe (the server decides what they mean). A
            /// setting named here that has a field above is refused when the request is built: set
            /// it with its setter. Nobody has vetted these settings, so `Debug` and serde output
            /// show them through the one redaction rule (a `*_password` setting as `[REDACTED]`).
            #[serde(flatten, serialize_with = "redacted_extra")]
            pub extra: BTreeMap<String, serde_json::Value>,
        }

        impl std::fmt::Debug for PipeSettings {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct("PipeSettings")
                    $(.field(stringify!($int), &self.$int))+
                    $(.field(stringify!($flag), &self.$flag))+
                    .field("extra", &Redacted(&self.extra))
                    .finish()
            }
        }

        impl PipeSettings {
            /// The server's defaults.
            pub fn new() -> Self {
                Self::default()
            }

            $(
                #[doc = concat!("`", stringify!($int), "`, ", stringify!($min), " to ", stringify!($max), ".")]
                pub fn $int(mut self, value: u64) -> Self {
                    self.$int = Some(value);
                    self
                }
            )+

            $(
                #[doc = concat!("`", stringify!($flag), "`.")]
                pub fn $flag(mut self, value: bool) -> Self {
                    self.$flag = Some(value);
                    self
                }
            )+

            /// Every integer setting with its bounds, as `(name, min, max)`.
            pub const BOUNDS: &'static [(&'static str, u64, u64)] = &[$((stringify!($int), $min, $max),)+];

            /// The name of every setting that has a field.
            pub(crate) const KNOWN: &'static [&'static str] =
                &[$(stringify!($int),)+ $(stringify!($flag),)+];

            pub(crate) fn decode(raw: raw::PipeSettings, at: Path<'_>) -> Result<Self, Invalid> {
                Ok(Self {
                    $($int: fit(raw.$int, at.field(stringify!($int)))?,)+
                    $($flag: raw.$flag,)+
                    extra: raw.extra.into_iter().collect(),
                })
            }

            /// The request form (the spec's bounds are checked on the whole request); a known setting
            /// given through `extra` is a problem at its path.
            pub(crate) fn to_json(&self, p: &mut Problems) -> serde_json::Value {
                for name in self.extra.keys().filter(|name| Self::KNOWN.contains(&name.as_str())) {
                    p.add(
                        format!("settings.{name}"),
                        format!("a known setting: set it with PipeSettings::{name}(), not through extra"),
                    );
                }
                let mut settings: serde_json::Map<String, serde_json::Value> = self
                    .extra
                    .iter()
                    .filter(|(name, _)| !Self::KNOWN.contains(&name.as_str()))
                    .map(|(name, value)| (name.clone(), value.clone()))
                    .collect();
                $(if let Some(value) = self.$int {
                    settings.insert(stringify!($int).into(), value.into());
                })+
                $(if let Some(value) = self.$flag {
                    settings.insert(stringify!($flag).into(), value.into());
                })+
                serde_json::Value::Object(settings)
            }
        }
    };
}

/// The unknown settings as they may be shown: through the one redaction rule.
fn redacted(extra: &BTreeMap<String, serde_json::Value>) -> serde_json::Value {
    let mut shown = serde_json::Value::Object(extra.clone().into_iter().collect());
    Redactor::new().json(&mut shown);
    shown
}

fn redacted_extra<S: serde::Serializer>(
    extra: &BTreeMap<String, serde_json::Value>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    redacted(extra).serialize(serializer)
}

/// `Debug` of the unknown settings, redacted.
struct Redacted<'a>(&'a BTreeMap<String, serde_json::Value>);

impl std::fmt::Debug for Redacted<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match redacted(self.0) {
            serde_json::Value::Object(shown) => f.debug_map().entries(shown.iter()).finish(),
            other => std::fmt::Debug::fmt(&other, f),
        }
    }
}

pipe_settings! {
    integers {
        streaming_max_insert_wait_ms: 500 ..= 60_000,
        object_storage_concurrency: 1 ..= 35,
        object_storage_polling_interval_ms: 100 ..= 3_600_000,
        object_storage_max_insert_bytes: 10_485_760 ..= 53_687_091_200,
        object_storage_max_file_count: 1 ..= 10_000,
        db_max_threads: 0 ..= 64,
        db_max_insert_threads: 0 ..= 16,
        db_min_insert_block_size_bytes: 0 ..= 10_737_418_240,
        db_max_download_threads: 0 ..= 32,
        db_parallel_distributed_insert_select: 0 ..= 2,
    }
    booleans {
        object_storage_use_cluster_function,
        db_parallel_view_processing,
    }
}

crate::decode::deserialize_from_wire!(PipeSettings, raw::PipeSettings, |value, at| {
    PipeSettings::decode(value, at)
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_settings_are_kept_and_written_back() {
        let raw: raw::PipeSettings = serde_json::from_str(
            r#"{"db_max_threads": 8, "streaming_max_insert_wait_ms": null, "kafka_max_poll_records": 500, "experimental": {"on": true}}"#,
        )
        .unwrap();
        let settings = PipeSettings::decode(raw, Path::Root("result")).unwrap();
        assert_eq!(settings.db_max_threads, Some(8));
        assert_eq!(settings.streaming_max_insert_wait_ms, None);
        assert_eq!(settings.extra["kafka_max_poll_records"], 500);
        let json = serde_json::to_value(&settings).unwrap();
        assert_eq!(json["kafka_max_poll_records"], 500);
        assert_eq!(json["experimental"]["on"], true);
        assert_eq!(json["db_max_threads"], 8);
        assert!(
            json.get("streaming_max_insert_wait_ms").is_none(),
            "absent stays absent"
        );
    }

    #[test]
    fn unknown_secret_settings_are_shown_redacted_and_sent_as_they_are() {
        let mut settings = PipeSettings::new().db_max_threads(4);
        settings
            .extra
            .insert("kafka_sasl_password".into(), "hunter22".into());
        settings
            .extra
            .insert("schema_registry_url".into(), "https://u:pw-1@reg".into());
        settings
            .extra
            .insert("kafka_max_poll_records".into(), 500.into());
        let json = serde_json::to_value(&settings).unwrap();
        assert_eq!(json["kafka_sasl_password"], "[REDACTED]");
        assert_eq!(json["schema_registry_url"], "https://u:[REDACTED]@reg");
        assert_eq!(json["kafka_max_poll_records"], 500);
        assert_eq!(json["db_max_threads"], 4);
        let shown = format!("{settings:?}");
        assert!(
            !shown.contains("hunter22") && !shown.contains("pw-1"),
            "{shown}"
        );
        assert!(shown.contains("db_max_threads: Some(4)"), "{shown}");
        let sent = settings.to_json(&mut Problems::new());
        assert_eq!(sent["kafka_sasl_password"], "hunter22");
    }

    #[test]
    fn a_negative_setting_is_a_decode_error_at_its_path() {
        let raw: raw::PipeSettings = serde_json::from_str(r#"{"db_max_threads": -1}"#).unwrap();
        let err = PipeSettings::decode(raw, Path::Root("result"))
            .unwrap_err()
            .at("getPipeSettings");
        assert_eq!(err.path, "result.db_max_threads");
    }

    #[test]
    fn a_known_setting_cannot_hide_in_extra() {
        for name in PipeSettings::KNOWN {
            let mut settings = PipeSettings::new().db_max_threads(8);
            settings.extra.insert((*name).to_string(), 1.into());
            settings
                .extra
                .insert("kafka_max_poll_records".into(), 500.into());
            let mut p = Problems::new();
            settings.to_json(&mut p);
            let err = p.finish("pipe create request").unwrap_err();
            assert_eq!(err.problems.len(), 1, "{err}");
            assert_eq!(err.problems[0].path, format!("settings.{name}"));
            assert!(
                err.problems[0]
                    .message
                    .contains(&format!("PipeSettings::{name}()")),
                "{err}"
            );
        }
        assert_eq!(PipeSettings::KNOWN.len(), PipeSettings::BOUNDS.len() + 2);
    }

    #[test]
    fn unknown_settings_read_back_are_sent_back() {
        let mut settings = PipeSettings::new().db_max_threads(8);
        settings
            .extra
            .insert("kafka_max_poll_records".into(), 500.into());
        let mut p = Problems::new();
        let json = settings.to_json(&mut p);
        assert!(p.finish("pipe create request").is_ok());
        assert_eq!(json["kafka_max_poll_records"], 500);
        assert_eq!(json["db_max_threads"], 8);
    }
}
