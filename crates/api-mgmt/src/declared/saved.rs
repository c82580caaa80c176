//! [`SavedPlan`]: a plan as a document to review, keep and apply later: every action with the full
//! declared values (secrets as markers), what it does to the data, the calls it makes, and what
//! it was planned against (the service, the state's generation, each declared pipe's digest and
//! each recorded pipe as the server answered), sealed by a digest of the whole.

use std::collections::{BTreeMap, BTreeSet};

use api_core::PipeId;
use api_core::raw::support::redact::{REDACTED, Redactor};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::diff::Change;
use super::fingerprint::{SECRET_PREFIX, digest};
use super::plan::{ActionCause, ActionKind, Plan, PlanAction};
use super::{
    Declaration, DeclaredError, Drift, Impact, Lifecycle, PlanOptions, RecordedState,
    ServiceTarget, StateTarget, plan_with, target_of,
};
use crate::ServiceHandle;

/// The version of the plan document this SDK writes: a minor version only adds members; a reader
/// refuses a major version it does not know.
pub const PLAN_FORMAT_VERSION: &str = "1.0";

/// The JSON Schema (draft 2020-12) of the plan document, format version 1.x: what a policy engine
/// or an editor checks a document with.
pub const PLAN_DOCUMENT_SCHEMA: &str = include_str!("../../schema/plan-document.schema.json");

/// The major version this SDK reads.
const MAJOR: u64 = 1;

/// The prefix of the document's digest.
const DIGEST_PREFIX: &str = "blake2b-256:";

/// What made a plan document: the tool and its version (`cloudctl 0.3.0`). A document is applied
/// only by the same tool and version: another version may plan differently.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Producer {
    /// The tool's name.
    pub name: String,
    /// Its version.
    pub version: String,
}

impl Producer {
    /// The producer `name` at `version`.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            version: version.into(),
        }
    }

    /// This SDK (`api-mgmt` and its version), for a program that has no name of its own to give.
    pub fn sdk() -> Self {
        Self::new("api-mgmt", env!("CARGO_PKG_VERSION"))
    }
}

impl std::fmt::Display for Producer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.name, self.version)
    }
}

/// A plan as a document ([`Plan::save`]; its JSON Schema is [`PLAN_DOCUMENT_SCHEMA`]), read back with [`SavedPlan::from_json`] and made
/// applicable again with [`SavedPlan::recheck`], which refuses when anything it was planned
/// against moved.
///
/// The document's own members are `snake_case`; the declared values in `before` and `after` are
/// the API's create requests as declared (`camelCase`), each secret `"[REDACTED]"`. A policy
/// engine (OPA, conftest) reads it as it is: its plans have no unknown values.
///
/// ```no_run
/// # async fn run(service: api_mgmt::ServiceHandle, declaration: api_mgmt::declared::Declaration, recorded: api_mgmt::declared::RecordedState) -> Result<(), Box<dyn std::error::Error>> {
/// use api_mgmt::declared::{self, Producer, SavedPlan};
///
/// // In review: plan, and keep the document.
/// let plan = declared::plan(&service, &declaration, &recorded).await?;
/// std::fs::write("plan.json", plan.save(&declaration, Producer::new("deployer", "1.4.2")).to_json())?;
///
/// // On merge: the same plan, or a refusal that names what moved.
/// let saved = SavedPlan::from_json(&std::fs::read_to_string("plan.json")?)?;
/// let plan = saved.recheck(&service, &declaration, &recorded, &Producer::new("deployer", "1.4.2")).await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SavedPlan {
    /// [`PLAN_FORMAT_VERSION`] when written by this SDK.
    pub format_version: String,
    /// What made it.
    pub producer: Producer,
    /// The SDK that planned it.
    pub sdk_version: String,
    /// When it was made (RFC 3339).
    pub made_at: String,
    /// The service: its API URL, organization and id.
    pub target: SavedTarget,
    /// The state's generation the plan was made against (serial 0: no state recorded yet).
    pub state: SavedGeneration,
    /// Whether the plan read the server (a plan that did not cannot be applied).
    pub refreshed: bool,
    /// The names the plan was limited to, when it was.
    #[serde(default)]
    pub targets: Option<Vec<String>>,
    /// The service's state: declared, and as read.
    #[serde(default)]
    pub service: Option<SavedService>,
    /// Each declared pipe the plan compared or creates: where it was declared, its lifecycle, and
    /// the digest of its declared form with every secret as the marker, by name.
    pub declared: BTreeMap<String, SavedDeclared>,
    /// Each recorded pipe the plan read, as the server answered, by name.
    pub observed: BTreeMap<String, SavedObserved>,
    /// The actions, in the order of names.
    pub actions: Vec<SavedAction>,
    /// The pipes that need nothing.
    pub unchanged: Vec<String>,
    /// Pipes that need nothing but changed on the server in members their files leave out.
    #[serde(default)]
    pub drift: Vec<Drift>,
    /// Pipes the server now writes another way (no change; an apply records the new forms).
    #[serde(default)]
    pub respelled: Vec<Drift>,
    /// The reads the plan made.
    pub reads: u32,
    /// How many actions of each kind, and how many delete a pipe (`destructive`).
    pub summary: BTreeMap<String, usize>,
    /// `blake2b-256:` and the digest of the document's canonical JSON without this member: an edit
    /// of the document is refused.
    pub digest: String,
}

