//! [`RecordedState`]: what applies have done to one service, as the state file keeps it.

use std::collections::BTreeMap;

use api_core::{OrganizationId, PipeId, ServiceId};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use api_core::management::NewPipe;

use super::store::{StateError, StateLock, StateStore};

use super::Lifecycle;
use super::fingerprint::{Fingerprint, Memory, declared_form, observed_form};

/// The version of the recorded state this SDK writes; a newer one is refused, never rewritten.
///
/// Version 2 adds each pipe's observed form and the replace intent; a state of version 1 (written by
/// v0.1) is read as it is, and each pipe's observed form is filled in from the next plan's read,
/// recorded by the next apply. Version 3 adds the lineage and the serial: a state of an older
/// version is read with no lineage (given one by its next write) and serial 0. An SDK that knows
/// only version 2 refuses a state of version 3, so it cannot write one without counting the write.
/// Version 4 adds each pipe's [`Lifecycle`]: an SDK that knows only version 3 refuses it, so it
/// cannot write a state back without a pipe's protection.
pub const STATE_VERSION: u32 = 4;

/// How long before an intent began a pipe may have been created, by the server's clock, and still be
/// taken as the pipe that intent's create made (the two clocks may differ by this much).
pub const CLOCK_SKEW: chrono::Duration = chrono::Duration::minutes(2);

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

impl StateTarget {
    /// A short digest of the service's API URL, organization and id: the name of its lock file and
    /// of its keys in a shared store.
    pub(crate) fn digest(&self) -> String {
        use blake2::Digest as _;
        let mut hasher = blake2::Blake2b::<blake2::digest::consts::U32>::new();
        for part in [
            self.api_url.as_str(),
            &self.organization_id.to_string(),
            &self.service_id.to_string(),
        ] {
            hasher.update(part.as_bytes());
            hasher.update([0]);
        }
        super::fingerprint::hex(&hasher.finalize()[..12])
    }
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
    /// The state's lineage: a random id made when the service's state was first recorded
    /// ([`RecordedState::new`]) and kept by every later write, so two states of one service that
    /// did not come from one another are never taken for each other. Empty only in a state of an
    /// older version, until its next write.
    #[serde(default)]
    pub lineage: String,
    /// How many times the state was written: every [`save_to`](Self::save_to) adds one. With the
    /// lineage, it names one generation of the state (shown at the end of every apply, so that a
    /// CI job can keep it).
    #[serde(default)]
    pub serial: u64,
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
    /// The members of the create request as the server answered them once the pipe was created,
    /// imported or adopted (its canonical forms: `Decimal(18, 2)` for `Decimal(18,2)`), stored as
    /// the declared form is. A plan compares the server's answer with this, not with the file, so a
    /// server that rewrites a value the same way every time shows no difference. `None` in a state
    /// written before version 2: the next plan's read fills it in, and the next apply records it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed: Option<Value>,
    /// When a replace of this pipe began (its delete may have been sent): the pipe may be down, and
    /// the next apply finishes the replace before any other.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replacing: Option<DateTime<Utc>>,
    /// What plans and applies may do to it, as last declared: a pipe whose declaration is gone
    /// keeps its protection and its retention.
    #[serde(default, skip_serializing_if = "Lifecycle::is_default")]
    pub lifecycle: Lifecycle,
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
    /// The declared lifecycle, given to the pipe once the create is resolved to it.
    #[serde(default, skip_serializing_if = "Lifecycle::is_default")]
    pub lifecycle: Lifecycle,
}

