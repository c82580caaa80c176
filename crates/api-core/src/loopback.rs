//! [`is_loopback`]: whether a host names this machine, the one rule for where plain traffic may go
//! (the API client's `http://`, a state store's plain connection).

use std::net::IpAddr;

/// Whether `host` names this machine: `localhost` (any letter case), or a loopback address
/// (`127.0.0.0/8`, `::1`), an IPv6 one with or without its brackets.
///
/// ```
/// use api_core::loopback::is_loopback;
///
/// assert!(is_loopback("localhost") && is_loopback("127.8.9.1") && is_loopback("[::1]"));
/// assert!(!is_loopback("db.internal") && !is_loopback("10.0.0.5"));
/// ```
pub fn is_loopback(host: &str) -> bool {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || bare.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}
