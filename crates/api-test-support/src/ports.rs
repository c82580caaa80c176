//! Free loopback ports for a server a test starts on a port it names (a child process, PostgreSQL,
//! Redis, PgBouncer), and for a connection that must be refused.
//!
//! The kernel gives its ephemeral range to every `bind` to port 0 and to every outgoing
//! connection's own port. A port taken from that range and let go before the server binds it may
//! be given at once to another test's listener: the server then fails to start, the test talks to
//! another test's server, or a connection meant to be refused is answered. Nor is a port found
//! free by listening on it: a process that another thread starts at that moment holds a copy of
//! every socket until it runs its program, so the server's own `bind` may fail and a connection
//! may be taken by that copy. [`free_port`] takes ports from below the ephemeral range, where
//! neither `bind` to port 0 nor an outgoing connection lands, finds one free by connecting to it
//! (refused: nothing listens), and never hands one port out twice in a process.

use std::hash::{BuildHasher, RandomState};
use std::io::ErrorKind;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

/// The lowest port handed out (below it, well-known services).
const LOWEST: u16 = 10_000;

/// The ports this process handed out.
static HANDED_OUT: Mutex<Vec<u16>> = Mutex::new(Vec::new());

/// A loopback port nothing listened on when asked, below the kernel's ephemeral range and not
/// handed out before by this process. Where the range cannot be read (not Linux) or leaves no room
/// below it, a port the kernel picks.
///
/// ```
/// let port = api_test_support::ports::free_port();
/// assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err());
/// assert_ne!(api_test_support::ports::free_port(), port);
/// ```
pub fn free_port() -> u16 {
    if let Some(low) = ephemeral_low().filter(|low| *low > LOWEST + 1_000) {
        let random = RandomState::new();
        let mut handed_out = HANDED_OUT.lock().unwrap_or_else(PoisonError::into_inner);
        for attempt in 0u32..200 {
            let offset = random.hash_one(attempt) % u64::from(low - LOWEST);
            let port = LOWEST + u16::try_from(offset).expect("below the range's low end");
            if !handed_out.contains(&port) && refused(port) {
                handed_out.push(port);
                return port;
            }
        }
    }
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free loopback port")
        .port()
}

/// Whether a connection to `port` on loopback is refused: nothing listens there.
fn refused(port: u16) -> bool {
    let address = SocketAddr::from(([127, 0, 0, 1], port));
    matches!(
        TcpStream::connect_timeout(&address, Duration::from_secs(1)),
        Err(e) if e.kind() == ErrorKind::ConnectionRefused
    )
}

/// The low end of the kernel's ephemeral range (Linux).
fn ephemeral_low() -> Option<u16> {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_come_from_below_the_ephemeral_range_never_twice_and_take_a_listener() {
        let ports: Vec<u16> = (0..50).map(|_| free_port()).collect();
        let mut distinct = ports.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), ports.len(), "{ports:?}");
        if let Some(low) = ephemeral_low().filter(|low| *low > LOWEST + 1_000) {
            assert!(
                ports.iter().all(|port| (LOWEST..low).contains(port)),
                "{ports:?} against {low}"
            );
        }
        for port in ports {
            assert!(TcpListener::bind(("127.0.0.1", port)).is_ok(), "{port}");
        }
    }

    #[test]
    fn a_port_something_listens_on_is_not_refused() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        assert!(!refused(port), "{port}, where {listener:?} listens");
    }
}
