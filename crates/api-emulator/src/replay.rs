//! `api-emulator replay`: a server that answers the exchanges of a [cassette](crate::cassette).
//!
//! A request gets the first unused recorded exchange of its operation (so, by default, in order per
//! operation) whose path, query and body match: the request is first put through the same redaction
//! the recorder applied, then compared, a recorded `"[REDACTED]"` matching anything and numbers by
//! value. A request that matches none is answered 400 in the API's error shape (`NOT_RECORDED: ...`)
//! naming what was asked and the nearest recorded exchange with the difference, and is logged;
//! `GET /_emulator/cassette` (the control token) reports which exchanges were used and which not.
//!
//! An exchange whose answer's body the recorder could not keep (too large, not text, compressed) is
//! said at start (`tracing`, and in the report), and a request that gets it is answered 400
//! `NOT_KEPT: ...` naming the exchange and why, not a body that was never recorded.

use std::net::SocketAddr;
use std::ops::ControlFlow;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use api_raw::support::redact::REDACTED;
use axum::body::Bytes;
use axum::extract::State;
use axum::extract::connect_info::ConnectInfo;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::Value;

use crate::EmulatorError;
use crate::cassette::{Cassette, Exchange, Kept, Unkept, kept_request};
use crate::connection::Connection;
use crate::operation::OperationId;
use crate::serving::Serving;

/// The status of a request that matches no recorded exchange: the request differs from what was
/// recorded (a 400 cannot be taken for a create that may have happened, nor for "not found").
pub const NOT_RECORDED: StatusCode = StatusCode::BAD_REQUEST;

/// A running replay server.
#[derive(Debug)]
pub struct Replay {
    serving: Serving,
    state: Arc<ReplayState>,
}

#[derive(Debug)]
struct ReplayState {
    cassette: Cassette,
    used: Mutex<Vec<bool>>,
    unmatched: Mutex<Vec<String>>,
    control_token: String,
}

/// What a replay has answered so far (also `GET /_emulator/cassette`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct CassetteReport {
    /// The recorded exchanges, by their place in the cassette (1 for the first).
    pub exchanges: Vec<ExchangeUse>,
    /// The requests that matched no recorded exchange, or one whose answer was not kept, as they
    /// were answered.
    pub unmatched: Vec<String>,
    /// The exchanges whose bodies the recorder could not keep, said as `exchange N (operation):
    /// the response body: <size> bytes, not kept: <why>`.
    pub unkept: Vec<String>,
}

/// One recorded exchange and whether it was answered.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ExchangeUse {
    /// Its place in the cassette, from 1.
    pub number: usize,
    /// Its operation.
    pub operation_id: Option<OperationId>,
    /// Its method and path.
    pub request: String,
    /// Whether a request got it.
    pub used: bool,
}

impl CassetteReport {
    /// The exchanges no request got.
    pub fn unused(&self) -> Vec<&ExchangeUse> {
        self.exchanges.iter().filter(|e| !e.used).collect()
    }
}

impl Replay {
    /// Answers `cassette` on `listen` (port 0 picks a free port); the control endpoint takes the
    /// built-in seed's control token.
    pub async fn start(cassette: Cassette, listen: SocketAddr) -> Result<Self, EmulatorError> {
        let used = vec![false; cassette.exchanges.len()];
        for said in unkept(&cassette) {
            tracing::warn!("{said}: a request that gets it is answered 400 NOT_KEPT");
        }
        let state = Arc::new(ReplayState {
            cassette,
            used: Mutex::new(used),
            unmatched: Mutex::new(Vec::new()),
            control_token: crate::Seed::builtin().control.token,
        });
        let router = axum::Router::new()
            .route("/_emulator/cassette", axum::routing::get(report))
            .fallback(answer)
            .with_state(state.clone());
        let serving = Serving::start(router, listen, async {}).await?;
        Ok(Self { serving, state })
    }

    /// Reads the cassette at `path` and answers it on a free loopback port.
    pub async fn from_file(path: &Path) -> Result<Self, EmulatorError> {
        let cassette = Cassette::read(path).map_err(|e| EmulatorError(e.to_string()))?;
        Self::start(cassette, SocketAddr::from(([127, 0, 0, 1], 0))).await
    }

    /// The base URL of both APIs.
    pub fn base_url(&self) -> String {
        self.serving.base_url()
    }

    /// The token of `GET /_emulator/cassette`.
    pub fn control_token(&self) -> &str {
        &self.state.control_token
    }