/// The service a plan document was made for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SavedTarget {
    /// The management API's base URL.
    pub api_url: String,
    /// The organization.
    pub organization_id: String,
    /// The service.
    pub service_id: String,
}

/// A state's generation in a plan document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SavedGeneration {
    /// The lineage; `None` when no state was recorded.
    pub lineage: Option<String>,
    /// The serial (0: no state recorded).
    pub serial: u64,
}

/// The service's state in a plan document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SavedService {
    /// The declared state.
    pub declared: ServiceTarget,
    /// The state it was read in, when it differs from the declared one (`unknown` when it could
    /// not be read); `None` when it was there already.
    pub from: Option<String>,
    /// Whether the state was read.
    pub known: bool,
    /// The calls the apply sends for it.
    pub calls: Vec<String>,
}

/// A declared pipe in a plan document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SavedDeclared {
    /// Where it was declared (a file), when the declaration said.
    #[serde(default)]
    pub origin: Option<String>,
    /// Its lifecycle.
    pub lifecycle: Lifecycle,
    /// BLAKE2b-256 (hexadecimal) of its declared form with every secret `"[REDACTED]"`: nothing
    /// derived from a secret is in a document.
    pub digest: String,
}

/// A recorded pipe as the server answered the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SavedObserved {
    /// The pipe's id.
    pub id: String,
    /// `found`, `failed`, `gone` or `unreadable`.
    pub read: String,
    /// The state it was in, when found.
    #[serde(default)]
    pub state: Option<String>,
    /// BLAKE2b-256 of its observed form, for a pipe that was compared.
    #[serde(default)]
    pub digest: Option<String>,
}

/// One action of a plan document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SavedAction {
    /// `create`, `delete`, `replace`, `recreate`, `record`, `forget`, `pending`, `unreadable`.
    pub action: ActionKind,
    /// The pipe's name.
    pub name: String,
    /// The pipe's id, where one is known.
    pub id: Option<String>,
    /// Why.
    pub cause: ActionCause,
    /// The declaration as last applied (a recorded pipe), secrets as `"[REDACTED]"`.
    pub before: Option<Value>,
    /// The declaration the action applies (a create, a replace, a record), secrets as
    /// `"[REDACTED]"`.
    pub after: Option<Value>,
    /// The members that differ.
    pub changes: Vec<Change>,
    /// What it does to the data.
    pub impact: Vec<Impact>,
    /// The lifecycle it records (or the recorded one, for a pipe no file declares).
    pub lifecycle: Lifecycle,
    /// Whether it would delete a protected pipe (an apply is refused).
    pub protected: bool,
    /// More, in words.
    #[serde(default)]
    pub note: Option<String>,
    /// The calls that change the server, in order (`DELETE /v1/…/pipes/ID`, `POST /v1/…/pipes`);
    /// reads are not listed.
    pub calls: Vec<String>,
}

