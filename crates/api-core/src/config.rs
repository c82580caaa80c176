//! [`Config`] and its builder: base URL, credentials, timeouts, retries, rate limit, user agent, and
//! the transport (extra root certificates, a proxy, or a whole `reqwest::Client` of the caller's).

use std::marker::PhantomData;
use std::time::Duration;

use api_raw::support::Secret;

use crate::credentials::Credentials;
use crate::error::{ConfigError, Error};
use crate::rate_limit::RateLimit;
use crate::retry::RetryPolicy;

/// A validated client configuration. Build it with [`Config::builder`].
#[derive(Debug, Clone)]
pub struct Config {
    pub(crate) base_url: String,
    pub(crate) credentials: Credentials,
    pub(crate) connect_timeout: Duration,
    pub(crate) attempt_timeout: Duration,
    pub(crate) operation_timeout: Duration,
    pub(crate) retry: RetryPolicy,
    pub(crate) rate_limit: Option<RateLimit>,
    pub(crate) user_agent: String,
    pub(crate) transport: Transport,
    /// Whether each attempt carries the W3C trace context of its span.
    pub(crate) trace_propagation: bool,
    /// Where the metrics go (the global meter provider's `api-core` meter when `None`).
    #[cfg(feature = "metrics")]
    pub(crate) meter: Option<opentelemetry::metrics::Meter>,
}

/// A root certificate to trust (there are none without a TLS backend).
#[cfg(any(
    feature = "rustls-ring",
    feature = "rustls-aws-lc",
    feature = "native-tls"
))]
pub(crate) type RootCertificate = reqwest::Certificate;
/// A root certificate to trust (there are none without a TLS backend).
#[cfg(not(any(
    feature = "rustls-ring",
    feature = "rustls-aws-lc",
    feature = "native-tls"
)))]
pub(crate) type RootCertificate = std::convert::Infallible;

/// How requests travel: the HTTP client the runtime builds (with extra roots and a proxy), or one
/// the caller built.
#[derive(Clone, Default)]
pub(crate) enum Transport {
    /// The runtime builds the client.
    #[default]
    Built,
    /// The runtime builds the client, trusting these extra roots and going through this proxy.
    Configured {
        root_certificates: Vec<RootCertificate>,
        proxy: Option<Box<(reqwest::Proxy, Secret)>>,
    },
    /// The caller's own client; credentials and user agent are added to each request.
    Caller(reqwest::Client),
}

impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Built => f.write_str("Built"),
            Self::Configured {
                root_certificates,
                proxy,
            } => f
                .debug_struct("Configured")
                .field("root_certificates", &root_certificates.len())
                // The proxy URL may carry a user and password: shown only redacted.
                .field("proxy", &proxy.as_ref().map(|proxy| &proxy.1))
                .finish(),
            Self::Caller(_) => f.write_str("Caller(reqwest::Client)"),
        }
    }
}

impl Config {
    /// A builder for a client of the API at `base_url` (scheme, host, port; no trailing `/` needed).
    pub fn builder(base_url: impl Into<String>) -> ConfigBuilder {
        ConfigBuilder::new(base_url)
    }

    /// The credentials.
    pub fn credentials(&self) -> &Credentials {
        &self.credentials
    }

    /// The base URL, without a trailing `/`.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The retry policy.
    pub fn retry(&self) -> &RetryPolicy {
        &self.retry
    }

    /// The user agent sent with every request.
    pub fn user_agent(&self) -> &str {
        &self.user_agent
    }
}

/// What a [`ConfigBuilder`] builds: the [`Config`] itself, or a client made from it.
pub trait FromConfig: Sized {
    /// Makes the value from a checked configuration.
    fn from_config(config: Config) -> Result<Self, Error>;
}

impl FromConfig for Config {
    fn from_config(config: Config) -> Result<Self, Error> {
        Ok(config)
    }
}