    /// Which exchanges were answered, and the requests that matched none.
    pub fn report(&self) -> CassetteReport {
        self.state.report()
    }

    /// Stops and waits for the server to finish.
    pub async fn shutdown(self) {
        self.serving.shutdown().await;
    }
}

impl ReplayState {
    fn report(&self) -> CassetteReport {
        let used = self.used.lock().unwrap_or_else(PoisonError::into_inner);
        CassetteReport {
            exchanges: self
                .cassette
                .exchanges
                .iter()
                .zip(used.iter())
                .enumerate()
                .map(|(index, (exchange, used))| ExchangeUse {
                    number: index + 1,
                    operation_id: exchange.operation_id,
                    request: format!("{} {}", exchange.method, exchange.path),
                    used: *used,
                })
                .collect(),
            unmatched: self
                .unmatched
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone(),
            unkept: unkept(&self.cassette),
        }
    }
}

/// Every body of `cassette` the recorder could not keep, said with its exchange.
pub(crate) fn unkept(cassette: &Cassette) -> Vec<String> {
    let mut said = Vec::new();
    for (index, exchange) in cassette.exchanges.iter().enumerate() {
        let name = exchange
            .operation_id
            .map_or_else(|| exchange.path.clone(), |op| op.as_str().to_string());
        for (which, body) in [
            ("request", &exchange.request_unkept),
            ("response", &exchange.response_unkept),
        ] {
            if let Some(body) = body {
                said.push(format!(
                    "exchange {} ({name}): the {which} body: {body}",
                    index + 1
                ));
            }
        }
    }
    said
}

async fn report(State(state): State<Arc<ReplayState>>, headers: HeaderMap) -> Response {
    let authorized = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        == Some(state.control_token.as_str());
    if !authorized {
        return (StatusCode::UNAUTHORIZED, "the control token is required").into_response();
    }
    axum::Json(state.report()).into_response()
}

/// A request as the recorder would have written it.
struct Asked {
    operation: Option<OperationId>,
    method: String,
    path: String,
    query: Option<String>,
    body: Option<Value>,
    text: Option<String>,
    unkept: Option<Unkept>,
}

async fn answer(
    State(state): State<Arc<ReplayState>>,
    ConnectInfo(connection): ConnectInfo<Connection>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (kept, redactor) = kept_request(&headers, &body);
    let mut asked = Asked {
        operation: OperationId::of_request(method.as_str(), uri.path()),
        method: method.to_string(),
        path: redactor.text(uri.path()).into_owned(),
        query: uri.query().map(|q| redactor.text(q).into_owned()),
        body: None,
        text: None,
        unkept: None,
    };
    match kept {
        Kept::Empty => {}
        Kept::Json(json) => asked.body = Some(redactor.json_copy(&json)),
        Kept::Text(text) => asked.text = Some(redactor.text(&text).into_owned()),
        Kept::Unkept(unkept) => asked.unkept = Some(unkept),
    }
    let exchanges = &state.cassette.exchanges;
    let found = {
        let mut used = state.used.lock().unwrap_or_else(PoisonError::into_inner);
        let found = (0..exchanges.len()).find(|&i| {
            !used[i]
                && same_request(&exchanges[i], &asked)
                && difference(&exchanges[i], &asked).is_none()
        });
        if let Some(i) = found {
            used[i] = true;
        }
        found
    };
    match found {
        Some(i) if exchanges[i].response_unkept.is_some() => {
            let body = exchanges[i]
                .response_unkept
                .as_ref()
                .map(ToString::to_string);
            let message = format!(
                "exchange {} ({} {}) was recorded, but not its answer's body: {}",
                i + 1,
                asked.method,
                asked.path,
                body.unwrap_or_default()
            );
            refusal(&state, uri.path(), "NOT_KEPT", message)
        }
        Some(i) => recorded_answer(&exchanges[i], &connection),
        None => {
            let used = state
                .used
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone();
            let what = match &asked.operation {
                Some(op) => format!("{} ({} {})", op.as_str(), asked.method, asked.path),
                None => format!("{} {}", asked.method, asked.path),
            };
            let why = not_recorded(exchanges, &used, &asked, &what);
            let message = format!("no recorded answer for {what}: {why}");
            refusal(&state, uri.path(), "NOT_RECORDED", message)
        }
    }
}

