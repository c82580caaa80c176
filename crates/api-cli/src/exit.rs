//! Exit codes, and [`Failure`]: every error of a command, classified for scripts (exit code, JSON)
//! and explained for people (one line with the code, the message, the request id and a hint).

use std::time::Duration;

use api_mgmt::declared::StateError;
use api_mgmt::{
    Error,
    error::TransportKind,
    pipes::{PipeId, PipeState},
    wait::WaitError,
};

use crate::pipe_file::FileError;

/// The process exit codes (documented in `--help` and the guide's cloudctl reference).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exit {
    /// 0: success.
    Success = 0,
    /// 1: any other error.
    Failure = 1,
    /// 2: usage, settings, or a pipe file that fails validation; nothing was sent.
    Usage = 2,
    /// 3: not found.
    NotFound = 3,
    /// 4: authentication or permission.
    Auth = 4,
    /// 5: rate limited, still after retries.
    RateLimited = 5,
    /// 6: timed out waiting.
    TimedOut = 6,
    /// 7: outcome unknown (and, for plan and apply, a pending create that blocks a name).
    OutcomeUnknown = 7,
    /// 8: a plan has changes to make (not an error).
    ChangesPending = 8,
    /// 9: `plan`, `apply`: a recorded pipe's answer cannot be read; nothing was done to it, the
    /// others were planned (and applied).
    Unreadable = 9,
    /// 10: `plan`, `apply` and the state commands: the shared store holds no state of the service
    /// (never set up there, or lost); nothing was sent.
    StateMissing = 10,
    /// 11: `apply`: the lease of the service may have lapsed; nothing that changes the server was
    /// sent after that.
    LeaseLost = 11,
    /// 12: `plan`, `apply`: the plan would delete a protected pipe; `apply` sent nothing.
    Protected = 12,
    /// 13: `apply --max-destructive`: the plan deletes, replaces or recreates more pipes than
    /// allowed; nothing was sent.
    TooDestructive = 13,
    /// 14: `apply --plan`: what the saved plan was made against moved (the state, a pipe on the
    /// server, a file, the service); nothing was sent.
    PlanStale = 14,
    /// 130: `apply` stopped by Ctrl-C (SIGINT); what was done is recorded.
    Interrupted = 130,
    /// 143: `apply` stopped by SIGTERM; what was done is recorded.
    Terminated = 143,
}

impl Exit {
    /// The process exit code.
    pub fn code(self) -> u8 {
        self as u8
    }
}

/// Which API a command talks to, for the hints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Api {
    /// The management API.
    Management,
    /// The observability API.
    Observability,
}

/// What the command was doing, so that the hint can name the next step.
#[derive(Debug, Clone, Default)]
pub(crate) struct Context {
    /// The API called.
    pub api: Option<Api>,
    /// The name of the pipe being created.
    pub creating: Option<String>,
    /// The pipe that was created before the error (a failed wait after a create).
    pub created: Option<PipeId>,
    /// The pipe the command is about.
    pub pipe: Option<PipeId>,
    /// The service command being sent (`start`, `stop`).
    pub service_command: Option<&'static str>,
    /// What a pipe wait of the command waits for.
    pub pipe_wait: Option<PipeWait>,
}

/// What a pipe wait waits for, so that a hint can repeat it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PipeWait {
    /// A steady state (`cloudctl pipe wait`'s default).
    Steady,
    /// One state.
    State(PipeState),
    /// The pipe to be gone.
    Gone,
}

impl PipeWait {
    /// The `cloudctl pipe wait` flags that wait for the same, each after a space.
    fn flags(&self) -> String {
        match self {
            Self::Steady => String::new(),
            Self::State(state) => format!(" --state {state}"),
            Self::Gone => " --gone".to_string(),
        }
    }
}

impl Context {
    /// A call to `api`.
    pub fn api(api: Api) -> Self {
        Self {
            api: Some(api),
            ..Self::default()
        }
    }
}

/// A failed command (boxed: it travels in every `Result` of the CLI).
#[derive(Debug, Clone)]
pub(crate) struct Failure(Box<Report>);

impl std::ops::Deref for Failure {
    type Target = Report;

    fn deref(&self) -> &Report {
        &self.0
    }
}

impl std::ops::DerefMut for Failure {
    fn deref_mut(&mut self) -> &mut Report {
        &mut self.0
    }
}

