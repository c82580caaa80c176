//! Fault injection: scripted answers per route, for testing clients.
//!
//! A rule matches a method (or any) and a path pattern (`*` matches one segment) and holds a list of
//! actions; each matching request consumes the next action, and the rule disappears when its list is
//! empty. Actions: a status (with the API's own error body, or a gateway HTML page for 502-504), a
//! delay, a dropped connection, a truncated or malformed body, an HTML page, or an explicit body.

use std::collections::BTreeMap;
use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use futures::stream;
use serde::{Deserialize, Serialize};

/// One scripted rule.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FaultRule {
    /// The HTTP method; any when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// The path pattern, e.g. `/v1/organizations/*/services/*/pipes/*`.
    pub path: String,
    /// What the next matching requests get, in order.
    pub actions: Vec<FaultAction>,
}

/// What one matching request gets.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct FaultAction {
    /// Answer with this status (and the API's error body unless `body` is given).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Wait this long first; alone, the request is then served normally.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delay_ms: Option<u64>,
    /// Close the connection without a complete answer.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub drop: bool,
    /// Serve the request normally, but cut the body in half and close the connection.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncate: bool,
    /// Answer `status` (200 by default) with a JSON body that does not parse.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub malformed: bool,
    /// Answer `status` (502 by default) with a gateway HTML page.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub html: bool,
    /// An explicit body.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// The content type of an explicit body (default `application/json`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// Extra response headers, e.g. `X-RateLimit-Reset`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
}

/// What the front layer does with a request after looking at the faults.
pub(crate) enum Decision {
    /// Serve it normally, after `delay`.
    Serve {
        delay: Duration,
        truncate: bool,
        headers: BTreeMap<String, String>,
    },
    /// Answer with this, after `delay`; `dropped` when the connection is cut on purpose.
    Answer {
        delay: Duration,
        response: Response,
        dropped: bool,
    },
}

/// Whether a pattern (`*` for one segment) matches a path.
pub fn path_matches(pattern: &str, path: &str) -> bool {
    let pattern: Vec<&str> = pattern.trim_end_matches('/').split('/').collect();
    let path: Vec<&str> = path.trim_end_matches('/').split('/').collect();
    pattern.len() == path.len() && pattern.iter().zip(&path).all(|(p, s)| *p == "*" || p == s)
}

/// Takes the next action of the first rule matching `method` and `path`, dropping exhausted rules.
pub(crate) fn next_action(
    rules: &mut Vec<FaultRule>,
    method: &str,
    path: &str,
) -> Option<FaultAction> {
    rules.retain(|rule| !rule.actions.is_empty());
    let index = rules.iter().position(|rule| {
        rule.method
            .as_deref()
            .is_none_or(|m| m.eq_ignore_ascii_case(method))
            && path_matches(&rule.path, path)
    })?;
    let action = rules[index].actions.remove(0);
    if rules[index].actions.is_empty() {
        rules.remove(index);
    }
    Some(action)
}

impl FaultAction {
    /// Turns the action into a decision for a request of the `management` API or not.
    pub(crate) fn decide(self, management: bool, request_id: &str) -> Decision {
        let delay = Duration::from_millis(self.delay_ms.unwrap_or(0));
        let answer = |response: Response| Decision::Answer {
            delay,
            response: with_headers(response, &self.headers),
            dropped: false,
        };
        if self.drop {
            return Decision::Answer {
                delay,
                response: aborted_body(Vec::new(), StatusCode::OK),
                dropped: true,
            };
        }
        if self.malformed {
            let status = status_or(self.status, StatusCode::OK);
            return answer(json(
                status,
                "{\"status\": 200, \"requestId\": \"0b1c\", \"result\": {\"id\": ".to_string(),
            ));
        }
        if self.html {
            return answer(gateway_page(status_or(
                self.status,
                StatusCode::BAD_GATEWAY,
            )));
        }
        if let Some(body) = self.body.clone() {
            let status = status_or(self.status, StatusCode::OK);
            let content_type = self
                .content_type
                .clone()
                .unwrap_or_else(|| "application/json".into());
            return answer(([("content-type", content_type)], body).into_response_with(status));
        }
        match self.status {
            Some(code) => {
                let status = status_or(Some(code), StatusCode::INTERNAL_SERVER_ERROR);
                answer(canned_error(status, management, request_id))
            }
            None => Decision::Serve {
                delay,
                truncate: self.truncate,
                headers: self.headers,
            },
        }
    }
}

fn status_or(code: Option<u16>, default: StatusCode) -> StatusCode {
    code.and_then(|c| StatusCode::from_u16(c).ok())
        .unwrap_or(default)
}

trait IntoResponseWith {
    fn into_response_with(self, status: StatusCode) -> Response;
}

