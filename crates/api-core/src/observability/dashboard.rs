//! [`Dashboard`] with its tiles and series.

use std::ops::Deref;

use api_raw::observability::types as raw;

use crate::ids::DashboardId;

/// A tile of a dashboard.
pub type Tile = raw::Tile;
/// A data series of a tile.
pub type TileSeries = raw::TileSeries;

/// A dashboard. Typed accessors for the common fields; the rest through `Deref` to the generated type.
#[derive(Debug, Clone)]
pub struct Dashboard(raw::Dashboard);

impl Dashboard {
    /// The dashboard id, when the server sent a well-formed one.
    pub fn id(&self) -> Option<DashboardId> {
        self.0.id.as_deref().and_then(|id| id.parse().ok())
    }

    /// The name, empty when the server omitted it.
    pub fn name(&self) -> &str {
        self.0.name.as_deref().unwrap_or_default()
    }

    /// The tiles (none when the server omitted them).
    pub fn tiles(&self) -> &[Tile] {
        self.0.tiles.as_deref().unwrap_or_default()
    }

    /// The tags (none when the server omitted them).
    pub fn tags(&self) -> &[String] {
        self.0.tags.as_deref().unwrap_or_default()
    }

    /// The generated type.
    pub fn as_raw(&self) -> &raw::Dashboard {
        &self.0
    }
}

impl From<raw::Dashboard> for Dashboard {
    fn from(dashboard: raw::Dashboard) -> Self {
        Self(dashboard)
    }
}

impl Deref for Dashboard {
    type Target = raw::Dashboard;

    fn deref(&self) -> &raw::Dashboard {
        &self.0
    }
}
