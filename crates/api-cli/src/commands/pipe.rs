//! `cloudctl pipe create|get|settings|delete|wait|export`.

use api_mgmt::{
    Error, Pipe, Response,
    pipes::{PipeHandle, PipeId},
    wait::{WaitFor, wait_for_pipe, wait_for_pipe_gone},
};
use serde::Serialize;

use super::Session;
use crate::cli::{OutputFormat, PipeCommand, PipeCreateArgs, PipeDeleteArgs, PipeWaitArgs};
use crate::exit::{Api, Context, Failure, PipeWait};
use crate::output::Output;
use crate::pipe_file;
use crate::progress::Progress;
use crate::render;

/// Runs a pipe command.
pub(crate) async fn run(command: PipeCommand, session: &mut Session<'_>) -> Result<(), Failure> {
    match command {
        PipeCommand::Create(args) => create(args, session).await,
        PipeCommand::Get { id } => {
            let pipe = handle(session, id)?;
            let read = pipe.get().await.map_err(|e| failure(&e, id))?.into_inner();
            session.out.show(&read, render::pipe)
        }
        PipeCommand::Settings { id } => {
            let pipe = handle(session, id)?;
            let settings = pipe
                .settings()
                .await
                .map_err(|e| failure(&e, id))?
                .into_inner();
            session.out.show(&settings, render::pipe_settings)
        }
        PipeCommand::Delete(args) => delete(args, session).await,
        PipeCommand::Wait(args) => wait(args, session).await,
        PipeCommand::Export { id } => export(id, session).await,
    }
}

/// `pipe export`: the pipe as its file, YAML unless `-o json` asks for the same request as JSON.
/// Off a terminal cloudctl writes JSON unless told otherwise, but an export is a file to keep
/// (`cloudctl pipe export ID > orders.yaml`): it stays YAML there too. What the file reads from the
/// environment and what the API never returns are said on stderr in every mode, since the file
/// cannot say them.
async fn export(id: PipeId, session: &mut Session<'_>) -> Result<(), Failure> {
    let pipe = handle(session, id)?;
    let wire = pipe
        .get_wire()
        .await
        .map_err(|e| failure(&e, id))?
        .into_inner();
    let json = serde_json::to_value(&wire).map_err(|e| {
        Failure::other(
            "OUTPUT_ERROR",
            format!("cannot write the pipe as JSON: {e}"),
        )
    })?;
    let pipe_file::ExportedFile {
        file,
        variables,
        credentials,
        request_only,
    } = pipe_file::exported_file(&json);
    if !variables.is_empty() {
        crate::output::write_stderr(&format!(
            "The file reads {} from the environment (the API does not return {}).",
            variables.join(", "),
            if variables.len() == 1 { "it" } else { "them" }
        ));
    }
    for (path, variable) in &credentials {
        crate::output::write_stderr(&format!(
            "{path} holds a credential, which cloudctl never shows: the file reads the whole value \
             from {variable}; set it to the value the pipe was created with before `cloudctl \
             import` or `apply`."
        ));
    }
    if !request_only.is_empty() {
        crate::output::write_stderr(&format!(
            "The API never returns {}: add those the pipe was created with before `cloudctl \
             import` (an import records the file as it is).",
            request_only.join(", ")
        ));
    }
    let format = match session.global.output {
        Some(OutputFormat::Json) => OutputFormat::Json,
        _ => OutputFormat::Human,
    };
    Output { format }.show(&file, |file| {
        pipe_file::to_yaml(file).trim_end().to_string()
    })
}

fn handle(session: &mut Session<'_>, id: PipeId) -> Result<PipeHandle, Failure> {
    Ok(session.settings()?.service()?.pipe(id))
}

/// The pipe `id`, and how its waits poll (both checked before any call).
fn waiting_handle(
    session: &mut Session<'_>,
    id: PipeId,
    timeout: std::time::Duration,
) -> Result<(PipeHandle, api_mgmt::WaitOptions), Failure> {
    let settings = session.settings()?;
    Ok((
        settings.service()?.pipe(id),
        settings.wait_options(timeout)?,
    ))
}

fn context(id: PipeId, wait: Option<PipeWait>) -> Context {
    Context {
        pipe: Some(id),
        pipe_wait: wait,
        ..Context::api(Api::Management)
    }
}

fn failure(error: &Error, id: PipeId) -> Failure {
    Failure::sdk(error, &context(id, None))
}

