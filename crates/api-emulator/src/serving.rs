//! [`Serving`]: a router served on a loopback (or given) address until stopped, with connections that
//! a handler can hang up; shared by the emulator, the recording proxy and the replay server.

use std::future::Future;
use std::net::SocketAddr;

use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::EmulatorError;
use crate::connection::{Connection, HangupListener};

/// A running server. Dropping it signals a graceful stop; [`Serving::shutdown`] also waits for it.
#[derive(Debug)]
pub(crate) struct Serving {
    pub address: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl Serving {
    /// Serves `router` on `listen`; `after` runs once the server has finished (in-flight requests
    /// answered).
    pub async fn start(
        router: axum::Router,
        listen: SocketAddr,
        after: impl Future<Output = ()> + Send + 'static,
    ) -> Result<Self, EmulatorError> {
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .map_err(|e| EmulatorError(format!("cannot listen on {listen}: {e}")))?;
        let address = listener
            .local_addr()
            .map_err(|e| EmulatorError(e.to_string()))?;
        let (stop, stopped) = oneshot::channel::<()>();
        let service = router.into_make_service_with_connect_info::<Connection>();
        let task = tokio::spawn(async move {
            let serve =
                axum::serve(HangupListener(listener), service).with_graceful_shutdown(async {
                    let _ = stopped.await;
                });
            if let Err(e) = serve.await {
                tracing::error!(error = %e, "the server stopped");
            }
            after.await;
        });
        Ok(Self {
            address,
            stop: Some(stop),
            task: Some(task),
        })
    }

    /// `http://<address>`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// Stops accepting connections and waits for the server to finish.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}