/// A request replay cannot answer as recorded: said in the log, kept for the report, and answered
/// 400 in the API's error shape (`code: message` in the management envelope, `{"message"}` on the
/// observability API).
fn refusal(state: &ReplayState, path: &str, code: &str, message: String) -> Response {
    tracing::warn!("{message}");
    let body = if crate::operation::is_management_path(path) {
        serde_json::json!({
            "status": NOT_RECORDED.as_u16(),
            "error": format!("{code}: {message}"),
            "requestId": uuid::Uuid::new_v4().to_string(),
        })
    } else {
        serde_json::json!({ "message": format!("{code}: {message}") })
    };
    state
        .unmatched
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(message);
    (NOT_RECORDED, axum::Json(body)).into_response()
}

/// Whether a recorded exchange is of the same operation (or, for paths no operation matches, the
/// same method and path).
fn same_request(exchange: &Exchange, asked: &Asked) -> bool {
    match (exchange.operation_id, asked.operation) {
        (Some(recorded), Some(asked)) => recorded == asked,
        (None, None) => exchange.method == asked.method && exchange.path == asked.path,
        _ => false,
    }
}

/// Why nothing answers `asked`: the nearest unused exchange of its operation (the fewest
/// differences) and its first difference; else that every one was answered (naming the last); else
/// the operations the cassette holds.
fn not_recorded(exchanges: &[Exchange], used: &[bool], asked: &Asked, what: &str) -> String {
    let same: Vec<usize> = (0..exchanges.len())
        .filter(|&i| same_request(&exchanges[i], asked))
        .collect();
    let nearest = same
        .iter()
        .filter(|&&i| !used[i])
        .min_by_key(|&&i| (distance(&exchanges[i], asked), i));
    if let Some(&i) = nearest {
        return format!(
            "the nearest, exchange {}, differs: {}",
            i + 1,
            difference(&exchanges[i], asked).unwrap_or_default()
        );
    }
    if let Some(&last) = same.last() {
        return format!(
            "every recorded {what} was answered already (the last is exchange {})",
            last + 1
        );
    }
    let mut held = std::collections::BTreeMap::<String, usize>::new();
    for exchange in exchanges {
        let name = match exchange.operation_id {
            Some(op) => op.as_str().to_string(),
            None => format!("{} {}", exchange.method, exchange.path),
        };
        *held.entry(name).or_default() += 1;
    }
    if held.is_empty() {
        return "the cassette has no exchange".into();
    }
    let held: Vec<String> = held
        .into_iter()
        .map(|(name, count)| format!("{name} x{count}"))
        .collect();
    format!(
        "the cassette has no exchange of that operation (it holds {})",
        held.join(", ")
    )
}

/// How many places a recorded exchange of the same operation differs from the asked request in:
/// the path, the query, and each differing member of the body.
fn distance(exchange: &Exchange, asked: &Asked) -> usize {
    let body = match (&exchange.request_body, &asked.body) {
        (Some(recorded), Some(asked)) => json_distance(recorded, asked),
        (None, None) => usize::from(
            exchange.request_text != asked.text || exchange.request_unkept != asked.unkept,
        ),
        _ => 1,
    };
    usize::from(exchange.path != asked.path) + usize::from(exchange.query != asked.query) + body
}

/// How the asked request differs from a recorded one of its operation; `None` when it matches.
fn difference(exchange: &Exchange, asked: &Asked) -> Option<String> {
    if exchange.path != asked.path {
        return Some(format!(
            "the path: recorded {}, asked {}",
            exchange.path, asked.path
        ));
    }
    if exchange.query != asked.query {
        return Some(format!(
            "the query: recorded {:?}, asked {:?}",
            exchange.query.as_deref().unwrap_or(""),
            asked.query.as_deref().unwrap_or("")
        ));
    }
    match (&exchange.request_body, &asked.body) {
        (Some(recorded), Some(asked)) => {
            json_difference(recorded, asked, "").map(|(at, recorded, asked)| {
                format!("the body at `{at}`: recorded {recorded}, asked {asked}")
            })
        }
        (None, None)
            if exchange.request_text == asked.text && exchange.request_unkept == asked.unkept =>
        {
            None
        }
        (None, None) => Some("the body's text".into()),
        (Some(_), None) => Some("the body: recorded one, asked none".into()),
        (None, Some(_)) => Some("the body: asked one, recorded none".into()),
    }
}

/// The first place two JSON values differ, as (path, recorded, asked), `nothing` for a member on
/// one side only (see [`each_difference`]).
fn json_difference(recorded: &Value, asked: &Value, at: &str) -> Option<(String, String, String)> {
    let shown = |value: Option<&Value>| value.map_or_else(|| "nothing".into(), Value::to_string);
    let mut first = None;
    let _ = each_difference(recorded, asked, at, &mut |path, recorded, asked| {
        first = Some((path, shown(recorded), shown(asked)));
        ControlFlow::Break(())
    });
    first
}

