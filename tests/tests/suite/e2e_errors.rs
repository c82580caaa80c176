//! End to end: every error class of the emulator surfaces as the right SDK error.

use crate::support;

use api_emulator::EmulatorOptions;
use api_mgmt::services::ServiceCommand;
use support::emulated::{kafka_pipe, mgmt, mgmt_with, obs, running_service, start, start_with};

#[tokio::test]
async fn authentication_and_authorization_errors() {
    let emulator = start().await;
    let (key_id, _) = emulator.admin_key();

    let wrong = mgmt_with(&emulator, key_id, "not-the-secret");
    let err = running_service(&emulator, &wrong)
        .reverse_private_endpoints()
        .await
        .unwrap_err();
    assert!(err.is_unauthorized(), "{err}");
    assert_eq!(err.as_api().unwrap().code.as_str(), "UNAUTHORIZED");
    assert!(!err.to_string().contains("not-the-secret"));

    let (dev_id, dev_secret) = emulator.developer_key();
    let developer = mgmt_with(&emulator, dev_id, dev_secret);
    let service = running_service(&emulator, &developer);
    assert_eq!(
        service.reverse_private_endpoints().await.unwrap().len(),
        2,
        "a developer key may read"
    );
    let err = service
        .pipes()
        .create(&kafka_pipe("nope"))
        .await
        .unwrap_err();
    assert!(err.is_forbidden(), "{err}");
    assert!(
        service
            .command(ServiceCommand::Stop)
            .await
            .unwrap_err()
            .is_forbidden()
    );

    let other = mgmt_with(&emulator, "other-org-key", "other-org-secret");
    let err = running_service(&emulator, &other)
        .reverse_private_endpoints()
        .await
        .unwrap_err();
    assert!(err.is_forbidden(), "a key of another organization: {err}");

    let obs_wrong = api_obs::Client::builder(emulator.base_url())
        .credentials(api_obs::Credentials::bearer(
            "00000000-0000-4000-8000-000000000000",
        ))
        .build()
        .unwrap();
    let err = obs_wrong.dashboards().list().await.unwrap_err();
    assert!(err.is_unauthorized());
    assert_eq!(
        err.as_api().unwrap().body,
        "Unauthorized",
        "plain text is kept"
    );

    let scoped = api_obs::Client::builder(emulator.base_url())
        .credentials(api_obs::Credentials::bearer(
            "5b1e8c7d-2f3a-4b6c-9d0e-1f2a3b4c5d6e",
        ))
        .build()
        .unwrap();
    assert!(
        scoped
            .alert("66a1f0c2d4e5f60718293a4b".parse().unwrap())
            .get()
            .await
            .unwrap_err()
            .is_forbidden()
    );
}

#[tokio::test]
async fn missing_resources_conflicts_and_dependencies() {
    let emulator = start().await;
    let client = mgmt(&emulator);
    let service = running_service(&emulator, &client);

    let unknown_pipe = service.pipe("00000000-0000-4000-8000-000000000000".parse().unwrap());
    let err = unknown_pipe.get().await.unwrap_err();
    assert!(err.is_not_found());
    assert_eq!(err.as_api().unwrap().code.as_str(), "NOT_FOUND");
    assert!(unknown_pipe.delete().await.unwrap_err().is_not_found());

    let unknown_service = client.service(
        emulator.organization_id(),
        "00000000-0000-4000-8000-0000000000aa".parse().unwrap(),
    );
    assert!(unknown_service.start().await.unwrap_err().is_not_found());

    service.pipes().create(&kafka_pipe("twin")).await.unwrap();
    let err = service
        .pipes()
        .create(&kafka_pipe("twin"))
        .await
        .unwrap_err();
    assert!(err.is_conflict(), "{err}");

    service
        .create_private_endpoint("vpce-1", "first")
        .await
        .unwrap();
    assert!(
        service
            .create_private_endpoint("vpce-1", "again")
            .await
            .unwrap_err()
            .is_conflict()
    );

    service.stop().await.unwrap();
    let err = service.start().await;
    assert!(
        err.is_ok(),
        "stopped again with instant timing, so start is allowed: {err:?}"
    );

    let alert = obs(&emulator)
        .alert("66a1f0c2d4e5f60718293a00".parse().unwrap())
        .get()
        .await
        .unwrap_err();
    assert!(alert.is_not_found());
    assert_eq!(alert.as_api().unwrap().message, "Alert not found");
}

