//! A TCP proxy on a free loopback port in front of one server, which a test can cut: every
//! connection through it is shut down at once and each new one is closed as soon as it is taken,
//! as a proxy or a firewall that stops passing a runner's traffic to a private store does while
//! the runner still reaches everything else.
//!
//! ```no_run
//! use api_test_support::tcp_proxy::TcpProxy;
//!
//! let proxy = TcpProxy::start("127.0.0.1:6379".parse().unwrap());
//! let url = format!("redis://{}", proxy.address());
//! // ... a client of `url` works, then:
//! proxy.cut();
//! // ... its calls now fail at once, and so do its new connections.
//! ```

use std::io::{Read as _, Write as _};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// A proxy of one upstream server; it stops when dropped.
pub struct TcpProxy {
    address: SocketAddr,
    shared: Arc<Shared>,
}

#[derive(Default)]
struct Shared {
    cut: AtomicBool,
    /// Bumped by each stall: a connection opened before the latest stall passes nothing more.
    stalls: std::sync::atomic::AtomicU64,
    stopped: AtomicBool,
    /// Every stream of every connection, to shut down at the cut.
    streams: Mutex<Vec<TcpStream>>,
}

impl Shared {
    fn shut_all(&self) {
        let streams = std::mem::take(&mut *self.streams.lock().unwrap_or_else(|p| p.into_inner()));
        for stream in streams {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }
}

impl TcpProxy {
    /// Listens on a free loopback port and passes each connection on to `upstream`.
    pub fn start(upstream: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a free loopback port");
        let address = listener.local_addr().expect("its address");
        let shared = Arc::new(Shared::default());
        let accepting = Arc::clone(&shared);
        std::thread::spawn(move || {
            for client in listener.incoming() {
                if accepting.stopped.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(client) = client else { continue };
                if accepting.cut.load(Ordering::SeqCst) {
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                }
                let Ok(server) = TcpStream::connect(upstream) else {
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                };
                pass(&accepting, client, server);
            }
        });
        Self { address, shared }
    }

    /// A proxy in front of the loopback server a URL names (`…127.0.0.1:PORT…`), and the same URL
    /// through the proxy.
    ///
    /// # Panics
    /// When the URL names no `127.0.0.1:PORT`.
    pub fn in_front_of(url: &str) -> (Self, String) {
        let at = url.find("127.0.0.1:").expect("a URL of a loopback server");
        let port: String = url[at + "127.0.0.1:".len()..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        let upstream: SocketAddr = format!("127.0.0.1:{port}").parse().expect("an address");
        let proxy = Self::start(upstream);
        let through = url.replace(&upstream.to_string(), &proxy.address().to_string());
        (proxy, through)
    }

    /// Where clients connect.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Shuts every connection down and closes each new one as it comes.
    pub fn cut(&self) {
        self.shared.cut.store(true, Ordering::SeqCst);
        self.shared.shut_all();
    }

    /// Passes new connections again, as a network that came back (those cut stay closed).
    pub fn restore(&self) {
        self.shared.cut.store(false, Ordering::SeqCst);
    }

    /// Makes every open connection silent, with no reset: what either side sends is taken and
    /// dropped, as when a NAT's or a failed-over endpoint's state for those connections is gone.
    /// New connections pass as before. A client notices only by its own timeouts.
    pub fn stall(&self) {
        self.shared.stalls.fetch_add(1, Ordering::SeqCst);
    }
}

impl Drop for TcpProxy {
    fn drop(&mut self) {
        self.shared.stopped.store(true, Ordering::SeqCst);
        self.shared.shut_all();
        // Wakes the accepting thread, which then ends.
        let _ = TcpStream::connect(self.address);
    }
}

/// Copies both ways between `client` and `server` on threads of their own, keeping clones of both
/// to shut down at the cut.
fn pass(shared: &Arc<Shared>, client: TcpStream, server: TcpStream) {
    let (Ok(client_in), Ok(server_in)) = (client.try_clone(), server.try_clone()) else {
        return;
    };
    {
        let mut streams = shared.streams.lock().unwrap_or_else(|p| p.into_inner());
        for stream in [&client, &server] {
            if let Ok(kept) = stream.try_clone() {
                streams.push(kept);
            }
        }
    }
    let born = shared.stalls.load(Ordering::SeqCst);
    let (one, other) = (Arc::clone(shared), Arc::clone(shared));
    std::thread::spawn(move || copy(client_in, server, &one, born));
    std::thread::spawn(move || copy(server_in, client, &other, born));
}

/// Copies `from` into `to` until either ends, then shuts both down; after a stall that came
/// after the connection was opened (`born`), drops what it reads instead.
fn copy(mut from: TcpStream, mut to: TcpStream, shared: &Shared, born: u64) {
    let mut buffer = [0u8; 16 * 1024];
    loop {
        match from.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(_) if shared.stalls.load(Ordering::SeqCst) != born => {}
            Ok(n) => {
                if to.write_all(&buffer[..n]).is_err() {
                    break;
                }
            }
        }
    }
    let _ = from.shutdown(Shutdown::Both);
    let _ = to.shutdown(Shutdown::Both);
}

#[cfg(test)]
mod tests {
    use std::io::{Read as _, Write as _};
    use std::net::{TcpListener, TcpStream};

