//! The management envelope `{status, requestId, result}`: where its request id is.

use api_raw::management::types::{
    EmptyEnvelope, PipeEnvelope, PipeSettingsEnvelope, PrivateEndpointEnvelope,
    ReversePrivateEndpointListEnvelope, ServiceEnvelope,
};

use crate::operation::ResponseBody;

macro_rules! envelope_body {
    ($($envelope:ty),+) => {$(
        impl ResponseBody for $envelope {
            fn request_id(&self) -> Option<String> {
                self.request_id.clone()
            }
        }
    )+};
}

envelope_body!(
    PipeEnvelope,
    PipeSettingsEnvelope,
    PrivateEndpointEnvelope,
    ReversePrivateEndpointListEnvelope,
    ServiceEnvelope
);

impl ResponseBody for EmptyEnvelope {
    fn request_id(&self) -> Option<String> {
        self.request_id.clone()
    }

    /// A delete may answer with an empty body.
    fn empty() -> Option<Self> {
        Some(Self::default())
    }
}
