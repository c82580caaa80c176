//! Declared pipes: keep a service's pipes as a declaration, and bring the service to it with a plan
//! and an apply, with no false difference and no duplicate create.
//!
//! - A [`Declaration`] is the pipes of one service keyed by name (each a [`NewPipe`], exactly a
//!   create request), and optionally the service's state.
//! - A [`RecordedState`] is what applies have done: each pipe's id, the declaration it was created
//!   from and the form the server answered it in (its observed form), every secret as a salted
//!   Argon2id fingerprint (never the secret, in clear, in part or as a plain hash), the creates
//!   whose outcome is not known, and the replaces under way. A [`StateStore`] keeps it and locks
//!   its service for an apply; [`FileStateStore`] is a private file written atomically.
//! - [`plan`] reads each recorded pipe once and writes nothing: [`ActionKind::Create`],
//!   [`Recreate`](ActionKind::Recreate) (gone, or failed), [`Replace`](ActionKind::Replace) (naming
//!   each differing member, see [`Change`]), [`Record`](ActionKind::Record) (the file now says what
//!   the server has: only the state changes), [`Delete`](ActionKind::Delete),
//!   [`Pending`](ActionKind::Pending), [`Unreadable`](ActionKind::Unreadable).
//! - [`Plan::apply`] carries it out under the service's lock (the service first, then deletes, then
//!   creates, then replaces one after another), records an intent before each delete of a replace
//!   and each create, and reports what became of each action.
//!
//! A change in the file is measured against the recorded declaration, drift on the server against
//! the observed form (see [`Change`] and [`Effect`]): a server that answers in its own canonical
//! forms shows no difference.
//!
//! ```no_run
//! # async fn run(service: api_mgmt::ServiceHandle, orders: api_mgmt::NewPipe) -> Result<(), api_mgmt::declared::DeclaredError> {
//! use api_mgmt::declared::{self, ApplyOptions, Declaration, FileStateStore, RecordedState, ServiceTarget, StateStore};
//!
//! let declaration = Declaration::new().pipe(orders).service_state(ServiceTarget::Running);
//! let store = FileStateStore::new("pipes/.state.json");
//! let target = declared::target_of(&service);
//! let lock = store.lock(&target)?; // one apply per service at a time
//! let recorded = store.load()?.unwrap_or_else(|| RecordedState::new(target));
//! let plan = declared::plan(&service, &declaration, &recorded).await?;
//! let report = plan.apply(&lock, &store, &ApplyOptions::default()).await?;
//! assert!(report.is_complete(), "{report:?}");
//! # Ok(()) }
//! ```

mod apply;
mod cpu_work;
mod diff;
mod export;
mod fingerprint;
mod impact;
mod lifecycle;
mod pairing;
mod plan;
mod recorded;
mod respell;
mod saved;
#[cfg(any(feature = "state-redis", feature = "state-postgres"))]
mod shared;
mod stop;
mod store;

use std::collections::BTreeMap;

use api_core::management::NewPipe;
use serde::Serialize;

pub use apply::{ActionReport, ApplyOptions, ApplyReport, Outcome, Progress, short_reason};
pub use diff::{Cause, Change, Effect};
pub use export::{Exported, export};
pub use fingerprint::Fingerprint;
pub use impact::Impact;
pub use lifecycle::Lifecycle;
pub use plan::{
    ActionCause, ActionKind, Drift, Plan, PlanAction, PlanOptions, ServiceChange, plan, plan_with,
    target_of,
};
pub use recorded::{
    CLOCK_SKEW, PendingCreate, RecordedPipe, RecordedState, STATE_VERSION, StateTarget,
};
pub use saved::{
    PLAN_DOCUMENT_SCHEMA, PLAN_FORMAT_VERSION, Producer, SavedAction, SavedDeclared,
    SavedGeneration, SavedObserved, SavedPlan, SavedService, SavedTarget,
};
#[cfg(any(feature = "state-redis", feature = "state-postgres"))]
#[cfg_attr(
    docsrs,
    doc(cfg(any(feature = "state-redis", feature = "state-postgres")))
)]
pub use shared::{DEFAULT_LEASE_TTL, MAX_LEASE_TTL, MIN_LEASE_TTL, SharedStateStore, is_store_url};
pub use stop::StopSignal;
pub use store::{FileStateStore, LeaseHolder, StateError, StateLock, StateStore};

