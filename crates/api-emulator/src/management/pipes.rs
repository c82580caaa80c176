//! Pipes: create (as sent, or in a production server's canonical forms), read, read settings,
//! delete.

use api_raw::management::types as mgmt;
use api_raw::support::ServiceState;
use api_raw::support::schema::SchemaSet;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Value, json};
use uuid::Uuid;

use super::{Admitted, PipeCreate, ValidJson, errors, parse_uuid, storage_failed};
use crate::app::Shared;
use crate::store::Write;
use crate::world::{PipeRecord, SourceKind, World};

/// The pipe a create request makes, as the spec says: the request read through the response's
/// schema (its request-only members left out, whatever the spec adds), with every member the create
/// left out and the spec gives an `x-server-default` for filled in.
fn stored_pipe(body: &Value) -> Value {
    let schemas = SchemaSet::management();
    let mut pipe = body.clone();
    if let (Some(request), Some(response)) =
        (schemas.schema("PipeCreateRequest"), schemas.schema("Pipe"))
    {
        request.fill_defaults(&mut pipe);
        request.drop_request_only(&response, &mut pipe);
    }
    pipe
}

/// The rules of the decisions page that a JSON schema cannot say.
fn semantic_problems(body: &Value) -> (Option<SourceKind>, Vec<String>) {
    let mut problems = Vec::new();
    let source = &body["source"];
    let kinds: Vec<SourceKind> = [
        ("kafka", SourceKind::Kafka),
        ("objectStorage", SourceKind::ObjectStorage),
        ("kinesis", SourceKind::Kinesis),
        ("postgres", SourceKind::Postgres),
    ]
    .into_iter()
    .filter(|(name, _)| source.get(*name).is_some_and(|v| !v.is_null()))
    .map(|(_, kind)| kind)
    .collect();
    if kinds.len() != 1 {
        problems.push(format!(
            "source: exactly one of kafka, objectStorage, kinesis, postgres is required, got {}",
            kinds.len()
        ));
    }
    let kind = (kinds.len() == 1).then(|| kinds[0]);
    let destination = &body["destination"];
    let columns: Vec<&str> = destination["columns"]
        .as_array()
        .map(|c| c.iter().filter_map(|col| col["name"].as_str()).collect())
        .unwrap_or_default();
    if kind.is_some_and(|k| k != SourceKind::Postgres) {
        for field in ["table", "managedTable", "columns"] {
            if destination.get(field).is_none_or(Value::is_null) {
                problems.push(format!(
                    "destination.{field}: required for this source kind"
                ));
            }
        }
        if destination["columns"].as_array().is_some_and(Vec::is_empty) {
            problems.push(
                "destination.columns: at least one column is required for this source kind".into(),
            );
        }
    }
    let mapped: Vec<&str> = body["fieldMappings"]
        .as_array()
        .map(|m| {
            m.iter()
                .filter_map(|f| f["destinationField"].as_str())
                .collect()
        })
        .unwrap_or_default();
    let unmapped: Vec<&str> = columns
        .iter()
        .copied()
        .filter(|c| !mapped.contains(c))
        .collect();
    if !unmapped.is_empty() {
        problems.push(format!(
            "fieldMappings: every destination column must be mapped; not mapped: {}",
            unmapped.join(", ")
        ));
    }
    if let Some(timestamp) = source["kafka"]["offset"]["timestamp"].as_str()
        && chrono::NaiveDateTime::parse_from_str(timestamp, "%Y-%m-%dT%H:%M").is_err()
    {
        problems.push(format!(
            "source.kafka.offset.timestamp: {timestamp:?} is not a valid YYYY-MM-DDTHH:MM time"
        ));
    }
    (kind, problems)
}

