//! `cloudctl plan`, `apply`, `import` and `state`: a service's pipes kept as a directory of files.

use std::io::{BufRead as _, IsTerminal as _};

use api_mgmt::ServiceHandle;
use api_mgmt::declared::{
    self, ActionKind, ApplyOptions, DeclaredError, FileStateStore, Outcome, Plan, PlanOptions,
    Producer, RecordedState, SavedPlan, SharedStateStore, StateError, StateLock, StateStore,
    StopSignal,
};
use serde_json::json;

use super::Session;
use crate::cli::{ApplyArgs, DirArgs, ImportArgs, PlanArgs, ResolveArgs, StateCommand};
use crate::declared_view::{plan_text, report_json, report_text, state_json, state_text};
use crate::exit::{Api, Context, Exit, Failure};
use crate::interrupt::Interrupts;
use crate::output::{keep_secret, write_stderr};
use crate::pipe_file::{self, Declared, DirectoryError};
use crate::progress::Board;

/// The state file of a directory, unless `--state` names another.
const STATE_FILE: &str = ".cloudctl-state.json";

/// `cloudctl plan`: exit 0 with nothing to do, 8 with changes, 7 when a pending create blocks one.
pub(crate) async fn plan(args: PlanArgs, session: &mut Session<'_>) -> Result<Exit, Failure> {
    let declared = read(&args.dir, session)?;
    let service = session.settings()?.service()?;
    let store = open_store(&args.dir, session, &service)?;
    let recorded = load(&*store, &service)?;
    let options = plan_options(&args.targets).refresh(args.refresh);
    let plan = make_plan(&service, &declared, &recorded, &options).await?;
    let document = plan.save(&declared.declaration, producer());
    if let Some(out) = &args.out {
        write_document(out, &document)?;
    }
    let args = args.dir;
    let dir = args.dir.display().to_string();
    session
        .out
        .show(&document.to_value(), |_| plan_text(&plan, &dir))?;
    if plan.protected().next().is_some() {
        return Err(protected_failure(&plan));
    }
    // A pending create blocks its name only where a file declares it (else it is a change to make:
    // resolving it).
    if plan
        .pending()
        .any(|a| declared.declaration.get(&a.name).is_some())
    {
        return Err(pending_failure(&plan, &args));
    }
    if plan.unreadable().next().is_some() {
        return Err(unreadable_failure(&plan, &args));
    }
    Ok(if plan.is_empty() {
        Exit::Success
    } else {
        Exit::ChangesPending
    })
}