/// The declared state of a service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ServiceTarget {
    /// Started.
    Running,
    /// Stopped.
    Stopped,
}

impl std::fmt::Display for ServiceTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Running => "running",
            Self::Stopped => "stopped",
        })
    }
}

/// The declared state of one service: its pipes by name, and optionally its state.
#[derive(Debug, Clone, Default)]
pub struct Declaration {
    pipes: BTreeMap<String, NewPipe>,
    lifecycles: BTreeMap<String, Lifecycle>,
    origins: BTreeMap<String, String>,
    service: Option<ServiceTarget>,
}

impl Declaration {
    /// No pipes, and no service state.
    pub fn new() -> Self {
        Self::default()
    }

    /// Declares `pipe` under its name (a pipe declared earlier under the same name is replaced).
    pub fn pipe(mut self, pipe: NewPipe) -> Self {
        self.insert(pipe);
        self
    }

    /// Declares `pipe` under its name; answers the pipe it replaces, if one was declared.
    pub fn insert(&mut self, pipe: NewPipe) -> Option<NewPipe> {
        self.pipes.insert(pipe.as_raw().name.to_string(), pipe)
    }

    /// Declares what plans and applies may do to the pipe `name` (see [`Lifecycle`]); the default
    /// when not given.
    pub fn lifecycle(mut self, name: impl Into<String>, lifecycle: Lifecycle) -> Self {
        self.set_lifecycle(name, lifecycle);
        self
    }

    /// Declares what plans and applies may do to the pipe `name`.
    pub fn set_lifecycle(&mut self, name: impl Into<String>, lifecycle: Lifecycle) {
        self.lifecycles.insert(name.into(), lifecycle);
    }

    /// The declared lifecycle of the pipe `name` (the default when none was declared).
    pub fn lifecycle_of(&self, name: &str) -> Lifecycle {
        self.lifecycles.get(name).copied().unwrap_or_default()
    }

    /// Says where the pipe `name` was declared (a file's path), for the messages of a plan that
    /// moved ([`SavedPlan::recheck`]).
    pub fn set_origin(&mut self, name: impl Into<String>, origin: impl Into<String>) {
        self.origins.insert(name.into(), origin.into());
    }

    /// Where the pipe `name` was declared, when it was said.
    pub fn origin(&self, name: &str) -> Option<&str> {
        self.origins.get(name).map(String::as_str)
    }

    /// Declares the service's state.
    pub fn service_state(mut self, state: ServiceTarget) -> Self {
        self.service = Some(state);
        self
    }

    /// The declared service state.
    pub fn declared_service_state(&self) -> Option<ServiceTarget> {
        self.service
    }

    /// The pipe declared as `name`.
    pub fn get(&self, name: &str) -> Option<&NewPipe> {
        self.pipes.get(name)
    }

    /// The declared pipes, by name.
    pub fn pipes(&self) -> impl Iterator<Item = (&str, &NewPipe)> {
        self.pipes.iter().map(|(name, pipe)| (name.as_str(), pipe))
    }
}

/// Why a plan could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DeclaredError {
    /// A call of the plan failed.
    #[error(transparent)]
    Api(api_core::Error),
    /// The recorded state cannot be used.
    #[error(transparent)]
    State(#[from] StateError),
    /// The declaration cannot be planned; the text says why.
    #[error("{0}")]
    Refused(String),
    /// A plan document cannot be used (not JSON, another shape, an unknown major version, or
    /// edited after it was made); the text says why.
    #[error("the plan document cannot be used: {0}")]
    PlanDocument(String),
    /// What a saved plan was made against moved since ([`SavedPlan::recheck`]): each thing, in
    /// words. Nothing was sent.
    #[error("the plan is stale, nothing was applied: {}", .0.join("; "))]
    Moved(Vec<String>),
}