/// Told of one difference: its path, the recorded and the asked value; breaks to stop the walk.
type Found<'f> = dyn FnMut(String, Option<&Value>, Option<&Value>) -> ControlFlow<()> + 'f;

/// Calls `found` with each place two JSON values differ, in member order, until it breaks: the path
/// (`.` for the root), the recorded and the asked value (`None` for a member on one side only). A
/// recorded `"[REDACTED]"` matches anything, numbers compare by value (`200` and `200.0` are the
/// same), and arrays of different lengths differ as a whole.
fn each_difference(
    recorded: &Value,
    asked: &Value,
    at: &str,
    found: &mut Found<'_>,
) -> ControlFlow<()> {
    match (recorded, asked) {
        (Value::String(text), _) if text == REDACTED => ControlFlow::Continue(()),
        (Value::Number(a), Value::Number(b)) if a.as_f64() == b.as_f64() => {
            ControlFlow::Continue(())
        }
        (Value::Object(a), Value::Object(b)) => {
            let mut names: Vec<&String> = a.keys().chain(b.keys()).collect();
            names.sort();
            names.dedup();
            for name in names {
                let path = if at.is_empty() {
                    name.clone()
                } else {
                    format!("{at}.{name}")
                };
                match (a.get(name), b.get(name)) {
                    (Some(x), Some(y)) => each_difference(x, y, &path, found)?,
                    (x, y) => found(path, x, y)?,
                }
            }
            ControlFlow::Continue(())
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                each_difference(x, y, &format!("{at}[{i}]"), found)?;
            }
            ControlFlow::Continue(())
        }
        (a, b) if a == b => ControlFlow::Continue(()),
        (a, b) => {
            let here = if at.is_empty() { "." } else { at };
            found(here.to_string(), Some(a), Some(b))
        }
    }
}

/// How many places two JSON values differ in (see [`each_difference`]).
fn json_distance(recorded: &Value, asked: &Value) -> usize {
    let mut count = 0;
    let _ = each_difference(recorded, asked, "", &mut |_, _, _| {
        count += 1;
        ControlFlow::Continue(())
    });
    count
}