/// `cloudctl apply`: plans, shows the plan, asks (in a terminal), applies, reports.
pub(crate) async fn apply(args: ApplyArgs, session: &mut Session<'_>) -> Result<Exit, Failure> {
    let terminal = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    if !args.yes && !terminal {
        return Err(Failure::usage(
            "apply asks before it changes anything, and cannot ask here (standard input is not a terminal)",
        )
        .with_hint("add --yes to apply without asking; `cloudctl plan` shows what would change"));
    }
    // A saved plan is read (and its digest checked) before anything else.
    let saved = args.plan.as_deref().map(read_document).transpose()?;
    let declared = read(&args.dir, session)?;
    let settings = session.settings()?;
    let service = settings.service()?;
    let waits = settings.wait_options(args.timeout)?;
    let store = open_store(&args.dir, session, &service)?;
    let lock = lock(&*store, &service)?;
    let recorded = load(&*store, &service)?;
    let plan = match &saved {
        Some(saved) => saved
            .recheck(&service, &declared.declaration, &recorded, &producer())
            .await
            .map_err(|e| declared_failure(e, &args.dir))?,
        None => make_plan(&service, &declared, &recorded, &plan_options(&args.targets)).await?,
    };
    let document = plan.save(&declared.declaration, producer());
    let dir = args.dir.dir.display().to_string();
    let human = !session.out.is_json();
    if human {
        crate::output::write_stdout(&plan_text(&plan, &dir))?;
    }
    // What the apply would refuse is refused before the question, as it is before any call.
    if plan.protected().next().is_some() {
        return Err(protected_failure(&plan));
    }
    let destructive = plan.destructive();
    if let Some(max) = args.max_destructive.filter(|&max| destructive > max) {
        return Err(Failure::state(&StateError::TooDestructive {
            planned: destructive,
            max,
        }));
    }
    if !plan.has_work() {
        if !human {
            session
                .out
                .show(&json!({"plan": document.to_value(), "results": []}), |_| {
                    String::new()
                })?;
        }
        if plan.pending().next().is_some() {
            return Err(pending_failure(&plan, &args.dir));
        }
        if plan.unreadable().next().is_some() {
            return Err(unreadable_failure(&plan, &args.dir));
        }
        return Ok(Exit::Success);
    }
    if !args.yes && !plan.actions.is_empty() {
        if !human {
            // The plan's JSON goes to stdout with the results; the person answering reads it here.
            write_stderr(&plan_text(&plan, &dir));
        }
        if !confirmed()? {
            return Err(Failure::other("CANCELLED", "nothing was applied"));
        }
    }
    // Watched from here on (not while it asks: a Ctrl-C at the question ends it as before).
    let stop = StopSignal::new();
    let interrupts = Interrupts::watch(stop.clone());
    let mut options = ApplyOptions::default()
        .parallelism(usize::from(args.parallelism))
        .max_unavailable(usize::from(args.max_unavailable))
        .wait(waits)
        .stop_signal(stop);
    if let Some(max) = args.max_destructive {
        options = options.max_destructive(max);
    }
    let names: Vec<&str> = plan.actions.iter().map(|a| a.name.as_str()).collect();
    let board = Board::start(plan.service.is_some(), &names);
    let applied = plan
        .apply_with(&lock, &*store, &options, &|progress| board.show(&progress))
        .await;
    drop(board);
    let report = applied.map_err(|e| unrecorded_failure(&e, &args.dir))?;
    if human {
        crate::output::write_stdout(&report_text(&report))?;
    } else {
        session.out.show(
            &json!({"plan": document.to_value(), "results": report_json(&report)}),
            |_| String::new(),
        )?;
    }
    if let Some(exit) = interrupts.exit().filter(|_| report.interrupted) {
        return Err(interrupted_failure(&report, exit, &args.dir));
    }
    if report.is_complete() {
        return Ok(Exit::Success);
    }
    if report.lease_lost {
        return Err(lease_lost_failure(&report, &args.dir));
    }
    let unreadable_only = report.service.as_ref().is_none_or(Result::is_ok)
        && report
            .actions
            .iter()
            .all(|a| matches!(a.outcome, Outcome::Done { .. }) || a.kind == ActionKind::Unreadable);
    if unreadable_only {
        return Err(unreadable_failure(&plan, &args.dir));
    }
    Err(incomplete(&report, &args.dir))
}

