//! Human views of the domain values: aligned tables and short lines, `-` where the server said
//! nothing (never `Some(`/`None`), and never a secret.

use api_mgmt::pipes::source::{Kafka, Kinesis, ObjectStorage, Postgres};
use api_mgmt::{
    Pipe, PipeSource, Service,
    pipes::{PipeSettings, Scaling},
    services::{PrivateEndpoint, ReversePrivateEndpoint},
};
use api_obs::{Alert, Dashboard};
use chrono::{DateTime, Utc};
use comfy_table::{ContentArrangement, Table, presets};

/// Shown where a value is absent.
const NONE: &str = "-";

/// A table with a header row, columns two spaces apart, no borders.
pub(crate) fn table(header: &[&str], rows: Vec<Vec<String>>) -> String {
    let mut table = plain_table();
    table.set_header(header.to_vec());
    for row in rows {
        table.add_row(row);
    }
    finish(table)
}

/// Label and value pairs, aligned.
pub(crate) fn fields(rows: Vec<(&str, String)>) -> String {
    let mut table = plain_table();
    for (label, value) in rows {
        table.add_row(vec![label.to_string(), value]);
    }
    finish(table)
}

fn plain_table() -> Table {
    let mut table = Table::new();
    table
        .load_preset(presets::NOTHING)
        .set_content_arrangement(ContentArrangement::Disabled);
    table
}

fn finish(mut table: Table) -> String {
    let columns = table.column_count();
    for (i, column) in table.column_iter_mut().enumerate() {
        column.set_padding((0, if i + 1 == columns { 0 } else { 2 }));
    }
    table.trim_fmt()
}

fn or_none(value: Option<impl ToString>) -> String {
    value.map_or_else(|| NONE.to_string(), |v| v.to_string())
}

fn time(value: Option<DateTime<Utc>>) -> String {
    or_none(value.map(|t| t.format("%Y-%m-%d %H:%M:%S UTC")))
}

fn yes_no(value: Option<bool>) -> String {
    or_none(value.map(|b| if b { "yes" } else { "no" }))
}

fn list(items: &[String]) -> String {
    if items.is_empty() {
        NONE.to_string()
    } else {
        items.join(", ")
    }
}

/// A pipe: identity, state, source, destination, mappings, scaling and times.
pub(crate) fn pipe(pipe: &Pipe) -> String {
    let destination = &pipe.destination;
    let mut target = destination.database.clone();
    if let Some(table) = &destination.table {
        target = format!("{target}.{table}");
    }
    if destination.managed_table == Some(true) {
        target.push_str(" (managed table)");
    }
    let columns: Vec<String> = destination
        .columns
        .iter()
        .map(|c| format!("{} {}", c.name, c.column_type))
        .collect();
    let mappings: Vec<String> = pipe
        .field_mappings
        .iter()
        .map(|m| format!("{} -> {}", m.source_field, m.destination_field))
        .collect();
    fields(vec![
        ("ID", pipe.id.to_string()),
        ("Name", pipe.name.clone()),
        ("State", pipe.state.to_string()),
        ("Service", pipe.service_id.to_string()),
        ("Source", source(&pipe.source)),
        ("Destination", target),
        ("Columns", list(&columns)),
        ("Mappings", list(&mappings)),
        ("Scaling", scaling(&pipe.scaling)),
        ("Created", time(pipe.created_at)),
        ("Updated", time(pipe.updated_at)),
    ])
}

fn source(source: &PipeSource) -> String {
    match source {
        PipeSource::Kafka(kafka) => kafka_source(kafka),
        PipeSource::ObjectStorage(storage) => object_storage_source(storage),
        PipeSource::Kinesis(kinesis) => kinesis_source(kinesis),
        PipeSource::Postgres(postgres) => postgres_source(postgres),
        other => format!(
            "{} (a source kind this cloudctl does not know)",
            other.kind_name()
        ),
    }
}