impl Plan {
    /// The plan as a document (see [`SavedPlan`]): `declaration` is the one it was made from (for
    /// where each pipe was declared), `producer` the tool that makes it.
    pub fn save(&self, declaration: &Declaration, producer: Producer) -> SavedPlan {
        let target = &self.recorded.target;
        let base = pipes_path(target);
        let redactor = Redactor::new();
        let shown = |form: Option<&Value>| form.map(|f| marked(f, &redactor));
        let actions: Vec<SavedAction> = self
            .actions
            .iter()
            .map(|action| SavedAction {
                action: action.kind,
                name: action.name.clone(),
                id: action.id.map(|id| id.to_string()),
                cause: action.cause,
                before: shown(action.before.as_ref()),
                after: shown(action.after()),
                changes: action.changes.clone(),
                impact: action.impact.clone(),
                lifecycle: action.lifecycle,
                protected: action.protected,
                note: action.note.clone(),
                calls: calls_of(action, &base),
            })
            .collect();
        let mut summary: BTreeMap<String, usize> = BTreeMap::new();
        for action in &self.actions {
            *summary.entry(action.kind.to_string()).or_default() += 1;
        }
        summary.insert("destructive".into(), self.destructive());
        summary.insert("unchanged".into(), self.unchanged.len());
        let service = self.declared_service.map(|declared| SavedService {
            declared,
            from: self.service.as_ref().map(|s| s.from.as_str().to_string()),
            known: self.service.as_ref().is_none_or(|s| s.known),
            calls: if self.service.is_some() {
                vec![format!(
                    "PATCH /v1/organizations/{}/services/{}/state",
                    target.organization_id, target.service_id
                )]
            } else {
                Vec::new()
            },
        });
        let mut saved = SavedPlan {
            format_version: PLAN_FORMAT_VERSION.into(),
            producer,
            sdk_version: env!("CARGO_PKG_VERSION").into(),
            made_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            target: SavedTarget {
                api_url: target.api_url.clone(),
                organization_id: target.organization_id.to_string(),
                service_id: target.service_id.to_string(),
            },
            state: generation_of(&self.recorded),
            refreshed: self.is_refreshed(),
            targets: self.targets.as_ref().map(|t| t.iter().cloned().collect()),
            service,
            declared: self
                .bindings
                .declared
                .iter()
                .map(|(name, bound)| {
                    let saved = SavedDeclared {
                        origin: declaration.origin(name).map(str::to_string),
                        lifecycle: bound.lifecycle,
                        digest: digest(&marked(&bound.form, &redactor)),
                    };
                    (name.clone(), saved)
                })
                .collect(),
            observed: self.bindings.observed.clone(),
            actions,
            unchanged: self.unchanged.clone(),
            drift: self.drift.clone(),
            respelled: self.respelled.clone(),
            reads: self.reads,
            summary,
            digest: String::new(),
        };
        saved.digest = saved.computed_digest();
        saved
    }
}