impl<T: IntoResponse> IntoResponseWith for T {
    fn into_response_with(self, status: StatusCode) -> Response {
        let mut response = self.into_response();
        *response.status_mut() = status;
        response
    }
}

fn json(status: StatusCode, body: String) -> Response {
    ([("content-type", "application/json")], body).into_response_with(status)
}

/// The error body the real API would give for `status`: gateway HTML for 502-504, else the API's
/// own error shape.
fn canned_error(status: StatusCode, management: bool, request_id: &str) -> Response {
    if matches!(status.as_u16(), 502..=504) {
        return gateway_page(status);
    }
    if management {
        let code = crate::management::errors::code_for(status);
        let body = serde_json::json!({
            "status": status.as_u16(),
            "error": format!("{code}: injected fault"),
            "requestId": request_id,
        });
        json(status, body.to_string())
    } else if matches!(status.as_u16(), 401 | 429) {
        ([("content-type", "text/plain")], reason(status)).into_response_with(status)
    } else {
        json(
            status,
            serde_json::json!({ "message": reason(status) }).to_string(),
        )
    }
}

fn reason(status: StatusCode) -> String {
    status.canonical_reason().unwrap_or("Error").to_string()
}

fn gateway_page(status: StatusCode) -> Response {
    let title = format!("{} {}", status.as_u16(), reason(status));
    let page = format!(
        "<html>\r\n<head><title>{title}</title></head>\r\n<body>\r\n<center><h1>{title}</h1></center>\r\n</body>\r\n</html>\r\n"
    );
    ([("content-type", "text/html")], page).into_response_with(status)
}

fn with_headers(mut response: Response, headers: &BTreeMap<String, String>) -> Response {
    for (name, value) in headers {
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            response.headers_mut().insert(name, value);
        }
    }
    response
}

/// A response whose body stops after `bytes` with an error, so the server closes the connection
/// before the answer is complete.
fn aborted_body(bytes: Vec<u8>, status: StatusCode) -> Response {
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> = vec![
        Ok(bytes),
        Err(std::io::Error::new(
            std::io::ErrorKind::ConnectionAborted,
            "injected fault: connection dropped",
        )),
    ];
    let mut response = Response::new(Body::from_stream(stream::iter(chunks)));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert("content-type", HeaderValue::from_static("application/json"));
    response
}

/// Cuts a served response in half and drops the connection.
pub(crate) async fn truncate(response: Response) -> Response {
    let (parts, body) = response.into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    let half = bytes[..bytes.len() / 2].to_vec();
    let mut cut = aborted_body(half, parts.status);
    for (name, value) in parts.headers.iter() {
        if name != "content-length" {
            cut.headers_mut().insert(name.clone(), value.clone());
        }
    }
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_whole_segments() {
        assert!(path_matches(
            "/v1/organizations/*/services/*/pipes",
            "/v1/organizations/a/services/b/pipes"
        ));
        assert!(!path_matches(
            "/v1/organizations/*/services/*/pipes",
            "/v1/organizations/a/services/b/pipes/c"
        ));
        assert!(path_matches("/api/v2/dashboards", "/api/v2/dashboards/"));
    }

    #[test]
    fn rules_are_consumed_in_order_and_dropped_when_empty() {
        let mut rules = vec![FaultRule {
            method: Some("GET".into()),
            path: "/api/v2/dashboards".into(),
            actions: vec![
                FaultAction {
                    status: Some(503),
                    ..Default::default()
                },
                FaultAction {
                    status: Some(500),
                    ..Default::default()
                },
            ],
        }];
        assert!(
            next_action(&mut rules, "POST", "/api/v2/dashboards").is_none(),
            "method must match"
        );
        assert_eq!(
            next_action(&mut rules, "get", "/api/v2/dashboards")
                .unwrap()
                .status,
            Some(503)
        );
        assert_eq!(
            next_action(&mut rules, "GET", "/api/v2/dashboards")
                .unwrap()
                .status,
            Some(500)
        );
        assert!(rules.is_empty());
        assert!(next_action(&mut rules, "GET", "/api/v2/dashboards").is_none());
    }

    #[test]
    fn rules_parse_from_json() {
        let rule: FaultRule = serde_json::from_str(
            r#"{"method": "POST", "path": "/v1/organizations/*/services/*/pipes", "actions": [{"status": 429, "headers": {"X-RateLimit-Reset": "1"}}, {"drop": true}]}"#,
        )
        .unwrap();
        assert_eq!(rule.actions.len(), 2);
        assert!(rule.actions[1].drop);
        assert!(
            serde_json::from_str::<FaultRule>(r#"{"path": "/x", "actions": [{"stauts": 1}]}"#)
                .is_err()
        );
    }
}