/// Builds a [`Config`], or a client `T` made from one; [`build`](ConfigBuilder::build) checks everything.
#[derive(Clone)]
pub struct ConfigBuilder<T = Config> {
    base_url: String,
    credentials: Option<Credentials>,
    connect_timeout: Duration,
    attempt_timeout: Duration,
    operation_timeout: Duration,
    retry: RetryPolicy,
    rate_limit: Option<RateLimit>,
    user_agent: String,
    allow_insecure_http: bool,
    root_certificates: Vec<Vec<u8>>,
    proxy: Option<Secret>,
    http_client: Option<reqwest::Client>,
    connect_timeout_set: bool,
    trace_propagation: bool,
    #[cfg(feature = "metrics")]
    meter: Option<opentelemetry::metrics::Meter>,
    target: PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for ConfigBuilder<T> {
    /// The settings as given, the base URL through the one redaction rule (it is checked, and refused
    /// with credentials in it, only by `build`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConfigBuilder")
            .field(
                "base_url",
                &api_raw::support::redact::Redactor::new().text(&self.base_url),
            )
            .field("credentials", &self.credentials)
            .field("connect_timeout", &self.connect_timeout)
            .field("attempt_timeout", &self.attempt_timeout)
            .field("operation_timeout", &self.operation_timeout)
            .field("retry", &self.retry)
            .field("rate_limit", &self.rate_limit)
            .field("user_agent", &self.user_agent)
            .field("proxy", &self.proxy)
            .field("trace_propagation", &self.trace_propagation)
            .field(
                "http_client",
                &self.http_client.as_ref().map(|_| "reqwest::Client"),
            )
            .finish_non_exhaustive()
    }
}

