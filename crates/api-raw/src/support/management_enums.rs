//! Open value sets of the management API.

open_enum! {
    any_case;
    /// State of a service. `start`: stopped -> starting -> running; `stop`: running -> stopping -> stopped.
    pub enum ServiceState {
        /// Being created.
        Provisioning = "provisioning",
        /// Starting after a `start` command.
        Starting = "starting",
        /// Running and serving.
        Running = "running",
        /// Stopping after a `stop` command.
        Stopping = "stopping",
        /// Stopped.
        Stopped = "stopped",
        /// Idle (scaled to zero).
        Idle = "idle",
        /// Waking from idle.
        Awaking = "awaking",
        /// Some replicas are running.
        PartiallyRunning = "partially_running",
        /// Running but unhealthy.
        Degraded = "degraded",
        /// Failed.
        Failed = "failed",
        /// Being deleted.
        Terminating = "terminating",
        /// Deleted.
        Terminated = "terminated",
        /// Being deleted, with the option to restore it.
        Softdeleting = "softdeleting",
        /// Deleted, with the option to restore it.
        Softdeleted = "softdeleted",
    }
}

open_enum! {
    /// Protocol of a service endpoint.
    pub enum ServiceEndpointProtocol {
        /// HTTPS interface.
        Https = "https",
        /// Native protocol over TLS.
        NativeSecure = "nativesecure",
        /// MySQL wire protocol.
        Mysql = "mysql",
    }
}

open_enum! {
    any_case;
    /// State of a pipe.
    ///
    /// Streaming and object storage pipes: Provisioning -> Running; stop: Stopping -> Stopped; a one-shot
    /// object storage pipe ends in Completed; errors end in Failed or InternalError. Postgres pipes:
    /// Provisioning -> Setup -> Snapshot -> Running.
    pub enum PipeState {
        /// The server reports the state as unknown (a value of the set, not an unknown value).
        Unknown = "Unknown",
        /// Being created.
        Provisioning = "Provisioning",
        /// Loading data.
        Running = "Running",
        /// Running but unhealthy.
        Degraded = "Degraded",
        /// Stopping.
        Stopping = "Stopping",
        /// Stopped.
        Stopped = "Stopped",
        /// Failed.
        Failed = "Failed",
        /// A one-shot pipe finished.
        Completed = "Completed",
        /// Failed inside the service.
        InternalError = "InternalError",
        /// Postgres: setting up replication.
        Setup = "Setup",
        /// Postgres: copying the initial snapshot.
        Snapshot = "Snapshot",
        /// Paused.
        Paused = "Paused",
        /// Pausing.
        Pausing = "Pausing",
        /// Applying a change.
        Modifying = "Modifying",
        /// Postgres: resynchronising.
        Resync = "Resync",
    }
}

open_enum! {
    /// Compression of object storage files.
    pub enum Compression {
        /// Not compressed.
        None = "none",
        /// gzip.
        Gzip = "gzip",
        /// gzip (short name).
        Gz = "gz",
        /// Brotli.
        Brotli = "brotli",
        /// Brotli (short name).
        Br = "br",
        /// xz.
        Xz = "xz",
        /// LZMA.
        Lzma = "LZMA",
        /// Zstandard.
        Zstd = "zstd",
        /// Detected from the file name.
        Auto = "auto",
    }
}

open_enum! {
    /// Kind of a reverse private endpoint.
    pub enum ReversePrivateEndpointType {
        /// A VPC endpoint service.
        VpcEndpointService = "VPC_ENDPOINT_SERVICE",
        /// A VPC resource.
        VpcResource = "VPC_RESOURCE",
        /// A multi-VPC MSK cluster.
        MskMultiVpc = "MSK_MULTI_VPC",
        /// A GCP Private Service Connect service attachment.
        GcpPscServiceAttachment = "GCP_PSC_SERVICE_ATTACHMENT",
    }
}

open_enum! {
    /// Status of a reverse private endpoint.
    pub enum ReversePrivateEndpointStatus {
        /// The server reports the status as unknown.
        Unknown = "Unknown",
        /// Being created.
        Provisioning = "Provisioning",
        /// Being deleted.
        Deleting = "Deleting",
        /// Usable.
        Ready = "Ready",
        /// Failed.
        Failed = "Failed",
        /// Waiting for the other side to accept.
        PendingAcceptance = "PendingAcceptance",
        /// Rejected by the other side.
        Rejected = "Rejected",
        /// Expired before it was accepted.
        Expired = "Expired",
    }
}

open_enum! {
    /// Authentication of a multi-VPC MSK reverse private endpoint.
    pub enum MskAuthentication {
        /// SASL with IAM.
        SaslIam = "SASL_IAM",
        /// SASL/SCRAM.
        SaslScram = "SASL_SCRAM",
    }
}

