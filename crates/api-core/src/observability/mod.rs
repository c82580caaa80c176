//! Domain types of the observability API: alerts and dashboards.

mod alert;
mod dashboard;
pub mod operations;

pub use alert::Alert;
pub use api_raw::observability::types as raw_types;
pub use api_raw::support::{
    AlertChannelType, AlertInterval, AlertSource, AlertState, AlertThresholdType, MetricDataType,
    SeriesAggFn, SeriesDataSource, SeriesType, WhereLanguage,
};
pub use dashboard::{Dashboard, Tile, TileSeries};

use api_raw::observability::types::{AlertEnvelope, DashboardListEnvelope};

use crate::operation::ResponseBody;

impl ResponseBody for AlertEnvelope {}
impl ResponseBody for DashboardListEnvelope {}