/// `cloudctl import`: records an existing pipe under the name a file of the directory declares.
pub(crate) async fn import(args: ImportArgs, session: &mut Session<'_>) -> Result<(), Failure> {
    let declared = read(&args.dir, session)?;
    let Some(pipe) = declared.declaration.get(&args.name) else {
        return Err(Failure::usage(format!(
            "no file of {} declares a pipe named {:?}",
            args.dir.dir.display(),
            args.name
        ))
        .with_hint(format!(
            "write one first: `cloudctl pipe export {} > {}/{}.yaml` (then add what it reads from the environment)",
            args.id,
            args.dir.dir.display(),
            args.name
        )));
    };
    let service = session.settings()?.service()?;
    let store = open_store(&args.dir, session, &service)?;
    let lock = lock(&*store, &service)?;
    let mut recorded = load(&*store, &service)?;
    // Refused before any call when the name is taken.
    recorded
        .check_import(args.id, &args.name)
        .map_err(|e| Failure::state(&e))?;
    let answer = super::pipe::read_wire(&service, args.id).await?;
    let differences = recorded
        .import(args.id, pipe, &answer)
        .map_err(|e| Failure::state(&e))?;
    // The file's lifecycle holds from the import on (a protected pipe is protected at once).
    if let Some(record) = recorded.pipes.get_mut(&args.name) {
        record.lifecycle = declared.declaration.lifecycle_of(&args.name);
    }
    recorded
        .save_to(&*store, &lock)
        .map_err(|e| Failure::state(&e))?;
    let at = location_flags(&args.dir);
    let paths: Vec<&str> = differences.iter().map(|c| c.path.as_str()).collect();
    session.out.show(
        &json!({"name": args.name, "id": args.id, "differences": differences}),
        |_| {
            let mut text = format!("Imported {} as pipe {}.", args.name, args.id);
            if !paths.is_empty() {
                text.push_str(&format!(
                    " The file says what the server does not answer at {}: the pipe differs, or the \
                     server writes the same value its own way. The state records the pipe as it is; \
                     if it should follow the file, `cloudctl pipe delete {} --wait`, then \
                     `cloudctl apply {at}` creates it again from the file.",
                    paths.join(", "),
                    args.id
                ));
                for change in &differences {
                    text.push_str(&format!(
                        "\n  {}: {} on the server, {} in the file",
                        change.path,
                        change.old.as_ref().map_or("(not set)".into(), |v| v.to_string()),
                        change.new.as_ref().map_or("(not set)".into(), |v| v.to_string()),
                    ));
                }
            }
            text
        },
    )
}

/// `cloudctl state list|resolve|forget`.
pub(crate) async fn state(command: StateCommand, session: &mut Session<'_>) -> Result<(), Failure> {
    match command {
        StateCommand::Init(args) => init(&args, session),
        StateCommand::List(args) => {
            let service = session.settings()?.service()?;
            let store = open_store(&args, session, &service)?;
            let recorded = load(&*store, &service)?;
            session
                .out
                .show(&state_json(&recorded), |_| state_text(&recorded))
        }
        StateCommand::Resolve(args) => resolve(args, session).await,
        StateCommand::Unlock { dir, force } => unlock(&dir, force, session),
        StateCommand::Push { dir, to } => push(&dir, to, session),
        StateCommand::Forget { dir, name } => {
            let service = session.settings()?.service()?;
            let store = open_store(&dir, session, &service)?;
            let lock = lock(&*store, &service)?;
            let mut recorded = load(&*store, &service)?;
            if !recorded.forget(&name) {
                return Err(not_in_state(&name));
            }
            recorded
                .save_to(&*store, &lock)
                .map_err(|e| Failure::state(&e))?;
            session
                .out
                .show(&json!({"name": name, "forgotten": true}), |_| {
                    format!(
                        "Forgot {name}; the server was not touched, and no apply will manage it."
                    )
                })
        }
    }
}

async fn resolve(args: ResolveArgs, session: &mut Session<'_>) -> Result<(), Failure> {
    let service = session.settings()?.service()?;
    let store = open_store(&args.dir, session, &service)?;
    let lock = lock(&*store, &service)?;
    let mut recorded = load(&*store, &service)?;
    if !recorded.pending.contains_key(&args.name) {
        return Err(
            Failure::usage(format!("{:?} has no pending create to resolve", args.name))
                .with_hint("`cloudctl state list` shows the pending creates"),
        );
    }
    let shown = match args.id {
        Some(id) => {
            let pipe = super::pipe::read_wire(&service, id).await?;
            recorded
                .adopt(&args.name, id, &pipe)
                .map_err(|e| Failure::state(&e))?;
            format!("Recorded {} as pipe {id}.", args.name)
        }
        None => {
            recorded
                .clear_pending(&args.name)
                .map_err(|e| Failure::state(&e))?;
            format!(
                "Cleared the pending create of {}; the next apply creates it.",
                args.name
            )
        }
    };
    recorded
        .save_to(&*store, &lock)
        .map_err(|e| Failure::state(&e))?;
    session.out.show(
        &json!({"name": args.name, "id": args.id, "resolved": true}),
        |_| shown.clone(),
    )
}