#[tokio::test]
async fn the_server_validates_too_and_names_the_field() {
    let emulator = start().await;
    let client = mgmt(&emulator);
    let service = running_service(&emulator, &client);
    let raw = client.raw();
    let body: api_mgmt::raw::types::PipeCreateRequest = serde_json::from_value(serde_json::json!({
        "name": "p",
        "source": {"kafka": {"brokers": "b:9092"}, "kinesis": {"streamName": "s"}},
        "destination": {"database": "d"},
    }))
    .unwrap();
    let response = raw
        .create_pipe(
            service.organization_id().as_uuid(),
            service.id().as_uuid(),
            &body,
        )
        .await;
    let Err(api_mgmt::raw::Error::UnexpectedResponse(response)) = response else {
        panic!("expected a 400")
    };
    assert_eq!(response.status(), 400);
    let text = response.text().await.unwrap();
    assert!(
        text.contains(
            "BAD_REQUEST: source: exactly one of kafka, objectStorage, kinesis, postgres"
        ),
        "{text}"
    );
}

#[tokio::test]
async fn rate_limits_answer_429_with_the_documented_headers() {
    let limits = api_emulator::Limits {
        enabled: true,
        management_max: 2,
        management_window_secs: 30,
        observability_max: 1,
        observability_window_secs: 30,
    };
    let emulator = start_with(EmulatorOptions::for_tests().limits(limits)).await;
    let client = mgmt(&emulator).with_retry(api_mgmt::client::RetryPolicy::disabled());
    let service = running_service(&emulator, &client);
    service.reverse_private_endpoints().await.unwrap();
    service.reverse_private_endpoints().await.unwrap();
    let err = service.reverse_private_endpoints().await.unwrap_err();
    assert!(err.is_rate_limited());
    let wait = err
        .as_api()
        .unwrap()
        .retry_after
        .expect("X-RateLimit-Reset");
    assert!(wait.as_secs() >= 1 && wait.as_secs() <= 30, "{wait:?}");

    let observability = obs(&emulator).with_retry(api_obs::client::RetryPolicy::disabled());
    let first = observability.dashboards().list().await.unwrap();
    assert_eq!(first.meta().headers["ratelimit-limit"], "1");
    assert_eq!(first.meta().headers["ratelimit-remaining"], "0");
    let err = observability.dashboards().list().await.unwrap_err();
    assert!(err.is_rate_limited());
    assert_eq!(err.as_api().unwrap().body, "Too Many Requests");
    let raw = api_mgmt::client::http_client_builder()
        .build()
        .unwrap()
        .get(format!("{}/api/v2/dashboards", emulator.base_url()))
        .bearer_auth(emulator.observability_token())
        .send()
        .await
        .unwrap();
    assert_eq!(raw.status(), 429);
    let retry_after: u64 = raw.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        (1..=30).contains(&retry_after),
        "Retry-After: {retry_after}"
    );
    assert_eq!(raw.headers()["content-type"], "text/plain");
}

#[tokio::test]
async fn malformed_json_and_a_wrong_content_type_are_400_never_500() {
    let emulator = start().await;
    let (key_id, secret) = emulator.admin_key();
    let url = format!(
        "{}/v1/organizations/{}/services/{}/pipes",
        emulator.base_url(),
        emulator.organization_id(),
        emulator.service_id("running").unwrap()
    );
    let http = api_mgmt::client::http_client_builder().build().unwrap();
    let cases = [
        ("application/json", "{"),
        ("text/plain", "{}"),
        ("application/json", "[1, 2]"),
        ("application/json", ""),
    ];
    for (content_type, body) in cases {
        let response = http
            .post(&url)
            .basic_auth(key_id, Some(secret))
            .header("content-type", content_type)
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 400, "{content_type} {body:?}");
        let envelope: serde_json::Value = response.json().await.unwrap();
        assert!(
            envelope["error"]
                .as_str()
                .unwrap()
                .starts_with("BAD_REQUEST: "),
            "{envelope}"
        );
        assert!(envelope["requestId"].is_string());
    }
}