/// Everything the error output of a failed command shows.
#[derive(Debug, Clone)]
pub(crate) struct Report {
    /// The exit code.
    pub exit: Exit,
    /// What kind of error: the API's code (`NOT_FOUND`), or the CLI's (`WAIT_TIMEOUT`, `INVALID_FILE`).
    pub code: String,
    /// The HTTP status, when the server answered with an error.
    pub status: Option<u16>,
    /// What went wrong.
    pub message: String,
    /// The server's request id, when it answered.
    pub request_id: Option<String>,
    /// Whether the same command may succeed if run again, and running it again is safe.
    pub retryable: bool,
    /// Whether a create may have happened without an answer saying so.
    pub outcome_unknown: bool,
    /// The next step, where one helps.
    pub hint: Option<String>,
    /// The problems of a pipe file, each with its file, path and line.
    pub problems: Vec<(String, crate::pipe_file::FileProblem)>,
    /// The value last seen by a wait that failed (a pipe or a service), as JSON.
    pub last_seen: Option<serde_json::Value>,
}

impl Failure {
    fn new(exit: Exit, code: &str, message: impl Into<String>) -> Self {
        Self(Box::new(Report {
            exit,
            code: code.to_string(),
            status: None,
            message: message.into(),
            request_id: None,
            retryable: false,
            outcome_unknown: false,
            hint: None,
            problems: Vec::new(),
            last_seen: None,
        }))
    }

    /// A usage or settings error (exit 2).
    pub fn usage(message: impl Into<String>) -> Self {
        Self::new(Exit::Usage, "USAGE", message)
    }

    /// Any other error of the CLI itself (exit 1).
    pub fn other(code: &str, message: impl Into<String>) -> Self {
        Self::new(Exit::Failure, code, message)
    }

    /// With this code.
    pub fn with_code(mut self, code: &str) -> Self {
        self.code = code.to_string();
        self
    }

    /// With this hint.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Pipe files that fail validation (exit 2), with every problem of each.
    pub fn files(errors: Vec<FileError>) -> Self {
        let count: usize = errors.iter().map(|e| e.problems.len()).sum();
        let message = match errors.as_slice() {
            [one] => format!(
                "{}: {count} problem{} found; nothing was sent",
                one.name,
                if count == 1 { "" } else { "s" }
            ),
            several => format!(
                "{count} problem{} found in {} files; nothing was sent",
                if count == 1 { "" } else { "s" },
                several.len()
            ),
        };
        let mut failure = Self::new(Exit::Usage, "INVALID_FILE", message);
        failure.problems = errors
            .into_iter()
            .flat_map(|error| {
                let name = error.name;
                error
                    .problems
                    .into_iter()
                    .map(move |problem| (name.clone(), problem))
            })
            .collect();
        failure
    }