async fn create(args: PipeCreateArgs, session: &mut Session<'_>) -> Result<(), Failure> {
    let (new_pipe, _, _) = pipe_file::load(&args.file, session.env).map_err(Failure::file)?;
    for secret in new_pipe.secrets() {
        crate::output::keep_secret(secret.expose());
    }
    if args.dry_run {
        let request = pipe_file::redacted_request(&new_pipe);
        return session.out.show(&request, |request| {
            format!(
                "The file is valid; nothing was sent. The request would be (secrets redacted):\n{}",
                serde_json::to_string_pretty(request).unwrap_or_default()
            )
        });
    }
    let settings = session.settings()?;
    let service = settings.service()?;
    let options = settings.wait_options(args.timeout)?;
    let mut context = Context {
        creating: Some(new_pipe.as_raw().name.to_string()),
        ..Context::api(Api::Management)
    };
    let created = service
        .pipes()
        .create(&new_pipe)
        .await
        .map_err(|e| Failure::sdk(&e, &context))?
        .into_inner();
    let Some(state) = args.wait else {
        return session.out.show(&created, render::pipe);
    };
    context.created = Some(created.id);
    context.pipe_wait = Some(PipeWait::State(state.clone()));
    let target = WaitFor::pipe_state(state.clone());
    let pipe = if target.is_done(&created) {
        created
    } else {
        let handle = service.pipe(created.id);
        let progress = Progress::start(format!("pipe {} to be {state}", created.name));
        progress.state(created.state.as_str());
        wait_for_pipe(
            || polled(&handle, &progress),
            &target,
            Some(created),
            &options,
        )
        .await
        .map_err(|e| Failure::sdk(&e, &context))?
    };
    session.out.show(&pipe, render::pipe)
}

/// Reads a pipe as the API writes it (the generated type, as JSON); 404 is exit 3.
pub(crate) async fn read_wire(
    service: &api_mgmt::ServiceHandle,
    id: PipeId,
) -> Result<serde_json::Value, Failure> {
    let pipe = service
        .pipe(id)
        .get_wire()
        .await
        .map_err(|e| failure(&e, id))?
        .into_inner();
    serde_json::to_value(pipe).map_err(|e| {
        Failure::other(
            "DECODE_ERROR",
            format!("the pipe cannot be written as JSON: {e}"),
        )
    })
}

/// What `pipe delete` and `pipe wait --gone` answer.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Deletion {
    /// The pipe id.
    id: PipeId,
    /// Whether this command deleted it (`false`: it did not exist).
    deleted: bool,
    /// Whether it is known to be gone (after `--wait`).
    gone: bool,
}

async fn delete(args: PipeDeleteArgs, session: &mut Session<'_>) -> Result<(), Failure> {
    let id = args.id;
    let (pipe, options) = waiting_handle(session, id, args.timeout)?;
    let deleted = if args.if_exists {
        pipe.delete_if_exists().await
    } else {
        pipe.delete().await.map(|_| true)
    }
    .map_err(|e| failure(&e, id))?;
    let gone = if args.wait {
        let progress = Progress::start(format!("pipe {id} to be gone"));
        wait_for_pipe_gone(|| polled(&pipe, &progress), &options)
            .await
            .map_err(|e| Failure::sdk(&e, &context(id, Some(PipeWait::Gone))))?;
        true
    } else {
        !deleted
    };
    let result = Deletion { id, deleted, gone };
    session.out.show(&result, |d| match (d.deleted, d.gone) {
        (false, _) => format!("Pipe {} did not exist.", d.id),
        (true, true) => format!("Deleted pipe {}; it is gone.", d.id),
        (true, false) => format!(
            "Deleted pipe {}; it goes away shortly (`cloudctl pipe wait {} --gone` waits for it).",
            d.id, d.id
        ),
    })
}

async fn wait(args: PipeWaitArgs, session: &mut Session<'_>) -> Result<(), Failure> {
    let id = args.id;
    let (pipe, options) = waiting_handle(session, id, args.timeout)?;
    if args.gone {
        let progress = Progress::start(format!("pipe {id} to be gone"));
        wait_for_pipe_gone(|| polled(&pipe, &progress), &options)
            .await
            .map_err(|e| Failure::sdk(&e, &context(id, Some(PipeWait::Gone))))?;
        let result = Deletion {
            id,
            deleted: false,
            gone: true,
        };
        return session
            .out
            .show(&result, |d| format!("Pipe {} is gone.", d.id));
    }
    let (target, waiting) = match args.state {
        Some(state) => (WaitFor::pipe_state(state.clone()), PipeWait::State(state)),
        None => (WaitFor::pipe_steady(), PipeWait::Steady),
    };
    let progress = Progress::start(format!("pipe {id} to be {target}"));
    let reached = wait_for_pipe(|| polled(&pipe, &progress), &target, None, &options)
        .await
        .map_err(|e| Failure::sdk(&e, &context(id, Some(waiting))))?;
    drop(progress);
    session.out.show(&reached, render::pipe)
}

/// One read of a waiter, showing the state it saw.
async fn polled(pipe: &PipeHandle, progress: &Progress) -> Result<Response<Pipe>, Error> {
    let answer = pipe.get().await;
    if let Ok(read) = &answer {
        progress.state(read.state.as_str());
    }
    answer
}
