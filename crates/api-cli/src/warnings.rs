//! The SDK's warnings about declared pipes' state, said on stderr while the command runs: a shared
//! store's lease that could not be renewed (and is tried again), a lease taken by another holder,
//! a state write tried again. A person sees the trouble while it happens, not only in the final
//! report; in JSON output each is a line `{"warning": {"message": ..., ...}}`.
//!
//! The SDK reports them as `tracing` events at `WARN` (and `ERROR`) under `api_mgmt::declared`;
//! this layer is the only subscriber of those on stderr. What it writes goes through the output's
//! redaction, and the SDK's own messages name stores without their passwords.

use std::fmt::Write as _;
use std::sync::Mutex;

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::Context;

/// Writes the declared state's warnings on stderr, in human or JSON form; a warning the same as
/// the one just written (a renewal failing again the same way) is not written twice in a row.
pub(crate) struct StderrWarnings {
    json: bool,
    last: Mutex<String>,
    sink: Box<dyn Fn(&str) + Send + Sync>,
}

impl StderrWarnings {
    /// Says them on stderr (past a progress drawing, as every other line).
    pub(crate) fn new(json: bool) -> Self {
        Self::with_sink(json, crate::progress::say)
    }

    fn with_sink(json: bool, sink: impl Fn(&str) + Send + Sync + 'static) -> Self {
        Self {
            json,
            last: Mutex::new(String::new()),
            sink: Box::new(sink),
        }
    }

    /// The events this layer says: the declared state's warnings and errors.
    pub(crate) fn targets() -> Targets {
        Targets::new().with_target("api_mgmt::declared", LevelFilter::WARN)
    }

    /// The line written for an event at `level` with these fields.
    fn line(&self, level: Level, fields: &Fields) -> String {
        let kind = if level == Level::ERROR {
            "error"
        } else {
            "warning"
        };
        if self.json {
            let mut object = serde_json::Map::new();
            object.insert("message".into(), fields.message.clone().into());
            for (name, value) in &fields.others {
                object.insert(name.clone(), value.clone().into());
            }
            serde_json::json!({ kind: object }).to_string()
        } else {
            let mut line = format!("{kind}: {}", fields.message);
            for (i, (name, value)) in fields.others.iter().enumerate() {
                let _ = write!(line, "{}{name}: {value}", if i == 0 { " (" } else { ", " });
            }
            if !fields.others.is_empty() {
                line.push(')');
            }
            line
        }
    }
}

impl<S: Subscriber> Layer<S> for StderrWarnings {
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        let line = self.line(*event.metadata().level(), &fields);
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        if *last != line {
            (self.sink)(&line);
            *last = line;
        }
    }
}

/// An event's message and its other fields, in their order.
#[derive(Default)]
struct Fields {
    message: String,
    others: Vec<(String, String)>,
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.record(field, value.to_string());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.record(field, format!("{value:?}"));
    }
}

impl Fields {
    fn record(&mut self, field: &Field, value: String) {
        if field.name() == "message" {
            self.message = value;
        } else {
            self.others.push((field.name().to_string(), value));
        }
    }
}

#[cfg(test)]
mod tests {
    use tracing_subscriber::layer::SubscriberExt as _;

    use super::*;

    /// The lines `emit`'s events give.
    fn lines_of(json: bool, emit: impl Fn()) -> Vec<String> {
        let lines = std::sync::Arc::new(Mutex::new(Vec::new()));
        let kept = lines.clone();
        let layer = StderrWarnings::with_sink(json, move |line| {
            kept.lock().unwrap().push(line.to_string());
        });
        let subscriber =
            tracing_subscriber::registry().with(layer.with_filter(StderrWarnings::targets()));
        tracing::subscriber::with_default(subscriber, emit);
        lines.lock().unwrap().clone()
    }

    #[test]
    fn a_declared_warning_is_one_line_with_its_fields_and_others_are_not_said() {
        let emit = || {
            tracing::warn!(
                target: "api_mgmt::declared::shared",
                store = "redis://127.0.0.1:6379",
                error = %"timed out",
                "the state's lease could not be renewed; trying again"
            );
            tracing::info!(target: "api_mgmt::declared::shared", "not a warning");
            tracing::warn!(target: "api_core::client", "not the declared state's");
        };
        let twice = || {
            emit();
            emit();
        };
        assert_eq!(
            lines_of(false, twice),
            [
                "warning: the state's lease could not be renewed; trying again \
              (store: redis://127.0.0.1:6379, error: timed out)"
            ]
        );
        let json: serde_json::Value = serde_json::from_str(&lines_of(true, emit)[0]).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"warning": {
                "message": "the state's lease could not be renewed; trying again",
                "store": "redis://127.0.0.1:6379",
                "error": "timed out",
            }})
        );
        let error = lines_of(false, || {
            tracing::error!(target: "api_mgmt::declared::apply", pipe = "orders", "not recorded");
        });
        assert_eq!(error, ["error: not recorded (pipe: orders)"]);
    }
}
