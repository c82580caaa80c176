//! [`Pipes`] and [`PipeHandle`]: the data pipes of a service.

use api_core::management::operations as ops;
use api_core::management::{
    NewPipe, Pipe, PipeSettings, PipeState, WaitFor, WaitOptions, responses, wait_for_pipe,
    wait_for_pipe_gone,
};
use api_core::{Error, PipeId, Response, Uuid};

use super::ServiceHandle;

/// The pipes of a service: where new pipes are created. Reach an existing pipe with
/// [`ServiceHandle::pipe`].
#[derive(Debug, Clone)]
pub struct Pipes {
    service: ServiceHandle,
}

impl Pipes {
    pub(crate) fn new(service: ServiceHandle) -> Self {
        Self { service }
    }

    /// Creates a pipe (it starts in `Provisioning`). Not retried after it may have reached the server,
    /// since that could create a duplicate: then the error says so
    /// ([`Error::is_outcome_unknown`]), and the pipe may exist. A 424 means the service is not running.
    /// The pipe's secrets never appear in an error, even when the server echoes the request.
    ///
    /// ```no_run
    /// # async fn run(service: api_mgmt::ServiceHandle) -> Result<(), api_mgmt::Error> {
    /// use api_mgmt::{NewPipe, WaitOptions, pipes::{Destination, KafkaSource, PipeState}};
    ///
    /// let new_pipe = NewPipe::builder("orders")
    ///     .source(KafkaSource::new("b-1.kafka.example:9098", "orders").credentials("reader", "password"))
    ///     .destination(Destination::new("default").table("orders").managed_table(true))
    ///     .mapped_column("id", "id", "UInt64")
    ///     .build()?;
    /// let created = service.pipes().create(&new_pipe).await?;
    /// let running = service.pipe(created.id).wait_until(PipeState::Running, &WaitOptions::default()).await?;
    /// println!("{} is {}", running.name, running.state);
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
        let owned = pipe.secrets();
        let secrets: Vec<&str> = owned.iter().map(|s| s.expose()).collect();
        let response = runtime
            .execute_redacting(op, &secrets, || raw.create_pipe(org, svc, body))
            .await?;
        responses::pipe(op, response)
    }

    /// Creates a pipe and waits until it meets `target` (a [`PipeState`], or any [`WaitFor`]): the
    /// pipe as it is then.
    ///
    /// The create is sent once; should the wait fail, the error carries the pipe as last seen (at
    /// least as the create answered it), so its id is never lost.
    ///
    /// ```no_run
    /// # async fn run(service: api_mgmt::ServiceHandle, new_pipe: api_mgmt::NewPipe) -> Result<(), api_mgmt::Error> {
    /// use api_mgmt::{WaitOptions, pipes::PipeState};
    ///
    /// let pipe = service.pipes().create_and_wait(&new_pipe, PipeState::Running, &WaitOptions::default()).await?;
    /// println!("{} ({}) is running", pipe.name, pipe.id);
    /// # Ok(()) }
    /// ```
    pub async fn create_and_wait(
        &self,
        pipe: &NewPipe,
        target: impl Into<WaitFor<Pipe>>,
        options: &WaitOptions,
    ) -> Result<Pipe, Error> {
        let target = target.into();
        let created = self.create(pipe).await?.into_inner();
        if target.is_done(&created) {
            return Ok(created);
        }
        let handle = self.service.pipe(created.id);
        wait_for_pipe(|| handle.get(), &target, Some(created), options).await
    }
}

