//! The command line: every command, flag and argument of `cloudctl`, as clap derive types.

use std::path::PathBuf;
use std::time::Duration;

use api_mgmt::pipes::{PipeId, PipeState};
use api_obs::alerts::AlertId;
use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::duration::{parse_duration, parse_lease_ttl};

/// The exit codes, shown at the end of `cloudctl --help` (and in the guide's cloudctl reference).
const EXIT_CODES: &str = "\
Settings (first found wins): flags, then environment (CLOUD_API_URL, CLOUD_API_KEY_ID,
CLOUD_API_KEY_SECRET, CLOUD_ORGANIZATION_ID, CLOUD_SERVICE_ID, CLOUD_OBSERVABILITY_URL,
CLOUD_OBSERVABILITY_TOKEN), then the profile in the config file. The key secret and the token are
never taken from a flag. `cloudctl config show` tells where each setting came from.

Exit codes:
  0  success
  1  any other error (e.g. the service is not running, a pipe failed, a server error)
  2  usage error, missing settings, or a pipe file that fails validation (nothing was sent)
  3  not found
  4  authentication or permission (wrong key or token, read-only key, other organization)
  5  rate limited, still after retries
  6  timed out waiting (--wait, pipe wait)
  7  outcome unknown: a create may or may not have happened; check before retrying
     (plan, apply: a pending create blocks a name until `cloudctl state resolve`)
  8  plan: changes are pending (not an error; apply would make them)
  9  plan, apply: a recorded pipe's answer cannot be read (the others were planned)
  10 plan, apply, state: the shared store holds no state of the service (`state init` first)
  11 apply: the lease of the service may have lapsed; nothing more was sent
  130, 143  apply stopped by Ctrl-C (SIGINT) or SIGTERM: nothing new started, what was done is
     recorded (a second signal exits at once)";

/// cloudctl: manage services, data pipes and private endpoints, and read alerts and dashboards.
#[derive(Debug, Parser)]
#[command(name = "cloudctl", version, after_help = EXIT_CODES)]
pub(crate) struct Cli {
    /// Settings and output, for every command.
    #[command(flatten)]
    pub global: GlobalArgs,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Options every command takes.
#[derive(Debug, Args)]
pub(crate) struct GlobalArgs {
    /// Output format [default: human on a terminal, json otherwise]
    #[arg(
        short,
        long,
        global = true,
        value_enum,
        help_heading = "Global options"
    )]
    pub output: Option<OutputFormat>,
    /// Profile of the config file to read settings from [default: default]
    #[arg(
        long,
        global = true,
        value_name = "NAME",
        help_heading = "Global options"
    )]
    pub profile: Option<String>,
    /// Config file [default: cloudctl/config.toml in the config directory, e.g. ~/.config]
    #[arg(
        long,
        global = true,
        value_name = "FILE",
        help_heading = "Global options"
    )]
    pub config: Option<PathBuf>,
    /// Management API URL (else CLOUD_API_URL, else the profile's api_url)
    #[arg(
        long,
        global = true,
        value_name = "URL",
        help_heading = "Global options"
    )]
    pub api_url: Option<String>,
    /// Management API key id (else CLOUD_API_KEY_ID, else api_key_id)
    #[arg(
        long,
        global = true,
        value_name = "ID",
        help_heading = "Global options"
    )]
    pub key_id: Option<String>,
    /// Organization id (else CLOUD_ORGANIZATION_ID, else organization_id)
    #[arg(
        long,
        global = true,
        value_name = "UUID",
        help_heading = "Global options"
    )]
    pub organization: Option<String>,
    /// Service id (else CLOUD_SERVICE_ID, else service_id)
    #[arg(
        long,
        global = true,
        value_name = "UUID",
        help_heading = "Global options"
    )]
    pub service: Option<String>,
    /// Observability API URL (else CLOUD_OBSERVABILITY_URL, else observability_url)
    #[arg(
        long,
        global = true,
        value_name = "URL",
        help_heading = "Global options"
    )]
    pub observability_url: Option<String>,
    /// Send requests as fast as they come (default: paced at the API's documented limits)
    #[arg(long, global = true, help_heading = "Global options")]
    pub no_rate_limit: bool,
    /// Refused: a key secret on the command line would show in the shell history and process list.
    #[arg(
        long,
        global = true,
        hide = true,
        value_name = "SECRET",
        alias = "api-key-secret"
    )]
    pub key_secret: Option<String>,
    /// Refused: a token on the command line would show in the shell history and process list.
    #[arg(
        long,
        global = true,
        hide = true,
        value_name = "TOKEN",
        alias = "observability-token"
    )]
    pub token: Option<String>,
}