/// The directory's pipes and service state, checked; nothing is sent for a bad file.
fn read(args: &DirArgs, session: &Session<'_>) -> Result<Declared, Failure> {
    let declared = pipe_file::read_directory(&args.dir, session.env).map_err(|e| match e {
        DirectoryError::Unusable(why) => Failure::usage(why).with_code("INVALID_DIRECTORY"),
        DirectoryError::Files(errors) => Failure::files(errors),
    })?;
    for (_, pipe) in declared.declaration.pipes() {
        for secret in pipe.secrets() {
            keep_secret(secret.expose());
        }
    }
    Ok(declared)
}

/// The options of a command in a hint that reaches the same files and state as `args`: `-f DIR`,
/// and `--state` when it was given (from `CLOUD_STATE`, the next command finds it there too). A
/// store URL's password is redacted in cloudctl's output like every secret it knows.
fn location_flags(args: &DirArgs) -> String {
    let mut flags = format!("-f {}", shell_word(&args.dir.display().to_string()));
    if let Some(state) = args.state.as_deref().filter(|s| !s.trim().is_empty()) {
        flags.push_str(" --state ");
        flags.push_str(&shell_word(state));
    }
    flags
}

/// `word` as one word of a POSIX shell: as it is when it holds no character the shell reads,
/// else in single quotes.
fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./:=,+@%".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// Where `args` keeps the state: `--state`, else `CLOUD_STATE`, else the directory's state file.
fn state_location(args: &DirArgs, session: &Session<'_>) -> Option<String> {
    args.state
        .clone()
        .or_else(|| (session.env)("CLOUD_STATE"))
        .filter(|location| !location.trim().is_empty())
}

/// The state of `service` that `args` names: a file, or a shared store.
fn open_store(
    args: &DirArgs,
    session: &Session<'_>,
    service: &ServiceHandle,
) -> Result<Box<dyn StateStore>, Failure> {
    open_at(state_location(args, session).as_deref(), args, service)
}

/// The password of a store's URL, kept out of everything cloudctl writes.
fn keep_store_secret(url: &str) {
    if let Some(password) = api_mgmt::redact::url_password(url) {
        keep_secret(password);
        keep_secret(&api_mgmt::redact::percent_decoded(password));
    }
}

/// The state at `location` (a file or a store's URL), or the directory's file.
fn open_at(
    location: Option<&str>,
    args: &DirArgs,
    service: &ServiceHandle,
) -> Result<Box<dyn StateStore>, Failure> {
    Ok(match location {
        Some(url) if declared::is_store_url(url) => Box::new({
            keep_store_secret(url);
            SharedStateStore::open(url, &declared::target_of(service))
                .map_err(|e| Failure::state(&e))?
                .lease_ttl(args.lease_ttl)
        }),
        Some(path) => Box::new(FileStateStore::new(path)),
        None => Box::new(FileStateStore::new(args.dir.join(STATE_FILE))),
    })
}

/// The lock of the service's applies (and of the state file).
fn lock(store: &dyn StateStore, service: &ServiceHandle) -> Result<StateLock, Failure> {
    store
        .lock(&declared::target_of(service))
        .map_err(|e| Failure::state(&e))
}

