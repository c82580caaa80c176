//! [`Pipes`] and [`PipeHandle`]: the data pipes of a service.

use api_core::management::operations as ops;
use api_core::management::{
    NewPipe, Pipe, PipeSettings, PipeState, PipeTarget, WaitError, WaitOptions, wait_for_pipe,
};
use api_core::{Error, PipeId, Response, Uuid, required_member};

use crate::service::ServiceHandle;

/// The pipes of a service.
#[derive(Debug, Clone)]
pub struct Pipes {
    service: ServiceHandle,
}

impl Pipes {
    pub(crate) fn new(service: ServiceHandle) -> Self {
        Self { service }
    }

    /// Creates a pipe (it starts in `Provisioning`). Not retried after it may have reached the server,
    /// since that could create a duplicate; a 424 means the service is not running.
    ///
    /// ```no_run
    /// # async fn run(service: api_mgmt::ServiceHandle) -> Result<(), api_mgmt::Error> {
    /// use api_mgmt::{Destination, KafkaSource, NewPipe, PipeState, WaitOptions};
    ///
    /// let new_pipe = NewPipe::builder("orders")
    ///     .source(KafkaSource::new("b-1.kafka.example:9098", "orders").credentials("reader", "password"))
    ///     .destination(Destination::new("default").table("orders").managed_table(true).column("id", "UInt64"))
    ///     .field_mapping("id", "id")
    ///     .build()?;
    /// let pipe = service.pipes().create(&new_pipe).await?;
    /// let running = service.pipe(pipe.id().unwrap()).wait_until(PipeState::Running, &WaitOptions::default()).await?;
    /// # Ok(()) }
    /// ```
    pub async fn create(&self, pipe: &NewPipe) -> Result<Response<Pipe>, Error> {
        let (org, svc) = (
            self.service.organization.as_uuid(),
            self.service.service.as_uuid(),
        );
        let (runtime, raw) = self.service.client.parts();
        let body = pipe.as_raw();
        let op = &ops::CREATE_PIPE;
        let response = runtime
            .execute(op, || raw.create_pipe(org, svc, body))
            .await
            .map_err(|mut error| {
                // A server that echoes the request must not put the pipe's secrets into the error.
                error.redact(pipe.secrets().into_iter().map(|secret| secret.expose()));
                error
            })?;
        required_member(op, "result", response, |e| e.result.map(Pipe::from))
    }

    /// One pipe of the service.
    pub fn get(&self, id: PipeId) -> PipeHandle {
        PipeHandle::new(self.service.clone(), id)
    }
}

/// One pipe of a service.
#[derive(Debug, Clone)]
pub struct PipeHandle {
    service: ServiceHandle,
    id: PipeId,
}

impl PipeHandle {
    pub(crate) fn new(service: ServiceHandle, id: PipeId) -> Self {
        Self { service, id }
    }

    /// The pipe id.
    pub fn id(&self) -> PipeId {
        self.id
    }

    /// Reads the pipe. Safe to retry.
    ///
    /// ```no_run
    /// # async fn run(pipe: api_mgmt::PipeHandle) -> Result<(), api_mgmt::Error> {
    /// let read = pipe.get().await?;
    /// println!("{} is {} ({:?})", read.name(), read.state(), read.source_kind());
    /// # Ok(()) }
    /// ```
    pub async fn get(&self) -> Result<Response<Pipe>, Error> {
        let (org, svc, pipe) = self.ids();
        let (runtime, raw) = self.service.client.parts();
        let op = &ops::GET_PIPE;
        let response = runtime.execute(op, || raw.get_pipe(org, svc, pipe)).await?;
        required_member(op, "result", response, |e| e.result.map(Pipe::from))
    }

