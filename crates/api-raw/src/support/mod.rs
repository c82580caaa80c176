//! Hand-written types that the generated code uses in place of schemas marked `x-api-raw-type`.

mod exchange;
#[cfg(any(feature = "management", feature = "observability"))]
#[macro_use]
mod open_enum;
mod number;
mod operation;
#[cfg(any(feature = "management", feature = "observability"))]
mod patterned;
pub mod redact;
#[cfg(all(
    feature = "schema",
    any(feature = "management", feature = "observability")
))]
pub mod schema;
mod secret;

#[cfg(feature = "management")]
mod management_enums;
#[cfg(feature = "observability")]
mod observability_enums;
#[cfg(feature = "management")]
mod quantity;

#[allow(
    deprecated,
    reason = "re-exported for callers that wired the old hook themselves"
)]
pub use exchange::capture_answer;
pub use exchange::{
    Attempt, Exchanged, RequestDefaults, UrlHook, from_response, prepare_request,
    with_answer_headers, with_attempt,
};
#[cfg(feature = "management")]
pub use management_enums::{
    Compression, MskAuthentication, PipeState, ReversePrivateEndpointStatus,
    ReversePrivateEndpointType, ServiceEndpointProtocol, ServiceState,
};
pub use number::{
    is_integer, same_number, serialize_number, serialize_optional_number, whole_number,
};
#[cfg(feature = "observability")]
pub use observability_enums::{
    AlertChannelType, AlertInterval, AlertSource, AlertState, AlertThresholdType, MetricDataType,
    SeriesAggFn, SeriesDataSource, SeriesType, WhereLanguage,
};
#[cfg(any(feature = "management", feature = "observability"))]
pub use open_enum::UnknownValue;
pub use operation::{Idempotency, Operation, operation};
#[cfg(feature = "observability")]
pub use patterned::AlertId;
#[cfg(feature = "management")]
pub use patterned::{Arn, CPU_QUANTITY_PATTERN, MEMORY_QUANTITY_PATTERN, OffsetTimestamp};
#[cfg(any(feature = "management", feature = "observability"))]
pub use patterned::{PatternError, check_for_pattern, describe_pattern};
#[cfg(feature = "management")]
pub use quantity::{CpuMillicores, MemoryGb, QuantityError};
pub use secret::Secret;
