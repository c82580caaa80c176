//! Fault injection: scripted answers per operation or route, for testing clients.
//!
//! A [`FaultRule`] matches a method (or any) and a path pattern (`*` matches one segment), or an
//! operation by its `operationId`, and holds a list of [`Fault`]s; each matching request consumes the
//! next one (a fault with `times` serves that many requests, one with `always` every request from
//! then on), and the rule disappears when its list is empty. A fault answers with a status (the API's
//! own error body, or a gateway HTML page for 502-504), a delay, a connection closed before a single
//! byte (`hangup`) or after the headers (`drop`), a truncated or malformed body, an HTML page, or an
//! explicit body; `then: apply` lets the request take effect before the fault answers.
//!
//! ```
//! use std::time::Duration;
//! use api_emulator::{Fault, FaultRule, Method, OperationId};
//!
//! // The next create is stored, then answered with a 504: the client cannot know it worked.
//! let unknown = FaultRule::operation(OperationId::CreatePipe).then(Fault::status(504).applied());
//! // Two 503s, then the connection is closed before any answer, on every service's pipes.
//! let flaky = FaultRule::on(Method::POST, "/v1/organizations/*/services/*/pipes")
//!     .then(Fault::status(503).times(2))
//!     .then(Fault::hangup());
//! // Every dashboards read is slow, for good.
//! let slow = FaultRule::operation(OperationId::ListDashboards)
//!     .then(Fault::delay(Duration::from_millis(300)).always());
//! # let _ = (unknown, flaky, slow);
//! ```

use std::collections::BTreeMap;
use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderName, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use futures::stream;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::operation::OperationId;

/// One scripted rule: which requests it matches and the faults they get, in order.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct FaultRule {
    /// The HTTP method; any when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// The path pattern, e.g. `/v1/organizations/*/services/*/pipes/*`; any path when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The operation (`createPipe`, ...); any when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operation: Option<OperationId>,
    /// What the next matching requests get, in order.
    pub actions: Vec<Fault>,
}

impl FaultRule {
    /// Matches `method` on paths that match `pattern` (`*` for one segment).
    pub fn on(method: Method, pattern: impl Into<String>) -> Self {
        Self {
            method: Some(method.as_str().to_string()),
            path: Some(pattern.into()),
            operation: None,
            actions: Vec::new(),
        }
    }

    /// Matches any method on paths that match `pattern`.
    pub fn on_path(pattern: impl Into<String>) -> Self {
        Self {
            method: None,
            path: Some(pattern.into()),
            operation: None,
            actions: Vec::new(),
        }
    }

    /// Matches the requests of one operation.
    pub fn operation(operation: OperationId) -> Self {
        Self {
            method: None,
            path: None,
            operation: Some(operation),
            actions: Vec::new(),
        }
    }

    /// Adds the fault the next matching request gets after those added before.
    pub fn then(mut self, fault: Fault) -> Self {
        self.actions.push(fault);
        self
    }

    /// Why the rule cannot be armed, if it cannot.
    pub fn problem(&self) -> Option<String> {
        if self.path.is_none() && self.operation.is_none() {
            return Some("a rule needs a path or an operation".into());
        }
        if self.actions.is_empty() {
            return Some("a rule needs at least one action".into());
        }
        if let Some(method) = &self.method
            && Method::from_bytes(method.as_bytes()).is_err()
        {
            return Some(format!("{method:?} is not an HTTP method"));
        }
        self.actions.iter().enumerate().find_map(|(i, fault)| {
            let problem = fault.problem()?;
            Some(format!("actions[{i}]: {problem}"))
        })
    }

    fn matches(&self, method: &str, path: &str, operation: Option<OperationId>) -> bool {
        self.method
            .as_deref()
            .is_none_or(|m| m.eq_ignore_ascii_case(method))
            && self.path.as_deref().is_none_or(|p| path_matches(p, path))
            && self.operation.is_none_or(|op| Some(op) == operation)
    }
}