fn kafka_source(kafka: &Kafka) -> String {
    let mut text = format!("kafka: topics {} from {}", kafka.topics, kafka.brokers);
    if let Some(group) = &kafka.consumer_group {
        text.push_str(&format!(", consumer group {group}"));
    }
    text
}

fn object_storage_source(storage: &ObjectStorage) -> String {
    let place = match (&storage.url, &storage.azure_container_name, &storage.path) {
        (Some(url), _, _) => url.clone(),
        (None, Some(container), path) => {
            format!("container {container}, {}", path.as_deref().unwrap_or(NONE))
        }
        _ => NONE.to_string(),
    };
    let mut text = format!("objectStorage: {place}");
    if let Some(compression) = &storage.compression {
        text.push_str(&format!(", {compression}"));
    }
    match storage.is_continuous {
        Some(true) => text.push_str(", continuous"),
        Some(false) => text.push_str(", one-shot"),
        None => {}
    }
    text
}

fn kinesis_source(kinesis: &Kinesis) -> String {
    format!(
        "kinesis: stream {} in {}",
        kinesis.stream_name, kinesis.region
    )
}

fn postgres_source(postgres: &Postgres) -> String {
    let port = postgres.port.map_or_else(String::new, |p| format!(":{p}"));
    let tables = postgres.table_mappings.len();
    format!(
        "postgres: {}{port}/{}, {tables} table{}",
        postgres.host,
        postgres.database,
        if tables == 1 { "" } else { "s" }
    )
}

