//! The observability operations, as the runtime sees them.

use crate::operation::{Idempotency, Operation};

/// `getAlert`: `GET /api/v2/alerts/{id}`.
pub static GET_ALERT: Operation = Operation {
    id: "getAlert",
    method: "GET",
    path: "/api/v2/alerts/{id}",
    idempotency: Idempotency::Idempotent,
};

/// `listDashboards`: `GET /api/v2/dashboards`.
pub static LIST_DASHBOARDS: Operation = Operation {
    id: "listDashboards",
    method: "GET",
    path: "/api/v2/dashboards",
    idempotency: Idempotency::Idempotent,
};

/// Every observability operation.
pub static ALL: [&Operation; 2] = [&GET_ALERT, &LIST_DASHBOARDS];