    /// Reads the settings of the pipe. Safe to retry.
    ///
    /// ```no_run
    /// # async fn run(pipe: api_mgmt::PipeHandle) -> Result<(), api_mgmt::Error> {
    /// let settings = pipe.settings().await?;
    /// println!("streaming_max_insert_wait_ms = {:?}", settings.streaming_max_insert_wait_ms);
    /// # Ok(()) }
    /// ```
    pub async fn settings(&self) -> Result<Response<PipeSettings>, Error> {
        let (org, svc, pipe) = self.ids();
        let (runtime, raw) = self.service.client.parts();
        let op = &ops::GET_PIPE_SETTINGS;
        let response = runtime
            .execute(op, || raw.get_pipe_settings(org, svc, pipe))
            .await?;
        required_member(op, "result", response, |e| e.result)
    }

    /// Deletes the pipe. Deletion finishes later: see [`wait_until_gone`](Self::wait_until_gone).
    /// A pipe that does not exist is an error ([`Error::is_not_found`]); see
    /// [`delete_if_exists`](Self::delete_if_exists).
    ///
    /// ```no_run
    /// # async fn run(pipe: api_mgmt::PipeHandle) -> Result<(), api_mgmt::Error> {
    /// pipe.delete().await?;
    /// pipe.wait_until_gone(&api_mgmt::WaitOptions::default()).await?;
    /// # Ok(()) }
    /// ```
    pub async fn delete(&self) -> Result<Response<()>, Error> {
        let (org, svc, pipe) = self.ids();
        let (runtime, raw) = self.service.client.parts();
        let response = runtime
            .execute(&ops::DELETE_PIPE, || raw.delete_pipe(org, svc, pipe))
            .await?;
        Ok(response.map(|_| ()))
    }

    /// Deletes the pipe, treating an already missing pipe as success: `true` if this call deleted it,
    /// `false` if it was already gone.
    ///
    /// ```no_run
    /// # async fn run(pipe: api_mgmt::PipeHandle) -> Result<(), api_mgmt::Error> {
    /// if !pipe.delete_if_exists().await? {
    ///     println!("already gone");
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn delete_if_exists(&self) -> Result<bool, Error> {
        match self.delete().await {
            Ok(_) => Ok(true),
            Err(e) if e.is_not_found() => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Polls until the pipe is in `state`; fails fast if it enters Failed or InternalError, and on
    /// timeout returns [`WaitError::PipeTimedOut`](api_core::management::WaitError) with the last seen
    /// pipe.
    ///
    /// ```no_run
    /// # async fn run(pipe: api_mgmt::PipeHandle) -> Result<(), api_mgmt::Error> {
    /// let options = api_mgmt::WaitOptions::default().timeout(std::time::Duration::from_secs(300));
    /// let running = pipe.wait_until(api_mgmt::PipeState::Running, &options).await?;
    /// println!("{} is running", running.name());
    /// # Ok(()) }
    /// ```
    pub async fn wait_until(&self, state: PipeState, options: &WaitOptions) -> Result<Pipe, Error> {
        self.wait(PipeTarget::State(state), options).await
    }

    /// Polls until the pipe is in a steady state that is not a failure (Running, Stopped, Paused or
    /// Completed).
    pub async fn wait_until_steady(&self, options: &WaitOptions) -> Result<Pipe, Error> {
        self.wait(PipeTarget::Steady, options).await
    }

    /// Polls until the pipe answers 404 (after a delete).
    pub async fn wait_until_gone(&self, options: &WaitOptions) -> Result<(), Error> {
        wait_for_pipe(|| self.get(), PipeTarget::Gone, options)
            .await
            .map(|_| ())
    }

    async fn wait(&self, target: PipeTarget, options: &WaitOptions) -> Result<Pipe, Error> {
        // For a state target the waiter returns a pipe or an error; `None` means the pipe is gone.
        match wait_for_pipe(|| self.get(), target, options).await? {
            Some(pipe) => Ok(pipe),
            None => Err(WaitError::PipeGone { last_seen: None }.into()),
        }
    }

    fn ids(&self) -> (&Uuid, &Uuid, &Uuid) {
        (
            self.service.organization.as_uuid(),
            self.service.service.as_uuid(),
            self.id.as_uuid(),
        )
    }
}