impl SavedPlan {
    /// Reads a plan document, refusing one of an unknown major version, of another shape (each
    /// problem named by its path), or whose digest does not match its content (an edited
    /// document).
    pub fn from_json(text: &str) -> Result<Self, DeclaredError> {
        let refused = |why: String| DeclaredError::PlanDocument(why);
        let value: Value =
            serde_json::from_str(text).map_err(|e| refused(format!("not JSON: {e}")))?;
        let version = value
            .get("format_version")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                refused("no `format_version`: not a plan document of cloudctl or the SDK".into())
            })?;
        // MAJOR.MINOR, both decimal (the schema's pattern).
        let major = version
            .split_once('.')
            .filter(|(major, minor)| {
                [major, minor]
                    .iter()
                    .all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()))
            })
            .and_then(|(major, _)| major.parse::<u64>().ok());
        if major != Some(MAJOR) {
            return Err(refused(format!(
                "format_version {version} is not one this SDK reads (major version {MAJOR}); use \
                 the cloudctl or SDK that wrote it"
            )));
        }
        // The digest covers the document as written, members of a newer minor version included.
        let computed = seal(&value);
        let saved: Self = serde_path_to_error::deserialize(value)
            .map_err(|e| refused(format!("at `{}`: {}", e.path(), e.inner())))?;
        if saved.digest != computed {
            return Err(refused(
                "its digest does not match its content: the document was edited after it was \
                 made; make a new plan"
                    .into(),
            ));
        }
        Ok(saved)
    }

    /// The document as pretty JSON, with a newline at the end.
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }

    /// The document as a JSON value.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    fn computed_digest(&self) -> String {
        seal(&self.to_value())
    }

    /// Reads again what the plan read and makes the plan again, refusing when anything moved
    /// ([`DeclaredError::Moved`], each thing named): the service, the tool or SDK, the state's
    /// generation (another apply ran, or this document was applied already, also when it was made
    /// against no state), a declared pipe (its form but its secrets' values, its lifecycle, a
    /// declaration added or removed), a recorded pipe on the server (an edit, gone, failed), the
    /// service's state, the actions (a secret's value is not bound, but a rotated one that makes a
    /// pipe left alone a replace changes them), and last the whole document against the plan made
    /// now, so that a document edited and sealed again is refused too. Otherwise answers the plan,
    /// which makes exactly the calls the document lists; its [`apply`](Plan::apply) still refuses
    /// a state changed since.
    pub async fn recheck(
        &self,
        service: &ServiceHandle,
        declaration: &Declaration,
        recorded: &RecordedState,
        producer: &Producer,
    ) -> Result<Plan, DeclaredError> {
        if !self.refreshed {
            return Err(DeclaredError::Refused(
                "this plan was made without reading the server (refresh off), so it cannot be \
                 applied; make a plan that reads it"
                    .into(),
            ));
        }
        let mut moved = Vec::new();
        if &self.producer != producer || self.sdk_version != env!("CARGO_PKG_VERSION") {
            moved.push(format!(
                "the tool: the plan was made by {} (SDK {}), this is {producer} (SDK {}); another \
                 version may plan differently",
                self.producer,
                self.sdk_version,
                env!("CARGO_PKG_VERSION")
            ));
        }
        let target = target_of(service);
        if !self.target.is(&target) {
            moved.push(format!(
                "the service: the plan is for service {} of organization {} at {}, not service {} \
                 of organization {} at {}",
                self.target.service_id,
                self.target.organization_id,
                self.target.api_url,
                target.service_id,
                target.organization_id,
                target.api_url
            ));
            return Err(DeclaredError::Moved(moved));
        }
        let now = generation_of(recorded);
        if now != self.state {
            moved.push(match (self.state.serial, now.serial) {
                (0, _) => format!(
                    "the state: the plan was made with no state recorded, and the state is at \
                     serial {} now (this plan, or another, was applied since)",
                    now.serial
                ),
                (then, _) if now.lineage != self.state.lineage => format!(
                    "the state: the plan was made against lineage {} serial {then}, the state \
                     is of another lineage now ({})",
                    self.state.lineage.as_deref().unwrap_or("(none)"),
                    recorded.generation()
                ),
                (then, now) => format!(
                    "the state: the plan was made at serial {then}, the state is at serial {now} \
                     (another apply ran, or this plan was applied already)"
                ),
            });
        }
        // The state moved: planning again would compare against another record.
        if !moved.is_empty() {
            return Err(DeclaredError::Moved(moved));
        }
        let mut options = PlanOptions::default();
        for name in self.targets.iter().flatten() {
            options = options.target(name.clone());
        }
        let plan = plan_with(service, declaration, recorded, &options).await?;
        let again = plan.save(declaration, producer.clone());
        moved.extend(self.declared_moved(&again, declaration));
        moved.extend(self.observed_moved(&again));
        if self.service != again.service {
            moved.push(service_moved(self.service.as_ref(), again.service.as_ref()));
        }
        // The actions: what no binding covers (a secret the environment gives) can still change them.
        let listed = |saved: &SavedPlan| -> Vec<String> {
            saved
                .actions
                .iter()
                .map(|a| format!("{} {}", a.action, a.name))
                .collect()
        };
        if moved.is_empty() && listed(self) != listed(&again) {
            let said = |list: Vec<String>| {
                if list.is_empty() {
                    "nothing".to_string()
                } else {
                    list.join(", ")
                }
            };
            moved.push(format!(
                "the actions: the plan made now would {}, the document says {} (a secret the \
                 environment gives may have changed)",
                said(listed(&again)),
                said(listed(self))
            ));
        }
        // Last, the document as a whole against the plan made now: what a reviewer or a policy
        // read of it (every `after`, every impact, the summary) is what is applied, even in a
        // document edited and sealed again.
        if moved.is_empty()
            && let Some(path) = first_difference(
                &comparable(&self.to_value()),
                &comparable(&again.to_value()),
                "",
            )
        {
            moved.push(format!(
                "the document: the plan made now differs from it at `{path}` (a document edited \
                 after it was made, or a plan this version makes another way)"
            ));
        }
        if moved.is_empty() {
            Ok(plan)
        } else {
            Err(DeclaredError::Moved(moved))
        }
    }

    fn declared_moved(&self, again: &SavedPlan, declaration: &Declaration) -> Vec<String> {
        let names: BTreeSet<&String> = self.declared.keys().chain(again.declared.keys()).collect();
        let mut moved = Vec::new();
        for name in names {
            let origin = |d: Option<&SavedDeclared>| {
                d.and_then(|d| d.origin.clone())
                    .or_else(|| declaration.origin(name).map(str::to_string))
                    .map_or_else(String::new, |o| format!(" ({o})"))
            };
            let (then, now) = (self.declared.get(name), again.declared.get(name));
            let said = match (then, now) {
                (Some(_), None) => "is no longer declared (its file was removed or renamed)",
                (None, Some(_)) => "is declared now and was not when the plan was made",
                (Some(then), Some(now)) if then.digest != now.digest => "changed since the plan",
                (Some(then), Some(now)) if then.lifecycle != now.lifecycle => {
                    "changed its lifecycle since the plan"
                }
                _ => continue,
            };
            moved.push(format!(
                "the declaration: {name}{} {said}",
                origin(then.or(now))
            ));
        }
        moved
    }

    fn observed_moved(&self, again: &SavedPlan) -> Vec<String> {
        let names: BTreeSet<&String> = self.observed.keys().chain(again.observed.keys()).collect();
        let mut moved = Vec::new();
        for name in names {
            let said = match (self.observed.get(name), again.observed.get(name)) {
                (Some(then), Some(now)) => then.moved_to(now),
                (Some(_), None) => Some("was read by the plan and is not read now".into()),
                (None, Some(_)) => Some("is read now and was not by the plan".into()),
                (None, None) => None,
            };
            if let Some(said) = said {
                let id = self
                    .observed
                    .get(name)
                    .or(again.observed.get(name))
                    .map_or_else(String::new, |o| format!(" {}", o.id));
                moved.push(format!("the server: pipe {name}{id} {said}"));
            }
        }
        moved
    }
}