/// Whether the request takes effect on the server's state before a fault answers it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Then {
    /// The request is not served: nothing changes (the default).
    #[default]
    Skip,
    /// The request is served (a create is stored), then its answer is replaced by the fault.
    Apply,
}

/// How many matching requests one fault serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Times {
    /// This many (at least one).
    Count(u32),
    /// Every matching request from then on.
    Always,
}

impl Default for Times {
    fn default() -> Self {
        Self::Count(1)
    }
}

impl Serialize for Times {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Count(n) => serializer.serialize_u32(*n),
            Self::Always => serializer.serialize_str("always"),
        }
    }
}

impl<'de> Deserialize<'de> for Times {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Wire {
            Count(u32),
            Word(String),
        }
        match Wire::deserialize(deserializer)? {
            Wire::Count(n) => Ok(Self::Count(n)),
            Wire::Word(word) if word == "always" => Ok(Self::Always),
            Wire::Word(word) => Err(serde::de::Error::custom(format!(
                "times must be a count or \"always\", not {word:?}"
            ))),
        }
    }
}

fn is_once(times: &Times) -> bool {
    *times == Times::Count(1)
}

/// What one matching request gets.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
#[non_exhaustive]
pub struct Fault {
    /// Answer with this status (and the API's error body unless `body` is given).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Wait this long first; alone, the request is then served normally.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delay_ms: Option<u64>,
    /// Close the connection before a single byte of the answer is sent.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub hangup: bool,
    /// Send the status line and headers, then close the connection without a body.
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
    /// Whether the request still takes effect before the fault answers.
    #[serde(skip_serializing_if = "is_skip")]
    pub then: Then,
    /// How many matching requests this fault serves.
    #[serde(skip_serializing_if = "is_once")]
    pub times: Times,
}

fn is_skip(then: &Then) -> bool {
    *then == Then::Skip
}

impl Fault {
    /// Answer with `status` and the body the API gives for it (the management envelope, the
    /// observability `{message}`, or a gateway HTML page for 502-504).
    pub fn status(status: u16) -> Self {
        Self {
            status: Some(status),
            ..Self::default()
        }
    }

    /// Close the connection before a single byte of the answer is sent: for a POST, the request
    /// may have reached the server and the client cannot know.
    pub fn hangup() -> Self {
        Self {
            hangup: true,
            ..Self::default()
        }
    }

    /// Send a 200 status line and headers, then close the connection without the body.
    pub fn drop_connection() -> Self {
        Self {
            drop: true,
            ..Self::default()
        }
    }

    /// Serve the request, but send only the first half of the body and close the connection.
    pub fn truncate() -> Self {
        Self {
            truncate: true,
            ..Self::default()
        }
    }

    /// Answer 200 with a JSON body that does not parse.
    pub fn malformed() -> Self {
        Self {
            malformed: true,
            ..Self::default()
        }
    }

    /// Answer `status` with a gateway's HTML page, as a proxy in front of the API does.
    pub fn gateway_page(status: u16) -> Self {
        Self {
            status: Some(status),
            html: true,
            ..Self::default()
        }
    }

    /// Answer `status` with exactly `body` (`application/json` unless [`Fault::content_type`]).
    pub fn body(status: u16, body: impl Into<String>) -> Self {
        Self {
            status: Some(status),
            body: Some(body.into()),
            ..Self::default()
        }
    }

    /// Wait `delay`, then serve the request normally.
    pub fn delay(delay: Duration) -> Self {
        Self::default().after(delay)
    }

    /// Wait `delay` before this fault answers.
    pub fn after(mut self, delay: Duration) -> Self {
        self.delay_ms = Some(u64::try_from(delay.as_millis()).unwrap_or(u64::MAX));
        self
    }

