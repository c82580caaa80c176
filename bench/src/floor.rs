//! [`Floor`]: what a user would write by hand with reqwest and serde, the floor the SDK is measured
//! against. Plain structs with the members the SDK's domain values expose, ids and times as text,
//! one `reqwest::Client` with the credentials as a default header, no retries, no timeouts. It
//! decodes as the SDK does: the body's UTF-8 checked once, then parsed as text (reqwest's `.json()`
//! parses bytes, which checks each string on its own: a cost of the floor's, not of hand-written
//! code as such).

#![allow(
    dead_code,
    reason = "serde fills every member, as a user's structs would; the benchmark reads none of them"
)]

use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue, USER_AGENT};
use serde::Deserialize;

use crate::canned::{DASHBOARDS_PATH, endpoints_path, pipe_path, service_state_path};

/// A hand-written client of one API.
#[derive(Clone)]
pub struct Floor {
    http: reqwest::Client,
    base_url: String,
}

/// How the floor authenticates, as the SDK does.
pub enum Auth<'a> {
    /// `Authorization: Basic base64(key id:key secret)` (management).
    Basic(&'a str, &'a str),
    /// `Authorization: Bearer <token>` (observability).
    Bearer(&'a str),
}

impl Floor {
    /// A client of the API at `base_url`.
    pub fn new(base_url: &str, auth: Auth<'_>) -> reqwest::Result<Self> {
        // reqwest writes the basic credentials; taken once from a request that is never sent.
        let probe = reqwest::Client::new().get(base_url);
        let probe = match auth {
            Auth::Basic(id, secret) => probe.basic_auth(id, Some(secret)),
            Auth::Bearer(token) => probe.bearer_auth(token),
        }
        .build()?;
        let mut headers = HeaderMap::new();
        if let Some(value) = probe.headers().get(AUTHORIZATION) {
            let mut value = value.clone();
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        headers.insert(USER_AGENT, HeaderValue::from_static("floor/1"));
        let http = reqwest::Client::builder()
            .default_headers(headers)
            .build()?;
        Ok(Self {
            http,
            base_url: base_url.to_string(),
        })
    }

    /// `updateServiceState` with `start`.
    pub async fn start_service(&self) -> Result<Service, FloorError> {
        let answer = self
            .http
            .patch(format!("{}{}", self.base_url, service_state_path()))
            .json(&serde_json::json!({ "command": "start" }))
            .send()
            .await?;
        let envelope: Envelope<Service> = decode(answer).await?;
        Ok(envelope.result)
    }

    /// `getPipe`.
    pub async fn get_pipe(&self) -> Result<Pipe, FloorError> {
        let envelope: Envelope<Pipe> = self.get(&pipe_path()).await?;
        Ok(envelope.result)
    }

    /// `listReversePrivateEndpoints`.
    pub async fn reverse_private_endpoints(
        &self,
    ) -> Result<Vec<ReversePrivateEndpoint>, FloorError> {
        let envelope: Envelope<Vec<ReversePrivateEndpoint>> = self.get(&endpoints_path()).await?;
        Ok(envelope.result)
    }

    /// `listDashboards`.
    pub async fn dashboards(&self) -> Result<Vec<Dashboard>, FloorError> {
        let list: DashboardList = self.get(DASHBOARDS_PATH).await?;
        Ok(list.data)
    }

    async fn get<T: serde::de::DeserializeOwned>(&self, path: &str) -> Result<T, FloorError> {
        let answer = self
            .http
            .get(format!("{}{path}", self.base_url))
            .send()
            .await?;
        decode(answer).await
    }
}

/// Why a floor call failed: the exchange, or the body.
#[derive(Debug, thiserror::Error)]
pub enum FloorError {
    /// No answer, or an error status.
    #[error(transparent)]
    Http(#[from] reqwest::Error),
    /// A body that is not UTF-8.
    #[error(transparent)]
    Utf8(#[from] std::str::Utf8Error),
    /// A body that does not decode.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
}

/// The body of a success, its UTF-8 checked once, then parsed as text.
async fn decode<T: serde::de::DeserializeOwned>(
    answer: reqwest::Response,
) -> Result<T, FloorError> {
    let bytes = answer.error_for_status()?.bytes().await?;
    Ok(serde_json::from_str(std::str::from_utf8(&bytes)?)?)
}

/// The management envelope.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Envelope<T> {
    pub status: Option<f64>,
    pub request_id: Option<String>,
    pub result: T,
}

/// A service.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Service {
    pub id: String,
    pub name: String,
    pub state: String,
    pub db_version: Option<String>,
    #[serde(default)]
    pub endpoints: Vec<ServiceEndpoint>,
    pub min_total_memory_gb: Option<f64>,
    pub max_total_memory_gb: Option<f64>,
    pub min_replica_memory_gb: Option<f64>,
    pub max_replica_memory_gb: Option<f64>,
    pub num_replicas: Option<f64>,
    pub idle_scaling: Option<bool>,
    pub idle_timeout_minutes: Option<f64>,
    #[serde(default)]
    pub ip_access_list: Vec<IpAccessListEntry>,
    pub created_at: Option<String>,
    pub encryption_key: Option<String>,
    pub encryption_assumed_role_identifier: Option<String>,
    pub iam_role: Option<String>,
    #[serde(default)]
    pub private_endpoint_ids: Vec<String>,
    #[serde(default)]
    pub available_private_endpoint_ids: Vec<String>,
    pub data_warehouse_id: Option<String>,
    pub is_primary: Option<bool>,
    pub is_readonly: Option<bool>,
    pub byoc_id: Option<String>,
    pub has_transparent_data_encryption: Option<bool>,
    pub transparent_data_encryption_key_id: Option<String>,
    pub encryption_role_id: Option<String>,
}

/// A network endpoint of a service.
#[derive(Debug, Deserialize)]
pub struct ServiceEndpoint {
    pub protocol: Option<String>,
    pub host: Option<String>,
    pub port: Option<i64>,
    pub username: Option<String>,
}

/// An entry of a service's IP access list.
#[derive(Debug, Deserialize)]
pub struct IpAccessListEntry {
    pub source: Option<String>,
    pub description: Option<String>,
}

/// A pipe.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pipe {
    pub id: String,
    pub service_id: String,
    pub name: String,
    pub state: String,
    pub scaling: Option<Scaling>,
    pub source: Source,
    pub destination: Destination,
    #[serde(default)]
    pub field_mappings: Vec<FieldMapping>,
    pub settings: Option<Settings>,
    pub created_at: Option<String>,
    pub updated_at: Option<String>,
}