impl SavedTarget {
    fn is(&self, target: &StateTarget) -> bool {
        self.api_url == target.api_url
            && self.organization_id == target.organization_id.to_string()
            && self.service_id == target.service_id.to_string()
    }
}

impl SavedObserved {
    /// A pipe the read found and compared, in `state`, with the digest of its observed form.
    pub(crate) fn found(id: PipeId, state: Option<String>, digest: String) -> Self {
        Self {
            id: id.to_string(),
            read: "found".into(),
            state,
            digest: Some(digest),
        }
    }

    /// A pipe in a failed state.
    pub(crate) fn failed(id: PipeId, state: String) -> Self {
        Self {
            id: id.to_string(),
            read: "failed".into(),
            state: Some(state),
            digest: None,
        }
    }

    /// A pipe gone (404), found but not compared, or an answer that cannot be read.
    pub(crate) fn without_answer(id: PipeId, read: &str) -> Self {
        Self {
            id: id.to_string(),
            read: read.into(),
            state: None,
            digest: None,
        }
    }

    /// What moved between this read and `now`, in words; `None` when nothing the plan depends on
    /// did (a state is told only as failed or not: a pipe that went from `Provisioning` to
    /// `Running` decides nothing).
    fn moved_to(&self, now: &Self) -> Option<String> {
        if self.read != now.read {
            let said = |b: &Self| match b.read.as_str() {
                "found" => format!("there ({})", b.state.as_deref().unwrap_or("state not said")),
                "failed" => format!("failed ({})", b.state.as_deref().unwrap_or_default()),
                "gone" => "gone".to_string(),
                other => other.to_string(),
            };
            return Some(format!("was {}, is {} now", said(self), said(now)));
        }
        (self.digest != now.digest).then(|| {
            "its members changed on the server (a console edit, or another tool)".to_string()
        })
    }
}