/// One pipe of a service, from [`ServiceHandle::pipe`]. Making a handle sends nothing; each method
/// is one call (or, for the waiters, a series of reads).
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

    /// Reads the pipe; a pipe that does not exist is an error ([`Error::is_not_found`]). Safe to
    /// retry.
    ///
    /// ```no_run
    /// # async fn run(pipe: api_mgmt::pipes::PipeHandle) -> Result<(), api_mgmt::Error> {
    /// let read = pipe.get().await?;
    /// println!("{} is {}, reading {}", read.name, read.state, read.source);
    /// # Ok(()) }
    /// ```
    pub async fn get(&self) -> Result<Response<Pipe>, Error> {
        let (org, svc, pipe) = self.ids();
        let (runtime, raw) = self.service.client.parts();
        let op = &ops::GET_PIPE;
        let response = runtime.execute(op, || raw.get_pipe(org, svc, pipe)).await?;
        responses::pipe(op, response)
    }

    /// Reads the pipe as the API wrote it: the generated type, with every member the spec has (also
    /// members the domain [`Pipe`] does not carry), through the SDK's runtime (retries, rate limit,
    /// errors as [`get`](Self::get)). Its serde output is the API's JSON, quantities as numbers.
    ///
    /// ```no_run
    /// # async fn run(pipe: api_mgmt::pipes::PipeHandle) -> Result<(), api_mgmt::Error> {
    /// let wire = pipe.get_wire().await?;
    /// println!("{}", serde_json::to_string(&*wire).unwrap_or_default());
    /// # Ok(()) }
    /// ```
    pub async fn get_wire(&self) -> Result<Response<crate::raw::types::Pipe>, Error> {
        let (org, svc, pipe) = self.ids();
        let (runtime, raw) = self.service.client.parts();
        let op = &ops::GET_PIPE;
        let response = runtime.execute(op, || raw.get_pipe(org, svc, pipe)).await?;
        api_core::required_member(op, "result", response, |e| e.result)
    }

    /// Reads the pipe, or `None` when it does not exist (404).
    ///
    /// ```no_run
    /// # async fn run(pipe: api_mgmt::pipes::PipeHandle) -> Result<(), api_mgmt::Error> {
    /// match pipe.get_opt().await? {
    ///     Some(read) => println!("{} is {}", read.name, read.state),
    ///     None => println!("no such pipe"),
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn get_opt(&self) -> Result<Option<Response<Pipe>>, Error> {
        // The 404 is an answer here ("none"), not a failed call: so its span says.
        match api_core::spans::expecting_not_found(self.get()).await {
            Ok(pipe) => Ok(Some(pipe)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Reads the settings of the pipe, known and unknown. Safe to retry.
    ///
    /// ```no_run
    /// # async fn run(pipe: api_mgmt::pipes::PipeHandle) -> Result<(), api_mgmt::Error> {
    /// let settings = pipe.settings().await?;
    /// if let Some(wait) = settings.streaming_max_insert_wait_ms {
    ///     println!("inserts wait up to {wait} ms");
    /// }
    /// for (name, value) in &settings.extra {
    ///     println!("{name} = {value}");
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn settings(&self) -> Result<Response<PipeSettings>, Error> {
        let (org, svc, pipe) = self.ids();
        let (runtime, raw) = self.service.client.parts();
        let response = runtime
            .execute(&ops::GET_PIPE_SETTINGS, || {
                raw.get_pipe_settings(org, svc, pipe)
            })
            .await?;
        responses::pipe_settings(response)
    }

    /// Deletes the pipe. Deletion finishes later: see [`wait_until_gone`](Self::wait_until_gone).
    /// A pipe that does not exist is an error ([`Error::is_not_found`]); see
    /// [`delete_if_exists`](Self::delete_if_exists).
    ///
    /// ```no_run
    /// # async fn run(pipe: api_mgmt::pipes::PipeHandle) -> Result<(), api_mgmt::Error> {
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

    /// Deletes the pipe, treating an already missing pipe as success.
    ///
    /// `true` when this call deleted the pipe: its delete was accepted, or a retry answered 404 after
    /// an earlier attempt of this call may have reached the server (timed out, lost its connection or
    /// met a gateway error), which is how a lost answer to a successful delete looks. `false` when the
    /// pipe was already gone before this call.
    ///
    /// ```no_run
    /// # async fn run(pipe: api_mgmt::pipes::PipeHandle) -> Result<(), api_mgmt::Error> {
    /// if !pipe.delete_if_exists().await? {
    ///     println!("already gone");
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn delete_if_exists(&self) -> Result<bool, Error> {
        match api_core::spans::expecting_not_found(self.delete()).await {
            Ok(_) => Ok(true),
            Err(e) if e.is_not_found() => {
                Ok(e.as_api().is_some_and(|api| api.follows_unknown_outcome))
            }
            Err(e) => Err(e),
        }
    }

    /// Polls until the pipe is in `state`; fails fast once it cannot get there (Failed, InternalError,
    /// or a one-shot pipe that Completed), and on timeout returns
    /// [`WaitError::PipeTimedOut`](crate::wait::WaitError::PipeTimedOut) with the last seen pipe.
    ///
    /// ```no_run
    /// # async fn run(pipe: api_mgmt::pipes::PipeHandle) -> Result<(), api_mgmt::Error> {
    /// let options = api_mgmt::WaitOptions::default().timeout(std::time::Duration::from_secs(300));
    /// let running = pipe.wait_until(api_mgmt::pipes::PipeState::Running, &options).await?;
    /// println!("{} is running", running.name);
    /// # Ok(()) }
    /// ```
    pub async fn wait_until(&self, state: PipeState, options: &WaitOptions) -> Result<Pipe, Error> {
        self.wait_for(state, options).await
    }

    /// Polls until the pipe is in a steady state that is not a failure (Running, Stopped, Paused or
    /// Completed); fails fast in Failed or InternalError.
    pub async fn wait_until_steady(&self, options: &WaitOptions) -> Result<Pipe, Error> {
        self.wait_for(WaitFor::pipe_steady(), options).await
    }

    /// Polls until the pipe meets `target`: a [`PipeState`], a named [`WaitFor`] target, or any
    /// [`Condition`](crate::wait::Condition) wrapped in [`WaitFor::condition`].
    ///
    /// ```no_run
    /// # async fn run(pipe: api_mgmt::pipes::PipeHandle) -> Result<(), api_mgmt::Error> {
    /// use api_mgmt::{Pipe, WaitOptions, pipes::PipeState, wait::WaitFor};
    ///
    /// let scaled = WaitFor::condition("running on 2 replicas", |p: &Pipe| {
    ///     p.state == PipeState::Running && p.scaling.replicas == Some(2)
    /// })
    /// .fail_if(|p: &Pipe| p.state.is_failed());
    /// let pipe = pipe.wait_for(scaled, &WaitOptions::default()).await?;
    /// # Ok(()) }
    /// ```
    pub async fn wait_for(
        &self,
        target: impl Into<WaitFor<Pipe>>,
        options: &WaitOptions,
    ) -> Result<Pipe, Error> {
        wait_for_pipe(|| self.get(), &target.into(), None, options).await
    }

    /// Polls until the pipe answers 404 (after a delete).
    pub async fn wait_until_gone(&self, options: &WaitOptions) -> Result<(), Error> {
        wait_for_pipe_gone(|| self.get(), options).await
    }

    fn ids(&self) -> (&Uuid, &Uuid, &Uuid) {
        (
            self.service.organization.as_uuid(),
            self.service.service.as_uuid(),
            self.id.as_uuid(),
        )
    }
}
