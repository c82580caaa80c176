//! Dashboards, beside [`Dashboard`](crate::Dashboard): the handle, the id, and what a dashboard is
//! made of (tiles, their series and how each series reads its data).

pub use crate::handles::Dashboards;
pub use api_core::DashboardId;
pub use api_core::observability::{
    MetricDataType, Series, SeriesAggFn, SeriesDataSource, SeriesType, Tile, WhereLanguage,
};