/// The digest a document is sealed with: of its canonical JSON without its `digest` member.
fn seal(document: &Value) -> String {
    let mut value = document.clone();
    if let Some(map) = value.as_object_mut() {
        map.remove("digest");
    }
    format!("{DIGEST_PREFIX}{}", digest(&value))
}

/// A document's JSON without what differs between two plans of the same things: when it was made,
/// its digest, where each pipe was declared (another checkout's path), and the notes (an unreadable
/// answer's note quotes an error).
fn comparable(document: &Value) -> Value {
    let mut value = document.clone();
    if let Some(map) = value.as_object_mut() {
        map.remove("made_at");
        map.remove("digest");
        for declared in map
            .get_mut("declared")
            .and_then(Value::as_object_mut)
            .into_iter()
            .flat_map(|d| d.values_mut())
        {
            if let Some(declared) = declared.as_object_mut() {
                declared.remove("origin");
            }
        }
        for action in map
            .get_mut("actions")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            if let Some(action) = action.as_object_mut() {
                action.remove("note");
            }
        }
    }
    value
}

/// The JSON path of the first place `a` and `b` differ, if they do.
fn first_difference(a: &Value, b: &Value, at: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            keys.into_iter().find_map(|key| {
                let path = if at.is_empty() {
                    key.clone()
                } else {
                    format!("{at}.{key}")
                };
                match (x.get(key), y.get(key)) {
                    (Some(p), Some(q)) => first_difference(p, q, &path),
                    _ => Some(path),
                }
            })
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (p, q))| first_difference(p, q, &format!("{at}[{i}]"))),
        _ if a == b => None,
        _ => Some(if at.is_empty() { ".".into() } else { at.into() }),
    }
}

/// The service's move, in words.
fn service_moved(then: Option<&SavedService>, now: Option<&SavedService>) -> String {
    let said = |s: Option<&SavedService>| match s {
        None => "not declared".to_string(),
        Some(s) => match &s.from {
            None => format!("declared {}, and {} already", s.declared, s.declared),
            Some(from) => format!("declared {}, read as {from}", s.declared),
        },
    };
    format!(
        "the service's state: the plan saw it {}, it is {} now",
        said(then),
        said(now)
    )
}

/// The state's generation; serial 0 is no state recorded.
fn generation_of(recorded: &RecordedState) -> SavedGeneration {
    SavedGeneration {
        lineage: (recorded.serial > 0 && !recorded.lineage.is_empty())
            .then(|| recorded.lineage.clone()),
        serial: recorded.serial,
    }
}

/// The path of the service's pipes.
fn pipes_path(target: &StateTarget) -> String {
    format!(
        "/v1/organizations/{}/services/{}/pipes",
        target.organization_id, target.service_id
    )
}

/// The calls that change the server, as an apply sends them.
fn calls_of(action: &PlanAction, base: &str) -> Vec<String> {
    let delete = action.id.map(|id| format!("DELETE {base}/{id}"));
    let create = format!("POST {base}");
    match action.kind {
        ActionKind::Create => vec![create],
        ActionKind::Delete => delete.into_iter().collect(),
        ActionKind::Replace => delete.into_iter().chain([create]).collect(),
        ActionKind::Recreate if action.delete_first => delete.into_iter().chain([create]).collect(),
        ActionKind::Recreate => vec![create],
        _ => Vec::new(),
    }
}