impl GlobalArgs {
    /// Refuses a secret given as a flag, naming where it belongs (and never showing it).
    pub fn refuse_secret_flags(&self) -> Result<(), crate::exit::Failure> {
        let refused = match (&self.key_secret, &self.token) {
            (Some(_), _) => Some(("--key-secret", "CLOUD_API_KEY_SECRET", "api_key_secret")),
            (None, Some(_)) => Some((
                "--token",
                "CLOUD_OBSERVABILITY_TOKEN",
                "observability_token",
            )),
            (None, None) => None,
        };
        match refused {
            Some((flag, variable, name)) => Err(crate::exit::Failure::usage(format!(
                "{flag} is not accepted: a secret on the command line shows in the shell history and \
                 the process list"
            ))
            .with_hint(format!(
                "set {variable}, or {name} in a profile of the config file"
            ))),
            None => Ok(()),
        }
    }
}

/// How results and errors are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum OutputFormat {
    /// Aligned tables and short lines, for people.
    Human,
    /// The API's domain values as JSON, for scripts.
    Json,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Start or stop the service
    Service {
        /// What to do with the service.
        #[command(subcommand)]
        command: ServiceCommand,
    },
    /// Create, read, delete and wait for data pipes
    Pipe {
        /// What to do with pipes.
        #[command(subcommand)]
        command: PipeCommand,
    },
    /// List reverse private endpoints and register private endpoints
    Endpoint {
        /// What to do with endpoints.
        #[command(subcommand)]
        command: EndpointCommand,
    },
    /// Read alerts (observability API)
    Alert {
        /// What to do with alerts.
        #[command(subcommand)]
        command: AlertCommand,
    },
    /// List dashboards (observability API)
    Dashboard {
        /// What to do with dashboards.
        #[command(subcommand)]
        command: DashboardCommand,
    },
    /// Show what it takes to bring the service to the pipes declared in a directory
    #[command(after_help = DECLARED_HELP)]
    Plan(PlanArgs),
    /// Bring the service to the pipes declared in a directory
    #[command(after_help = DECLARED_HELP)]
    Apply(ApplyArgs),
    /// Adopt an existing pipe into a directory's state, under the name its file declares
    Import(ImportArgs),
    /// Show or fix the state of a directory (what applies did)
    State {
        /// What to do with the state.
        #[command(subcommand)]
        command: StateCommand,
    },
    /// Print a shell completion script
    Completion {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Show the settings in use
    Config {
        /// What to show.
        #[command(subcommand)]
        command: ConfigCommand,
    },
}

/// `cloudctl service ...`
#[derive(Debug, Subcommand)]
pub(crate) enum ServiceCommand {
    /// Start the service (waits out a stop still under way with --wait)
    Start(ServiceWaitArgs),
    /// Stop the service
    Stop(ServiceWaitArgs),
}

/// Waiting options of a service command.
#[derive(Debug, Args)]
pub(crate) struct ServiceWaitArgs {
    /// Wait until the service is running (start) or stopped (stop)
    #[arg(long)]
    pub wait: bool,
    /// Give up waiting after this long (e.g. 90s, 5m)
    #[arg(long, value_name = "DURATION", requires = "wait", default_value = "10m", value_parser = parse_duration)]
    pub timeout: Duration,
}