/// Handles `createPipe`.
pub async fn create(
    State(app): State<Shared>,
    admitted: Admitted,
    ValidJson(body, _): ValidJson<PipeCreate>,
) -> Response {
    let rid = admitted.request_id.as_str();
    let (kind, problems) = semantic_problems(&body);
    let Some(kind) = kind.filter(|_| problems.is_empty()) else {
        return errors::error(rid, StatusCode::BAD_REQUEST, problems.join("; "));
    };
    let name = body["name"].as_str().unwrap_or_default().to_string();
    let now = app.clock.now();
    let timing = app.seed.timing;
    let id = app.clock.new_id();
    let mut response_body = stored_pipe(&body);
    let at = now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    for (member, value) in [
        ("id", json!(id)),
        ("serviceId", json!(admitted.service)),
        ("state", json!("Provisioning")),
        ("createdAt", json!(at)),
        ("updatedAt", json!(at)),
    ] {
        response_body[member] = value;
    }
    if response_body.get("fieldMappings").is_none() {
        response_body["fieldMappings"] = json!([]);
    }
    if app.seed.server.canonical {
        super::canonical::pipe(&mut response_body);
    }
    let pipe: mgmt::Pipe = match serde_json::from_value(response_body) {
        Ok(pipe) => pipe,
        Err(_) => {
            return errors::error(
                rid,
                StatusCode::BAD_REQUEST,
                "body: does not describe a pipe",
            );
        }
    };
    let record = PipeRecord {
        organization: admitted.organization,
        pipe,
        kind,
        one_shot: kind == SourceKind::ObjectStorage
            && body["source"]["objectStorage"]["isContinuous"] == json!(false),
        created: now,
        forced: None,
        deleted_at: None,
        validate_samples: body["source"]["validateSamples"].as_bool(),
    };

    let mut world = app.world();
    let Some(service_record) = world.services.get(&admitted.service) else {
        return errors::error(
            rid,
            StatusCode::NOT_FOUND,
            format!("service {} not found", admitted.service),
        );
    };
    let state = service_record.state_at(now, &timing);
    if state != ServiceState::Running {
        return errors::error(
            rid,
            StatusCode::FAILED_DEPENDENCY,
            format!(
                "service {} is {state}, not running; start it first",
                admitted.service
            ),
        );
    }
    let held = app.seed.server.delete_acknowledged_first
        && world.deleting_named(admitted.service, &name, now, &timing);
    if !app.seed.server.duplicate_names
        && (held || world.pipe_named(admitted.service, &name).is_some())
    {
        return errors::error(
            rid,
            StatusCode::CONFLICT,
            format!("a pipe named {name:?} already exists on this service"),
        );
    }
    if let Err(e) = app.persist(Write::Pipe(id, &record)) {
        return storage_failed(rid, e);
    }
    let shown = record.pipe.clone();
    world.put_pipe(id, record);
    errors::ok(rid, shown)
}

/// Finds a pipe of the admitted service that is not gone, and hands it to `then` with the world
/// (locked) to change it in.
fn with_pipe<T>(
    app: &Shared,
    admitted: &Admitted,
    then: impl FnOnce(Uuid, PipeRecord, &mut World) -> Result<T, Response>,
) -> Result<T, Response> {
    let rid = admitted.request_id.as_str();
    let id = parse_uuid(
        rid,
        "pipeId",
        admitted.pipe_id.as_deref().unwrap_or_default(),
    )?;
    let now = app.clock.now();
    let mut world = app.world();
    // A pipe whose deletion has finished is purged when the world is locked; one the store could
    // not forget yet is hidden all the same.
    // Where a delete is acknowledged before the teardown, a pipe being deleted is gone for the API.
    let acknowledged = app.seed.server.delete_acknowledged_first;
    let found = world.pipe(&id).filter(|record| {
        let gone =
            record.is_gone(now, &app.seed.timing) || (acknowledged && record.deleted_at.is_some());
        !gone && record.pipe.service_id == Some(admitted.service)
    });
    let Some(record) = found.cloned() else {
        return Err(errors::error(
            rid,
            StatusCode::NOT_FOUND,
            format!("pipe {id} not found"),
        ));
    };
    then(id, record, &mut world)
}

