//! The management operations, as the runtime sees them. Ids, methods and path templates are the spec's;
//! a test in `tests/` checks them against `spec/management.yaml`.

use crate::operation::{Idempotency, Operation};

macro_rules! op {
    ($name:ident, $id:literal, $method:literal, $path:literal, $idempotency:ident) => {
        #[doc = concat!("`", $id, "`: `", $method, " ", $path, "`.")]
        pub static $name: Operation = Operation {
            id: $id,
            method: $method,
            path: $path,
            idempotency: Idempotency::$idempotency,
        };
    };
}

op!(
    UPDATE_SERVICE_STATE,
    "updateServiceState",
    "PATCH",
    "/v1/organizations/{organizationId}/services/{serviceId}/state",
    Idempotent
);
op!(
    CREATE_PIPE,
    "createPipe",
    "POST",
    "/v1/organizations/{organizationId}/services/{serviceId}/pipes",
    NotIdempotent
);
op!(
    GET_PIPE,
    "getPipe",
    "GET",
    "/v1/organizations/{organizationId}/services/{serviceId}/pipes/{pipeId}",
    Idempotent
);
op!(
    DELETE_PIPE,
    "deletePipe",
    "DELETE",
    "/v1/organizations/{organizationId}/services/{serviceId}/pipes/{pipeId}",
    Idempotent
);
op!(
    GET_PIPE_SETTINGS,
    "getPipeSettings",
    "GET",
    "/v1/organizations/{organizationId}/services/{serviceId}/pipes/{pipeId}/settings",
    Idempotent
);
op!(
    LIST_REVERSE_PRIVATE_ENDPOINTS,
    "listReversePrivateEndpoints",
    "GET",
    "/v1/organizations/{organizationId}/services/{serviceId}/pipesReversePrivateEndpoints",
    Idempotent
);
op!(
    CREATE_PRIVATE_ENDPOINT,
    "createPrivateEndpoint",
    "POST",
    "/v1/organizations/{organizationId}/services/{serviceId}/privateEndpoint",
    NotIdempotent
);

/// Every management operation.
pub static ALL: [&Operation; 7] = [
    &UPDATE_SERVICE_STATE,
    &CREATE_PIPE,
    &GET_PIPE,
    &DELETE_PIPE,
    &GET_PIPE_SETTINGS,
    &LIST_REVERSE_PRIVATE_ENDPOINTS,
    &CREATE_PRIVATE_ENDPOINT,
];
