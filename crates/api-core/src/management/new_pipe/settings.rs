//! [`Scaling`] and [`PipeSettingsSpec`] of a new pipe, with their bounds.

use api_raw::management::types as raw;

use super::checks::bounded;
use crate::error::Problems;

/// Scaling of a new pipe: replicas 1 to 40, CPU 125 to 2000 millicores, memory 0.5 to 8 GB per replica.
#[derive(Debug, Clone, Default)]
pub struct Scaling {
    replicas: Option<i64>,
    concurrency: Option<i64>,
    replica_cpu_millicores: Option<i64>,
    replica_memory_gb: Option<f64>,
}

impl Scaling {
    /// The server's defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Replicas, 1 to 40.
    pub fn replicas(mut self, replicas: i64) -> Self {
        self.replicas = Some(replicas);
        self
    }

    /// Concurrency per replica.
    pub fn concurrency(mut self, concurrency: i64) -> Self {
        self.concurrency = Some(concurrency);
        self
    }

    /// CPU per replica, 125 to 2000 millicores.
    pub fn replica_cpu_millicores(mut self, millicores: i64) -> Self {
        self.replica_cpu_millicores = Some(millicores);
        self
    }

    /// Memory per replica, 0.5 to 8 GB.
    pub fn replica_memory_gb(mut self, gb: f64) -> Self {
        self.replica_memory_gb = Some(gb);
        self
    }

    pub(super) fn lower(&self, p: &mut Problems) -> raw::PipeScalingRequest {
        let memory = self.replica_memory_gb.filter(|gb| {
            let ok = gb.is_finite() && (0.5..=8.0).contains(gb);
            p.check(
                ok,
                "scaling.replicaMemoryGb",
                format!("must be between 0.5 and 8, got {gb}"),
            );
            ok
        });
        raw::PipeScalingRequest {
            replicas: bounded(p, "scaling.replicas", self.replicas, 1, Some(40)),
            concurrency: self.concurrency,
            replica_cpu_millicores: bounded(
                p,
                "scaling.replicaCpuMillicores",
                self.replica_cpu_millicores,
                125,
                Some(2000),
            ),
            replica_memory_gb: memory,
        }
    }
}

/// Declares the pipe settings: integer settings with their bounds, and boolean settings.
macro_rules! pipe_settings {
    (
        integers { $($int:ident: $min:literal ..= $max:literal,)+ }
        booleans { $($flag:ident,)+ }
    ) => {
        /// Settings of a new pipe; each integer setting is checked against its bounds (units are in the
        /// names: `_ms` milliseconds, `_bytes` bytes).
        ///
        /// ```
        /// use api_core::management::PipeSettingsSpec;
        ///
        /// let settings = PipeSettingsSpec::new().streaming_max_insert_wait_ms(5_000).db_max_threads(8);
        /// # let _ = settings;
        /// ```
        #[derive(Debug, Clone, Default)]
        pub struct PipeSettingsSpec {
            $($int: Option<i64>,)+
            $($flag: Option<bool>,)+
        }

        impl PipeSettingsSpec {
            /// The server's defaults.
            pub fn new() -> Self {
                Self::default()
            }

            $(
                #[doc = concat!("`", stringify!($int), "`, ", stringify!($min), " to ", stringify!($max), ".")]
                pub fn $int(mut self, value: i64) -> Self {
                    self.$int = Some(value);
                    self
                }
            )+

            $(
                #[doc = concat!("`", stringify!($flag), "`.")]
                pub fn $flag(mut self, value: bool) -> Self {
                    self.$flag = Some(value);
                    self
                }
            )+

            /// Every integer setting with its bounds, as `(name, min, max)`.
            pub const BOUNDS: &'static [(&'static str, i64, i64)] = &[$((stringify!($int), $min, $max),)+];

            pub(super) fn lower(&self, p: &mut Problems) -> raw::PipeSettingsRequest {
                raw::PipeSettingsRequest {
                    $($int: bounded(p, concat!("settings.", stringify!($int)), self.$int, $min, Some($max)),)+
                    $($flag: self.$flag,)+
                }
            }
        }
    };
}

pipe_settings! {
    integers {
        streaming_max_insert_wait_ms: 500 ..= 60_000,
        object_storage_concurrency: 1 ..= 35,
        object_storage_polling_interval_ms: 100 ..= 3_600_000,
        object_storage_max_insert_bytes: 10_485_760 ..= 53_687_091_200,
        object_storage_max_file_count: 1 ..= 10_000,
        db_max_threads: 0 ..= 64,
        db_max_insert_threads: 0 ..= 16,
        db_min_insert_block_size_bytes: 0 ..= 10_737_418_240,
        db_max_download_threads: 0 ..= 32,
        db_parallel_distributed_insert_select: 0 ..= 2,
    }
    booleans {
        object_storage_use_cluster_function,
        db_parallel_view_processing,
    }
}