/// `cloudctl pipe ...`
#[derive(Debug, Subcommand)]
pub(crate) enum PipeCommand {
    /// Create a pipe from a YAML or JSON file in the API's create shape
    #[command(after_help = PIPE_FILE_HELP)]
    Create(PipeCreateArgs),
    /// Show a pipe
    Get {
        /// The pipe id.
        #[arg(value_name = "PIPE_ID")]
        id: PipeId,
    },
    /// Show the settings of a pipe
    Settings {
        /// The pipe id.
        #[arg(value_name = "PIPE_ID")]
        id: PipeId,
    },
    /// Delete a pipe
    Delete(PipeDeleteArgs),
    /// Wait until a pipe reaches a state, a steady state, or is gone
    Wait(PipeWaitArgs),
    /// Print a pipe as its pipe file (YAML; secrets as {env: VARIABLE})
    Export {
        /// The pipe id.
        #[arg(value_name = "PIPE_ID")]
        id: PipeId,
    },
}

const DECLARED_HELP: &str = "\
DIR holds one pipe file per pipe (*.yaml, *.yml, *.json, as for `pipe create`) and optionally
service.yaml (`state: running` or `state: stopped`); files whose names start with a dot are never
read as pipe files. The state (DIR/.cloudctl-state.json unless --state or CLOUD_STATE names another
file or a shared store, redis://HOST or postgres://HOST/DB, for applies from many hosts) records each
pipe's id, its declaration and the form the server answered it in (secrets only as salted
fingerprints), and every create whose outcome is unknown: such a pending create blocks its name
(exit 7) until `cloudctl state resolve`. A change in a file is measured against the recorded
declaration, drift on the server against the recorded answer, so a server's own way of writing a
value is never a change. A replace deletes, creates and waits, --max-unavailable pipes at a time.
An apply holds its service's lock (in a shared store a lease, renewed while it works, taken over
--lease-ttl after its holder dies, and every write fenced by it); a second apply of the service at
the same time, from this directory, another or another host, is refused, not run. A shared store
that holds no state of the service is refused (exit 10), never read as empty: the first apply there
follows `cloudctl state init` (or `state push`). An apply whose lease may have lapsed (no renewal
confirmed within its TTL) sends nothing more (exit 11).
A pipe file may hold cloudctl's own `lifecycle: {protect: true, retainOnDelete: true}`, never sent:
protect refuses every apply that would delete the pipe (file removed, replace, recreate); retain
forgets the pipe from the state when its file is removed, without deleting it. `plan --out FILE`
writes the plan as a document (the same as `plan -o json`), bound to the state's generation, each
recorded pipe's answer and each file; `apply --plan FILE` applies exactly it or, when anything moved,
nothing (exit 14).
Exit 8: changes to make; 9: a pipe's answer is unreadable; 10: no state in the shared store;
11: the lease lost; 12: a protected pipe would be deleted; 13: more destructive actions than
--max-destructive; 14: a saved plan is stale; 130 or 143: stopped by SIGINT or SIGTERM (what was
done is recorded). Where several meet: 130/143, then 11, then 7, then the first error's own code,
then 9.";

/// The directory of declared pipes, and its state file.
#[derive(Debug, Args)]
pub(crate) struct DirArgs {
    /// The directory of pipe files
    #[arg(short = 'f', long = "files", value_name = "DIR")]
    pub dir: PathBuf,
    /// The state: a file, or a shared store's URL (redis://, rediss://, postgres://) for applies from many hosts;
    /// CLOUD_STATE when not given (a URL with a password belongs there) [default: DIR/.cloudctl-state.json]
    #[arg(long, value_name = "FILE|URL")]
    pub state: Option<String>,
    /// How long a shared store's lease outlives a holder that died (at least 1s; renewed every
    /// third of it while its apply works, each attempt bounded by a third of it)
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_lease_ttl)]
    pub lease_ttl: Duration,
}

