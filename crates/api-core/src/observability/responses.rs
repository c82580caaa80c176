//! Decoding the answer of each observability operation into its domain value, with the call's
//! metadata. The facade calls these after the runtime has run the operation.

use api_raw::observability::types as raw;

use super::operations as ops;
use super::{Alert, Dashboard};
use crate::envelope::{decode_list, decode_member};
use crate::error::Error;
use crate::response::Response;

/// `getAlert`: the alert.
pub fn alert(response: Response<raw::AlertEnvelope>) -> Result<Response<Alert>, Error> {
    decode_member(&ops::GET_ALERT, "data", response, |e| e.data, Alert::decode)
}

/// `listDashboards`: every dashboard (an absent list is empty).
pub fn dashboards(
    response: Response<raw::DashboardListEnvelope>,
) -> Result<Response<Vec<Dashboard>>, Error> {
    decode_member(
        &ops::LIST_DASHBOARDS,
        "data",
        response,
        |e| Some(e.data.unwrap_or_default()),
        |list, at| decode_list(list, at, Dashboard::decode),
    )
}