/// Scaling.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Scaling {
    pub replicas: Option<u32>,
    pub concurrency: Option<u32>,
    pub replica_cpu_millicores: Option<f64>,
    pub replica_memory_gb: Option<f64>,
}

/// The source (the Kafka kind only: what the fixture holds).
#[derive(Debug, Deserialize)]
pub struct Source {
    pub kafka: Option<Kafka>,
}

/// A Kafka source.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Kafka {
    pub brokers: Option<String>,
    pub topics: Option<String>,
    pub consumer_group: Option<String>,
    pub iam_role: Option<String>,
    pub offset: Option<Offset>,
    pub schema_registry: Option<SchemaRegistry>,
    pub ca_certificate: Option<String>,
    pub reverse_private_endpoint_ids: Option<Vec<String>>,
}

/// A start offset.
#[derive(Debug, Deserialize)]
pub struct Offset {
    pub timestamp: Option<String>,
}

/// A schema registry.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SchemaRegistry {
    pub url: Option<String>,
    pub ca_certificate: Option<String>,
}

/// A destination.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Destination {
    pub database: Option<String>,
    pub table: Option<String>,
    pub managed_table: Option<bool>,
    pub table_definition: Option<TableDefinition>,
    #[serde(default)]
    pub columns: Vec<Column>,
}

/// A table definition.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TableDefinition {
    pub engine: Option<Engine>,
    pub sorting_key: Option<Vec<String>>,
    pub partition_by: Option<String>,
    pub primary_key: Option<String>,
}

/// A table engine.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Engine {
    pub version_column_id: Option<String>,
    pub column_ids: Option<Vec<String>>,
}

/// A column.
#[derive(Debug, Deserialize)]
pub struct Column {
    pub name: Option<String>,
    #[serde(rename = "type")]
    pub kind: Option<String>,
}

/// A field mapping.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FieldMapping {
    pub source_field: Option<String>,
    pub destination_field: Option<String>,
}

/// Pipe settings.
#[derive(Debug, Deserialize)]
pub struct Settings {
    pub streaming_max_insert_wait_ms: Option<i64>,
    pub object_storage_concurrency: Option<i64>,
    pub object_storage_polling_interval_ms: Option<i64>,
    pub object_storage_max_insert_bytes: Option<i64>,
    pub object_storage_max_file_count: Option<i64>,
    pub db_max_threads: Option<i64>,
    pub db_max_insert_threads: Option<i64>,
    pub db_min_insert_block_size_bytes: Option<i64>,
    pub db_max_download_threads: Option<i64>,
    pub db_parallel_distributed_insert_select: Option<i64>,
    pub object_storage_use_cluster_function: Option<bool>,
    pub db_parallel_view_processing: Option<bool>,
}

/// A reverse private endpoint.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReversePrivateEndpoint {
    pub id: String,
    pub service_id: String,
    pub description: Option<String>,
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub status: Option<String>,
    pub vpc_endpoint_service_name: Option<String>,
    pub vpc_resource_configuration_id: Option<String>,
    pub vpc_resource_share_arn: Option<String>,
    pub msk_cluster_arn: Option<String>,
    pub msk_authentication: Option<String>,
    pub endpoint_id: Option<String>,
    pub dns_names: Option<Vec<String>>,
    pub private_dns_names: Option<Vec<String>>,
}

/// The observability list wrapper.
#[derive(Debug, Deserialize)]
pub struct DashboardList {
    pub data: Vec<Dashboard>,
}

/// A dashboard.
#[derive(Debug, Deserialize)]
pub struct Dashboard {
    pub id: String,
    pub name: Option<String>,
    #[serde(default)]
    pub tiles: Vec<Tile>,
    #[serde(default)]
    pub tags: Vec<String>,
}

/// A tile.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tile {
    pub id: String,
    pub name: Option<String>,
    pub x: Option<u32>,
    pub y: Option<u32>,
    pub w: Option<u32>,
    pub h: Option<u32>,
    pub as_ratio: Option<bool>,
    #[serde(default)]
    pub series: Vec<Series>,
}

/// A series.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Series {
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub data_source: Option<String>,
    pub source_id: Option<String>,
    pub agg_fn: Option<String>,
    pub field: Option<String>,
    #[serde(rename = "where")]
    pub filter: Option<String>,
    pub where_language: Option<String>,
    pub group_by: Option<Vec<String>>,
    pub metric_name: Option<String>,
    pub metric_data_type: Option<String>,
}