/// `cloudctl plan`
#[derive(Debug, Args)]
pub(crate) struct PlanArgs {
    /// The directory and its state.
    #[command(flatten)]
    pub dir: DirArgs,
    /// Read the server (--refresh=false compares the files with the state alone, making no call: it
    /// cannot see a pipe gone, failed or changed on the server)
    #[arg(long, value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set)]
    pub refresh: bool,
    /// Plan only this pipe (repeatable); the service's declared state is still planned
    #[arg(long = "target", value_name = "NAME")]
    pub targets: Vec<String>,
    /// Also write the plan as a document to FILE (`apply --plan FILE` applies exactly it; `-o json`
    /// prints the same document)
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// `cloudctl apply`
#[derive(Debug, Args)]
pub(crate) struct ApplyArgs {
    /// The directory and its state.
    #[command(flatten)]
    pub dir: DirArgs,
    /// Apply only this pipe (repeatable); the service's declared state is still applied
    #[arg(long = "target", value_name = "NAME", conflicts_with = "plan")]
    pub targets: Vec<String>,
    /// Apply the plan saved by `plan --out FILE`, exactly: refused (exit 14), before any change,
    /// when the state, a pipe on the server, a file or the service moved since
    #[arg(long, value_name = "FILE")]
    pub plan: Option<PathBuf>,
    /// Refuse, before any call, an apply whose deletes, replaces and recreates together exceed N (exit 13)
    #[arg(long, value_name = "N")]
    pub max_destructive: Option<usize>,
    /// Apply without asking (required when standard input is not a terminal)
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// How many calls are in flight at once (creates, deletes, and reads of the pipes being waited for, in turn)
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub parallelism: u16,
    /// How many declared pipes may be down at once while they are replaced (one after another by default)
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub max_unavailable: u16,
    /// Give up each wait (service, a pipe to run, a pipe to go) after this long (e.g. 90s, 5m)
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = parse_duration)]
    pub timeout: Duration,
}

/// `cloudctl import`
#[derive(Debug, Args)]
pub(crate) struct ImportArgs {
    /// The directory and its state.
    #[command(flatten)]
    pub dir: DirArgs,
    /// The name a file of the directory declares the pipe under.
    #[arg(value_name = "NAME")]
    pub name: String,
    /// The existing pipe's id.
    #[arg(value_name = "PIPE_ID")]
    pub id: PipeId,
}

/// `cloudctl state ...`
#[derive(Debug, Subcommand)]
pub(crate) enum StateCommand {
    /// Set up the service's state in a shared store: its first apply there needs it (a store that
    /// holds no state is refused, never read as empty)
    Init(DirArgs),
    /// Show the state's lineage and serial, the recorded pipes and the pending creates
    #[command(visible_alias = "show")]
    List(DirArgs),
    /// Resolve a pending create: adopt the pipe it made (--id) or confirm it made none (--absent)
    Resolve(ResolveArgs),
    /// Show who holds the service's lease in a shared store; --force ends it (a holder known dead)
    Unlock {
        /// The directory and its state.
        #[command(flatten)]
        dir: DirArgs,
        /// End the lease whoever holds it; its holder, if alive, can no longer write the state
        /// and sends no new change once its own lease lapses
        #[arg(long)]
        force: bool,
    },
    /// Copy the state to another store or file (a file to a shared store, or back); refuses to
    /// overwrite a state that exists there
    Push {
        /// The directory and its state.
        #[command(flatten)]
        dir: DirArgs,
        /// Where to: a file, or a shared store's URL (CLOUD_STATE_TO when not given)
        #[arg(long, value_name = "FILE|URL")]
        to: Option<String>,
    },
    /// Forget a pipe (or a pending create) without touching the server
    Forget {
        /// The directory and its state.
        #[command(flatten)]
        dir: DirArgs,
        /// The pipe's name.
        #[arg(value_name = "NAME")]
        name: String,
    },
}

/// `cloudctl state resolve`
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("resolution").required(true).args(["id", "absent"])))]
pub(crate) struct ResolveArgs {
    /// The directory and its state.
    #[command(flatten)]
    pub dir: DirArgs,
    /// The pending create's name.
    #[arg(value_name = "NAME")]
    pub name: String,
    /// The pipe the create made (found in the console): it is recorded under NAME
    #[arg(long, value_name = "PIPE_ID")]
    pub id: Option<PipeId>,
    /// The create made nothing: NAME is free to be created again
    #[arg(long)]
    pub absent: bool,
}

