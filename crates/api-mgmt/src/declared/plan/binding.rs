//! What a plan read, kept so that a saved plan can tell, when it is applied, whether anything it
//! was made from has moved: each declared pipe's form with its lifecycle, and each recorded pipe as
//! the server answered it.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::declared::{Lifecycle, SavedObserved};

/// What a plan read.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Bindings {
    /// Each declared pipe the plan acts on or compared, by name.
    pub declared: BTreeMap<String, DeclaredBinding>,
    /// Each recorded pipe the plan read, by name.
    pub observed: BTreeMap<String, SavedObserved>,
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