impl<T: FromConfig> ConfigBuilder<T> {
    /// Defaults: connect timeout 10 s, attempt timeout 30 s, operation timeout 120 s (each may be
    /// `Duration::MAX` for no limit),
    /// [`RetryPolicy::default`], no client-side rate limit, user agent `api-core/<version>`.
    pub fn new(base_url: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            credentials: None,
            connect_timeout: Duration::from_secs(10),
            attempt_timeout: Duration::from_secs(30),
            operation_timeout: Duration::from_secs(120),
            retry: RetryPolicy::default(),
            rate_limit: None,
            user_agent: concat!("api-core/", env!("CARGO_PKG_VERSION")).to_string(),
            allow_insecure_http: false,
            root_certificates: Vec::new(),
            proxy: None,
            http_client: None,
            connect_timeout_set: false,
            trace_propagation: true,
            #[cfg(feature = "metrics")]
            meter: None,
            target: PhantomData,
        }
    }

    /// Authenticate with these credentials.
    pub fn credentials(mut self, credentials: Credentials) -> Self {
        self.credentials = Some(credentials);
        self
    }

    /// How long to wait for a connection (default [`DEFAULT_CONNECT_TIMEOUT`](crate::DEFAULT_CONNECT_TIMEOUT),
    /// 10 s, or half the attempt timeout when that is shorter, so that a connection that never
    /// completes ends as a [`Connect`](crate::TransportKind::Connect) failure, nothing sent, not
    /// as an attempt timeout with its outcome unknown). Zero is refused by [`build`](Self::build);
    /// `Duration::MAX` (or any duration too long to be a point in time) means no limit.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self.connect_timeout_set = true;
        self
    }

    /// How long one attempt (connect, send, read the whole answer) may take (default 30 s), also
    /// through a caller's own client. Zero is refused by [`build`](Self::build); `Duration::MAX`
    /// means no limit per attempt (the operation timeout still bounds the call).
    pub fn attempt_timeout(mut self, timeout: Duration) -> Self {
        self.attempt_timeout = timeout;
        self
    }

    /// How long one call may take, retries and waits included (default 120 s). Zero is refused by
    /// [`build`](Self::build); `Duration::MAX` means no limit.
    pub fn operation_timeout(mut self, timeout: Duration) -> Self {
        self.operation_timeout = timeout;
        self
    }

    /// The retry policy ([`RetryPolicy::disabled`] turns retries off).
    pub fn retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// A client-side rate limit (`None` turns it off). Clients given clones of one [`RateLimit`]
    /// share its pace in this process; with [`RateLimitStore::Host`](crate::RateLimitStore::Host) or
    /// [`RateLimitStore::Redis`](crate::RateLimitStore::Redis) every process using the same API URL
    /// and key shares it.
    pub fn rate_limit(mut self, rate_limit: impl Into<Option<RateLimit>>) -> Self {
        self.rate_limit = rate_limit.into();
        self
    }

    /// The `User-Agent` header, `<crate>/<version>` by convention.
    pub fn user_agent(mut self, user_agent: impl Into<String>) -> Self {
        self.user_agent = user_agent.into();
        self
    }

    /// Allows sending credentials over plain `http://` to a host that is not loopback. Off by default:
    /// credentials would travel in clear text.
    pub fn allow_insecure_http(mut self, allow: bool) -> Self {
        self.allow_insecure_http = allow;
        self
    }

    /// Also trusts the certificates in `pem` (one or more PEM blocks), besides the platform's roots:
    /// for a deployment behind a private CA. Needs a TLS feature (`rustls-ring`, the default,
    /// `rustls-aws-lc` or `native-tls`); checked by [`build`](Self::build).
    pub fn root_certificate_pem(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.root_certificates.push(pem.into());
        self
    }

    /// Sends every request through this proxy (`http://`, `https://` or `socks5://` URL; it may carry
    /// a user and password, which never appear in `Debug` or errors). Without it, no proxy is used.
    pub fn proxy(mut self, url: impl Into<String>) -> Self {
        self.proxy = Some(Secret::new(url.into()));
        self
    }

    /// Sends through `client`, a `reqwest::Client` of your own (middleware, DNS, TLS or pool settings
    /// this builder does not wrap); build it from [`http_client_builder`](crate::http_client_builder),
    /// which selects the TLS backend of the enabled feature. Every request behaves as with the
    /// client the SDK builds: it gets the credentials and user agent (they replace an
    /// `Authorization` or `User-Agent` among the client's default headers; its other default headers
    /// are sent as they are) and the [attempt timeout](Self::attempt_timeout) (it replaces the
    /// client's own `timeout`; with `Duration::MAX`, the client's own `timeout` applies), and every
    /// call the retries, rate limit and operation timeout; the generated
    /// client (a facade's `raw()`) sends the same credentials, user agent and attempt timeout. The
    /// client's own connect timeout, proxy and roots are used, so [`proxy`](Self::proxy),
    /// [`root_certificate_pem`](Self::root_certificate_pem) and
    /// [`connect_timeout`](Self::connect_timeout) cannot be combined with it.
    pub fn http_client(mut self, client: reqwest::Client) -> Self {
        self.http_client = Some(client);
        self
    }

    /// Records the SDK's metrics (see the table in the guide's chapter "Many processes, one key") through `meter`
    /// instead of the global meter provider's `api-core` meter (cargo feature `metrics`).
    #[cfg(feature = "metrics")]
    pub fn meter(mut self, meter: opentelemetry::metrics::Meter) -> Self {
        self.meter = Some(meter);
        self
    }

    /// Whether each attempt carries a W3C `traceparent` (and `tracestate`) header naming its span,
    /// so that the server's traces join the caller's (default `true`). It takes an OpenTelemetry
    /// context: `tracing-opentelemetry` installed and the cargo feature `otel`; without either no
    /// header is sent. `false` sends none in any case (a server outside one's trust, a proxy that
    /// refuses unknown headers).
    pub fn trace_propagation(mut self, propagate: bool) -> Self {
        self.trace_propagation = propagate;
        self
    }

    /// Checks the configuration and makes the target (a [`Config`], or a client).
    pub fn build(self) -> Result<T, Error> {
        T::from_config(self.config()?)
    }

    /// Checks the configuration.
    pub fn config(self) -> Result<Config, ConfigError> {
        let credentials = self.credentials.ok_or_else(|| {
            ConfigError("no credentials: call credentials(...) or use from_env()".into())
        })?;
        credentials.header_value()?;
        let base_url = check_base_url(&self.base_url, self.allow_insecure_http)?;
        for (name, value) in [
            ("connect timeout", self.connect_timeout),
            ("attempt timeout", self.attempt_timeout),
            ("operation timeout", self.operation_timeout),
        ] {
            if value.is_zero() {
                return Err(ConfigError(format!("the {name} must be longer than zero")));
            }
        }
        let transport = transport(
            self.root_certificates,
            self.proxy,
            self.http_client,
            self.connect_timeout_set,
        )?;
        // Left at its default, the connect timeout stays below the attempt timeout: the connect
        // timer, not the attempt's, ends a connection that never completes.
        let connect_timeout = if self.connect_timeout_set {
            self.connect_timeout
        } else {
            self.connect_timeout.min(self.attempt_timeout / 2)
        };
        Ok(Config {
            base_url,
            credentials,
            connect_timeout,
            attempt_timeout: self.attempt_timeout,
            operation_timeout: self.operation_timeout,
            retry: self.retry,
            rate_limit: self.rate_limit,
            user_agent: self.user_agent,
            transport,
            trace_propagation: self.trace_propagation,
            #[cfg(feature = "metrics")]
            meter: self.meter,
        })
    }
}