const PIPE_FILE_HELP: &str = "\
The file uses the member names of the API's create request (name, source, destination, fieldMappings,
scaling, settings) and is checked with the SDK's rules before anything is sent; every problem is listed
with its path and line. A secret (password, secretKey, connectionString) can be read from the
environment instead of the file: `password: {env: KAFKA_PASSWORD}`.";

/// `cloudctl pipe create`
#[derive(Debug, Args)]
pub(crate) struct PipeCreateArgs {
    /// The pipe file (YAML or JSON; - reads standard input)
    #[arg(short, long, value_name = "FILE")]
    pub file: PathBuf,
    /// Wait until the pipe reaches STATE
    #[arg(long, value_name = "STATE", num_args = 0..=1, default_missing_value = "Running", value_parser = parse_pipe_state)]
    pub wait: Option<PipeState>,
    /// Give up waiting after this long (e.g. 90s, 5m)
    #[arg(long, value_name = "DURATION", requires = "wait", default_value = "10m", value_parser = parse_duration)]
    pub timeout: Duration,
    /// Check the file and print the request that would be sent (secrets redacted); send nothing
    #[arg(long, conflicts_with = "wait")]
    pub dry_run: bool,
}

/// `cloudctl pipe delete`
#[derive(Debug, Args)]
pub(crate) struct PipeDeleteArgs {
    /// The pipe id.
    #[arg(value_name = "PIPE_ID")]
    pub id: PipeId,
    /// Succeed when the pipe does not exist
    #[arg(long)]
    pub if_exists: bool,
    /// Wait until the pipe is gone
    #[arg(long)]
    pub wait: bool,
    /// Give up waiting after this long (e.g. 90s, 5m)
    #[arg(long, value_name = "DURATION", requires = "wait", default_value = "10m", value_parser = parse_duration)]
    pub timeout: Duration,
}

/// `cloudctl pipe wait`
#[derive(Debug, Args)]
pub(crate) struct PipeWaitArgs {
    /// The pipe id.
    #[arg(value_name = "PIPE_ID")]
    pub id: PipeId,
    /// Wait for this state (fails at once in Failed or InternalError)
    #[arg(long, value_name = "STATE", conflicts_with_all = ["steady", "gone"], value_parser = parse_pipe_state)]
    pub state: Option<PipeState>,
    /// Wait for a steady state: Running, Stopped, Paused or Completed (the default)
    #[arg(long, conflicts_with = "gone")]
    pub steady: bool,
    /// Wait until the pipe is gone (after a delete)
    #[arg(long)]
    pub gone: bool,
    /// Give up after this long (e.g. 90s, 5m)
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = parse_duration)]
    pub timeout: Duration,
}

/// `cloudctl endpoint ...`
#[derive(Debug, Subcommand)]
pub(crate) enum EndpointCommand {
    /// List the reverse private endpoints of the service
    List,
    /// Register a private endpoint on the service
    Register {
        /// The cloud provider's endpoint id, e.g. vpce-0123456789abcdef0
        #[arg(long, value_name = "ID")]
        id: String,
        /// What the endpoint is for
        #[arg(long, value_name = "TEXT")]
        description: String,
    },
}

/// `cloudctl alert ...`
#[derive(Debug, Subcommand)]
pub(crate) enum AlertCommand {
    /// Show an alert
    Get {
        /// The alert id (24 hexadecimal digits).
        #[arg(value_name = "ALERT_ID")]
        id: AlertId,
    },
}

/// `cloudctl dashboard ...`
#[derive(Debug, Subcommand)]
pub(crate) enum DashboardCommand {
    /// List the dashboards
    List,
}

/// `cloudctl config ...`
#[derive(Debug, Subcommand)]
pub(crate) enum ConfigCommand {
    /// Show each setting, where it came from, and the config file (secrets redacted)
    Show,
}