impl ServiceState {
    /// Whether the service is running, healthy, and accepts work such as a pipe create (`running`
    /// only: `degraded` is not). The same meaning as [`PipeState::is_running`].
    pub fn is_running(&self) -> bool {
        matches!(self, Self::Running)
    }

    /// Whether the service is stopped.
    pub fn is_stopped(&self) -> bool {
        matches!(self, Self::Stopped)
    }

    /// Whether the service is on its way to another state.
    pub fn is_transitional(&self) -> bool {
        matches!(
            self,
            Self::Provisioning
                | Self::Starting
                | Self::Stopping
                | Self::Awaking
                | Self::Terminating
                | Self::Softdeleting
        )
    }

    /// Whether the service is failed or (being) deleted: no start or stop command can bring it to
    /// running or stopped.
    pub fn is_dead_end(&self) -> bool {
        matches!(
            self,
            Self::Failed
                | Self::Terminating
                | Self::Terminated
                | Self::Softdeleting
                | Self::Softdeleted
        )
    }
}

impl PipeState {
    /// Whether the pipe stays in this state until something changes it: Running, Stopped, Paused,
    /// Completed, Failed or InternalError.
    pub fn is_steady(&self) -> bool {
        matches!(
            self,
            Self::Running
                | Self::Stopped
                | Self::Paused
                | Self::Completed
                | Self::Failed
                | Self::InternalError
        )
    }

    /// Whether the pipe has failed (Failed or InternalError).
    pub fn is_failed(&self) -> bool {
        matches!(self, Self::Failed | Self::InternalError)
    }

    /// Whether the pipe is Running: loading data and healthy (Degraded is not; see
    /// [`is_loading`](Self::is_loading)). The same meaning as [`ServiceState::is_running`].
    pub fn is_running(&self) -> bool {
        matches!(self, Self::Running)
    }

    /// Whether the pipe is loading data, healthy or not (Running or Degraded).
    pub fn is_loading(&self) -> bool {
        matches!(self, Self::Running | Self::Degraded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::support::UnknownValue;

    #[test]
    fn unknown_values_round_trip_and_known_ones_normalise() {
        let state: PipeState = serde_json::from_str("\"Hibernating\"").unwrap();
        assert!(matches!(&state, PipeState::Other(v) if v.as_str() == "Hibernating"));
        assert!(state.is_other() && !state.is_steady() && !state.is_failed());
        assert_eq!(serde_json::to_string(&state).unwrap(), "\"Hibernating\"");
        assert_eq!(PipeState::from("Running".to_string()), PipeState::Running);
        assert_eq!(
            "Snapshot".parse::<PipeState>().unwrap(),
            PipeState::Snapshot
        );
        assert_eq!(PipeState::Unknown.to_string(), "Unknown");
        assert!(
            !PipeState::Unknown.is_other(),
            "\"Unknown\" is a documented value"
        );
    }

    #[test]
    fn unknown_text_cannot_move_into_a_set_that_knows_it() {
        // `ServiceState` does not know "Completed"; `PipeState` does. The unknown text is typed by
        // its set, so it cannot become `PipeState::Other("Completed")`.
        let ServiceState::Other(text) = ServiceState::from("Completed") else {
            panic!("\"Completed\" is not a service state")
        };
        let _: &UnknownValue<ServiceState> = &text;
        assert_eq!(PipeState::from(text.as_str()), PipeState::Completed);
    }

    #[test]
    fn pipe_state_classes() {
        let steady: Vec<_> = PipeState::KNOWN
            .iter()
            .map(|s| PipeState::from(*s))
            .filter(PipeState::is_steady)
            .collect();
        assert_eq!(
            steady,
            [
                PipeState::Running,
                PipeState::Stopped,
                PipeState::Failed,
                PipeState::Completed,
                PipeState::InternalError,
                PipeState::Paused
            ]
        );
        assert!(PipeState::InternalError.is_failed());
        assert!(PipeState::Degraded.is_loading() && !PipeState::Degraded.is_steady());
        assert!(!PipeState::Degraded.is_running() && PipeState::Running.is_running());
        assert_eq!(
            PipeState::Degraded.is_running(),
            ServiceState::Degraded.is_running(),
            "is_running means healthy and running on both"
        );
    }

    #[test]
    fn service_state_classes() {
        assert!(ServiceState::Running.is_running());
        assert!(ServiceState::Starting.is_transitional());
        assert!(!ServiceState::Stopped.is_transitional() && ServiceState::Stopped.is_stopped());
        assert_eq!(
            ServiceState::from("partially_running"),
            ServiceState::PartiallyRunning
        );
    }
}
