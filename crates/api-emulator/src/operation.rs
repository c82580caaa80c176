//! The operations of both APIs, by `operationId`, and which one a request is.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::faults::path_matches;

/// Whether a request path belongs to the management API (`/v1/...`); every other path is answered
/// in the observability API's shape (the one rule of the server, the recorder, replay and check).
pub(crate) fn is_management_path(path: &str) -> bool {
    path.starts_with("/v1/")
}

/// Whether a request path belongs to the observability API (`/api/v2/...`).
pub(crate) fn is_observability_path(path: &str) -> bool {
    path.starts_with("/api/v2/")
}

/// An operation of the management or observability API, named as the spec's `operationId` (the
/// APIs grow: match with a wildcard arm).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub enum OperationId {
    /// `PATCH /v1/organizations/{organizationId}/services/{serviceId}/state`
    UpdateServiceState,
    /// `POST /v1/organizations/{organizationId}/services/{serviceId}/pipes`
    CreatePipe,
    /// `GET /v1/organizations/{organizationId}/services/{serviceId}/pipes/{pipeId}`
    GetPipe,
    /// `DELETE /v1/organizations/{organizationId}/services/{serviceId}/pipes/{pipeId}`
    DeletePipe,
    /// `GET /v1/organizations/{organizationId}/services/{serviceId}/pipes/{pipeId}/settings`
    GetPipeSettings,
    /// `GET /v1/organizations/{organizationId}/services/{serviceId}/pipesReversePrivateEndpoints`
    ListReversePrivateEndpoints,
    /// `POST /v1/organizations/{organizationId}/services/{serviceId}/privateEndpoint`
    CreatePrivateEndpoint,
    /// `GET /api/v2/alerts/{id}`
    GetAlert,
    /// `GET /api/v2/dashboards`
    ListDashboards,
}

impl OperationId {
    /// Every operation.
    pub const ALL: [OperationId; 9] = [
        Self::UpdateServiceState,
        Self::CreatePipe,
        Self::GetPipe,
        Self::DeletePipe,
        Self::GetPipeSettings,
        Self::ListReversePrivateEndpoints,
        Self::CreatePrivateEndpoint,
        Self::GetAlert,
        Self::ListDashboards,
    ];

    /// The `operationId` of the spec, e.g. `createPipe`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::UpdateServiceState => "updateServiceState",
            Self::CreatePipe => "createPipe",
            Self::GetPipe => "getPipe",
            Self::DeletePipe => "deletePipe",
            Self::GetPipeSettings => "getPipeSettings",
            Self::ListReversePrivateEndpoints => "listReversePrivateEndpoints",
            Self::CreatePrivateEndpoint => "createPrivateEndpoint",
            Self::GetAlert => "getAlert",
            Self::ListDashboards => "listDashboards",
        }
    }

    /// The HTTP method.
    pub fn method(self) -> &'static str {
        match self {
            Self::UpdateServiceState => "PATCH",
            Self::CreatePipe | Self::CreatePrivateEndpoint => "POST",
            Self::DeletePipe => "DELETE",
            _ => "GET",
        }
    }

    /// The path pattern, `*` for each path parameter (the form fault rules use).
    pub fn path_pattern(self) -> &'static str {
        match self {
            Self::UpdateServiceState => "/v1/organizations/*/services/*/state",
            Self::CreatePipe => "/v1/organizations/*/services/*/pipes",
            Self::GetPipe | Self::DeletePipe => "/v1/organizations/*/services/*/pipes/*",
            Self::GetPipeSettings => "/v1/organizations/*/services/*/pipes/*/settings",
            Self::ListReversePrivateEndpoints => {
                "/v1/organizations/*/services/*/pipesReversePrivateEndpoints"
            }
            Self::CreatePrivateEndpoint => "/v1/organizations/*/services/*/privateEndpoint",
            Self::GetAlert => "/api/v2/alerts/*",
            Self::ListDashboards => "/api/v2/dashboards",
        }
    }

    /// The operation a request is, if any.
    pub fn of_request(method: &str, path: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|op| {
            op.method().eq_ignore_ascii_case(method) && path_matches(op.path_pattern(), path)
        })
    }
}

impl fmt::Display for OperationId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An `operationId` that is not one of the APIs'.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown operationId {0:?}; known: updateServiceState, createPipe, getPipe, deletePipe, getPipeSettings, listReversePrivateEndpoints, createPrivateEndpoint, getAlert, listDashboards"
)]
pub struct UnknownOperation(String);

impl FromStr for OperationId {
    type Err = UnknownOperation;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|op| op.as_str() == text)
            .ok_or_else(|| UnknownOperation(text.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table above is the specs' own: every (method, path, operationId) of both, and no other.
    #[test]
    fn the_table_is_the_specs() {
        let mut from_specs = Vec::new();
        for text in [api_raw::spec::MANAGEMENT, api_raw::spec::OBSERVABILITY] {
            let spec: serde_json::Value = serde_norway::from_str(text).unwrap();
            for (path, item) in spec["paths"].as_object().unwrap() {
                for (method, operation) in item.as_object().unwrap() {
                    let Some(id) = operation.get("operationId").and_then(|v| v.as_str()) else {
                        continue;
                    };
                    let pattern: Vec<String> = path
                        .split('/')
                        .map(|s| {
                            if s.starts_with('{') {
                                "*".into()
                            } else {
                                s.into()
                            }
                        })
                        .collect();
                    from_specs.push((method.to_uppercase(), pattern.join("/"), id.to_string()));
                }
            }
        }
        from_specs.sort();
        let mut ours: Vec<_> = OperationId::ALL
            .iter()
            .map(|op| {
                (
                    op.method().to_string(),
                    op.path_pattern().to_string(),
                    op.as_str().to_string(),
                )
            })
            .collect();
        ours.sort();
        assert_eq!(ours, from_specs);
        for op in OperationId::ALL {
            assert_eq!(op.as_str().parse::<OperationId>(), Ok(op));
            assert_eq!(
                serde_json::to_value(op).unwrap(),
                serde_json::json!(op.as_str())
            );
        }
    }

    #[test]
    fn requests_are_matched_to_operations() {
        let pipe = "/v1/organizations/o/services/s/pipes/p";
        assert_eq!(
            OperationId::of_request("GET", pipe),
            Some(OperationId::GetPipe)
        );
        assert_eq!(
            OperationId::of_request("delete", pipe),
            Some(OperationId::DeletePipe)
        );
        assert_eq!(OperationId::of_request("PUT", pipe), None);
        assert_eq!(
            OperationId::of_request("GET", "/api/v2/alerts/a1"),
            Some(OperationId::GetAlert)
        );
        assert_eq!(OperationId::of_request("GET", "/v1/nothing"), None);
        let error = "creatPipe".parse::<OperationId>().unwrap_err().to_string();
        assert!(error.contains("\"creatPipe\"") && error.contains("createPipe"));
    }
}