#[tokio::test]
async fn the_control_endpoint_needs_its_token_and_arms_faults_over_http() {
    let emulator = start().await;
    let http = api_mgmt::client::http_client_builder().build().unwrap();
    let faults = format!("{}/_emulator/faults", emulator.base_url());
    let rule = serde_json::json!({"method": "GET", "path": "/api/v2/dashboards", "actions": [{"status": 503}]});

    let refused = http.post(&faults).json(&rule).send().await.unwrap();
    assert_eq!(refused.status(), 401);
    let (key_id, secret) = emulator.admin_key();
    let wrong = http
        .post(&faults)
        .basic_auth(key_id, Some(secret))
        .json(&rule)
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401, "an API key is not the control token");

    let armed = http
        .post(&faults)
        .bearer_auth(emulator.control_token())
        .json(&rule)
        .send()
        .await
        .unwrap();
    assert_eq!(armed.status(), 200);
    let listed: serde_json::Value = http
        .get(&faults)
        .bearer_auth(emulator.control_token())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(listed.as_array().map(Vec::len), Some(1));

    let dashboards = obs(&emulator).dashboards().list().await.unwrap();
    assert_eq!(
        dashboards.meta().attempts,
        2,
        "the armed 503 was answered, then retried"
    );

    let log: serde_json::Value = http
        .get(format!("{}/_emulator/requests", emulator.base_url()))
        .bearer_auth(emulator.control_token())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let statuses: Vec<u64> = log
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["status"].as_u64())
        .collect();
    assert_eq!(
        statuses,
        [503, 200],
        "the request log shows the injected answer and the retry"
    );
    let bad = http
        .post(&faults)
        .bearer_auth(emulator.control_token())
        .body("{\"path\": 1}")
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);
}

#[tokio::test]
async fn a_wrong_method_and_a_huge_body_are_answered_with_the_api_error_bodies() {
    let emulator = start().await;
    let (key_id, secret) = emulator.admin_key();
    let http = api_mgmt::client::http_client_builder().build().unwrap();
    let service = format!(
        "{}/v1/organizations/{}/services/{}",
        emulator.base_url(),
        emulator.organization_id(),
        emulator.service_id("running").unwrap()
    );
    let wrong = http
        .put(format!("{service}/state"))
        .basic_auth(key_id, Some(secret))
        .json(&serde_json::json!({"command": "start"}))
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 405);
    let request_id = wrong.headers()["x-request-id"]
        .to_str()
        .unwrap()
        .to_string();
    let body: serde_json::Value = wrong.json().await.unwrap();
    assert_eq!(body["status"], 405);
    assert_eq!(body["requestId"], request_id.as_str());
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .starts_with("METHOD_NOT_ALLOWED: "),
        "{body}"
    );

    let wrong = http
        .post(format!("{}/api/v2/dashboards", emulator.base_url()))
        .bearer_auth(emulator.observability_token())
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 405);
    let body: serde_json::Value = wrong.json().await.unwrap();
    assert!(body["message"].as_str().unwrap().contains("POST"), "{body}");

    let huge = format!("{{\"name\": \"{}\"}}", "x".repeat(20 * 1024 * 1024));
    let refused = http
        .post(format!("{service}/pipes"))
        .basic_auth(key_id, Some(secret))
        .header("content-type", "application/json")
        .body(huge)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 413);
    let body: serde_json::Value = refused.json().await.unwrap();
    assert_eq!(body["status"], 413);
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .starts_with("PAYLOAD_TOO_LARGE: the request body is larger than 2097152 bytes"),
        "{body}"
    );
}