/// A pipe state by name. A known state is taken in any letter case (`running` is `Running`). The API
/// may add states, so another name is taken as written, unless it is one or two letters away from a
/// known state: that is a typo, refused with the state it resembles (a wait for it would only time out).
fn parse_pipe_state(text: &str) -> Result<PipeState, String> {
    let text = text.trim();
    if let Some(known) = PipeState::KNOWN
        .iter()
        .find(|known| known.eq_ignore_ascii_case(text))
    {
        return Ok(PipeState::from(*known));
    }
    let lower = text.to_ascii_lowercase();
    if let Some(near) = PipeState::KNOWN
        .iter()
        .find(|known| strsim::levenshtein(&known.to_ascii_lowercase(), &lower) <= 2)
    {
        return Err(format!(
            "{text:?} is not a pipe state; did you mean {near}? (known: {})",
            PipeState::KNOWN.join(", ")
        ));
    }
    if text.is_empty() || !text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(format!(
            "{text:?} is not a pipe state name; known: {}",
            PipeState::KNOWN.join(", ")
        ));
    }
    Ok(PipeState::from(text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn pipe_states_parse_in_any_case() {
        assert_eq!(parse_pipe_state("running"), Ok(PipeState::Running));
        assert_eq!(parse_pipe_state("Completed"), Ok(PipeState::Completed));
        assert_eq!(parse_pipe_state(" paused "), Ok(PipeState::Paused));
    }

    #[test]
    fn a_pipe_state_one_or_two_letters_off_is_a_typo() {
        let typo = parse_pipe_state("Runing").unwrap_err();
        assert!(typo.contains("did you mean Running?"), "{typo}");
        assert!(
            typo.contains("Provisioning"),
            "lists the known states: {typo}"
        );
        let typo = parse_pipe_state("stoped").unwrap_err();
        assert!(typo.contains("did you mean Stopped?"), "{typo}");
    }

    #[test]
    fn a_pipe_state_the_cli_does_not_know_is_waited_for_as_written() {
        let state = parse_pipe_state("Hibernating").expect("an open set of states");
        assert!(state.is_other());
        assert_eq!(state.as_str(), "Hibernating");
        assert!(parse_pipe_state("").is_err());
        assert!(parse_pipe_state("two words").is_err());
    }

    #[test]
    fn create_wait_takes_an_optional_state() {
        let cli =
            Cli::try_parse_from(["cloudctl", "pipe", "create", "-f", "p.yaml", "--wait"]).unwrap();
        let Command::Pipe {
            command: PipeCommand::Create(args),
        } = cli.command
        else {
            panic!("pipe create")
        };
        assert_eq!(args.wait, Some(PipeState::Running));
        let cli = Cli::try_parse_from([
            "cloudctl",
            "pipe",
            "create",
            "-f",
            "p.yaml",
            "--wait",
            "completed",
        ])
        .unwrap();
        let Command::Pipe {
            command: PipeCommand::Create(args),
        } = cli.command
        else {
            panic!("pipe create")
        };
        assert_eq!(args.wait, Some(PipeState::Completed));
        assert!(
            Cli::try_parse_from([
                "cloudctl",
                "pipe",
                "create",
                "-f",
                "p",
                "--wait",
                "--dry-run"
            ])
            .is_err()
        );
        assert!(
            Cli::try_parse_from([
                "cloudctl",
                "pipe",
                "wait",
                "0f9e8d7c-6b5a-4f3e-9d2c-1b0a9f8e7d6c",
                "--steady",
                "--gone"
            ])
            .is_err()
        );
        assert!(Cli::try_parse_from(["cloudctl", "service", "start", "--timeout", "5s"]).is_err());
        let id = "0f9e8d7c-6b5a-4f3e-9d2c-1b0a9f8e7d6c";
        for ok in [
            vec!["cloudctl", "pipe", "wait", id],
            vec!["cloudctl", "pipe", "wait", id, "--gone", "--timeout", "5s"],
            vec!["cloudctl", "pipe", "wait", id, "--state", "running"],
        ] {
            assert!(Cli::try_parse_from(&ok).is_ok(), "{ok:?}");
        }
        assert!(
            Cli::try_parse_from([
                "cloudctl", "pipe", "wait", id, "--state", "Running", "--gone"
            ])
            .is_err()
        );
    }
}