/// `cloudctl state unlock`: who holds the service's lease in a shared store, ended with --force.
fn unlock(args: &DirArgs, force: bool, session: &mut Session<'_>) -> Result<(), Failure> {
    let service = session.settings()?.service()?;
    let location = state_location(args, session);
    let Some(url) = location.as_deref().filter(|l| declared::is_store_url(l)) else {
        return Err(Failure::usage(
            "the state is a file: its locks are the operating system's, and end with the process \
             that holds them; there is no lease to end",
        )
        .with_code("STATE_REFUSED")
        .with_hint("a shared store is named with --state URL or CLOUD_STATE"));
    };
    keep_store_secret(url);
    let store = SharedStateStore::open(url, &declared::target_of(&service))
        .map_err(|e| Failure::state(&e))?;
    let holder = if force {
        store.force_unlock()
    } else {
        store.lease_holder()
    }
    .map_err(|e| Failure::state(&e))?;
    let name = store.describe().to_string();
    session.out.show(
        &json!({
            "store": name,
            "held": holder.is_some(),
            "holder": holder.as_ref().map(|h| h.holder.clone()),
            "since": holder.as_ref().and_then(|h| chrono::DateTime::from_timestamp(h.since, 0)).map(|t| t.to_rfc3339()),
            "expiresInSeconds": holder.as_ref().map(|h| h.expires_in.as_secs_f64()),
            "ended": force && holder.is_some(),
        }),
        |_| match (&holder, force) {
            (None, _) => format!("No apply holds the service in {name}."),
            (Some(holder), true) => format!(
                "Ended the lease of {holder}. If that apply is still running, every write it makes \
                 to the state is refused from now on; a call it has under way still reaches the \
                 API, and it sends no new create, delete or service command once its own clock \
                 finds no renewal confirmed within its lease (at most its --lease-ttl from its \
                 last renewal)."
            ),
            (Some(holder), false) => format!(
                "Held by {holder}. `cloudctl state unlock --force` ends it (only when that apply is known to be gone)."
            ),
        },
    )
}

/// `cloudctl state push`: the state copied to another file or store, which must hold none yet.
fn push(args: &DirArgs, to: Option<String>, session: &mut Session<'_>) -> Result<(), Failure> {
    let service = session.settings()?.service()?;
    let Some(to) = to
        .or_else(|| (session.env)("CLOUD_STATE_TO"))
        .filter(|to| !to.trim().is_empty())
    else {
        return Err(Failure::usage(
            "where to? --to FILE|URL (or CLOUD_STATE_TO)",
        ));
    };
    let from_location = state_location(args, session);
    if !declared::is_store_url(&to) && !from_location.as_deref().is_some_and(declared::is_store_url)
    {
        return Err(Failure::usage(
            "both the state and --to are files: copy the file instead (with the service's applies stopped)",
        )
        .with_code("STATE_REFUSED"));
    }
    let from = open_store(args, session, &service)?;
    let destination = open_at(Some(&to), args, &service)?;
    let _held = lock(&*from, &service)?;
    let lock = lock(&*destination, &service)?;
    let mut recorded = from
        .load()
        .map_err(|e| Failure::state(&e))?
        .ok_or_else(|| {
            Failure::usage("there is no recorded state to push").with_code("STATE_REFUSED")
        })?;
    recorded
        .check_target(&declared::target_of(&service))
        .map_err(|e| Failure::state(&e))?;
    if destination
        .load()
        .map_err(|e| Failure::state(&e))?
        .is_some()
    {
        return Err(Failure::usage(
            "the destination already holds a state of this service; nothing was written",
        )
        .with_code("STATE_REFUSED")
        .with_hint("compare the two with `cloudctl state list`, and remove the one that is not wanted first"));
    }
    // The same lineage, one write further.
    recorded
        .save_to(&*destination, &lock)
        .map_err(|e| Failure::state(&e))?;
    session.out.show(
        &json!({"pushed": true, "pipes": recorded.pipes.len(), "pending": recorded.pending.len(),
                "lineage": recorded.lineage, "serial": recorded.serial}),
        |_| {
            format!(
                "Pushed the state ({} pipes, {} pending creates; {}); point --state (or CLOUD_STATE) at its new place.",
                recorded.pipes.len(),
                recorded.pending.len(),
                recorded.generation()
            )
        },
    )
}