/// A recorded answer, as it was given (a hangup closes the connection).
fn recorded_answer(exchange: &Exchange, connection: &Connection) -> Response {
    if exchange.is_hangup() {
        connection.hang_up();
        return StatusCode::BAD_GATEWAY.into_response();
    }
    let status = StatusCode::from_u16(exchange.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let body = match (&exchange.response_body, &exchange.response_text) {
        (Some(json), _) => json.to_string(),
        (None, Some(text)) => text.clone(),
        (None, None) => String::new(),
    };
    let mut response = (status, body).into_response();
    for (name, value) in &exchange.response_headers {
        if let (Ok(name), Ok(value)) = (
            axum::http::HeaderName::try_from(name.as_str()),
            HeaderValue::try_from(value.as_str()),
        ) {
            response.headers_mut().insert(name, value);
        }
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn create(body: Value) -> Exchange {
        Exchange {
            operation_id: Some(OperationId::CreatePipe),
            method: "POST".into(),
            path: "/v1/organizations/o/services/s/pipes".into(),
            query: None,
            request_body: Some(body),
            request_text: None,
            request_unkept: None,
            status: 200,
            response_headers: Default::default(),
            response_body: None,
            response_text: None,
            response_unkept: None,
        }
    }

    fn asked(operation: OperationId, path: &str, body: Value) -> Asked {
        Asked {
            operation: Some(operation),
            method: "POST".into(),
            path: path.into(),
            query: None,
            body: Some(body),
            text: None,
            unkept: None,
        }
    }

    #[test]
    fn json_distance_counts_the_differing_leaves() {
        assert_eq!(json_distance(&json!(2), &json!(2.0)), 0, "numbers by value");
        assert_eq!(json_distance(&json!(2), &json!(3)), 1);
        assert_eq!(json_distance(&json!(REDACTED), &json!({"any": 1})), 0);
        assert_eq!(json_distance(&json!("a"), &json!("a")), 0);
        assert_eq!(json_distance(&json!([1, 2, 3]), &json!([1, 5, 6])), 2);
        assert_eq!(
            json_distance(&json!([1, 2]), &json!([1, 2, 3])),
            1,
            "another length"
        );
        assert_eq!(json_distance(&json!([1, 2]), &json!([1, 2])), 0);
        assert_eq!(
            json_distance(
                &json!({"a": 1, "b": 2, "c": 3}),
                &json!({"a": 1, "b": 4, "d": 3})
            ),
            3,
            "b differs, c and d are on one side only"
        );
    }

    #[test]
    fn the_nearest_exchange_is_the_one_with_the_fewest_differences() {
        let path = "/v1/organizations/o/services/s/pipes";
        let exchanges = [
            create(json!({"name": "far", "source": {"kinesis": {"stream": "s"}}, "table": "far"})),
            create(
                json!({"name": "orders", "source": {"kafka": {"topics": "t"}}, "table": "orders"}),
            ),
            create(json!({"name": "events", "source": {"kafka": {"topics": "t"}}, "table": "x"})),
        ];
        let request = asked(
            OperationId::CreatePipe,
            path,
            json!({"name": "orderz", "source": {"kafka": {"topics": "t"}}, "table": "orders"}),
        );
        let what = "createPipe (POST ...)";
        assert_eq!(distance(&exchanges[0], &request), 4);
        assert_eq!(distance(&exchanges[1], &request), 1);
        assert_eq!(distance(&exchanges[2], &request), 2);
        let why = not_recorded(&exchanges, &[false; 3], &request, what);
        assert_eq!(
            why,
            "the nearest, exchange 2, differs: the body at `name`: recorded \"orders\", asked \"orderz\""
        );
        // A used exchange is not offered while an unused one of the operation is left.
        let why = not_recorded(&exchanges, &[false, true, false], &request, what);
        assert!(why.starts_with("the nearest, exchange 3,"), "{why}");
        let why = not_recorded(&exchanges, &[true; 3], &request, what);
        assert_eq!(
            why,
            "every recorded createPipe (POST ...) was answered already (the last is exchange 3)"
        );
        let other = asked(
            OperationId::GetPipe,
            "/v1/organizations/o/services/s/pipes/p",
            json!({}),
        );
        assert_eq!(
            not_recorded(&exchanges, &[false; 3], &other, "getPipe"),
            "the cassette has no exchange of that operation (it holds createPipe x3)"
        );
        assert_eq!(
            not_recorded(&[], &[], &other, "getPipe"),
            "the cassette has no exchange"
        );

        // Text bodies count too: the same text and another query is nearer than both differing.
        let text = |body: &str, query: &str| Exchange {
            request_body: None,
            request_text: Some(body.into()),
            query: Some(query.into()),
            ..create(json!(null))
        };
        let exchanges = [text("a", "q=1"), text("b", "q=1")];
        let request = Asked {
            query: Some("q=2".into()),
            body: None,
            text: Some("b".into()),
            ..asked(OperationId::CreatePipe, path, json!(null))
        };
        let why = not_recorded(&exchanges, &[false; 2], &request, what);
        assert!(
            why.starts_with("the nearest, exchange 2, differs: the query"),
            "{why}"
        );
        assert_eq!(
            distance(&exchanges[0], &request),
            2,
            "the query and the text"
        );
        let elsewhere = Asked {
            query: Some("q=2".into()),
            body: None,
            text: Some("b".into()),
            ..asked(OperationId::CreatePipe, "/v1/elsewhere", json!(null))
        };
        assert_eq!(distance(&exchanges[0], &elsewhere), 3, "the path too");
    }

    #[test]
    fn json_bodies_match_with_redacted_members_as_wildcards() {
        let recorded = json!({"name": "p", "source": {"kafka": {"password": REDACTED, "topics": "orders"}}, "n": 2});
        let asked = json!({"name": "p", "source": {"kafka": {"password": "hunter22", "topics": "orders"}}, "n": 2.0});
        assert_eq!(json_difference(&recorded, &asked, ""), None);
        let other = json!({"name": "p", "source": {"kafka": {"password": "x", "topics": "events"}}, "n": 2});
        assert_eq!(
            json_difference(&recorded, &other, ""),
            Some((
                "source.kafka.topics".into(),
                "\"orders\"".into(),
                "\"events\"".into()
            ))
        );
        assert_eq!(
            json_difference(&json!([1, 2]), &json!([1, 3]), ""),
            Some(("[1]".into(), "2".into(), "3".into()))
        );
        assert_eq!(
            json_difference(&json!({"a": 1}), &json!({}), ""),
            Some(("a".into(), "1".into(), "nothing".into()))
        );
        assert_eq!(
            json_difference(&json!([1]), &json!([1, 2]), ""),
            Some((".".into(), "[1]".into(), "[1,2]".into()))
        );
    }
}
