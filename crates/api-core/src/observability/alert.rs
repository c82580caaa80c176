//! [`Alert`] and its [`AlertChannel`].

use api_raw::observability::types as raw;
use api_raw::support::{
    AlertChannelType, AlertInterval, AlertSource, AlertState, AlertThresholdType,
};
use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::decode::{Invalid, Path, parse_id, required};
use crate::ids::{AlertId, DashboardId};

/// An alert.
///
/// Its [`id`](Self::id) is always there. What it watches depends on its [`source`](Self::source): a
/// tile alert names a [`dashboard`](Self::dashboard) and a [`tile_id`](Self::tile_id), a saved-search
/// alert does not, so those are `Option`s; so is the [`state`](Self::state) of an alert that was never
/// evaluated.
///
/// Deserializes from the API's JSON (the envelope's `result` / `data`) through the same decoding as a
/// call, and serializes to the same shape with secrets as `"[REDACTED]"`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Alert {
    /// The alert id.
    pub id: AlertId,
    /// The name; empty when the server omitted it.
    pub name: String,
    /// The message sent when it fires, when set.
    pub message: Option<String>,
    /// The threshold, when set.
    #[serde(serialize_with = "api_raw::support::serialize_optional_number")]
    pub threshold: Option<f64>,
    /// How the value is compared with the threshold, when set.
    pub threshold_type: Option<AlertThresholdType>,
    /// How often it is evaluated, when set.
    pub interval: Option<AlertInterval>,
    /// What it watches (a tile or a saved search), when reported.
    pub source: Option<AlertSource>,
    /// The state, when it has been evaluated.
    pub state: Option<AlertState>,
    /// Where notifications go, when set.
    pub channel: Option<AlertChannel>,
    /// The owning team, when reported.
    pub team: Option<String>,
    /// The watched tile (tile alerts).
    pub tile_id: Option<String>,
    /// The dashboard of the watched tile (tile alerts).
    pub dashboard: Option<DashboardId>,
    /// When it was created, when reported.
    pub created_at: Option<DateTime<Utc>>,
    /// When it last changed, when reported.
    pub updated_at: Option<DateTime<Utc>>,
}

/// Where an alert's notifications go.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct AlertChannel {
    /// The kind of channel (`type`), when reported.
    #[serde(rename = "type")]
    pub kind: Option<AlertChannelType>,
    /// The webhook (webhook channels).
    pub webhook_id: Option<String>,
}

impl Alert {
    /// The state as text, `unknown` when the alert has not been evaluated (for messages).
    pub fn state_name(&self) -> &str {
        self.state.as_ref().map_or("unknown", AlertState::as_str)
    }

    pub(crate) fn decode(a: raw::Alert, at: Path<'_>) -> Result<Self, Invalid> {
        let id_at = at.field("id");
        let id = parse_id(&required(a.id, id_at)?, id_at)?;
        let dashboard = a
            .dashboard
            .map(|d| parse_id(&d, at.field("dashboard")))
            .transpose()?;
        Ok(Self {
            id,
            name: a.name.unwrap_or_default(),
            message: a.message,
            threshold: a.threshold,
            threshold_type: a.threshold_type,
            interval: a.interval,
            source: a.source,
            state: a.state,
            channel: a.channel.map(|c| AlertChannel {
                kind: c.type_,
                webhook_id: c.webhook_id,
            }),
            team: a.team,
            tile_id: a.tile_id,
            dashboard,
            created_at: a.created_at,
            updated_at: a.updated_at,
        })
    }
}

crate::decode::deserialize_from_wire!(Alert, raw::Alert, |value, at| Alert::decode(value, at));
