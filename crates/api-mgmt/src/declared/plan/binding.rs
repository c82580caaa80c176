//! What a plan read, kept so that a saved plan can tell, when it is applied, whether anything it
//! was made from has moved: each declared pipe's form with its lifecycle, and each recorded pipe as
//! the server answered it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use serde_json::Value;

use crate::declared::Lifecycle;

/// What a plan read.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Bindings {
    /// Each declared pipe the plan acts on or compared, by name.
    pub declared: BTreeMap<String, DeclaredBinding>,
    /// Each recorded pipe the plan read, by name.
    pub observed: BTreeMap<String, ObservedBinding>,
}

/// One declared pipe as the plan read it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DeclaredBinding {
    /// Its declared form (secrets as fingerprints; a document shows its digest with every secret
    /// as the marker, so that nothing derived from a secret leaves the state).
    pub form: Value,
    /// Its declared lifecycle.
    pub lifecycle: Lifecycle,
}

/// One recorded pipe as the server answered the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ObservedBinding {
    /// What the read found: `found`, `failed`, `gone` or `unreadable`.
    pub read: String,
    /// The state it was in, when it was found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// The digest of its observed form (the members a create declares, as the server wrote them;
    /// secrets as fingerprints), for a pipe that was compared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
}

impl ObservedBinding {
    /// A pipe the read found and compared, in `state`, with the digest of its observed form.
    pub(crate) fn found(state: Option<String>, digest: String) -> Self {
        Self {
            read: "found".into(),
            state,
            digest: Some(digest),
        }
    }

    /// A pipe in a failed state.
    pub(crate) fn failed(state: String) -> Self {
        Self {
            read: "failed".into(),
            state: Some(state),
            digest: None,
        }
    }

    /// A pipe gone (404), or an answer that cannot be read.
    pub(crate) fn without_answer(read: &str) -> Self {
        Self {
            read: read.into(),
            state: None,
            digest: None,
        }
    }

    /// What moved between this read and `now`, in words; `None` when nothing the plan depends on
    /// did (a state is told only as failed or not: a pipe that went from `Provisioning` to
    /// `Running` decides nothing).
    pub(crate) fn moved_to(&self, now: &Self) -> Option<String> {
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