    /// A recorded state that cannot be used: unreadable or foreign states are bad input (exit 2),
    /// a held lock or a failed write is not (exit 1).
    pub fn state(error: &StateError) -> Self {
        let (exit, code, hint) = match error {
            StateError::Locked { .. } => (
                Exit::Failure,
                "STATE_LOCKED",
                Some("another apply of this directory is running; run again when it has finished"),
            ),
            StateError::ServiceLocked { .. } => (
                Exit::Failure,
                "STATE_LOCKED",
                Some(
                    "another apply of this service is running (from this directory or another); run again when it has finished",
                ),
            ),
            StateError::Leased { .. } => (
                Exit::Failure,
                "STATE_LOCKED",
                Some(
                    "another apply holds this service's lease (on this host or another); run again when it has finished, or after the lease lapses if it died (`cloudctl state unlock` shows it)",
                ),
            ),
            StateError::Fenced { .. } => (
                Exit::Failure,
                "STATE_FENCED",
                Some(
                    "this apply was paused past its lease and another took the service over; plan again (`cloudctl plan`) to see what it left",
                ),
            ),
            StateError::Store { .. } => (
                Exit::Failure,
                "STATE_STORE_ERROR",
                Some(
                    "check the store's URL, that it is reachable from here, and its password; `cloudctl plan` shows what an apply cut short left",
                ),
            ),
            StateError::UnsafeStore { .. } => (
                Exit::Usage,
                "STATE_STORE_UNSAFE",
                Some(
                    "use a Redis or Valkey server that runs Lua scripts atomically (not a proxy that drops them)",
                ),
            ),
            StateError::Missing { .. } => (
                Exit::StateMissing,
                "STATE_MISSING",
                Some(
                    "on the first apply of this service in this store, `cloudctl state init` (or `cloudctl state push` from a state file); if the store lost its data, restore it (or push the last good state) before any apply: each pipe of the old state still runs on the server",
                ),
            ),
            StateError::LeaseLost { .. } => (
                Exit::LeaseLost,
                "LEASE_LOST",
                Some(
                    "check the store is reachable from here; `cloudctl state unlock` shows who holds the service now, and `cloudctl plan` what is left to do",
                ),
            ),
            StateError::CreatedNotRecorded { .. } => (Exit::Failure, "STATE_ERROR", None),
            StateError::Io { .. } => (Exit::Failure, "STATE_ERROR", None),
            StateError::Corrupt(_) | StateError::Newer { .. } => (
                Exit::Usage,
                "INVALID_STATE",
                Some("restore the state file from version control or a backup; nothing was sent"),
            ),
            StateError::OtherTarget { .. } => (
                Exit::Usage,
                "INVALID_STATE",
                Some(
                    "check --api-url, --organization and --service, or give this service its own --state; nothing was sent",
                ),
            ),
            StateError::Protected { .. } => (
                Exit::Protected,
                "PROTECTED",
                Some(
                    "a pipe with `lifecycle: {protect: true}` is never deleted by an apply; to delete it, apply `protect: false` first, then the change",
                ),
            ),
            StateError::TooDestructive { .. } => (
                Exit::TooDestructive,
                "TOO_DESTRUCTIVE",
                Some(
                    "`cloudctl plan` shows each delete, replace and recreate; raise --max-destructive if they are meant, or apply fewer at a time with --target",
                ),
            ),
            _ => (Exit::Usage, "STATE_REFUSED", None),
        };
        let failure = Self::new(exit, code, error.to_string());
        match hint {
            Some(hint) => failure.with_hint(hint),
            None => failure,
        }
    }

    /// A pipe file that fails validation (exit 2), with every problem.
    pub fn file(error: FileError) -> Self {
        Self::files(vec![error])
    }

    /// An error of the SDK, classified and explained.
    pub fn sdk(error: &Error, context: &Context) -> Self {
        let exit = exit_of(error);
        let code = code_of(error);
        let api = error.as_api();
        let message = match (api, error) {
            (Some(api), _) if !api.message.is_empty() => {
                format!("{}: {}", api.operation, api.message)
            }
            (_, Error::Wait(wait)) if wait.is_timeout() => timeout_message(wait),
            _ => error.to_string(),
        };
        let mut failure = Self::new(exit, &code, message);
        failure.status = error.status();
        failure.request_id = error.request_id().map(str::to_string);
        failure.retryable = error.is_retryable();
        failure.outcome_unknown = error.is_outcome_unknown();
        failure.hint = hint(error, context);
        failure.last_seen = last_seen(error);
        failure
    }

    /// The error as people read it: one line (plus one line per file problem).
    pub fn human(&self) -> String {
        let mut line = format!("error: {}", self.code);
        if let Some(status) = self.status {
            line.push_str(&format!(" (HTTP {status})"));
        }
        line.push_str(": ");
        line.push_str(self.message.trim_end_matches('.'));
        if let Some(id) = &self.request_id {
            line.push_str(&format!(" [request id {id}]"));
        }
        if let Some(hint) = &self.hint {
            line.push_str("; hint: ");
            line.push_str(hint);
        }
        for (file, problem) in &self.problems {
            let place = match problem.line {
                Some(n) => format!("{file}:{n}"),
                None => file.clone(),
            };
            line.push_str(&format!(
                "\n  {place}: {}: {}",
                problem.path, problem.message
            ));
        }
        line
    }

    /// The error as scripts read it: `{"error": {...}}`.
    pub fn json(&self) -> serde_json::Value {
        let mut error = serde_json::json!({
            "code": self.code,
            "status": self.status,
            "message": self.message,
            "requestId": self.request_id,
            "retryable": self.retryable,
            "outcomeUnknown": self.outcome_unknown,
            "hint": self.hint,
            "exitCode": self.exit.code(),
        });
        if !self.problems.is_empty() {
            error["problems"] = serde_json::Value::Array(
                self.problems
                    .iter()
                    .map(|(file, p)| {
                        serde_json::json!({"file": file, "path": p.path, "line": p.line, "message": p.message})
                    })
                    .collect(),
            );
        }
        if let Some(last_seen) = &self.last_seen {
            error["lastSeen"] = last_seen.clone();
        }
        serde_json::json!({ "error": error })
    }
}

