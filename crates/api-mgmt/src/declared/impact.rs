//! [`Impact`]: what an action does to the data, as the spec's `x-data-impact` says per source kind
//! and member (rows read again from the declared offset, files read again, a new snapshot of every
//! table, the destination table kept or not known to be).

use api_core::raw::support::schema::{Condition, SchemaSet};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ActionKind;

/// What one action does to the data, as the spec says it (`x-data-impact`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Impact {
    /// A short name of the effect: `rows-read-again`, `files-read-again`, `snapshot-again`,
    /// `ingestion-stops`, `table-kept`; one ending in `-unknown` says the effect is not
    /// documented (`start-unknown`, `managed-table-unknown`, `tables-unknown`).
    pub class: String,
    /// The member it comes from: `source.kafka`, `destination.managedTable`.
    pub member: String,
    /// The effect, in words.
    pub says: String,
    /// The value of the member the effect depends on, when it is set (a Kafka pipe's
    /// `offset.timestamp`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
}

impl Impact {
    /// Whether the effect is not documented (its class ends in `-unknown`).
    pub fn is_unknown(&self) -> bool {
        self.class.ends_with("-unknown")
    }
}

/// The impacts of `kind` on a pipe whose old form is `before` (what is deleted) and new form is
/// `after` (what is created): the source's from the new form (where a new pipe starts reading),
/// the destination's from the old one (what its delete does). `gone`: nothing is deleted (a pipe
/// gone already), so only the new pipe's reading counts.
pub(crate) fn impacts(
    kind: ActionKind,
    before: Option<&Value>,
    after: Option<&Value>,
    gone: bool,
) -> Vec<Impact> {
    let on = match kind {
        ActionKind::Delete => "delete",
        ActionKind::Replace => "replace",
        ActionKind::Recreate => "recreate",
        _ => return Vec::new(),
    };
    let Some(request) = SchemaSet::management().schema("PipeCreateRequest") else {
        return Vec::new();
    };
    let mut found = Vec::new();
    // The source: a delete's from the old form, a new pipe's from the new one.
    let source_form = if kind == ActionKind::Delete {
        before
    } else {
        after
    };
    if let (Some(source), Some(shape)) = (
        source_form
            .and_then(|f| f.get("source"))
            .and_then(Value::as_object),
        request.member("source"),
    ) {
        for (name, value) in source {
            let Some(kind_shape) = shape.member(name).filter(|_| value.is_object()) else {
                continue;
            };
            for entry in kind_shape.data_impacts() {
                // An entry that is also about a delete is about the old pipe: not when it is gone.
                if !entry.is_on(on)
                    || (gone && entry.is_on("delete"))
                    || !entry.holds_for(Some(value))
                {
                    continue;
                }
                let value = match entry.condition {
                    Some(Condition::Set { member, .. }) => member
                        .split('.')
                        .try_fold(value, |at, key| at.get(key))
                        .filter(|v| !v.is_null())
                        .cloned(),
                    _ => None,
                };
                found.push(Impact {
                    class: entry.class.to_string(),
                    member: format!("source.{name}"),
                    says: entry.says.to_string(),
                    value,
                });
            }
        }
    }
    // The destination: what deleting the old pipe does to its table.
    if !gone
        && let Some(managed) = request
            .member("destination")
            .and_then(|d| d.member("managedTable"))
    {
        let value = before.and_then(|f| f.pointer("/destination/managedTable"));
        for entry in managed.data_impacts() {
            if entry.is_on(on) && value.is_some() && entry.holds_for(value) {
                found.push(Impact {
                    class: entry.class.to_string(),
                    member: "destination.managedTable".into(),
                    says: entry.says.to_string(),
                    value: value.cloned(),
                });
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{ActionKind, impacts};

    fn classes(found: &[super::Impact]) -> Vec<&str> {
        found.iter().map(|i| i.class.as_str()).collect()
    }

    #[test]
    fn a_kafka_replace_reads_again_from_the_new_offset_and_says_what_the_old_table_does() {
        let old =
            json!({"source": {"kafka": {"topics": "t"}}, "destination": {"managedTable": true}});
        let new = json!({"source": {"kafka": {"topics": "t", "offset": {"timestamp": "2026-01-01T00:00"}}},
                         "destination": {"managedTable": true}});
        let found = impacts(ActionKind::Replace, Some(&old), Some(&new), false);
        assert_eq!(
            classes(&found),
            ["rows-read-again", "managed-table-unknown"]
        );
        assert_eq!(found[0].value, Some(json!("2026-01-01T00:00")));
        assert_eq!(found[0].member, "source.kafka");
        assert!(found[1].is_unknown());
        // Without an offset, where it starts is not known.
        let found = impacts(ActionKind::Replace, Some(&old), Some(&old), false);
        assert_eq!(classes(&found), ["start-unknown", "managed-table-unknown"]);
    }

    #[test]
    fn a_delete_stops_ingestion_and_a_gone_pipe_recreated_only_reads_again() {
        let cdc = json!({"source": {"postgres": {"host": "db"}}, "destination": {"database": "d"}});
        let found = impacts(ActionKind::Delete, Some(&cdc), None, false);
        assert_eq!(classes(&found), ["tables-unknown", "ingestion-stops"]);
        let found = impacts(ActionKind::Recreate, Some(&cdc), Some(&cdc), true);
        assert_eq!(classes(&found), ["snapshot-again"]);
        let files = json!({"source": {"objectStorage": {"url": "s3://b/*"}}, "destination": {"managedTable": false}});
        let found = impacts(ActionKind::Recreate, Some(&files), Some(&files), false);
        assert_eq!(classes(&found), ["files-read-again", "table-kept"]);
        assert!(impacts(ActionKind::Create, None, Some(&files), false).is_empty());
    }
}
