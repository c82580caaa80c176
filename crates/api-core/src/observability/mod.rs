//! Domain types of the observability API: alerts and dashboards.
//!
//! An alert's and a dashboard's identity is always there (a response without it is a
//! [`DecodeError`](crate::DecodeError) naming the JSON path), lists are `Vec`s, and a member stays an
//! `Option` only where the API really leaves it out.

mod alert;
mod dashboard;
pub mod operations;
pub mod responses;

pub use alert::{Alert, AlertChannel};
pub use api_raw::observability::types as raw_types;
pub use api_raw::support::{
    AlertChannelType, AlertInterval, AlertSource, AlertState, AlertThresholdType, MetricDataType,
    SeriesAggFn, SeriesDataSource, SeriesType, WhereLanguage,
};
pub use dashboard::{Dashboard, Series, Tile};

use api_raw::observability::types::{AlertEnvelope, DashboardListEnvelope};

use crate::operation::ResponseBody;

impl ResponseBody for AlertEnvelope {}
impl ResponseBody for DashboardListEnvelope {}