/// A configured duration as a limit: `None` (no limit) when it is too long to be a point in time
/// from now (`Duration::MAX`), so that no deadline arithmetic can overflow.
pub(crate) fn limit(duration: Duration) -> Option<Duration> {
    tokio::time::Instant::now()
        .checked_add(duration)
        .map(|_| duration)
}

/// Whether a TLS backend is compiled in.
const TLS: bool = cfg!(any(
    feature = "rustls-ring",
    feature = "rustls-aws-lc",
    feature = "native-tls"
));

pub(crate) fn require_tls(what: &str) -> Result<(), ConfigError> {
    if TLS {
        Ok(())
    } else {
        Err(ConfigError(format!(
            "{what} needs TLS, and no TLS feature is enabled: enable `rustls-ring` (the default), \
             `rustls-aws-lc` or `native-tls`"
        )))
    }
}

fn transport(
    root_certificates: Vec<Vec<u8>>,
    proxy: Option<Secret>,
    http_client: Option<reqwest::Client>,
    connect_timeout_set: bool,
) -> Result<Transport, ConfigError> {
    if let Some(client) = http_client {
        let conflicts: Vec<&str> = [
            (!root_certificates.is_empty(), "root_certificate_pem"),
            (proxy.is_some(), "proxy"),
            (connect_timeout_set, "connect_timeout"),
        ]
        .into_iter()
        .filter_map(|(set, name)| set.then_some(name))
        .collect();
        if !conflicts.is_empty() {
            return Err(ConfigError(format!(
                "{} cannot apply to a reqwest::Client given with http_client(...); configure it on that client",
                conflicts.join(", ")
            )));
        }
        return Ok(Transport::Caller(client));
    }
    if root_certificates.is_empty() && proxy.is_none() {
        return Ok(Transport::Built);
    }
    let mut roots = Vec::new();
    for (index, pem) in root_certificates.iter().enumerate() {
        require_tls("root_certificate_pem")?;
        roots.extend(certificates(index, pem)?);
    }
    let proxy = match proxy {
        Some(url) => {
            let parsed = url::Url::parse(url.expose().trim())
                .map_err(|e| ConfigError(format!("the proxy is not a URL: {e}")))?;
            if !matches!(parsed.scheme(), "http" | "https" | "socks5" | "socks5h") {
                return Err(ConfigError(format!(
                    "the proxy scheme must be http, https or socks5, not {:?}",
                    parsed.scheme()
                )));
            }
            let proxy = reqwest::Proxy::all(parsed.as_str())
                .map_err(|_| ConfigError("the proxy URL is not usable".into()))?;
            Some(Box::new((proxy, url)))
        }
        None => None,
    };
    Ok(Transport::Configured {
        root_certificates: roots,
        proxy,
    })
}

