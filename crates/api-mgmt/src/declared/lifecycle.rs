//! [`Lifecycle`]: what the SDK and cloudctl may do to a declared pipe, beyond what it declares to
//! the API. Never sent to the API; recorded in the state, so that a pipe whose file is gone is still
//! known.

use serde::{Deserialize, Serialize};

/// What a plan and an apply may do to one declared pipe (cloudctl's `lifecycle:` key of a pipe
/// file). The default protects nothing and deletes a pipe whose declaration is gone.
///
/// ```
/// use api_mgmt::declared::Lifecycle;
///
/// let kept = Lifecycle::default().protect(true).retain_on_delete(true);
/// assert!(kept.protect && kept.retain_on_delete);
/// assert!(Lifecycle::default().is_default());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Lifecycle {
    /// Refuses every path that would delete the pipe: its declaration removed, a replace (a
    /// change of the file, drift on the server, a rotated secret), the recreate of a failed pipe.
    /// A plan shows the refused action; an apply is refused before any call. To delete the pipe,
    /// apply `protect: false` first. The recorded value protects too, so dropping the key and
    /// deleting in one apply is refused.
    #[serde(default)]
    pub protect: bool,
    /// When the declaration is removed, the pipe is forgotten from the state and not deleted
    /// ([`ActionKind::Forget`](super::ActionKind::Forget)): it goes on running, unmanaged.
    #[serde(default)]
    pub retain_on_delete: bool,
}

impl Lifecycle {
    /// With `protect` set as given.
    pub fn protect(mut self, protect: bool) -> Self {
        self.protect = protect;
        self
    }

    /// With `retain_on_delete` set as given.
    pub fn retain_on_delete(mut self, retain: bool) -> Self {
        self.retain_on_delete = retain;
        self
    }

    /// Whether nothing is set (the state leaves such a lifecycle out).
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

impl std::fmt::Display for Lifecycle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let words: Vec<&str> = [
            (self.protect, "protected"),
            (self.retain_on_delete, "retained on delete"),
        ]
        .into_iter()
        .filter_map(|(set, word)| set.then_some(word))
        .collect();
        if words.is_empty() {
            f.write_str("default")
        } else {
            f.write_str(&words.join(", "))
        }
    }
}