/// `cloudctl state init`: the first state of the service in its store (empty, of a new lineage);
/// refused where one exists.
fn init(args: &DirArgs, session: &mut Session<'_>) -> Result<(), Failure> {
    let service = session.settings()?.service()?;
    let store = open_store(args, session, &service)?;
    let lock = lock(&*store, &service)?;
    let made = store.init(&lock).map_err(|e| {
        let mut failure = Failure::state(&e);
        if matches!(e, StateError::Refused(_)) {
            failure.hint = Some(format!(
                "`cloudctl state list {}` shows it; there is nothing to set up",
                location_flags(args)
            ));
        }
        failure
    })?;
    let name = store.describe_store();
    session.out.show(
        &json!({"store": name, "lineage": made.lineage, "serial": made.serial}),
        |_| {
            format!(
                "Set up the state of the service in {name} ({}); the first apply can run.",
                made.generation()
            )
        },
    )
}

/// The recorded state of `service` (empty when a state file does not exist yet; refused when a
/// shared store holds none), refused when it is another's.
fn load(store: &dyn StateStore, service: &ServiceHandle) -> Result<RecordedState, Failure> {
    store
        .load_for(&declared::target_of(service))
        .map_err(|e| Failure::state(&e))
}

/// The plan options of `--target` names.
fn plan_options(targets: &[String]) -> PlanOptions {
    targets
        .iter()
        .fold(PlanOptions::default(), |options, name| options.target(name))
}

async fn make_plan(
    service: &ServiceHandle,
    declared: &Declared,
    recorded: &RecordedState,
    options: &PlanOptions,
) -> Result<Plan, Failure> {
    declared::plan_with(service, &declared.declaration, recorded, options)
        .await
        .map_err(|e| match e {
            DeclaredError::Api(error) => Failure::sdk(&error, &Context::api(Api::Management)),
            DeclaredError::State(error) => Failure::state(&error),
            other => Failure::usage(other.to_string()).with_code("INVALID_DECLARATION"),
        })
}

/// What makes cloudctl's plan documents: a document is applied only by the version that made it.
fn producer() -> Producer {
    Producer::new("cloudctl", env!("CARGO_PKG_VERSION"))
}

/// Writes a plan document to `path` (whole, through a file beside it renamed over it).
fn write_document(path: &std::path::Path, document: &SavedPlan) -> Result<(), Failure> {
    let failed = |e: std::io::Error| {
        Failure::other(
            "PLAN_WRITE_ERROR",
            format!("{}: the plan cannot be written: {e}", path.display()),
        )
    };
    let mut partial = path.as_os_str().to_owned();
    partial.push(".partial");
    let partial = std::path::PathBuf::from(partial);
    std::fs::write(&partial, document.to_json()).map_err(failed)?;
    std::fs::rename(&partial, path).map_err(failed)
}

/// Reads the plan document at `path` (exit 2 when it cannot be used).
fn read_document(path: &std::path::Path) -> Result<SavedPlan, Failure> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Failure::usage(format!("{}: the plan cannot be read: {e}", path.display()))
            .with_code("INVALID_PLAN")
    })?;
    SavedPlan::from_json(&text).map_err(|e| {
        Failure::usage(format!("{}: {e}", path.display()))
            .with_code("INVALID_PLAN")
            .with_hint("make a new plan with `cloudctl plan --out FILE`")
    })
}

/// The failure of a saved plan's check (exit 14 when something moved).
fn declared_failure(error: DeclaredError, args: &DirArgs) -> Failure {
    match error {
        DeclaredError::Moved(moved) => {
            let mut failure = Failure::other(
                "PLAN_STALE",
                format!(
                    "the saved plan is stale, nothing was applied: {}",
                    moved.join("; ")
                ),
            )
            .with_hint(format!(
                "make a new plan (`cloudctl plan {} --out FILE`), review it, and apply that",
                location_flags(args)
            ));
            failure.exit = Exit::PlanStale;
            failure
        }
        DeclaredError::PlanDocument(why) => Failure::usage(why).with_code("INVALID_PLAN"),
        DeclaredError::Api(error) => Failure::sdk(&error, &Context::api(Api::Management)),
        DeclaredError::State(error) => Failure::state(&error),
        other => Failure::usage(other.to_string()).with_code("INVALID_DECLARATION"),
    }
}