#[cfg(any(
    feature = "rustls-ring",
    feature = "rustls-aws-lc",
    feature = "native-tls"
))]
fn certificates(index: usize, pem: &[u8]) -> Result<Vec<RootCertificate>, ConfigError> {
    let found = reqwest::Certificate::from_pem_bundle(pem).map_err(|e| {
        ConfigError(format!(
            "root certificate {index}: not a PEM certificate: {e}"
        ))
    })?;
    if found.is_empty() {
        return Err(ConfigError(format!(
            "root certificate {index}: no PEM certificate block in it"
        )));
    }
    Ok(found)
}

#[cfg(not(any(
    feature = "rustls-ring",
    feature = "rustls-aws-lc",
    feature = "native-tls"
)))]
fn certificates(_index: usize, _pem: &[u8]) -> Result<Vec<RootCertificate>, ConfigError> {
    Ok(Vec::new())
}

/// Validates a base URL and returns it without a trailing `/`.
fn check_base_url(text: &str, allow_insecure_http: bool) -> Result<String, ConfigError> {
    // Never echo the URL in an error: it may carry credentials or a token by mistake.
    let url = url::Url::parse(text.trim())
        .map_err(|e| ConfigError(format!("the base URL is not a URL: {e}")))?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err(ConfigError(
            "the base URL must not carry credentials; pass them with credentials(...)".into(),
        ));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(ConfigError(
            "the base URL must not have a query or fragment".into(),
        ));
    }
    let host = url.host_str().unwrap_or_default().to_string();
    match url.scheme() {
        "https" => {}
        "http" if allow_insecure_http || crate::loopback::is_loopback(&host) => {}
        "http" => {
            return Err(ConfigError(format!(
                "refusing to send credentials over plain http to {host}; use https, or allow_insecure_http(true)"
            )));
        }
        other => {
            return Err(ConfigError(format!(
                "the base URL scheme must be https or http, not {other:?}"
            )));
        }
    }
    if host.is_empty() {
        return Err(ConfigError("the base URL has no host".into()));
    }
    Ok(url.as_str().trim_end_matches('/').to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(url: &str) -> Result<Config, Error> {
        Config::builder(url)
            .credentials(Credentials::basic("id", "secret"))
            .build()
    }

    #[test]
    fn the_default_connect_timeout_stays_below_the_attempt_timeout() {
        let config = |attempt: Option<Duration>, connect: Option<Duration>| {
            let mut builder =
                Config::builder("http://127.0.0.1:1").credentials(Credentials::basic("id", "s"));
            if let Some(attempt) = attempt {
                builder = builder.attempt_timeout(attempt);
            }
            if let Some(connect) = connect {
                builder = builder.connect_timeout(connect);
            }
            builder.config().unwrap().connect_timeout
        };
        assert_eq!(config(None, None), crate::DEFAULT_CONNECT_TIMEOUT);
        assert_eq!(
            config(Some(Duration::from_secs(4)), None),
            Duration::from_secs(2),
            "half a short attempt timeout"
        );
        assert_eq!(
            config(Some(Duration::from_secs(4)), Some(Duration::from_secs(9))),
            Duration::from_secs(9),
            "one set is kept as set"
        );
    }

    #[cfg(not(any(
        feature = "rustls-ring",
        feature = "rustls-aws-lc",
        feature = "native-tls"
    )))]
    #[test]
    fn without_a_tls_feature_https_and_roots_are_refused_by_name() {
        let config = build("https://api.example.com").unwrap();
        let err = crate::runtime::Runtime::new(config)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("no TLS feature is enabled") && err.contains("rustls-ring"),
            "{err}"
        );
        let roots = Config::builder("http://127.0.0.1:8080")
            .credentials(Credentials::basic("id", "secret"))
            .root_certificate_pem("-----BEGIN CERTIFICATE-----")
            .build()
            .unwrap_err()
            .to_string();
        assert!(roots.contains("root_certificate_pem needs TLS"), "{roots}");
        let plain = build("http://127.0.0.1:8080").unwrap();
        assert!(
            crate::runtime::Runtime::new(plain).is_ok(),
            "plain http to loopback needs no TLS"
        );
    }

    #[test]
    fn transport_settings_are_checked_and_the_proxy_stays_secret() {
        let base = || {
            Config::builder("http://127.0.0.1:8080").credentials(Credentials::basic("id", "secret"))
        };
        let config = base()
            .proxy("http://me:hunter2@proxy.example:3128")
            .build()
            .unwrap();
        let shown = format!("{config:?}");
        assert!(
            !shown.contains("hunter2") && shown.contains("Configured"),
            "{shown}"
        );
        for (proxy, expected) in [
            ("not a url", "the proxy is not a URL"),
            ("ftp://proxy.example", "http, https or socks5"),
        ] {
            let err = base().proxy(proxy).build().unwrap_err().to_string();
            assert!(err.contains(expected), "{proxy}: {err}");
        }
        let err = base()
            .connect_timeout(Duration::from_secs(1))
            .http_client(crate::http_client_builder().build().unwrap())
            .build()
            .unwrap_err()
            .to_string();
        assert!(err.contains("connect_timeout cannot apply"), "{err}");
        let own = base()
            .http_client(crate::http_client_builder().build().unwrap())
            .build()
            .unwrap();
        assert!(format!("{own:?}").contains("Caller"));
    }

    #[test]
    fn base_urls_are_normalised() {
        assert_eq!(
            build("https://api.example.com/").unwrap().base_url(),
            "https://api.example.com"
        );
        assert_eq!(
            build("https://api.example.com/prefix/").unwrap().base_url(),
            "https://api.example.com/prefix"
        );
        assert_eq!(
            build("http://127.0.0.1:8080").unwrap().base_url(),
            "http://127.0.0.1:8080"
        );
        assert!(build("http://localhost:1").is_ok());
        assert!(build("http://[::1]:1").is_ok());
        assert!(build("http://127.8.9.10:1").is_ok());
    }

    #[test]
    fn plain_http_to_a_remote_host_needs_an_opt_in() {
        let err = build("http://api.example.com").unwrap_err();
        assert!(
            err.to_string()
                .contains("refusing to send credentials over plain http to api.example.com")
        );
        let ok = Config::builder("http://api.example.com")
            .credentials(Credentials::bearer("t"))
            .allow_insecure_http(true)
            .build();
        assert!(ok.is_ok());
    }

    #[test]
    fn bad_configurations_say_what_is_wrong() {
        assert!(
            build("not a url")
                .unwrap_err()
                .to_string()
                .contains("is not a URL")
        );
        let leaky = build("https://api.example.com/?token=tok-s3cret")
            .unwrap_err()
            .to_string();
        assert!(
            leaky.contains("query") && !leaky.contains("tok-s3cret"),
            "{leaky}"
        );
        assert!(
            build("https://user:pw@api.example.com")
                .unwrap_err()
                .to_string()
                .contains("must not carry credentials")
        );
        assert!(
            build("ftp://api.example.com")
                .unwrap_err()
                .to_string()
                .contains("scheme")
        );
        let no_credentials = Config::builder("https://api.example.com")
            .build()
            .unwrap_err();
        assert!(no_credentials.to_string().contains("no credentials"));
        let zero = Config::builder("https://a.example")
            .credentials(Credentials::bearer("t"))
            .attempt_timeout(Duration::ZERO)
            .build()
            .unwrap_err();
        assert!(zero.to_string().contains("attempt timeout"));
    }

    #[test]
    fn debug_of_a_builder_hides_a_password_in_the_url() {
        let builder = Config::builder("https://me:hunter22@api.example.com")
            .credentials(Credentials::basic("key-1", "top-secret-value"));
        let shown = format!("{builder:?}");
        assert!(
            !shown.contains("hunter22") && !shown.contains("top-secret-value"),
            "{shown}"
        );
        assert!(
            shown.contains("https://me:[REDACTED]@api.example.com"),
            "{shown}"
        );
    }

    #[test]
    fn debug_of_a_config_hides_the_secret() {
        let config = Config::builder("https://api.example.com")
            .credentials(Credentials::basic("key-1", "top-secret-value"))
            .build()
            .unwrap();
        let shown = format!("{config:?}");
        assert!(!shown.contains("top-secret-value"), "{shown}");
        assert!(shown.contains("key-1"));
    }
}
