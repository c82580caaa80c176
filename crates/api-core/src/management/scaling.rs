//! [`Scaling`]: replicas, concurrency, CPU and memory of a pipe, read back or declared for a new pipe.

use api_raw::management::types as raw;
use api_raw::support::{CpuMillicores, MemoryGb};
use serde::Serialize;

use crate::decode::{Invalid, Path, fit};

/// Scaling of a pipe. Each member is absent where the server's default applies (and, on read, where
/// the server left it out). For a new pipe: replicas 1 to 40, CPU 125 to 2000 millicores, memory 0.5 to
/// 8 GB per replica.
///
/// ```
/// use api_core::management::{CpuMillicores, Scaling};
///
/// let scaling = Scaling::new().replicas(2).replica_cpu_millicores(500).replica_memory_gb(2.0);
/// assert_eq!(scaling.replica_cpu, Some(CpuMillicores::new(500)));
/// assert_eq!(scaling.replica_cpu.map(|c| c.to_string()).as_deref(), Some("500m"));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Scaling {
    /// Replicas.
    pub replicas: Option<u32>,
    /// Concurrency per replica.
    pub concurrency: Option<u32>,
    /// CPU per replica (`replicaCpuMillicores`).
    #[serde(rename = "replicaCpuMillicores")]
    pub replica_cpu: Option<CpuMillicores>,
    /// Memory per replica (`replicaMemoryGb`).
    #[serde(rename = "replicaMemoryGb")]
    pub replica_memory: Option<MemoryGb>,
}

impl Scaling {
    /// The server's defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Replicas, 1 to 40.
    pub fn replicas(mut self, replicas: u32) -> Self {
        self.replicas = Some(replicas);
        self
    }

    /// Concurrency per replica.
    pub fn concurrency(mut self, concurrency: u32) -> Self {
        self.concurrency = Some(concurrency);
        self
    }

    /// CPU per replica, 125 to 2000 millicores.
    pub fn replica_cpu_millicores(mut self, millicores: u64) -> Self {
        self.replica_cpu = Some(CpuMillicores::new(millicores));
        self
    }

    /// Memory per replica, 0.5 to 8 GB (a negative or non-finite amount counts as 0, which the
    /// builder refuses).
    pub fn replica_memory_gb(mut self, gb: f64) -> Self {
        self.replica_memory = Some(MemoryGb::new(gb));
        self
    }

    pub(crate) fn decode(raw: Option<raw::PipeScaling>, at: Path<'_>) -> Result<Self, Invalid> {
        let Some(raw) = raw else {
            return Ok(Self::default());
        };
        Ok(Self {
            replicas: fit(raw.replicas, at.field("replicas"))?,
            concurrency: fit(raw.concurrency, at.field("concurrency"))?,
            replica_cpu: raw.replica_cpu_millicores,
            replica_memory: raw.replica_memory_gb,
        })
    }

    /// The request form, unchecked (the spec's bounds are checked on the whole request).
    pub(crate) fn to_json(self) -> serde_json::Value {
        let mut scaling = serde_json::Map::new();
        if let Some(replicas) = self.replicas {
            scaling.insert("replicas".into(), replicas.into());
        }
        if let Some(concurrency) = self.concurrency {
            scaling.insert("concurrency".into(), concurrency.into());
        }
        if let Some(cpu) = self.replica_cpu {
            scaling.insert("replicaCpuMillicores".into(), cpu.get().into());
        }
        if let Some(memory) = self.replica_memory {
            scaling.insert("replicaMemoryGb".into(), memory.get().into());
        }
        serde_json::Value::Object(scaling)
    }
}

crate::decode::deserialize_from_wire!(Scaling, raw::PipeScaling, |value, at| Scaling::decode(
    Some(value),
    at
));
