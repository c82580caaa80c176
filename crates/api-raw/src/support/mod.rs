//! Hand-written types that the generated code uses in place of schemas marked `x-api-raw-type`.

mod capture;
#[cfg(any(feature = "management", feature = "observability"))]
#[macro_use]
mod open_enum;
mod number;
#[cfg(any(feature = "management", feature = "observability"))]
mod patterned;
mod secret;

#[cfg(feature = "management")]
mod management_enums;
#[cfg(feature = "observability")]
mod observability_enums;
#[cfg(feature = "management")]
mod quantity;

pub use capture::{Exchanged, capture_answer, prepare_request, with_answer_headers};
#[cfg(feature = "management")]
pub use management_enums::{
    Compression, MskAuthentication, PipeState, ReversePrivateEndpointStatus,
    ReversePrivateEndpointType, ServiceEndpointProtocol, ServiceState,
};
pub use number::{serialize_number, serialize_optional_number};
#[cfg(feature = "observability")]
pub use observability_enums::{
    AlertChannelType, AlertInterval, AlertSource, AlertState, AlertThresholdType, MetricDataType,
    SeriesAggFn, SeriesDataSource, SeriesType, WhereLanguage,
};
#[cfg(any(feature = "management", feature = "observability"))]
pub use open_enum::UnknownValue;
#[cfg(feature = "observability")]
pub use patterned::AlertId;
#[cfg(any(feature = "management", feature = "observability"))]
pub use patterned::PatternError;
#[cfg(feature = "management")]
pub use patterned::{Arn, OffsetTimestamp};
#[cfg(feature = "management")]
pub use quantity::{CpuMillicores, MemoryGb, QuantityError};
pub use secret::Secret;