impl RecordedState {
    /// An empty state for `target`, of a new lineage, never written (serial 0).
    pub fn new(target: StateTarget) -> Self {
        Self {
            version: STATE_VERSION,
            target,
            lineage: uuid::Uuid::new_v4().to_string(),
            serial: 0,
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
        let mut state: Self = serde_path_to_error::deserialize(value)
            .map_err(|e| StateError::corrupt(format!("at `{}`: {}", e.path(), e.inner())))?;
        // An older version is read as this one, and written as this one by the next save.
        state.version = STATE_VERSION;
        Ok(state)
    }

    /// Writes the state to `store` under `lock` as its next generation: the serial counts the write
    /// (and a state of an older version gets its lineage). On a failed write the serial is as it
    /// was. The one way the SDK and cloudctl write a state; [`StateStore::save`] writes it as
    /// given.
    pub fn save_to(&mut self, store: &dyn StateStore, lock: &StateLock) -> Result<(), StateError> {
        let (lineage, serial) = (self.lineage.clone(), self.serial);
        if self.lineage.is_empty() {
            self.lineage = uuid::Uuid::new_v4().to_string();
        }
        self.serial += 1;
        let saved = store.save(lock, self);
        if saved.is_err() {
            (self.lineage, self.serial) = (lineage, serial);
        }
        saved
    }

    /// The generation of the state in a few words: `lineage 5c1f…, serial 12`.
    pub fn generation(&self) -> String {
        let lineage = if self.lineage.is_empty() {
            "(none yet)"
        } else {
            &self.lineage
        };
        format!("lineage {lineage}, serial {}", self.serial)
    }

    /// The state as the file holds it (pretty JSON, keys sorted, a newline at the end).
    pub fn to_json(&self) -> Result<String, StateError> {
        let mut text = serde_json::to_string_pretty(self).map_err(|e| {
            StateError::corrupt(format!("the state cannot be written as JSON: {e}"))
        })?;
        text.push('\n');
        Ok(text)
    }

    /// Records the existing pipe `id` as declared by `pipe` (an import: the pipe is adopted), with
    /// `server`, the pipe as the server answers it (its JSON, as
    /// [`PipeHandle::get_wire`](crate::pipes::PipeHandle::get_wire) gives it), as its observed form: the
    /// next plan compares the file with this declaration and the server with this answer.
    ///
    /// Answers where the file says something the answer does not: a value the file wants that the
    /// pipe does not have, or the server's own way of writing the same value (`Decimal(18, 2)` for
    /// `Decimal(18,2)`), which no one can tell apart here. A file written by `pipe export` has none.
    /// Refused when the name is recorded or pending already.
    pub fn import(
        &mut self,
        id: PipeId,
        pipe: &NewPipe,
        server: &Value,
    ) -> Result<Vec<super::Change>, StateError> {
        let name = pipe.as_raw().name.to_string();
        self.check_import(id, &name)?;
        let memory = &mut Memory::default();
        let (declared, fingerprint) = declared_form(pipe, &Fingerprint::fresh(), memory)?;
        let observed = observed_form(server, &fingerprint, memory)?;
        let schemas = api_core::raw::support::schema::SchemaSet::management();
        let sides = super::diff::Sides {
            file: &declared,
            recorded: None,
            observed: None,
            now: &observed,
            // In the stored form too: a string that holds a credential (a signed URL) is its
            // fingerprint on both sides, under the record's salt.
            answer: &observed,
        };
        let differences = super::diff::changes(
            &sides,
            schemas.schema("PipeCreateRequest"),
            schemas.schema("Pipe"),
        );
        self.pipes.insert(
            name,
            RecordedPipe {
                id,
                fingerprint,
                declared,
                observed: Some(observed),
                replacing: None,
                lifecycle: Lifecycle::default(),
                recorded_at: Utc::now(),
            },
        );
        Ok(differences)
    }

    /// Whether the pipe `id` can be imported under `name` (what [`import`](Self::import) refuses,
    /// checked before anything is read or fingerprinted): refused when the name is recorded or
    /// pending already, or the pipe is recorded under another name.
    pub fn check_import(&self, id: PipeId, name: &str) -> Result<(), StateError> {
        self.refuse_recorded_id(id)?;
        if let Some(recorded) = self.pipes.get(name) {
            return Err(StateError::Refused(format!(
                "{name:?} is recorded already, as pipe {}; forget it first to import another",
                recorded.id
            )));
        }
        if self.pending.contains_key(name) {
            return Err(StateError::Refused(format!(
                "{name:?} has a pending create; resolve it instead (adopt the pipe by its id)"
            )));
        }
        Ok(())
    }

    /// Resolves the pending create of `name` with the pipe `id` it made, `server` being that pipe as
    /// the server answers it (its JSON): recorded as the declaration the create sent, with the answer
    /// as its observed form. Refused when `name` has no pending create, when the pipe has another
    /// name, or when the server says it was created before the intent began (more than
    /// [`CLOCK_SKEW`] before: it cannot be the pipe this create made).
    pub fn adopt(&mut self, name: &str, id: PipeId, server: &Value) -> Result<(), StateError> {
        self.refuse_recorded_id(id)?;
        let Some(pending) = self.pending.get(name) else {
            return Err(StateError::Refused(format!(
                "{name:?} has no pending create to resolve"
            )));
        };
        let answered = server
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if answered != name {
            return Err(StateError::Refused(format!(
                "pipe {id} is named {answered:?}, not {name:?}; nothing was recorded"
            )));
        }
        let created = server
            .get("createdAt")
            .and_then(Value::as_str)
            .and_then(|at| DateTime::parse_from_rfc3339(at).ok())
            .map(|at| at.with_timezone(&Utc));
        if let Some(created) = created
            && created < pending.started_at - CLOCK_SKEW
        {
            return Err(StateError::Refused(format!(
                "pipe {id} was created at {}, before the create of {name:?} was sent ({}): it is \
                 not the pipe that create made; nothing was recorded",
                created.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                pending
                    .started_at
                    .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
            )));
        }
        let observed = observed_form(server, &pending.fingerprint, &mut Memory::default())?;
        if let Some(pending) = self.pending.remove(name) {
            self.pipes.insert(
                name.to_string(),
                RecordedPipe {
                    id,
                    fingerprint: pending.fingerprint,
                    declared: pending.declared,
                    observed: Some(observed),
                    replacing: None,
                    lifecycle: pending.lifecycle,
                    recorded_at: Utc::now(),
                },
            );
        }
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
