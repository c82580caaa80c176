//! The observability facade over real HTTP against a scripted server.

use crate::support;

use api_obs::{
    alerts::{AlertInterval, AlertState},
    dashboards::SeriesAggFn,
};
use support::{Reply, ScriptServer, TOKEN};

const ALERT: &str = "66a1f0c2d4e5f60718293a4b";

#[tokio::test]
async fn get_alert_sends_the_bearer_token_and_unwraps_data() {
    let server = ScriptServer::start(vec![
        Reply::fixture("get_alert").header("ratelimit-remaining", "99"),
    ])
    .await;
    let alert = server
        .obs()
        .alert(ALERT.parse().unwrap())
        .get()
        .await
        .unwrap();
    assert_eq!(alert.id.to_string(), ALERT);
    assert_eq!(alert.state, Some(AlertState::from("SNOOZED")));
    assert_eq!(alert.interval, Some(AlertInterval::FiveMinutes));
    assert_eq!(
        alert.meta().headers["ratelimit-remaining"],
        "99",
        "response headers are available"
    );

    let request = &server.requests()[0];
    assert_eq!(
        (request.method.as_str(), request.path.as_str()),
        ("GET", format!("/api/v2/alerts/{ALERT}").as_str())
    );
    assert_eq!(request.headers["authorization"], format!("Bearer {TOKEN}"));
    assert_eq!(
        request.headers["user-agent"],
        concat!("api-obs/", env!("CARGO_PKG_VERSION"))
    );
}

#[tokio::test]
async fn list_dashboards_returns_tiles_and_series() {
    let server = ScriptServer::start(vec![Reply::fixture("list_dashboards")]).await;
    let dashboards = server.obs().dashboards().list().await.unwrap();
    assert_eq!(dashboards.len(), 2);
    assert_eq!(dashboards[0].name, "Checkout");
    assert_eq!(dashboards[0].tiles.len(), 2);
    assert_eq!(
        dashboards[0].tiles[0].series[0].agg_fn,
        Some(SeriesAggFn::Count)
    );
    assert!(dashboards[1].tiles.is_empty());
    assert_eq!(server.requests()[0].path, "/api/v2/dashboards");
}

#[tokio::test]
async fn plain_text_401_and_json_404_become_api_errors() {
    let server = ScriptServer::start(vec![
        Reply::text(401, "text/plain", "Unauthorized"),
        Reply::json(404, r#"{"message": "Alert not found"}"#),
    ])
    .await;
    let client = server.obs();
    let unauthorized = client.dashboards().list().await.unwrap_err();
    assert!(unauthorized.is_unauthorized());
    let api = unauthorized.as_api().unwrap();
    assert_eq!(
        (api.message.as_str(), api.body.as_str()),
        ("Unauthorized", "Unauthorized")
    );
    let missing = client
        .alert(ALERT.parse().unwrap())
        .get()
        .await
        .unwrap_err();
    assert!(missing.is_not_found());
    assert_eq!(
        missing.to_string(),
        "getAlert: HTTP 404 NOT_FOUND: Alert not found",
        "the observability body has no code: the status gives it"
    );
    assert_eq!(missing.code(), Some(&api_obs::error::ErrorCode::NotFound));
    assert_eq!(
        unauthorized.code(),
        Some(&api_obs::error::ErrorCode::Unauthorized)
    );
    assert_eq!(server.requests().len(), 2, "4xx answers are not retried");
}

#[test]
fn a_malformed_alert_id_does_not_parse() {
    let err = "not-an-alert"
        .parse::<api_obs::alerts::AlertId>()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid alert id \"not-an-alert\": expected 24 hexadecimal digits such as 66a1f0c2d4e5f60718293a4b"
    );
}
