//! The TLS backend, chosen by the crate features: `rustls-ring` (rustls on the ring provider, the
//! facades' default: certificates checked against the platform's roots, no C build),
//! `rustls-aws-lc` (rustls on aws-lc-rs) or `native-tls` (the platform's TLS library). With more than
//! one enabled, `native-tls` wins over `rustls-aws-lc`, which wins over `rustls-ring`.

use std::time::Duration;

use crate::config::RootCertificate;

/// rustls takes the process's crypto provider: the one installed already (by the application, or
/// by an earlier call), else ring, installed here. Without one, a rustls connection of a build with
/// another TLS backend beside it (native-tls, or both rustls providers) would panic. The SDK's one
/// place for this: the HTTP client's builder and the Redis store of the rate limit call it.
#[cfg(any(
    feature = "redis",
    all(
        feature = "rustls-ring",
        not(feature = "rustls-aws-lc"),
        not(feature = "native-tls")
    )
))]
pub(crate) fn ensure_ring_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Fails only when another thread installed one just now, which is as good.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

/// The connect timeout of the client the SDK builds (unless set, and unless the attempt timeout is
/// shorter: then half of it) and of [`http_client_builder`]'s.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A `reqwest` client builder with the TLS backend of the enabled feature and a connect timeout of
/// [`DEFAULT_CONNECT_TIMEOUT`], to build your own client for
/// [`ConfigBuilder::http_client`](crate::ConfigBuilder::http_client). Start from it rather than
/// `reqwest::Client::builder()`: with `rustls-ring`, reqwest needs a process-wide crypto provider,
/// which this installs (unless the application installed one, which then wins); and only a client
/// with a connect timeout (shorter than the attempt timeout) tells a connection that never
/// completes (nothing sent: a create is safe to retry) from an attempt that timed out after
/// sending (the outcome unknown), as the client the SDK builds does.
///
/// ```
/// let own = api_core::http_client_builder()
///     .pool_max_idle_per_host(4)
///     .build()
///     .expect("a client");
/// # let _ = own;
/// ```
pub fn http_client_builder() -> reqwest::ClientBuilder {
    let builder = reqwest::Client::builder().connect_timeout(DEFAULT_CONNECT_TIMEOUT);

    #[cfg(feature = "native-tls")]
    return builder.tls_backend_native();

    #[cfg(all(feature = "rustls-aws-lc", not(feature = "native-tls")))]
    return builder.tls_backend_rustls();

    #[cfg(all(
        feature = "rustls-ring",
        not(feature = "rustls-aws-lc"),
        not(feature = "native-tls")
    ))]
    {
        ensure_ring_provider();
        builder.tls_backend_rustls()
    }

    #[cfg(not(any(
        feature = "rustls-ring",
        feature = "rustls-aws-lc",
        feature = "native-tls"
    )))]
    builder
}

/// Adds extra roots to trust besides the platform's.
pub(crate) fn with_roots(
    builder: reqwest::ClientBuilder,
    roots: &[RootCertificate],
) -> reqwest::ClientBuilder {
    #[cfg(any(
        feature = "rustls-ring",
        feature = "rustls-aws-lc",
        feature = "native-tls"
    ))]
    {
        roots
            .iter()
            .cloned()
            .fold(builder, reqwest::ClientBuilder::add_root_certificate)
    }
    #[cfg(not(any(
        feature = "rustls-ring",
        feature = "rustls-aws-lc",
        feature = "native-tls"
    )))]
    {
        let _ = roots;
        builder
    }
}