fn scaling(scaling: &Scaling) -> String {
    let mut parts = Vec::new();
    if let Some(replicas) = scaling.replicas {
        parts.push(format!(
            "{replicas} replica{}",
            if replicas == 1 { "" } else { "s" }
        ));
    }
    if let Some(concurrency) = scaling.concurrency {
        parts.push(format!("concurrency {concurrency}"));
    }
    let per_replica: Vec<String> = [
        scaling.replica_cpu.map(|cpu| format!("{cpu} CPU")),
        scaling
            .replica_memory
            .map(|memory| format!("{memory} memory")),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !per_replica.is_empty() {
        parts.push(format!("{} per replica", per_replica.join(" and ")));
    }
    if parts.is_empty() {
        "server defaults".to_string()
    } else {
        parts.join(", ")
    }
}

/// The settings of a pipe, known and unknown, by name.
pub(crate) fn pipe_settings(settings: &PipeSettings) -> String {
    let json = serde_json::to_value(settings).unwrap_or_default();
    let rows: Vec<Vec<String>> = json
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(_, value)| !value.is_null())
        .map(|(name, value)| {
            let shown = match value {
                serde_json::Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            vec![name.clone(), shown]
        })
        .collect();
    if rows.is_empty() {
        return "The pipe has no settings (the server's defaults apply).".to_string();
    }
    table(&["SETTING", "VALUE"], rows)
}

/// A service: identity, state, endpoints and capacity.
pub(crate) fn service(service: &Service) -> String {
    let endpoints: Vec<String> = service.endpoints.iter().map(ToString::to_string).collect();
    let memory = match (service.min_replica_memory_gb, service.max_replica_memory_gb) {
        (Some(min), Some(max)) => format!("{min} to {max} per replica"),
        (Some(min), None) => format!("at least {min} per replica"),
        (None, Some(max)) => format!("up to {max} per replica"),
        (None, None) => NONE.to_string(),
    };
    let idle = match (service.idle_scaling, service.idle_timeout_minutes) {
        (Some(true), Some(minutes)) => format!("on, after {minutes} min"),
        (other, _) => yes_no(other),
    };
    fields(vec![
        ("ID", service.id.to_string()),
        ("Name", service.name.clone()),
        ("State", service.state_name().to_string()),
        ("Version", or_none(service.db_version.as_ref())),
        ("Endpoints", list(&endpoints)),
        ("Replicas", or_none(service.num_replicas)),
        ("Memory", memory),
        ("Idle scaling", idle),
        ("Created", time(service.created_at)),
    ])
}

/// Reverse private endpoints, one row each.
pub(crate) fn reverse_endpoints(endpoints: &[ReversePrivateEndpoint]) -> String {
    if endpoints.is_empty() {
        return "The service has no reverse private endpoints.".to_string();
    }
    let rows = endpoints
        .iter()
        .map(|e| {
            vec![
                e.id.to_string(),
                or_none(e.kind.as_ref()),
                e.status.to_string(),
                or_none(e.endpoint_id.as_ref()),
                e.description.clone(),
            ]
        })
        .collect();
    table(
        &["ID", "TYPE", "STATUS", "ENDPOINT ID", "DESCRIPTION"],
        rows,
    )
}

/// A registered private endpoint.
pub(crate) fn private_endpoint(endpoint: &PrivateEndpoint) -> String {
    fields(vec![
        ("ID", endpoint.id.clone()),
        ("Description", endpoint.description.clone()),
    ])
}

/// An alert: what it watches, its threshold, state and channel.
pub(crate) fn alert(alert: &Alert) -> String {
    let threshold = match (&alert.threshold_type, alert.threshold) {
        (Some(kind), Some(value)) => format!("{kind} {value}"),
        (None, Some(value)) => value.to_string(),
        (Some(kind), None) => kind.to_string(),
        (None, None) => NONE.to_string(),
    };
    let channel = alert
        .channel
        .as_ref()
        .map(|c| match (&c.kind, &c.webhook_id) {
            (Some(kind), Some(webhook)) => format!("{kind} {webhook}"),
            (Some(kind), None) => kind.to_string(),
            (None, Some(webhook)) => webhook.clone(),
            (None, None) => NONE.to_string(),
        });
    fields(vec![
        ("ID", alert.id.to_string()),
        ("Name", alert.name.clone()),
        ("State", alert.state_name().to_string()),
        ("Source", or_none(alert.source.as_ref())),
        ("Threshold", threshold),
        ("Interval", or_none(alert.interval.as_ref())),
        ("Channel", or_none(channel)),
        ("Dashboard", or_none(alert.dashboard.as_ref())),
        ("Tile", or_none(alert.tile_id.as_ref())),
        ("Team", or_none(alert.team.as_ref())),
        ("Message", or_none(alert.message.as_ref())),
        ("Created", time(alert.created_at)),
        ("Updated", time(alert.updated_at)),
    ])
}

/// Dashboards, one row each.
pub(crate) fn dashboards(dashboards: &[Dashboard]) -> String {
    if dashboards.is_empty() {
        return "There are no dashboards.".to_string();
    }
    let rows = dashboards
        .iter()
        .map(|d| {
            vec![
                d.id.to_string(),
                d.name.clone(),
                d.tiles.len().to_string(),
                list(&d.tags),
            ]
        })
        .collect();
    table(&["ID", "NAME", "TILES", "TAGS"], rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_align_without_borders_or_trailing_spaces() {
        let text = table(
            &["ID", "NAME"],
            vec![
                vec!["1".into(), "orders".into()],
                vec!["200".into(), "clicks".into()],
            ],
        );
        assert_eq!(text, "ID   NAME\n1    orders\n200  clicks");
        assert_eq!(
            fields(vec![("ID", "x".into()), ("Name", "y".into())]),
            "ID    x\nName  y"
        );
    }

    #[test]
    fn scaling_reads_like_a_sentence() {
        assert_eq!(scaling(&Scaling::new()), "server defaults");
        let scaled = Scaling::new()
            .replicas(2)
            .concurrency(1)
            .replica_cpu_millicores(500)
            .replica_memory_gb(2.0);
        assert_eq!(
            scaling(&scaled),
            "2 replicas, concurrency 1, 500m CPU and 2 GB memory per replica"
        );
    }
}
