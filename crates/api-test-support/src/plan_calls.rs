//! The calls a declared apply sent that changed the server, against those its plan document lists:
//! both counted as `METHOD path`, so that a test compares them call for call.

use std::collections::BTreeMap;

use serde_json::Value;

/// Whether a request changed the server: anything but a GET, and but the service's read, which is a
/// PATCH of its state without a command.
pub fn changes_server(method: &str, body: Option<&Value>) -> bool {
    let service_read = method == "PATCH" && body.is_none_or(|b| b.get("command").is_none());
    method != "GET" && !service_read
}

/// The requests of the API (`/v1/...`; an emulator's own are left out) that changed the server,
/// each `(method, path, body)`, counted by `METHOD path`.
pub fn changing_calls<'a>(
    requests: impl IntoIterator<Item = (&'a str, &'a str, Option<&'a Value>)>,
) -> BTreeMap<String, usize> {
    let mut calls = BTreeMap::new();
    for (method, path, body) in requests {
        if path.starts_with("/v1/") && changes_server(method, body) {
            *calls.entry(format!("{method} {path}")).or_default() += 1;
        }
    }
    calls
}

/// The calls a plan document lists (the service's, then each action's), counted.
pub fn listed_calls(document: &Value) -> BTreeMap<String, usize> {
    let service = document["service"]["calls"]
        .as_array()
        .into_iter()
        .flatten();
    let actions = document["actions"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|action| action["calls"].as_array().into_iter().flatten());
    let mut calls = BTreeMap::new();
    for call in service.chain(actions) {
        let call = call
            .as_str()
            .expect("a listed call is a string")
            .to_string();
        *calls.entry(call).or_default() += 1;
    }
    calls
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{changing_calls, listed_calls};

    #[test]
    fn reads_and_the_emulator_s_own_requests_are_not_calls_that_change_the_server() {
        let command = json!({"command": "start"});
        let read = json!({});
        let requests = [
            ("GET", "/v1/organizations/o/services/s/pipes/p", None),
            ("PATCH", "/v1/organizations/o/services/s/state", Some(&read)),
            ("PATCH", "/v1/organizations/o/services/s/state", None),
            (
                "PATCH",
                "/v1/organizations/o/services/s/state",
                Some(&command),
            ),
            ("POST", "/v1/organizations/o/services/s/pipes", None),
            ("POST", "/v1/organizations/o/services/s/pipes", None),
            ("PATCH", "/_emulator/pipes/p", None),
        ];
        let calls = changing_calls(requests);
        assert_eq!(calls.len(), 2, "{calls:?}");
        assert_eq!(calls["PATCH /v1/organizations/o/services/s/state"], 1);
        assert_eq!(calls["POST /v1/organizations/o/services/s/pipes"], 2);
        let document = json!({
            "service": {"calls": ["PATCH /v1/organizations/o/services/s/state"]},
            "actions": [{"calls": ["POST /v1/organizations/o/services/s/pipes"]},
                        {"calls": ["POST /v1/organizations/o/services/s/pipes"]}, {"calls": []}],
        });
        assert_eq!(listed_calls(&document), calls);
        assert!(listed_calls(&json!({"service": null, "actions": []})).is_empty());
    }
}
