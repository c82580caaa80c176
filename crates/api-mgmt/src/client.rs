//! How calls are made: the [`Config`](crate::Config) builder, retries, the HTTP client and TLS, the
//! environment variables, and what each call is (its [`Operation`], whether repeating it is safe)
//! and how it went ([`ResponseMeta`]).

/// The HTTP client crate the SDK sends with, for [`ConfigBuilder::http_client`].
pub use api_core::reqwest;
pub use api_core::{
    ConfigBuilder, DEFAULT_CONNECT_TIMEOUT, Idempotency, Operation, ResponseMeta, RetryPolicy, env,
    http_client_builder,
};
