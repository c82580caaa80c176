//! The listener of the emulator: TCP connections that a handler can close before a single byte of
//! the answer is written (the `hangup` fault).

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use axum::extract::connect_info::Connected;
use axum::serve::{IncomingStream, Listener};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

/// Accepts TCP connections that can be hung up.
pub struct HangupListener(pub TcpListener);

/// A TCP connection: once hung up, reads see the end and writes fail, so hyper closes it without
/// writing anything more.
pub struct HangupStream {
    inner: TcpStream,
    hung_up: Arc<AtomicBool>,
}

/// The handle a request has on its connection (a request extension, as `ConnectInfo`).
#[derive(Debug, Clone)]
pub struct Connection(Arc<AtomicBool>);

impl Connection {
    /// Closes the connection instead of writing the answer.
    pub fn hang_up(&self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

impl Listener for HangupListener {
    type Io = HangupStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        let (inner, address) = Listener::accept(&mut self.0).await;
        let stream = HangupStream {
            inner,
            hung_up: Arc::new(AtomicBool::new(false)),
        };
        (stream, address)
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.0.local_addr()
    }
}

impl Connected<IncomingStream<'_, HangupListener>> for Connection {
    fn connect_info(stream: IncomingStream<'_, HangupListener>) -> Self {
        Self(stream.io().hung_up.clone())
    }
}

impl HangupStream {
    fn hung_up(&self) -> bool {
        self.hung_up.load(Ordering::SeqCst)
    }
}

fn hung_up_error() -> io::Error {
    io::Error::new(
        io::ErrorKind::ConnectionAborted,
        "injected fault: connection hung up",
    )
}

impl AsyncRead for HangupStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.hung_up() {
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for HangupStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if self.hung_up() {
            return Poll::Ready(Err(hung_up_error()));
        }
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        if self.hung_up() {
            return Poll::Ready(Err(hung_up_error()));
        }
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.hung_up() {
            return Poll::Ready(Err(hung_up_error()));
        }
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
