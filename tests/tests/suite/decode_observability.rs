//! Decoding realistic observability responses into the generated types, one test per operation.

use api_raw::observability::types::{AlertEnvelope, DashboardListEnvelope, ObservabilityError};
use api_raw::support::{
    AlertInterval, AlertSource, AlertState, AlertThresholdType, MetricDataType, SeriesAggFn,
    SeriesDataSource, SeriesType, WhereLanguage,
};
use serde::de::DeserializeOwned;

fn decode<T: DeserializeOwned>(name: &str) -> T {
    let path = format!("{}/fixtures/{name}.json", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name} does not decode: {e}"))
}

#[test]
fn get_alert() {
    let envelope: AlertEnvelope = decode("get_alert");
    let alert = envelope.data.as_ref().expect("data");
    assert_eq!(alert.state, Some(AlertState::from("SNOOZED")));
    assert_eq!(alert.interval, Some(AlertInterval::FiveMinutes));
    assert_eq!(alert.threshold_type, Some(AlertThresholdType::Above));
    assert_eq!(alert.source, Some(AlertSource::Tile));
    assert_eq!(
        alert.created_at.map(|t| t.timestamp_millis() % 1000),
        Some(412),
        "milliseconds are kept"
    );
    let json = serde_json::to_value(&envelope).expect("serialises");
    assert_eq!(
        json["data"]["state"], "SNOOZED",
        "an unknown alert state survives re-serialisation"
    );
    insta::assert_debug_snapshot!(envelope);
}

#[test]
fn list_dashboards() {
    let envelope: DashboardListEnvelope = decode("list_dashboards");
    let dashboards = envelope.data.as_deref().expect("data");
    assert_eq!(dashboards.len(), 2);
    let known = &dashboards[0].tiles.as_deref().expect("tiles")[0]
        .series
        .as_deref()
        .expect("series")[0];
    assert_eq!(known.agg_fn, Some(SeriesAggFn::Count));
    assert_eq!(known.where_language, Some(WhereLanguage::Lucene));
    assert_eq!(known.metric_data_type, Some(MetricDataType::Gauge));
    assert_eq!(known.type_, Some(SeriesType::Time));
    assert_eq!(known.data_source, Some(SeriesDataSource::Events));
    let unknown = &dashboards[0].tiles.as_deref().expect("tiles")[1]
        .series
        .as_deref()
        .expect("series")[0];
    assert_eq!(unknown.agg_fn, Some(SeriesAggFn::from("p95")));
    assert_eq!(unknown.type_, Some(SeriesType::from("heatmap")));
    assert_eq!(unknown.data_source, Some(SeriesDataSource::from("traces")));
    assert!(dashboards[1].tiles.is_none(), "null tiles decode as None");
    let json = serde_json::to_value(&envelope).expect("serialises");
    assert_eq!(
        json["data"][0]["tiles"][1]["series"][0]["whereLanguage"],
        "promql"
    );
    insta::assert_debug_snapshot!(envelope);
}

#[test]
fn observability_error_body() {
    let error: ObservabilityError =
        serde_json::from_str(r#"{"message": "Alert not found"}"#).expect("decodes");
    assert_eq!(error.message.as_deref(), Some("Alert not found"));
}