/// Exit 12: the plan would delete a protected pipe.
fn protected_failure(plan: &Plan) -> Failure {
    let names = plan.protected().map(|a| a.name.clone()).collect();
    Failure::state(&StateError::Protected { names })
}

/// Asks on the terminal; only `yes` applies.
fn confirmed() -> Result<bool, Failure> {
    write_stderr("Apply these changes? Type yes to apply them:");
    let mut answer = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut answer)
        .map_err(|e| Failure::other("INPUT_ERROR", format!("cannot read the answer: {e}")))?;
    Ok(matches!(
        answer.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}

/// Exit 7: a pending create blocks a name, with the commands that resolve it.
fn pending_failure(plan: &Plan, args: &DirArgs) -> Failure {
    let names: Vec<&str> = plan.pending().map(|a| a.name.as_str()).collect();
    let first = names.first().copied().unwrap_or("NAME");
    let mut failure = Failure::other(
        "PENDING_CREATE",
        format!(
            "a create of {} was sent without a known outcome; no apply creates {} again until it is resolved",
            names.join(", "),
            if names.len() == 1 { "it" } else { "them" }
        ),
    )
    .with_hint(resolve_hint(args, first));
    failure.exit = Exit::OutcomeUnknown;
    failure.outcome_unknown = true;
    failure
}

/// The two commands that resolve `name`'s pending create, on the files and state of `args`.
fn resolve_hint(args: &DirArgs, name: &str) -> String {
    let at = location_flags(args);
    format!(
        "find the pipe in the console, then `cloudctl state resolve {at} {name} --id PIPE_ID`; if it was not made, `cloudctl state resolve {at} {name} --absent`"
    )
}

/// Exit 9: a recorded pipe's answer cannot be read; the others were planned.
fn unreadable_failure(plan: &Plan, args: &DirArgs) -> Failure {
    let names: Vec<String> = plan
        .unreadable()
        .map(|a| match &a.note {
            Some(note) => format!("{} ({note})", a.name),
            None => a.name.clone(),
        })
        .collect();
    let mut failure = Failure::other(
        "UNREADABLE_PIPE",
        format!(
            "the server's answer for {} cannot be read; nothing was done to {}, the other pipes were planned",
            names.join(", "),
            if names.len() == 1 { "it" } else { "them" }
        ),
    )
    .with_hint(format!(
        "`cloudctl pipe get ID -o json` shows what the server sends; `cloudctl state forget {} NAME` stops managing a pipe",
        location_flags(args)
    ));
    failure.exit = Exit::Unreadable;
    failure
}

/// An apply that ended on the state: a pipe created but not recorded is named with its id.
fn unrecorded_failure(error: &StateError, args: &DirArgs) -> Failure {
    let mut failure = Failure::state(error);
    if let StateError::CreatedNotRecorded { name, id, .. } = error {
        failure.hint = Some(format!(
            "record it: `cloudctl state resolve {} {name} --id {id}`",
            location_flags(args)
        ));
    }
    failure
}

/// The failure of an apply that did not finish: its exit code is the most telling of its actions'.
fn incomplete(report: &declared::ApplyReport, args: &DirArgs) -> Failure {
    let unfinished: Vec<String> = report
        .actions
        .iter()
        .filter(|a| !matches!(a.outcome, Outcome::Done { .. }))
        .map(|a| a.name.clone())
        .collect();
    let unknown = report
        .actions
        .iter()
        .find(|a| matches!(a.outcome, Outcome::OutcomeUnknown(_) | Outcome::Blocked))
        .map(|a| a.name.as_str());
    let first_error = report
        .actions
        .iter()
        .find_map(|a| match &a.outcome {
            Outcome::Failed(e) => Some(e),
            _ => None,
        })
        .or_else(|| report.service.as_ref().and_then(|s| s.as_ref().err()));
    let message = format!(
        "{} of {} actions did not finish: {}",
        unfinished.len(),
        report.actions.len(),
        unfinished.join(", ")
    );
    let at = location_flags(args);
    let mut failure = match (unknown, first_error) {
        (Some(name), _) => {
            let mut failure =
                Failure::other("PENDING_CREATE", message).with_hint(resolve_hint(args, name));
            failure.exit = Exit::OutcomeUnknown;
            failure.outcome_unknown = true;
            failure
        }
        (None, Some(error)) => {
            let mut failure = Failure::sdk(error, &Context::api(Api::Management));
            failure.message = format!("{message}; first error: {}", failure.message);
            failure
        }
        (None, None) => Failure::other("APPLY_INCOMPLETE", message),
    };
    if failure.hint.is_none() {
        failure.hint = Some(format!("`cloudctl plan {at}` shows what is left to do"));
    }
    failure
}

/// Exit 130 or 143: stopped by a signal; what was not done is named.
fn interrupted_failure(report: &declared::ApplyReport, exit: Exit, args: &DirArgs) -> Failure {
    let left: Vec<&str> = report
        .actions
        .iter()
        .filter(|a| matches!(a.outcome, Outcome::Interrupted))
        .map(|a| a.name.as_str())
        .collect();
    let signal = if exit == Exit::Terminated {
        "SIGTERM"
    } else {
        "SIGINT"
    };
    let mut message =
        format!("stopped by {signal}: nothing new was started, and what was done is recorded");
    if !left.is_empty() {
        message.push_str(&format!(
            "; not started or not waited for: {}",
            left.join(", ")
        ));
    }
    let mut failure = Failure::other("INTERRUPTED", message).with_hint(format!(
        "`cloudctl plan {at}` shows what is left; `cloudctl apply {at}` finishes it",
        at = location_flags(args)
    ));
    failure.exit = exit;
    failure
}

/// Exit 11: the lease may have lapsed mid-apply; what was not sent is named.
fn lease_lost_failure(report: &declared::ApplyReport, args: &DirArgs) -> Failure {
    let not_sent: Vec<&str> = report
        .actions
        .iter()
        .filter(|a| matches!(a.outcome, Outcome::LeaseLost))
        .map(|a| a.name.as_str())
        .collect();
    let mut message = "this apply's lease of the service may have lapsed (its store did not \
                       confirm a renewal within the lease's TTL), so another apply may hold the \
                       service now; nothing that changes the server was sent after that"
        .to_string();
    if !not_sent.is_empty() {
        message.push_str(&format!("; not sent: {}", not_sent.join(", ")));
    }
    let mut failure = Failure::other("LEASE_LOST", message).with_hint(format!(
        "check the store is reachable from here; `cloudctl state unlock {at}` shows who holds the \
         service now, and `cloudctl plan {at}` what is left to do",
        at = location_flags(args)
    ));
    failure.exit = Exit::LeaseLost;
    failure
}

fn not_in_state(name: &str) -> Failure {
    let mut failure = Failure::other(
        "NOT_IN_STATE",
        format!("the state has no pipe named {name:?}"),
    )
    .with_hint("`cloudctl state list` shows what it has");
    failure.exit = Exit::NotFound;
    failure
}

#[cfg(test)]
mod tests {
    use super::shell_word;

    #[test]
    fn a_word_is_quoted_only_where_the_shell_would_read_it() {
        assert_eq!(shell_word("pipes/prod"), "pipes/prod");
        assert_eq!(
            shell_word("redis://:[REDACTED]@host:6379/0"),
            "'redis://:[REDACTED]@host:6379/0'"
        );
        assert_eq!(shell_word("my pipes"), "'my pipes'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        assert_eq!(shell_word("$HOME"), "'$HOME'");
        assert_eq!(shell_word(""), "''");
    }
}
