//! Alerts, beside [`Alert`](crate::Alert): the handle, the id, and what an alert is made of (its
//! channel, interval, source, state and threshold).

pub use crate::handles::AlertHandle;
pub use api_core::AlertId;
pub use api_core::observability::{
    AlertChannel, AlertChannelType, AlertInterval, AlertSource, AlertState, AlertThresholdType,
};