/// A wait that ran out of time, in words: what it waited for, how long, and what it saw last.
fn timeout_message(wait: &WaitError) -> String {
    let seconds = |waited: &Duration| format!("{:.1} s", waited.as_secs_f64());
    match wait {
        WaitError::PipeTimedOut {
            target,
            waited,
            last_seen,
        } => {
            let seen = last_seen.as_ref().map_or_else(
                || "the pipe was never seen".to_string(),
                |pipe| format!("pipe {} was last seen {}", pipe.id, pipe.state),
            );
            let target = if target == "gone" {
                "to be gone".to_string()
            } else {
                format!("for {target}")
            };
            format!("gave up waiting {target} after {}; {seen}", seconds(waited))
        }
        WaitError::ServiceTimedOut {
            target,
            waited,
            last_seen,
        } => {
            let seen = last_seen.as_ref().map_or_else(
                || "no answer came in time".to_string(),
                |service| format!("the service was last seen {}", service.state_name()),
            );
            format!(
                "gave up waiting for the service to be {target} after {}; {seen}",
                seconds(waited)
            )
        }
        other => other.to_string(),
    }
}

/// The exit code of an SDK error.
fn exit_of(error: &Error) -> Exit {
    if error.is_outcome_unknown() {
        return Exit::OutcomeUnknown;
    }
    match error {
        Error::Wait(wait) if wait.is_timeout() => return Exit::TimedOut,
        Error::Wait(WaitError::PipeGone { .. }) => return Exit::NotFound,
        Error::Validation(_) | Error::Config(_) | Error::InvalidId(_) => return Exit::Usage,
        Error::Timeout {
            last_error: Some(last),
            ..
        } if last.is_rate_limited() => return Exit::RateLimited,
        _ => {}
    }
    match error.status() {
        Some(404) => Exit::NotFound,
        Some(401 | 403) => Exit::Auth,
        Some(429) => Exit::RateLimited,
        _ => Exit::Failure,
    }
}

/// The code of an SDK error: the API's, else one of the CLI's own.
fn code_of(error: &Error) -> String {
    if let Some(code) = error.code() {
        return code.as_str().to_string();
    }
    let code = match error {
        Error::Wait(wait) => match wait {
            w if w.is_timeout() => "WAIT_TIMEOUT",
            WaitError::PipeFailed { .. } => "PIPE_FAILED",
            WaitError::PipeGone { .. } => "PIPE_GONE",
            WaitError::ServiceFailed { .. } => "SERVICE_FAILED",
            _ => "WAIT_FAILED",
        },
        Error::Transport(t) => match t.kind {
            TransportKind::Connect => "CONNECTION_FAILED",
            TransportKind::Timeout => "REQUEST_TIMEOUT",
            _ => "TRANSPORT_ERROR",
        },
        Error::Timeout { .. } => "OPERATION_TIMEOUT",
        Error::Decode(_) => "DECODE_ERROR",
        Error::Validation(_) => "VALIDATION_ERROR",
        Error::Config(_) => "CONFIG_ERROR",
        Error::InvalidId(_) => "INVALID_ID",
        _ => "ERROR",
    };
    code.to_string()
}

/// The value a failed wait saw last, as JSON (secrets redacted by the domain types).
fn last_seen(error: &Error) -> Option<serde_json::Value> {
    let Error::Wait(wait) = error else {
        return None;
    };
    if let Some(pipe) = wait.last_seen_pipe() {
        return serde_json::to_value(pipe).ok();
    }
    wait.last_seen_service()
        .and_then(|service| serde_json::to_value(service).ok())
}