/// Handles `getPipe`: the stored pipe as it is now, with its raw overlay merged in when a test set
/// one (after the numbers are written as production writes them, so that an overlay's `3.0` stays).
pub async fn get(State(app): State<Shared>, admitted: Admitted) -> Response {
    let timing = app.seed.timing;
    match with_pipe(&app, &admitted, |id, record, _| {
        Ok((id, record.current(app.clock.now(), &timing)))
    }) {
        Ok((id, pipe)) => {
            let answer = crate::overlay::answer(&app, id, crate::wire::json(pipe));
            errors::ok_as_is(&admitted.request_id, answer)
        }
        Err(response) => response,
    }
}

/// Handles `getPipeSettings`.
pub async fn settings(State(app): State<Shared>, admitted: Admitted) -> Response {
    match with_pipe(&app, &admitted, |_, record, _| {
        // A pipe without settings answers with an empty object.
        Ok(record.pipe.settings.map_or_else(
            || serde_json::Value::Object(Default::default()),
            |settings| serde_json::json!(settings),
        ))
    }) {
        Ok(settings) => errors::ok(&admitted.request_id, settings),
        Err(response) => response,
    }
}

/// Handles `deletePipe`: the pipe keeps answering GET for `pipe_delete_ms`, then 404 (it is purged
/// then, read again or not). Deleting a pipe whose deletion is under way answers 200 again (a
/// retried DELETE must not fail).
pub async fn delete(State(app): State<Shared>, admitted: Admitted) -> Response {
    let rid = admitted.request_id.clone();
    let result = with_pipe(&app, &admitted, |id, mut record, world| {
        if record.deleted_at.is_none() {
            record.deleted_at = Some(app.clock.now());
            app.persist(Write::Pipe(id, &record))
                .map_err(|e| storage_failed(&rid, e))?;
            world.put_pipe(id, record);
        }
        Ok(())
    });
    match result {
        Ok(()) => errors::ok_empty(&admitted.request_id),
        Err(response) => response,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exactly_one_source_and_mapped_columns_are_required() {
        let body = json!({
            "name": "p",
            "source": {"kafka": {}, "kinesis": {}},
            "destination": {"database": "d", "columns": [{"name": "a", "type": "String"}]},
            "fieldMappings": [],
        });
        let (kind, problems) = semantic_problems(&body);
        assert_eq!(kind, None);
        assert!(
            problems[0].starts_with("source: exactly one"),
            "{problems:?}"
        );
        assert!(
            problems.iter().any(|p| p.contains("not mapped: a")),
            "{problems:?}"
        );

        let kafka = json!({"name": "p", "source": {"kafka": {"offset": {"timestamp": "2026-13-01T00:00"}}}, "destination": {"database": "d"}});
        let (kind, problems) = semantic_problems(&kafka);
        assert_eq!(kind, Some(SourceKind::Kafka));
        assert!(
            problems.iter().any(|p| p.starts_with("destination.table")),
            "{problems:?}"
        );
        assert!(
            problems
                .iter()
                .any(|p| p.starts_with("source.kafka.offset.timestamp")),
            "{problems:?}"
        );
    }

    #[test]
    fn a_stored_pipe_has_no_request_only_member_and_the_spec_defaults() {
        let body = json!({"name": "p",
                          "source": {"kafka": {"brokers": "b", "credentials": {"password": "x"},
                                               "schemaRegistry": {"url": "u", "credentials": {}}},
                                     "validateSamples": true},
                          "destination": {"roles": ["r"], "database": "d"},
                          "scaling": {"replicas": 3}});
        let pipe = stored_pipe(&body);
        assert_eq!(
            pipe["source"],
            json!({"kafka": {"brokers": "b", "schemaRegistry": {"url": "u"}}})
        );
        assert_eq!(pipe["destination"], json!({"database": "d"}));
        assert_eq!(
            pipe["scaling"],
            json!({"replicas": 3, "concurrency": 1, "replicaCpuMillicores": 500, "replicaMemoryGb": 2})
        );
        assert_eq!(
            pipe["settings"]["object_storage_max_insert_bytes"],
            1_073_741_824
        );
        assert_eq!(pipe["settings"]["db_parallel_view_processing"], false);
    }
}