    use super::*;

    /// An echo server on a free loopback port.
    fn echo() -> std::net::SocketAddr {
        let echo = TcpListener::bind("127.0.0.1:0").unwrap();
        let upstream = echo.local_addr().unwrap();
        std::thread::spawn(move || {
            for stream in echo.incoming().flatten() {
                std::thread::spawn(move || {
                    let mut stream = stream;
                    let mut buffer = [0u8; 64];
                    while let Ok(n) = stream.read(&mut buffer) {
                        if n == 0 || stream.write_all(&buffer[..n]).is_err() {
                            break;
                        }
                    }
                });
            }
        });
        upstream
    }

    #[test]
    fn a_stall_silences_open_connections_and_passes_new_ones() {
        let proxy = TcpProxy::start(echo());
        let mut open = TcpStream::connect(proxy.address()).unwrap();
        let mut answer = [0u8; 4];
        open.write_all(b"ping").unwrap();
        open.read_exact(&mut answer).unwrap();
        proxy.stall();
        open.set_read_timeout(Some(std::time::Duration::from_millis(300)))
            .unwrap();
        open.write_all(b"lost").unwrap();
        let silent = open.read(&mut answer).unwrap_err();
        assert!(
            matches!(
                silent.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ),
            "no answer and no reset: {silent:?}"
        );
        let mut new = TcpStream::connect(proxy.address()).unwrap();
        new.write_all(b"pong").unwrap();
        new.read_exact(&mut answer).unwrap();
        assert_eq!(&answer, b"pong");
    }

    #[test]
    fn it_passes_bytes_until_cut_then_passes_none() {
        let proxy = TcpProxy::start(echo());
        let mut client = TcpStream::connect(proxy.address()).unwrap();
        client.write_all(b"ping").unwrap();
        let mut answer = [0u8; 4];
        client.read_exact(&mut answer).unwrap();
        assert_eq!(&answer, b"ping");
        proxy.cut();
        let mut rest = Vec::new();
        let read = client.read_to_end(&mut rest);
        assert!(
            read.is_err() || rest.is_empty(),
            "nothing passes after the cut"
        );
        let mut again = TcpStream::connect(proxy.address()).unwrap();
        let _ = again.write_all(b"ping");
        let mut rest = Vec::new();
        let read = again.read_to_end(&mut rest);
        assert!(
            read.is_err() || rest.is_empty(),
            "a new connection is closed at once"
        );
        proxy.restore();
        let mut back = TcpStream::connect(proxy.address()).unwrap();
        back.write_all(b"pong").unwrap();
        back.read_exact(&mut answer).unwrap();
        assert_eq!(&answer, b"pong", "restored, new connections pass");
    }
}
