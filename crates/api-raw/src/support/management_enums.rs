//! Open value sets of the management API.

open_enum! {
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
