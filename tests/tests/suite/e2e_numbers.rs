//! Numbers as the production service (a JavaScript server) writes them: in every answer of every
//! operation of both APIs, a whole number is `3`, never `3.0` (a client that reads such fields as
//! integers must not fail against the emulator), and fractions stay fractions.

use crate::support;

use serde_json::Value;
use support::emulated::start;

/// Every whole number written as a float (`3.0`), with its JSON path.
fn whole_floats(value: &Value, path: &str, found: &mut Vec<String>) {
    match value {
        Value::Number(n) if n.is_f64() && n.as_f64().is_some_and(|f| f.fract() == 0.0) => {
            found.push(format!("{path} = {n}"))
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                whole_floats(item, &format!("{path}[{i}]"), found);
            }
        }
        Value::Object(members) => {
            for (name, member) in members {
                whole_floats(member, &format!("{path}.{name}"), found);
            }
        }
        _ => {}
    }
}

#[tokio::test]
async fn every_answer_writes_whole_numbers_as_integers() {
    let emulator = start().await;
    let (key_id, secret) = emulator.admin_key();
    let http = api_mgmt::client::http_client_builder().build().unwrap();
    let org = emulator.organization_id();
    let service = emulator.service_id("running").expect("a running service");
    let base = format!(
        "{}/v1/organizations/{org}/services/{service}",
        emulator.base_url()
    );
    let mgmt = |method: reqwest::Method, path: &str| {
        http.request(method, format!("{base}{path}"))
            .basic_auth(key_id, Some(secret))
    };
    let mut answers: Vec<(String, String)> = Vec::new();
    let mut keep = |name: &str, text: String| answers.push((name.to_string(), text));

    let text = |r: reqwest::Response| async move { r.text().await.expect("a body") };
    keep(
        "updateServiceState",
        text(
            mgmt(reqwest::Method::PATCH, "/state")
                .json(&serde_json::json!({"command": "start"}))
                .send()
                .await
                .unwrap(),
        )
        .await,
    );
    let pipe = serde_json::json!({
        "name": "numbers",
        "source": {"kafka": {"brokers": "b-1:9098", "topics": "t"}},
        "destination": {"database": "d", "table": "t", "managedTable": true, "columns": [{"name": "c", "type": "String"}]},
        "fieldMappings": [{"sourceField": "c", "destinationField": "c"}],
        "scaling": {"replicas": 2, "replicaCpuMillicores": 500, "replicaMemoryGb": 0.5},
    });
    let created = text(
        mgmt(reqwest::Method::POST, "/pipes")
            .json(&pipe)
            .send()
            .await
            .unwrap(),
    )
    .await;
    let id = serde_json::from_str::<Value>(&created).unwrap()["result"]["id"]
        .as_str()
        .expect("a pipe id")
        .to_string();
    keep("createPipe", created);
    keep(
        "getPipe",
        text(
            mgmt(reqwest::Method::GET, &format!("/pipes/{id}"))
                .send()
                .await
                .unwrap(),
        )
        .await,
    );
    keep(
        "getPipeSettings",
        text(
            mgmt(reqwest::Method::GET, &format!("/pipes/{id}/settings"))
                .send()
                .await
                .unwrap(),
        )
        .await,
    );
    keep(
        "listReversePrivateEndpoints",
        text(
            mgmt(reqwest::Method::GET, "/pipesReversePrivateEndpoints")
                .send()
                .await
                .unwrap(),
        )
        .await,
    );
    keep(
        "createPrivateEndpoint",
        text(
            mgmt(reqwest::Method::POST, "/privateEndpoint")
                .json(&serde_json::json!({"id": "vpce-0123456789abcdef0", "description": "n"}))
                .send()
                .await
                .unwrap(),
        )
        .await,
    );
    keep(
        "deletePipe",
        text(
            mgmt(reqwest::Method::DELETE, &format!("/pipes/{id}"))
                .send()
                .await
                .unwrap(),
        )
        .await,
    );
    keep(
        "an error",
        text(
            mgmt(
                reqwest::Method::GET,
                "/pipes/00000000-0000-4000-8000-000000000000",
            )
            .send()
            .await
            .unwrap(),
        )
        .await,
    );
    let obs = |path: &str| {
        http.get(format!("{}{path}", emulator.base_url()))
            .bearer_auth(emulator.observability_token())
    };
    keep(
        "getAlert",
        text(
            obs("/api/v2/alerts/66a1f0c2d4e5f60718293a4b")
                .send()
                .await
                .unwrap(),
        )
        .await,
    );
    keep(
        "listDashboards",
        text(obs("/api/v2/dashboards").send().await.unwrap()).await,
    );

    let mut found = Vec::new();
    for (name, body) in &answers {
        let value: Value =
            serde_json::from_str(body).unwrap_or_else(|e| panic!("{name}: {e}: {body}"));
        whole_floats(&value, name, &mut found);
    }
    assert!(
        found.is_empty(),
        "whole numbers written as floats:\n{}",
        found.join("\n")
    );

    // Fractions stay fractions, and the integers really are there.
    let service: Value = serde_json::from_str(&answers[0].1).unwrap();
    assert!(
        service["result"]["numReplicas"].is_u64(),
        "{}",
        answers[0].1
    );
    let created: Value = serde_json::from_str(&answers[1].1).unwrap();
    assert_eq!(created["result"]["scaling"]["replicaMemoryGb"], 0.5);
    assert!(created["status"].is_u64());
}