/// A stored form as a document shows it: each secret's fingerprint, and anything the redaction
/// rule takes for a secret, `"[REDACTED]"`.
fn marked(form: &Value, redactor: &Redactor) -> Value {
    fn walk(value: &mut Value) {
        match value {
            Value::String(text) if text.starts_with(SECRET_PREFIX) => {
                *text = REDACTED.to_string();
            }
            Value::Array(items) => items.iter_mut().for_each(walk),
            Value::Object(members) => members.values_mut().for_each(walk),
            _ => {}
        }
    }
    let mut shown = form.clone();
    walk(&mut shown);
    redactor.json(&mut shown);
    shown
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::{Value, json};

    use super::{
        PLAN_DOCUMENT_SCHEMA, PLAN_FORMAT_VERSION, Producer, SavedGeneration, SavedPlan,
        SavedTarget,
    };

    fn document() -> SavedPlan {
        let mut saved = SavedPlan {
            format_version: PLAN_FORMAT_VERSION.into(),
            producer: Producer::new("test", "1"),
            sdk_version: env!("CARGO_PKG_VERSION").into(),
            made_at: "2026-11-28T12:00:00Z".into(),
            target: SavedTarget {
                api_url: "http://127.0.0.1:1".into(),
                organization_id: "o".into(),
                service_id: "s".into(),
            },
            state: SavedGeneration {
                lineage: None,
                serial: 0,
            },
            refreshed: true,
            targets: None,
            service: None,
            declared: BTreeMap::new(),
            observed: BTreeMap::new(),
            actions: Vec::new(),
            unchanged: vec!["orders".into()],
            drift: Vec::new(),
            respelled: Vec::new(),
            reads: 1,
            summary: BTreeMap::from([("destructive".into(), 0), ("unchanged".into(), 1)]),
            digest: String::new(),
        };
        saved.digest = saved.computed_digest();
        saved
    }

    fn refusal(text: &str) -> String {
        SavedPlan::from_json(text)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    }

    #[test]
    fn a_document_reads_back_as_written_and_an_edit_is_refused() {
        let saved = document();
        assert_eq!(SavedPlan::from_json(&saved.to_json()).unwrap(), saved);
        let edited = saved.to_json().replace("\"reads\": 1", "\"reads\": 2");
        assert!(
            refusal(&edited).contains("edited after it was made"),
            "{}",
            refusal(&edited)
        );
        assert!(refusal("{").contains("not JSON"));
        assert!(refusal("{}").contains("no `format_version`"));
        let mut value = saved.to_value();
        value["reads"] = json!("one");
        assert!(
            refusal(&value.to_string()).contains("at `reads`"),
            "{}",
            refusal(&value.to_string())
        );
    }

    #[test]
    fn a_newer_minor_version_is_read_and_an_unknown_major_refused() {
        // A 1.1 document with a member this SDK does not know, sealed as its writer would.
        let mut value = document().to_value();
        value["format_version"] = json!("1.1");
        value["budget"] = json!({"calls": 3});
        let map = value.as_object_mut().unwrap();
        map.remove("digest");
        let sealed = format!(
            "blake2b-256:{}",
            crate::declared::fingerprint::digest(&value)
        );
        value["digest"] = json!(sealed);
        let read = SavedPlan::from_json(&value.to_string()).unwrap();
        assert_eq!(read.format_version, "1.1");
        for malformed in ["1", "1.", "1.0-beta", "v1.0", ".1"] {
            value["format_version"] = json!(malformed);
            assert!(
                refusal(&value.to_string()).contains("is not one this SDK reads"),
                "{malformed}: {}",
                refusal(&value.to_string())
            );
        }
        value["format_version"] = json!("2.0");
        assert!(
            refusal(&value.to_string()).contains("format_version 2.0 is not one this SDK reads")
        );
    }

    #[test]
    fn the_schema_is_json_schema_and_names_every_member_of_the_document() {
        let schema: Value = serde_json::from_str(PLAN_DOCUMENT_SCHEMA).unwrap();
        assert_eq!(
            schema["$schema"],
            "https://json-schema.org/draft/2020-12/schema"
        );
        let documented: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
        for member in document().to_value().as_object().unwrap().keys() {
            assert!(
                documented.contains(&member),
                "{member} is not in the schema"
            );
        }
    }
}