    /// Adds a response header, e.g. `X-RateLimit-Reset`.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.insert(name.into(), value.into());
        self
    }

    /// The content type of an explicit body.
    pub fn content_type(mut self, content_type: impl Into<String>) -> Self {
        self.content_type = Some(content_type.into());
        self
    }

    /// Let the request take effect (a create is stored) before the fault answers it: with a status
    /// or a body, that answer replaces the request's own; with [`delay`](Self::delay) alone, the
    /// request's own answer comes after the delay (a slow answer to a create that happened).
    pub fn applied(mut self) -> Self {
        self.then = Then::Apply;
        self
    }

    /// Serve `count` matching requests with this fault (0 counts as 1).
    pub fn times(mut self, count: u32) -> Self {
        self.times = Times::Count(count.max(1));
        self
    }

    /// Serve every matching request from now on with this fault.
    pub fn always(mut self) -> Self {
        self.times = Times::Always;
        self
    }

    fn problem(&self) -> Option<String> {
        if let Some(status) = self.status
            && !(100..=599).contains(&status)
        {
            return Some(format!("status {status} is not an HTTP status"));
        }
        if self.times == Times::Count(0) {
            return Some("times must be at least 1".into());
        }
        if self.hangup && self.drop {
            return Some("hangup and drop exclude each other".into());
        }
        None
    }
}

/// How the connection ends after an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cut {
    /// It does not: the answer is complete.
    No,
    /// After the status line and headers.
    AfterHeaders,
    /// Before a single byte.
    BeforeAnything,
}

/// What the front layer does with a request after looking at the faults.
pub(crate) enum Decision {
    /// Serve it normally, after `delay`; when `apply`, serve it at once and answer after `delay`
    /// (a slow answer to a request that took effect).
    Serve {
        delay: Duration,
        truncate: bool,
        headers: BTreeMap<String, String>,
        apply: bool,
    },
    /// Answer with this, after `delay`; serve the request first (and throw its answer away) when
    /// `apply`.
    Answer {
        delay: Duration,
        response: Response,
        cut: Cut,
        apply: bool,
    },
}

/// Whether a pattern (`*` for one segment) matches a path.
pub fn path_matches(pattern: &str, path: &str) -> bool {
    let pattern: Vec<&str> = pattern.trim_end_matches('/').split('/').collect();
    let path: Vec<&str> = path.trim_end_matches('/').split('/').collect();
    pattern.len() == path.len() && pattern.iter().zip(&path).all(|(p, s)| *p == "*" || p == s)
}

/// Takes the next fault of the first rule matching the request, dropping exhausted rules.
pub(crate) fn next_action(
    rules: &mut Vec<FaultRule>,
    method: &str,
    path: &str,
    operation: Option<OperationId>,
) -> Option<Fault> {
    rules.retain(|rule| !rule.actions.is_empty());
    let index = rules
        .iter()
        .position(|rule| rule.matches(method, path, operation))?;
    let actions = &mut rules[index].actions;
    let fault = match actions[0].times {
        Times::Always => actions[0].clone(),
        Times::Count(n) if n > 1 => {
            actions[0].times = Times::Count(n - 1);
            Fault {
                times: Times::Count(1),
                ..actions[0].clone()
            }
        }
        Times::Count(_) => actions.remove(0),
    };
    if actions.is_empty() {
        rules.remove(index);
    }
    Some(fault)
}