/// The next step for an error, where one helps.
fn hint(error: &Error, context: &Context) -> Option<String> {
    let flags = context
        .pipe_wait
        .as_ref()
        .map(PipeWait::flags)
        .unwrap_or_default();
    let created = context.created.map(|id| {
        format!("pipe {id} was created; `cloudctl pipe get {id}` shows it, `cloudctl pipe wait {id}{flags}` waits again")
    });
    if error.is_outcome_unknown() {
        // How to find out is the spec's own word (the operation's `x-reconcile`).
        let reconcile = error.reconcile().map_or_else(
            || "check the result (in the console) before you send it again.".to_string(),
            |text| {
                let mut text = text.to_string();
                if let Some(first) = text.get_mut(..1) {
                    first.make_ascii_lowercase();
                }
                text
            },
        );
        let reconcile = reconcile.trim_end_matches('.');
        return Some(match &context.creating {
            Some(name) => format!(
                "the pipe {name:?} may or may not have been created: {reconcile}; running the same \
                 command again may create a second pipe"
            ),
            None => format!(
                "the request may have taken effect without an answer saying so: {reconcile}"
            ),
        });
    }
    if let Error::Wait(wait) = error {
        let mut parts: Vec<String> = created.into_iter().collect();
        let pipe = context.pipe.filter(|_| context.created.is_none());
        match wait {
            WaitError::ServiceTimedOut { .. } => {
                let command = context.service_command.unwrap_or("start");
                parts.push(format!(
                    "the service keeps going; `cloudctl service {command} --wait --timeout 20m` waits longer"
                ));
            }
            WaitError::ServiceFailed { .. } => parts.push(
                "the service cannot get there from its state; look at it in the console"
                    .to_string(),
            ),
            WaitError::PipeTimedOut { .. } => {
                if let Some(id) = pipe {
                    parts.push(format!(
                        "the pipe keeps going; `cloudctl pipe wait {id}{flags} --timeout 20m` waits longer"
                    ));
                }
                if let Some(PipeWait::State(state)) = &context.pipe_wait
                    && state.is_other()
                {
                    parts.push(format!(
                        "{state} is not a pipe state this cloudctl knows ({}): check its spelling",
                        PipeState::KNOWN.join(", ")
                    ));
                }
            }
            WaitError::PipeWaitInterrupted { source, .. } => {
                let inner = Context {
                    created: None,
                    ..context.clone()
                };
                parts.extend(hint(source, &inner));
            }
            _ => {
                if let Some(id) = pipe {
                    parts.push(format!("`cloudctl pipe get {id}` shows the pipe"));
                }
            }
        }
        return (!parts.is_empty()).then(|| parts.join("; "));
    }
    let observability = context.api == Some(Api::Observability);
    let hint = match error.status() {
        Some(424) => Some(
            "the service is not running: start it with `cloudctl service start --wait`, then try again"
                .to_string(),
        ),
        Some(401) if observability => Some(
            "the token was refused: check CLOUD_OBSERVABILITY_TOKEN (or observability_token in the profile); \
             `cloudctl config show` shows which is used"
                .to_string(),
        ),
        Some(401) => Some(
            "the key was refused: check CLOUD_API_KEY_ID and CLOUD_API_KEY_SECRET (or api_key_id and \
             api_key_secret in the profile); `cloudctl config show` shows which are used"
                .to_string(),
        ),
        Some(403) if observability => {
            Some("the token may not read this (a team token sees only its team's resources)".to_string())
        }
        Some(403) => Some(
            "the key may not do this: a developer key is read-only, and a key reaches only its own \
             organization (check CLOUD_ORGANIZATION_ID)"
                .to_string(),
        ),
        Some(429) => Some(rate_limit_hint(
            error.as_api().and_then(|api| api.retry_after),
            observability,
        )),
        Some(404) if observability => Some("check the id".to_string()),
        Some(404) => Some(match context.pipe {
            Some(id) => format!(
                "no pipe {id} on this service: check the id, and the organization and service \
                 (`cloudctl config show`)"
            ),
            None => "check the id, and the organization and service (`cloudctl config show`)".to_string(),
        }),
        Some(409) if context.service_command.is_some() => Some(format!(
            "the service is between two states; `cloudctl service {} --wait` waits for it",
            context.service_command.unwrap_or("start")
        )),
        Some(500..) if error.is_retryable() => {
            Some("a server or gateway error; trying again later is safe".to_string())
        }
        _ => match error {
            Error::Transport(t) if t.kind == TransportKind::Connect => Some(
                "cannot connect: check the URL (`cloudctl config show`) and the network".to_string(),
            ),
            _ if error.is_retryable() => Some("trying again later is safe".to_string()),
            _ => None,
        },
    };
    match (created, hint) {
        (Some(created), Some(hint)) => Some(format!("{created}; {hint}")),
        (created, hint) => created.or(hint),
    }
}

