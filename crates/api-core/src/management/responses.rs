//! Decoding the answer of each management operation into its domain value, with the call's metadata.
//! The facade calls these after the runtime has run the operation.

use api_raw::management::types as raw;

use super::operations as ops;
use super::{Pipe, PipeSettings, PrivateEndpoint, ReversePrivateEndpoint, Service};
use crate::envelope::{decode_list, decode_member};
use crate::error::Error;
use crate::response::Response;

/// `updateServiceState`: the service as it is at the instant of the command.
pub fn service(response: Response<raw::ServiceEnvelope>) -> Result<Response<Service>, Error> {
    decode_member(
        &ops::UPDATE_SERVICE_STATE,
        "result",
        response,
        |e| e.result,
        Service::decode,
    )
}

/// `createPipe` and `getPipe`: the pipe.
pub fn pipe(
    op: &'static crate::Operation,
    response: Response<raw::PipeEnvelope>,
) -> Result<Response<Pipe>, Error> {
    decode_member(op, "result", response, |e| e.result, Pipe::decode)
}

/// `getPipeSettings`: the settings of a pipe.
pub fn pipe_settings(
    response: Response<raw::PipeSettingsEnvelope>,
) -> Result<Response<PipeSettings>, Error> {
    decode_member(
        &ops::GET_PIPE_SETTINGS,
        "result",
        response,
        |e| e.result,
        PipeSettings::decode,
    )
}

/// `listReversePrivateEndpoints`: every endpoint of the service (an absent list is empty).
pub fn reverse_private_endpoints(
    response: Response<raw::ReversePrivateEndpointListEnvelope>,
) -> Result<Response<Vec<ReversePrivateEndpoint>>, Error> {
    decode_member(
        &ops::LIST_REVERSE_PRIVATE_ENDPOINTS,
        "result",
        response,
        |e| Some(e.result.unwrap_or_default()),
        |list, at| decode_list(list, at, ReversePrivateEndpoint::decode),
    )
}

/// `createPrivateEndpoint`: the registered endpoint.
pub fn private_endpoint(
    response: Response<raw::PrivateEndpointEnvelope>,
) -> Result<Response<PrivateEndpoint>, Error> {
    decode_member(
        &ops::CREATE_PRIVATE_ENDPOINT,
        "result",
        response,
        |e| e.result,
        PrivateEndpoint::decode,
    )
}
