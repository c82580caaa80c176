//! [`Alert`].

use std::ops::Deref;

use api_raw::observability::types as raw;
use api_raw::support::AlertState;

use crate::ids::{AlertId, DashboardId};

/// An alert. Typed accessors for the common fields; the rest through `Deref` to the generated type.
#[derive(Debug, Clone)]
pub struct Alert(raw::Alert);

impl Alert {
    /// The alert id, when the server sent a well-formed one.
    pub fn id(&self) -> Option<AlertId> {
        self.0.id.as_deref().and_then(|id| id.parse().ok())
    }

    /// The name, empty when the server omitted it.
    pub fn name(&self) -> &str {
        self.0.name.as_deref().unwrap_or_default()
    }

    /// The state, when reported.
    pub fn state(&self) -> Option<AlertState> {
        self.0.state.clone()
    }

    /// The dashboard the alert's tile belongs to.
    pub fn dashboard_id(&self) -> Option<DashboardId> {
        self.0.dashboard.as_deref().and_then(|id| id.parse().ok())
    }

    /// The generated type.
    pub fn as_raw(&self) -> &raw::Alert {
        &self.0
    }
}

impl From<raw::Alert> for Alert {
    fn from(alert: raw::Alert) -> Self {
        Self(alert)
    }
}

impl Deref for Alert {
    type Target = raw::Alert;

    fn deref(&self) -> &raw::Alert {
        &self.0
    }
}