fn rate_limit_hint(retry_after: Option<Duration>, observability: bool) -> String {
    let limit = if observability {
        "the observability API allows 100 requests per 60 s per token"
    } else {
        "the management API allows 10 requests per 10 s per key"
    };
    let when = match retry_after {
        Some(wait) => format!("come back in {} s", wait.as_secs().max(1)),
        None => "come back in a few seconds".to_string(),
    };
    format!(
        "{limit}, and other clients using it count too; {when} (cloudctl paces itself unless \
         --no-rate-limit is given)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use api_mgmt::error::ApiError;

    fn api(status: u16) -> Error {
        Error::from(
            ApiError::new("createPipe", status)
                .with_message("nope")
                .with_request_id("91021324-3546-4f70-8182-930415263748"),
        )
    }

    #[test]
    fn exit_codes_follow_the_error() {
        let context = Context::api(Api::Management);
        let exit = |e: Error| Failure::sdk(&e, &context).exit;
        assert_eq!(exit(api(404)), Exit::NotFound);
        assert_eq!(exit(api(401)), Exit::Auth);
        assert_eq!(exit(api(403)), Exit::Auth);
        assert_eq!(exit(api(429)), Exit::RateLimited);
        assert_eq!(exit(api(424)), Exit::Failure);
        // A 500 to a create may have applied (the outcome rule); to a read it is a plain failure.
        assert_eq!(exit(api(500)), Exit::OutcomeUnknown);
        assert_eq!(exit(ApiError::new("getPipe", 500).into()), Exit::Failure);
        let unknown = Error::from(ApiError::new("createPipe", 504).with_outcome_unknown(true));
        assert_eq!(exit(unknown), Exit::OutcomeUnknown);
        let waited = Error::Wait(WaitError::PipeTimedOut {
            target: "Running".into(),
            waited: Duration::from_secs(1),
            last_seen: None,
        });
        assert_eq!(exit(waited), Exit::TimedOut);
    }

    #[test]
    fn an_unknown_outcome_says_what_to_check() {
        let unknown = Error::from(ApiError::new("createPipe", 504).with_outcome_unknown(true));
        let creating = Context {
            creating: Some("orders".into()),
            ..Context::api(Api::Management)
        };
        let hint = Failure::sdk(&unknown, &creating)
            .hint
            .clone()
            .unwrap_or_default();
        assert!(
            hint.starts_with("the pipe \"orders\" may or may not have been created"),
            "{hint}"
        );
        let other = Failure::sdk(&unknown, &Context::api(Api::Management));
        let hint = other.hint.clone().unwrap_or_default();
        assert!(
            hint.starts_with("the request may have taken effect"),
            "{hint}"
        );
        assert!(other.outcome_unknown && !other.retryable);
    }

    #[test]
    fn the_human_line_has_code_message_request_id_and_hint() {
        let failure = Failure::sdk(&api(424), &Context::api(Api::Management));
        assert_eq!(
            failure.human(),
            "error: FAILED_DEPENDENCY (HTTP 424): createPipe: nope [request id 91021324-3546-4f70-8182-930415263748]; \
             hint: the service is not running: start it with `cloudctl service start --wait`, then try again"
        );
        let json = failure.json();
        assert_eq!(json["error"]["code"], "FAILED_DEPENDENCY");
        assert_eq!(json["error"]["status"], 424);
        assert_eq!(
            json["error"]["requestId"],
            "91021324-3546-4f70-8182-930415263748"
        );
        assert_eq!(json["error"]["retryable"], false);
        assert_eq!(json["error"]["outcomeUnknown"], false);
    }

    #[test]
    fn rate_limit_hints_say_when_to_come_back() {
        let error =
            Error::from(ApiError::new("getAlert", 429).with_retry_after(Duration::from_secs(7)));
        let failure = Failure::sdk(&error, &Context::api(Api::Observability));
        let hint = failure.hint.clone().unwrap_or_default();
        assert!(
            hint.contains("100 requests per 60 s") && hint.contains("come back in 7 s"),
            "{hint}"
        );
    }
}
