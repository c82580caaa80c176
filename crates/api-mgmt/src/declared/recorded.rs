//! [`RecordedState`]: what applies have done to one service, as the state file keeps it.

use std::collections::BTreeMap;

use api_core::{OrganizationId, PipeId, ServiceId};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use api_core::management::NewPipe;

use super::StateError;
use super::fingerprint::{Fingerprint, declared_form};

/// The version of the recorded state this SDK writes; a newer one is refused, never rewritten.
pub const STATE_VERSION: u32 = 1;

/// Which service of which deployment a recorded state belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StateTarget {
    /// The management API's base URL.
    pub api_url: String,
    /// The organization.
    pub organization_id: OrganizationId,
    /// The service.
    pub service_id: ServiceId,
}

/// What applies have done to one service: each pipe they created, by name, and each create whose
/// outcome is not known yet. It never holds a secret: see [`Fingerprint`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordedState {
    /// The version of this format ([`STATE_VERSION`]).
    pub version: u32,
    /// The service it belongs to.
    pub target: StateTarget,
    /// The pipes, by name.
    #[serde(default)]
    pub pipes: BTreeMap<String, RecordedPipe>,
    /// The creates that were sent and whose outcome is not known (an intent left open by an unknown
    /// outcome or a process that died mid-call), by name.
    #[serde(default)]
    pub pending: BTreeMap<String, PendingCreate>,
}

/// A pipe the state knows: its id, and the declaration it was created from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordedPipe {
    /// The pipe's id.
    pub id: PipeId,
    /// How the declaration was fingerprinted, with its digest.
    pub fingerprint: Fingerprint,
    /// The declared create request, each secret as its fingerprint.
    pub declared: Value,
    /// When it was recorded (created, adopted or imported).
    pub recorded_at: DateTime<Utc>,
}

/// A create that was about to be sent, or was sent without a known outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingCreate {
    /// How the declaration was fingerprinted, with its digest.
    pub fingerprint: Fingerprint,
    /// The declared create request, each secret as its fingerprint.
    pub declared: Value,
    /// When the intent was recorded, just before the create was sent.
    pub started_at: DateTime<Utc>,
    /// The id of this intent (also in the SDK's logs of the apply).
    pub intent_id: String,
    /// The server's request id of the create, when an answer named one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// Why the outcome is not known (the error's text, redacted), once the create has ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl RecordedState {
    /// An empty state for `target`.
    pub fn new(target: StateTarget) -> Self {
        Self {
            version: STATE_VERSION,
            target,
            pipes: BTreeMap::new(),
            pending: BTreeMap::new(),
        }
    }

    /// Reads a state from its JSON, refusing one of a newer version or another shape.
    pub fn from_json(text: &str) -> Result<Self, StateError> {
        let value: Value = serde_json::from_str(text)
            .map_err(|e| StateError::corrupt(format!("not JSON: {e}")))?;
        match value.get("version").and_then(Value::as_u64) {
            Some(version) if version > u64::from(STATE_VERSION) => {
                return Err(StateError::Newer { version });
            }
            Some(_) => {}
            None => {
                return Err(StateError::corrupt(
                    "no `version`: not a state file of cloudctl or the SDK",
                ));
            }
        }
        serde_path_to_error::deserialize(value)
            .map_err(|e| StateError::corrupt(format!("at `{}`: {}", e.path(), e.inner())))
    }

    /// The state as the file holds it (pretty JSON, keys sorted, a newline at the end).
    pub fn to_json(&self) -> Result<String, StateError> {
        let mut text = serde_json::to_string_pretty(self).map_err(|e| {
            StateError::corrupt(format!("the state cannot be written as JSON: {e}"))
        })?;
        text.push('\n');
        Ok(text)
    }

    /// Records the existing pipe `id` as declared by `pipe` (an import: the pipe is adopted, and the
    /// next plan compares it with `pipe`). Refused when the name is recorded or pending already.
    pub fn import(&mut self, id: PipeId, pipe: &NewPipe) -> Result<(), StateError> {
        let name = pipe.as_raw().name.to_string();
        self.refuse_recorded_id(id)?;
        if let Some(recorded) = self.pipes.get(&name) {
            return Err(StateError::Refused(format!(
                "{name:?} is recorded already, as pipe {}; forget it first to import another",
                recorded.id
            )));
        }
        if self.pending.contains_key(&name) {
            return Err(StateError::Refused(format!(
                "{name:?} has a pending create; resolve it instead (adopt the pipe by its id)"
            )));
        }
        let (declared, fingerprint) = declared_form(pipe, &Fingerprint::fresh())?;
        self.pipes.insert(
            name,
            RecordedPipe {
                id,
                fingerprint,
                declared,
                recorded_at: Utc::now(),
            },
        );
        Ok(())
    }

    /// Resolves the pending create of `name` with the pipe `id` it made: recorded as the
    /// declaration the create sent. Refused when `name` has no pending create.
    pub fn adopt(&mut self, name: &str, id: PipeId) -> Result<(), StateError> {
        self.refuse_recorded_id(id)?;
        let pending = self.pending.remove(name).ok_or_else(|| {
            StateError::Refused(format!("{name:?} has no pending create to resolve"))
        })?;
        self.pipes.insert(
            name.to_string(),
            RecordedPipe {
                id,
                fingerprint: pending.fingerprint,
                declared: pending.declared,
                recorded_at: Utc::now(),
            },
        );
        Ok(())
    }

    /// Resolves the pending create of `name` as having made nothing: the name may be created again.
    /// Refused when `name` has no pending create.
    pub fn clear_pending(&mut self, name: &str) -> Result<PendingCreate, StateError> {
        self.pending.remove(name).ok_or_else(|| {
            StateError::Refused(format!("{name:?} has no pending create to resolve"))
        })
    }

    /// Forgets `name` (a recorded pipe or a pending create), without touching the server: the pipe
    /// is no longer managed. `false` when the state has no such name.
    pub fn forget(&mut self, name: &str) -> bool {
        let recorded = self.pipes.remove(name).is_some();
        let pending = self.pending.remove(name).is_some();
        recorded || pending
    }

    /// Refuses a pipe the state records already, under any name: two names for one pipe would let
    /// the removal of one file delete the other's pipe.
    fn refuse_recorded_id(&self, id: PipeId) -> Result<(), StateError> {
        match self.pipes.iter().find(|(_, recorded)| recorded.id == id) {
            Some((name, _)) => Err(StateError::Refused(format!(
                "pipe {id} is recorded already, as {name:?}"
            ))),
            None => Ok(()),
        }
    }

    /// Refuses a state that belongs to another service or deployment.
    pub fn check_target(&self, target: &StateTarget) -> Result<(), StateError> {
        if &self.target == target {
            Ok(())
        } else {
            Err(StateError::OtherTarget {
                recorded: Box::new(self.target.clone()),
                asked: Box::new(target.clone()),
            })
        }
    }
}