impl Fault {
    /// Turns the fault into a decision for a request of the `management` API or not.
    pub(crate) fn decide(self, management: bool, request_id: &str) -> Decision {
        let delay = Duration::from_millis(self.delay_ms.unwrap_or(0));
        let apply = self.then == Then::Apply;
        let answer = |response: Response| Decision::Answer {
            delay,
            response: with_headers(response, &self.headers),
            cut: Cut::No,
            apply,
        };
        if self.hangup {
            return Decision::Answer {
                delay,
                response: StatusCode::OK.into_response(),
                cut: Cut::BeforeAnything,
                apply,
            };
        }
        if self.drop {
            return Decision::Answer {
                delay,
                response: aborted_body(Vec::new(), StatusCode::OK),
                cut: Cut::AfterHeaders,
                apply,
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
                apply,
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

/// `response` with these extra headers (names or values that are not valid HTTP are left out).
pub(crate) fn with_headers(mut response: Response, headers: &BTreeMap<String, String>) -> Response {
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
        let mut rules = vec![
            FaultRule::on(Method::GET, "/api/v2/dashboards")
                .then(Fault::status(503))
                .then(Fault::status(500)),
        ];
        let dashboards = Some(OperationId::ListDashboards);
        assert!(
            next_action(&mut rules, "POST", "/api/v2/dashboards", None).is_none(),
            "method must match"
        );
        let next = |rules: &mut Vec<FaultRule>| {
            next_action(rules, "get", "/api/v2/dashboards", dashboards).map(|f| f.status)
        };
        assert_eq!(next(&mut rules), Some(Some(503)));
        assert_eq!(next(&mut rules), Some(Some(500)));
        assert!(rules.is_empty());
        assert_eq!(next(&mut rules), None);
    }

    #[test]
    fn counted_and_permanent_faults() {
        let mut rules = vec![
            FaultRule::operation(OperationId::CreatePipe)
                .then(Fault::status(429).times(2))
                .then(Fault::status(503).always()),
        ];
        let path = "/v1/organizations/o/services/s/pipes";
        let mut next = |operation| next_action(&mut rules, "POST", path, operation);
        assert!(
            next(None).is_none(),
            "an operation rule needs the operation"
        );
        let seen: Vec<_> = (0..5)
            .map(|_| next(Some(OperationId::CreatePipe)).and_then(|f| f.status))
            .collect();
        assert_eq!(
            seen,
            [Some(429), Some(429), Some(503), Some(503), Some(503)]
        );
        assert_eq!(rules.len(), 1, "an always fault stays");
    }

    #[test]
    fn rules_parse_from_json_and_say_what_is_wrong() {
        let rule: FaultRule = serde_json::from_str(
            r#"{"method": "POST", "path": "/v1/organizations/*/services/*/pipes", "actions": [{"status": 429, "headers": {"X-RateLimit-Reset": "1"}, "times": 2}, {"hangup": true, "then": "apply"}, {"status": 503, "times": "always"}]}"#,
        )
        .unwrap();
        assert_eq!(
            rule,
            FaultRule::on(Method::POST, "/v1/organizations/*/services/*/pipes")
                .then(Fault::status(429).header("X-RateLimit-Reset", "1").times(2))
                .then(Fault::hangup().applied())
                .then(Fault::status(503).always())
        );
        let back = serde_json::to_value(&rule).unwrap();
        assert_eq!(
            back["actions"][1],
            serde_json::json!({"hangup": true, "then": "apply"})
        );
        assert_eq!(back["actions"][2]["times"], "always");
        let by_operation: FaultRule =
            serde_json::from_str(r#"{"operation": "createPipe", "actions": [{"status": 504}]}"#)
                .unwrap();
        assert_eq!(by_operation.problem(), None);
        for (text, expected) in [
            (r#"{"path": "/x", "actions": [{"stauts": 1}]}"#, "stauts"),
            (
                r#"{"operation": "creatPipe", "actions": [{}]}"#,
                "creatPipe",
            ),
            (
                r#"{"path": "/x", "actions": [{"times": "often"}]}"#,
                "often",
            ),
            (r#"{"path": "/x", "actions": [{"then": "later"}]}"#, "later"),
        ] {
            let error = serde_json::from_str::<FaultRule>(text)
                .unwrap_err()
                .to_string();
            assert!(error.contains(expected), "{text}: {error}");
        }
        for (rule, expected) in [
            (
                FaultRule::operation(OperationId::GetPipe),
                "at least one action",
            ),
            (
                FaultRule::operation(OperationId::GetPipe).then(Fault::status(700)),
                "actions[0]: status 700",
            ),
            (
                FaultRule::on_path("/x").then(Fault {
                    times: Times::Count(0),
                    ..Fault::status(500)
                }),
                "at least 1",
            ),
        ] {
            assert!(
                rule.problem().is_some_and(|p| p.contains(expected)),
                "{rule:?}"
            );
        }
        let no_target: FaultRule =
            serde_json::from_str(r#"{"actions": [{"status": 500}]}"#).unwrap();
        assert_eq!(
            no_target.problem().as_deref(),
            Some("a rule needs a path or an operation")
        );
    }
}
