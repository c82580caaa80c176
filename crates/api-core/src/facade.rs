//! [`facade_client!`](crate::facade_client): the one construction of a facade's client, shared by
//! `api-mgmt` and `api-obs` (builder, environment, retries, configuration, the generated client).

/// Declares a facade's `Client`: a [`Connection`](crate::Connection) to one API with the builder,
/// `from_env` constructors, `with_retry`, `config` and `raw`, a user agent of the calling crate's name
/// and version, and a `Debug` that shows the configuration without a secret. The facade adds its
/// resource handles in an `impl` of its own.
///
/// ```ignore
/// api_core::facade_client! {
///     /// A client of the management API.
///     pub struct Client(api_core::raw::management::Client);
///     from_env = management_from_env, rate_limit = management,
///     variables = "`CLOUD_API_URL`, `CLOUD_API_KEY_ID` and `CLOUD_API_KEY_SECRET`";
/// }
/// ```
#[macro_export]
macro_rules! facade_client {
    (
        $(#[$meta:meta])*
        pub struct $name:ident($raw:ty);
        from_env = $from_env:ident, rate_limit = $rate_limit:ident, variables = $variables:literal;
    ) => {
        $(#[$meta])*
        #[derive(Clone)]
        pub struct $name {
            connection: $crate::Connection<$raw>,
        }

        impl $name {
            #[doc = concat!(
                "A builder for a client of the API at `base_url`, with the user agent `",
                env!("CARGO_PKG_NAME"), "/<version>`."
            )]
            pub fn builder(base_url: impl Into<String>) -> $crate::ConfigBuilder<$name> {
                $crate::ConfigBuilder::new(base_url).user_agent(Self::user_agent())
            }

            #[doc = concat!(
                "A builder configured from ", $variables, ", to add a rate limit, timeouts or a ",
                "transport before [`build`](ConfigBuilder::build).\n\n",
                "```no_run\n",
                "# fn run() -> Result<(), ", env!("CARGO_CRATE_NAME"), "::Error> {\n",
                "let client = ", env!("CARGO_CRATE_NAME"), "::Client::builder_from_env()?\n",
                "    .rate_limit(", env!("CARGO_CRATE_NAME"), "::rate_limit::RateLimit::", stringify!($rate_limit), "())\n",
                "    .operation_timeout(std::time::Duration::from_secs(60))\n",
                "    .build()?;\n",
                "# Ok(()) }\n",
                "```"
            )]
            pub fn builder_from_env() -> Result<$crate::ConfigBuilder<$name>, $crate::Error> {
                Ok($crate::ConfigBuilder::<$name>::$from_env()?.user_agent(Self::user_agent()))
            }

            #[doc = concat!(
                "A client configured from ", $variables,
                " (see [`", stringify!($name), "::builder_from_env`])."
            )]
            pub fn from_env() -> Result<Self, $crate::Error> {
                Self::builder_from_env()?.build()
            }

            /// A client from a checked configuration.
            pub fn new(config: $crate::Config) -> Result<Self, $crate::Error> {
                Ok(Self {
                    connection: $crate::Connection::new(config)?,
                })
            }

            /// A client that shares this one's connections and rate limiter but retries by
            /// `policy` (e.g. [`RetryPolicy::disabled`] for one call).
            pub fn with_retry(&self, policy: $crate::RetryPolicy) -> Self {
                Self {
                    connection: self.connection.with_retry(policy),
                }
            }

            /// A client that shares this one's connections and rate limiter and asks `check`
            /// right before each request leaves, after the rate limit's wait and any backoff: a
            /// refusal sends nothing more, and the call ends with [`Error::Withheld`](
            /// $crate::Error::Withheld) (or, on a retry, the error of the attempt that was sent).
            /// For a condition that can lapse while a call waits, such as a lease.
            pub fn with_send_check(
                &self,
                check: impl Fn(&$crate::Operation) -> Result<(), String> + Send + Sync + 'static,
            ) -> Self {
                Self {
                    connection: self.connection.with_send_check(check),
                }
            }

            /// The configuration.
            pub fn config(&self) -> &$crate::Config {
                self.connection.config()
            }

            /// The client's rate limiter (shared by its clones), when it has a rate limit: pace
            /// work of one's own through the same limit (and store) as the SDK's calls.
            pub fn rate_limiter(&self) -> Option<$crate::RateLimiter> {
                self.connection.runtime().rate_limiter()
            }

            /// The generated client, for what this facade does not wrap. Its requests carry the
            /// credentials, user agent and attempt timeout (whoever built the HTTP client), but
            /// none of the retries, rate limiting or error decoding.
            pub fn raw(&self) -> &$raw {
                self.connection.raw()
            }

            /// The runtime and the generated client, for the resource handles.
            #[allow(dead_code, reason = "used by the facades that have handles of their own")]
            pub(crate) fn parts(&self) -> (&$crate::Runtime, &$raw) {
                (self.connection.runtime(), self.connection.raw())
            }

            fn user_agent() -> String {
                concat!(env!("CARGO_PKG_NAME"), "/", env!("CARGO_PKG_VERSION")).to_string()
            }
        }

        impl $crate::FromConfig for $name {
            fn from_config(config: $crate::Config) -> Result<Self, $crate::Error> {
                Self::new(config)
            }
        }

        impl ::std::fmt::Debug for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.debug_struct(concat!(env!("CARGO_CRATE_NAME"), "::", stringify!($name)))
                    .field("config", self.connection.config())
                    .finish()
            }
        }
    };
}
