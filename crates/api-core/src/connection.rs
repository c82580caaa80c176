//! [`Connection`]: a [`Runtime`] and the generated client of one API, built together.

use std::fmt;

use api_raw::support::RequestDefaults;

use crate::config::Config;
use crate::error::Error;
use crate::retry::RetryPolicy;
use crate::runtime::Runtime;

/// A generated (progenitor) client that can be wired to the runtime's HTTP client.
pub trait GeneratedClient: Clone {
    /// The client for `base_url`, sending through `http` with `defaults` added to every request
    /// (credentials, user agent, attempt timeout).
    fn connect(base_url: &str, http: reqwest::Client, defaults: RequestDefaults) -> Self;
}

#[cfg(feature = "management")]
impl GeneratedClient for api_raw::management::Client {
    fn connect(base_url: &str, http: reqwest::Client, defaults: RequestDefaults) -> Self {
        Self::new_with_client(base_url, http, defaults)
    }
}

#[cfg(feature = "observability")]
impl GeneratedClient for api_raw::observability::Client {
    fn connect(base_url: &str, http: reqwest::Client, defaults: RequestDefaults) -> Self {
        Self::new_with_client(base_url, http, defaults)
    }
}

/// The runtime and the generated client of one API. Cheap to clone: clones share the connection
/// pool and the rate limiter.
#[derive(Clone)]
pub struct Connection<C> {
    runtime: Runtime,
    raw: C,
}

impl<C: GeneratedClient> Connection<C> {
    /// Builds the runtime from `config` and wires the generated client to it.
    pub fn new(config: Config) -> Result<Self, Error> {
        let runtime = Runtime::new(config)?;
        let raw = Self::wire(&runtime);
        Ok(Self { runtime, raw })
    }

    /// The same connection, retrying by `policy`.
    pub fn with_retry(&self, policy: RetryPolicy) -> Self {
        Self {
            runtime: self.runtime.with_retry(policy),
            raw: self.raw.clone(),
        }
    }

    /// The same connection, asking `check` right before each request is sent (see
    /// [`Runtime::with_send_check`]).
    pub fn with_send_check(
        &self,
        check: impl Fn(&crate::Operation) -> Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        Self {
            runtime: self.runtime.with_send_check(check),
            raw: self.raw.clone(),
        }
    }

    fn wire(runtime: &Runtime) -> C {
        let (http, defaults) = runtime.transport();
        C::connect(runtime.config().base_url(), http.clone(), defaults.clone())
    }

    /// The runtime.
    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    /// The generated client: every request carries the credentials, user agent and attempt timeout
    /// (whoever built the HTTP client); no retries, rate limiting or error decoding.
    pub fn raw(&self) -> &C {
        &self.raw
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        self.runtime.config()
    }
}

impl<C> fmt::Debug for Connection<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connection")
            .field("config", self.runtime.config())
            .finish()
    }
}
