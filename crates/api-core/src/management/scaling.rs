//! [`Scaling`]: replicas, concurrency, CPU and memory of a pipe, read back or declared for a new pipe.

use api_raw::management::types as raw;
use api_raw::support::{CpuMillicores, MemoryGb};
use serde::Serialize;

use super::new_pipe::checks::bounded;
use crate::decode::{Invalid, Path, fit};
use crate::error::Problems;

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

    pub(crate) fn lower(&self, p: &mut Problems) -> raw::PipeScalingRequest {
        let memory = self.replica_memory.map(MemoryGb::get).filter(|gb| {
            let ok = (0.5..=8.0).contains(gb);
            p.check(
                ok,
                "scaling.replicaMemoryGb",
                format!("must be between 0.5 and 8, got {gb}"),
            );
            ok
        });
        raw::PipeScalingRequest {
            replicas: bounded(
                p,
                "scaling.replicas",
                self.replicas.map(u64::from),
                1,
                Some(40),
            ),
            concurrency: self.concurrency.map(i64::from),
            replica_cpu_millicores: bounded(
                p,
                "scaling.replicaCpuMillicores",
                self.replica_cpu.map(CpuMillicores::get),
                125,
                Some(2000),
            ),
            replica_memory_gb: memory,
        }
    }
}

crate::decode::deserialize_from_wire!(Scaling, raw::PipeScaling, |value, at| Scaling::decode(
    Some(value),
    at
));
