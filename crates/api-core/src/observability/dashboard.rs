//! [`Dashboard`] with its [`Tile`]s and their [`Series`].

use api_raw::observability::types as raw;
use api_raw::support::{MetricDataType, SeriesAggFn, SeriesDataSource, SeriesType, WhereLanguage};
use serde::Serialize;

use crate::decode::{Invalid, Path, fit, parse_id, required};
use crate::ids::DashboardId;

/// A dashboard with its tiles. Its [`id`](Self::id) is always there.
///
/// Deserializes from the API's JSON (the envelope's `result` / `data`) through the same decoding as a
/// call, and serializes to the same shape with secrets as `"[REDACTED]"`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Dashboard {
    /// The dashboard id.
    pub id: DashboardId,
    /// The name; empty when the server omitted it.
    pub name: String,
    /// The tiles.
    pub tiles: Vec<Tile>,
    /// The tags.
    pub tags: Vec<String>,
}

/// A tile of a dashboard: its place on the grid and the series it shows. Its [`id`](Self::id) is
/// always there (alerts name tiles by it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Tile {
    /// The tile id.
    pub id: String,
    /// The name; empty when the server omitted it.
    pub name: String,
    /// Column on the grid, when placed.
    pub x: Option<u32>,
    /// Row on the grid, when placed.
    pub y: Option<u32>,
    /// Width on the grid, when sized.
    pub w: Option<u32>,
    /// Height on the grid, when sized.
    pub h: Option<u32>,
    /// Whether it shows the ratio of two series, when set.
    pub as_ratio: Option<bool>,
    /// The series it shows.
    pub series: Vec<Series>,
}

/// A data series of a tile. Which members apply depends on the [`kind`](Self::kind) and the
/// [`data_source`](Self::data_source) (a metric series has a metric name, an event series a filter), so
/// they are `Option`s.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Series {
    /// How it is shown (`type`): time chart, table, number, ...
    #[serde(rename = "type")]
    pub kind: Option<SeriesType>,
    /// Where its data comes from.
    pub data_source: Option<SeriesDataSource>,
    /// The source (log or metric source) id.
    pub source_id: Option<String>,
    /// Aggregation.
    pub agg_fn: Option<SeriesAggFn>,
    /// The aggregated field.
    pub field: Option<String>,
    /// Filter expression (the `where` member).
    #[serde(rename = "where")]
    pub filter: Option<String>,
    /// Language of the filter.
    pub where_language: Option<WhereLanguage>,
    /// Group-by fields.
    pub group_by: Vec<String>,
    /// Metric name (metric series).
    pub metric_name: Option<String>,
    /// Metric data type (metric series).
    pub metric_data_type: Option<MetricDataType>,
}

impl Dashboard {
    pub(crate) fn decode(d: raw::Dashboard, at: Path<'_>) -> Result<Self, Invalid> {
        let id_at = at.field("id");
        let id = parse_id(&required(d.id, id_at)?, id_at)?;
        let tiles_at = at.field("tiles");
        let tiles = d
            .tiles
            .unwrap_or_default()
            .into_iter()
            .enumerate()
            .map(|(i, tile)| Tile::decode(tile, tiles_at.index(i)))
            .collect::<Result<_, _>>()?;
        Ok(Self {
            id,
            name: d.name.unwrap_or_default(),
            tiles,
            tags: d.tags.unwrap_or_default(),
        })
    }
}

impl Tile {
    fn decode(t: raw::Tile, at: Path<'_>) -> Result<Self, Invalid> {
        Ok(Self {
            id: required(t.id, at.field("id"))?,
            name: t.name.unwrap_or_default(),
            x: fit(t.x, at.field("x"))?,
            y: fit(t.y, at.field("y"))?,
            w: fit(t.w, at.field("w"))?,
            h: fit(t.h, at.field("h"))?,
            as_ratio: t.as_ratio,
            series: t
                .series
                .unwrap_or_default()
                .into_iter()
                .map(|s| Series {
                    kind: s.type_,
                    data_source: s.data_source,
                    source_id: s.source_id,
                    agg_fn: s.agg_fn,
                    field: s.field,
                    filter: s.where_,
                    where_language: s.where_language,
                    group_by: s.group_by.unwrap_or_default(),
                    metric_name: s.metric_name,
                    metric_data_type: s.metric_data_type,
                })
                .collect(),
        })
    }
}

crate::decode::deserialize_from_wire!(Dashboard, raw::Dashboard, |value, at| Dashboard::decode(
    value, at
));
crate::decode::deserialize_from_wire!(Tile, raw::Tile, |value, at| Tile::decode(value, at));
