//! The command line's grammar and help texts.

use std::path::PathBuf;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand};

use handoff::domain::{
    CheckStatus, CommentKind, FeedbackStatus, NetworkMode, RepoName, SandboxBackend, Stage,
};
use handoff::store::SettingKey;

const AFTER_HELP: &str = "\
Data lives in the OS's app-data folder (~/.local/share/handoff on Linux); set
HANDOFF_DATA_DIR or pass --data-dir to use another folder. The desktop app reads the
same folder.

Exit codes: 0 success; 1 failed or refused (unknown id, MERGED item, quota used up);
2 usage error (unknown option, bad repository name, empty text).

Examples:
  handoff repo add octocat/hello-world --base main --quota 30
  handoff feedback add --repo octocat/hello-world \"The signup button is too small\"
  handoff feedback list --status waiting-for-review --json
  handoff followup add 12 -m \"Make it blue, not green\"";

/// Handoff turns feedback into pull requests with an AI agent in a sandbox, and keeps
/// a local mirror of feedback, follow-ups and runs.
#[derive(Debug, Parser)]
#[command(name = "handoff", version, about, long_about = None, after_help = AFTER_HELP)]
pub struct Cli {
    /// The data folder (default: $HANDOFF_DATA_DIR, else the OS's app-data folder).
    #[arg(long, global = true, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Connect GitHub repositories and change their settings.
    #[command(subcommand)]
    Repo(RepoCommand),
    /// Add, list and show feedback items.
    #[command(subcommand)]
    Feedback(FeedbackCommand),
    /// Add follow-up messages to a feedback item's thread.
    #[command(subcommand)]
    Followup(FollowUpCommand),
    /// Run the agent on a feedback item: the first run opens its PR, later runs add
    /// commits to the same PR. Prints the run's log as it goes; Ctrl-C cancels.
    Run(RunArguments),
    /// "Update PR": send follow-up instructions and run the agent again on the same
    /// branch and PR (refused while CODING and when MERGED).
    Iterate(IterateArguments),
    /// The QA stages on a PR: review, plan, test, fix, or auto (all four in a row).
    /// Each stage owns one comment on the PR; the next stage reads it as it is on GitHub
    /// now, with your corrections.
    Qa(QaArguments),
    /// List, show, follow and cancel agent runs.
    #[command(subcommand)]
    Runs(RunsCommand),
    /// Keep API keys (E2B, the agents' providers) in the OS keyring.
    #[command(subcommand)]
    Secrets(SecretsCommand),
    /// Read and change this installation's settings (E2B address, Docker image, …).
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Sign in to GitHub (token in the OS keyring), check or forget the sign-in.
    #[command(subcommand)]
    Auth(AuthCommand),
    /// Read, edit, compare the managed PR comments (review, plan, results, follow-ups).
    #[command(subcommand)]
    Comment(CommentCommand),
    /// Mirror GitHub: labelled issues, visitor comments, open PRs and their checks,
    /// feedback PRs' states, reviews and failing checks (as follow-up candidates),
    /// comment edits.
    Sync(SyncArguments),
    /// GitHub writes waiting to be sent (edits made offline), and their errors.
    Outbox(OutboxArguments),
    /// Open pull requests of connected repositories, and one PR's QA stages.
    #[command(subcommand)]
    Pr(PrCommand),
    /// Check everything a run needs: the keyring, the sign-in and each repository's
    /// access, the Docker engine and its agent images, the agents' keys, E2B, free disk.
    /// One line each, with how to fix it; exits 1 when a check fails.
    Doctor(JsonFlag),
    /// The Docker images agents run in: build one from the recipe Handoff carries.
    #[command(subcommand)]
    AgentImage(AgentImageCommand),
    /// Show where the data lives and the schema version.
    Info(JsonFlag),
    /// Print the end of the log file (what the app and the command line did in the
    /// background, and what failed); with --follow, keep printing new lines.
    Log(LogArguments),
}

impl Command {
    /// The command's name, as the log records it.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Repo(_) => "repo",
            Command::Feedback(_) => "feedback",
            Command::Followup(_) => "followup",
            Command::Run(_) => "run",
            Command::Iterate(_) => "iterate",
            Command::Qa(_) => "qa",
            Command::Runs(_) => "runs",
            Command::Secrets(_) => "secrets",
            Command::Config(_) => "config",
            Command::Auth(_) => "auth",
            Command::Comment(_) => "comment",
            Command::Sync(_) => "sync",
            Command::Outbox(_) => "outbox",
            Command::Pr(_) => "pr",
            Command::Doctor(_) => "doctor",
            Command::AgentImage(_) => "agent-image",
            Command::Info(_) => "info",
            Command::Log(_) => "log",
        }
    }
}

#[derive(Debug, Args)]
pub struct LogArguments {
    /// How many of the last lines to print.
    #[arg(long, short = 'n', value_name = "N", default_value_t = 100)]
    pub lines: usize,
    /// Keep printing lines as they are written, until Ctrl-C.
    #[arg(long, short = 'f')]
    pub follow: bool,
    /// Print the log folder's path and nothing else.
    #[arg(long, conflicts_with_all = ["follow", "lines"])]
    pub path: bool,
}

#[derive(Debug, Subcommand)]
pub enum AgentImageCommand {
    /// Build the image an agent preset runs in through the Docker engine: git, a
    /// non-root user and the agent's command line at a pinned version. The image is
    /// labelled with the recipe's hash, so Check setup (`handoff doctor`) knows when a
    /// newer Handoff brings a newer recipe.
    Build {
        /// The recipe: an agent preset, or base (git only, for custom commands)
        /// [default: the recipes the connected repositories use].
        #[arg(long, value_parser = image_presets())]
        preset: Option<String>,
        /// The image to start from [default: the preset's: node:22-bookworm-slim,
        /// python:3.12-slim-bookworm for aider, debian:bookworm-slim for base].
        #[arg(long, value_name = "IMAGE")]
        base: Option<String>,
        /// Install this program as the agent's command instead of its package (for a
        /// machine with no package registry; Handoff's tests use it).
        #[arg(long, value_name = "FILE")]
        agent_from: Option<PathBuf>,
        /// The image's name [default: handoff-agent:<preset>].
        #[arg(long, value_name = "NAME:TAG")]
        tag: Option<String>,
    },
    /// Each recipe's image and whether it is on the engine and current.
    List(JsonFlag),
}

#[derive(Debug, Subcommand)]
pub enum AuthCommand {
    /// Sign in with a token (pasted, or from stdin with --with-token) or the device flow.
    ///
    /// The token is checked with GitHub first and then kept in the OS keyring only.
    Login {
        /// Read the token from standard input (for scripts).
        #[arg(long, conflicts_with = "device")]
        with_token: bool,
        /// Sign in in the browser with GitHub's device flow (needs an OAuth app's client id).
        #[arg(long)]
        device: bool,
        /// The OAuth app's client id for --device [default: the saved one].
        #[arg(long, value_name = "ID", env = "HANDOFF_GITHUB_CLIENT_ID")]
        client_id: Option<String>,
        /// The REST API base, for GitHub Enterprise (https://HOST/api/v3) [default: https://api.github.com].
        /// The web and git address follows from it (https://HOST); the token never goes
        /// anywhere else, and only over https.
        #[arg(long, value_name = "URL")]
        api_base: Option<String>,
    },
    /// Who is signed in where; asks GitHub whether the token still works.
    Status {
        /// Do not ask GitHub; only say what is stored.
        #[arg(long)]
        offline: bool,
        #[command(flatten)]
        output: JsonFlag,
    },
    /// Remove the token from the OS keyring.
    Logout,
}

/// Which managed comment: repository, PR number, kind.
#[derive(Debug, Args)]
pub struct CommentAddress {
    /// The repository (owner/name).
    #[arg(value_parser = parse_repo_name)]
    pub repo: RepoName,
    /// The pull request number.
    pub pr: u64,
    /// Which comment.
    #[arg(value_parser = words_of!(CommentKind))]
    pub kind: CommentKind,
}

#[derive(Debug, Subcommand)]
pub enum CommentCommand {
    /// Show the comment's content as the next stage reads it (from GitHub when signed in).
    Show {
        #[command(flatten)]
        address: CommentAddress,
        /// Show the whole body with its marker, header and time line.
        #[arg(long)]
        raw: bool,
        #[command(flatten)]
        output: JsonFlag,
    },
    /// Edit the content in $EDITOR (or take it from --file) and save it to GitHub.
    ///
    /// The edit is based on the version you saw; if the comment changed on GitHub since,
    /// nothing is overwritten: you see both and choose with `handoff comment resolve`.
    /// Offline, the edit waits in the outbox.
    Edit {
        #[command(flatten)]
        address: CommentAddress,
        /// Take the new content from this file ("-" for stdin) instead of opening $EDITOR.
        #[arg(long, value_name = "PATH")]
        file: Option<PathBuf>,
    },
    /// Every version: the agent's originals, each edit, by whom, when.
    History {
        #[command(flatten)]
        address: CommentAddress,
        #[command(flatten)]
        output: JsonFlag,
    },
    /// Compare two versions [default: the previous one with the newest].
    Diff {
        #[command(flatten)]
        address: CommentAddress,
        /// The older version's number (see `history`).
        from: Option<u32>,
        /// The newer version's number.
        to: Option<u32>,
    },
    /// Let a version someone else edited on GitHub into the next stage's prompt.
    ///
    /// A review or plan last edited on GitHub by anyone but you reaches no prompt until
    /// you approve that version (read it first with `history` or `show`).
    Approve {
        #[command(flatten)]
        address: CommentAddress,
        /// The version to approve [default: the newest].
        #[arg(long, value_name = "N")]
        version: Option<u32>,
    },
    /// Settle a conflict between your edit and an edit made on GitHub.
    Resolve {
        #[command(flatten)]
        address: CommentAddress,
        /// Put your text on GitHub (GitHub's stays in the history).
        #[arg(
            long,
            conflicts_with = "take_github",
            required_unless_present = "take_github"
        )]
        keep_mine: bool,
        /// Keep GitHub's text and drop your edit from the outbox (it stays in the history).
        #[arg(long)]
        take_github: bool,
    },
}

#[derive(Debug, Args)]
pub struct SyncArguments {
    /// Only this repository.
    #[arg(long, value_parser = parse_repo_name)]
    pub repo: Option<RepoName>,
    #[command(flatten)]
    pub output: JsonFlag,
}

#[derive(Debug, Args)]
pub struct OutboxArguments {
    #[command(subcommand)]
    pub action: Option<OutboxAction>,
    #[command(flatten)]
    pub output: JsonFlag,
}

#[derive(Debug, Subcommand)]
pub enum OutboxAction {
    /// Send pending writes now, without waiting for their backoff: every one, or only
    /// entry ID (and the earlier edits of its comment first). One GitHub refused is
    /// tried again.
    Send {
        /// The entry's id (the first column of `handoff outbox`).
        id: Option<i64>,
    },
    /// Never send entry ID: it leaves the outbox, and its text stays in the comment's
    /// history.
    Discard {
        /// The entry's id.
        id: i64,
    },
}

#[derive(Debug, Subcommand)]
pub enum PrCommand {
    /// Every open PR as the last sync mirrored it: author, branch, checks, the feedback
    /// item it was opened for.
    List {
        /// Only this repository's PRs.
        #[arg(long, value_parser = parse_repo_name)]
        repo: Option<RepoName>,
        /// Only PRs whose number, title, branch or author match all these words.
        #[arg(long, value_name = "WORDS")]
        search: Option<String>,
        /// Only PRs whose checks stand so.
        #[arg(long, value_name = "STATUS", value_parser = words_of!(CheckStatus))]
        checks: Option<CheckStatus>,
        #[command(flatten)]
        output: JsonFlag,
    },
    /// One PR's QA stages: each one's state (not run, running, done, failed, edited by
    /// you, out of date), its last run and what it noted, and the latest test results.
    Show {
        /// The repository, as OWNER/NAME.
        #[arg(value_parser = parse_repo_name)]
        repo: RepoName,
        /// The PR's number.
        pr: u64,
        #[command(flatten)]
        output: JsonFlag,
    },
}

#[derive(Debug, Args)]
pub struct RunOptions {
    /// Where the agent runs [default: the repository's backend].
    #[arg(long, value_name = "BACKEND", value_parser = words_of!(SandboxBackend))]
    pub backend: Option<SandboxBackend>,
    /// Wall-clock limit of this run in minutes [default: the repository's].
    #[arg(long, value_name = "MINUTES")]
    pub timeout_minutes: Option<u64>,
    /// Print no log while the run goes on, only how it ended.
    #[arg(long)]
    pub quiet: bool,
    /// Print how the run ended as JSON (implies --quiet).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct RunArguments {
    /// The feedback id.
    pub feedback: i64,
    /// New instructions to send with the run (stored as a follow-up).
    #[arg(short = 'm', long = "message")]
    pub message: Option<String>,
    #[command(flatten)]
    pub options: RunOptions,
}

#[derive(Debug, Args)]
pub struct IterateArguments {
    /// The feedback id.
    pub feedback: i64,
    /// What to change ("-" reads standard input).
    #[arg(
        short = 'm',
        long = "message",
        conflicts_with = "file",
        required_unless_present = "file"
    )]
    pub message: Option<String>,
    /// Read the instructions from a file.
    #[arg(long, value_name = "PATH")]
    pub file: Option<PathBuf>,
    #[command(flatten)]
    pub options: RunOptions,
}

#[derive(Debug, Args)]
pub struct QaArguments {
    /// The stage to run.
    #[arg(value_parser = qa_stages())]
    pub stage: Stage,
    /// The repository (owner/name).
    #[arg(value_parser = parse_repo_name)]
    pub repo: RepoName,
    /// The pull request number.
    pub pr: u64,
    /// Run even though the stage's comment carries your edits (they stay in the history).
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub options: RunOptions,
}

#[derive(Debug, Subcommand)]
pub enum SecretsCommand {
    /// Store a secret from standard input or a hidden prompt: e2b, anthropic, openai,
    /// or another provider's name.
    Set {
        /// Which secret.
        name: String,
    },
    /// Remove a stored secret.
    Delete { name: String },
    /// Which of the usual secrets are stored (never their values).
    List,
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Show every setting (or one).
    Get {
        /// The setting.
        #[arg(value_parser = setting_names())]
        key: Option<String>,
    },
    /// Change a setting (log.level: error, warn, info, debug or trace).
    Set {
        /// The setting.
        #[arg(value_parser = setting_names())]
        key: String,
        /// Its new value.
        value: String,
    },
    /// Go back to a setting's default.
    Unset {
        /// The setting.
        #[arg(value_parser = setting_names())]
        key: String,
    },
}

#[derive(Debug, Args)]
pub struct JsonFlag {
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum RepoCommand {
    /// Connect a repository (owner/name or its GitHub URL).
    Add {
        /// The repository: owner/name, https://github.com/owner/name or git@github.com:owner/name.git.
        #[arg(value_parser = parse_repo_name)]
        repo: RepoName,
        #[command(flatten)]
        settings: RepoSettingsArguments,
    },
    /// List connected repositories.
    List(JsonFlag),
    /// Show one repository's settings and the quota left this month.
    Show {
        #[arg(value_parser = parse_repo_name)]
        repo: RepoName,
        #[command(flatten)]
        output: JsonFlag,
    },
    /// Show, replace or reset the prompt template of a QA stage for a repository.
    Prompt {
        #[arg(value_parser = parse_repo_name)]
        repo: RepoName,
        /// The stage whose prompt it is.
        #[arg(value_parser = prompt_stages())]
        stage: Stage,
        /// Replace the template with this file's text (placeholders: {{pr_number}},
        /// {{pr_title}}, {{branch}}, {{base}}, {{review}}, {{plan}}, {{failures}},
        /// {{instructions}}).
        #[arg(long, value_name = "PATH", conflicts_with = "reset")]
        file: Option<PathBuf>,
        /// Go back to the built-in template.
        #[arg(long)]
        reset: bool,
    },
    /// Change a repository's settings.
    Set {
        #[arg(value_parser = parse_repo_name)]
        repo: RepoName,
        #[command(flatten)]
        settings: RepoSettingsArguments,
    },
    /// Disconnect a repository: syncs and runs leave it alone; its feedback, runs and
    /// comments stay here. `repo add` connects it again as it was.
    Disconnect {
        #[arg(value_parser = parse_repo_name)]
        repo: RepoName,
    },
}

#[derive(Debug, Args, Default)]
pub struct RepoSettingsArguments {
    /// The branch PRs target and first runs start from [default: main].
    #[arg(long, value_name = "BRANCH")]
    pub base: Option<String>,
    /// The label that makes an issue a feedback item [default: feedback].
    #[arg(long, value_name = "LABEL")]
    pub label: Option<String>,
    /// Runs allowed per calendar month [default: 50].
    #[arg(long, value_name = "N", conflicts_with = "no_quota")]
    pub quota: Option<u32>,
    /// No monthly limit on runs.
    #[arg(long)]
    pub no_quota: bool,
    /// Instructions the agent gets on every run of this repository.
    #[arg(long, value_name = "TEXT", conflicts_with = "instructions_file")]
    pub instructions: Option<String>,
    /// Read the custom instructions from a file.
    #[arg(long, value_name = "PATH")]
    pub instructions_file: Option<PathBuf>,
    /// Where the agent runs [default: docker].
    #[arg(long, value_name = "BACKEND", value_parser = words_of!(SandboxBackend))]
    pub backend: Option<SandboxBackend>,
    /// The agent preset [default: opencode].
    #[arg(long, value_name = "PRESET", value_parser = agent_presets())]
    pub agent: Option<String>,
    /// The command of the `custom` agent preset, run in the working copy with sh -c
    /// ("" to clear). $HANDOFF_PROMPT_FILE holds the prompt.
    #[arg(long, value_name = "COMMAND")]
    pub agent_command: Option<String>,
    /// The Docker image runs use ("" for the default, handoff-agent:latest).
    #[arg(long, value_name = "IMAGE")]
    pub docker_image: Option<String>,
    /// The E2B template runs use ("" for E2B's base template).
    #[arg(long, value_name = "TEMPLATE")]
    pub e2b_template: Option<String>,
    /// Wall-clock limit of one run, in minutes [default: 30].
    #[arg(long, value_name = "MINUTES")]
    pub timeout_minutes: Option<u32>,
    /// What the sandbox may reach: nothing, the agent provider's API and the allowed
    /// hosts only, or any public address (both through the repository's egress gate,
    /// never this machine or its networks) [default: allowlist].
    #[arg(long, value_name = "MODE", value_parser = words_of!(NetworkMode))]
    pub network: Option<NetworkMode>,
    /// The hosts the sandbox may reach besides the agent provider's API, for example
    /// package registries: `host`, `host:port`, `*.domain` or an address of your own
    /// network (`192.168.1.20:8080`: reached only when named itself), separated by
    /// commas or spaces ("" for none). Replaces the list.
    #[arg(long, value_name = "HOSTS")]
    pub allowed_hosts: Option<String>,
    /// Whether the PRs Handoff opens are drafts, so that neither people nor CI take the
    /// agent's work as ready [default: true].
    #[arg(long, value_name = "BOOL", action = clap::ArgAction::Set)]
    pub draft_prs: Option<bool>,
    /// Push agent branches to this fork you control (OWNER/NAME) and open their PRs from
    /// it, so that CI treats them as a fork's: no secrets, and workflows wait for
    /// approval where the repository asks for it ("" for the repository itself).
    #[arg(long, value_name = "FORK")]
    pub push_fork: Option<String>,
    /// Confirms choosing the local backend, which runs the agent as you with no
    /// isolation (your files, keyring and network in its reach).
    #[arg(long)]
    pub confirm_no_isolation: bool,
}

#[derive(Debug, Subcommand)]
pub enum FeedbackCommand {
    /// Add a feedback item (status NEW). The body is the argument, --file, or stdin with "-".
    Add {
        /// The repository the feedback is for.
        #[arg(long, value_parser = parse_repo_name)]
        repo: RepoName,
        /// A short title [default: the body's first line].
        #[arg(long)]
        title: Option<String>,
        /// What should change. "-" reads standard input.
        #[arg(conflicts_with = "file", required_unless_present = "file")]
        body: Option<String>,
        /// Read the body from a file.
        #[arg(long, value_name = "PATH")]
        file: Option<PathBuf>,
        #[command(flatten)]
        output: JsonFlag,
    },
    /// List feedback items grouped by status, as the dashboard shows them.
    List {
        /// Only this repository's items.
        #[arg(long, value_parser = parse_repo_name)]
        repo: Option<RepoName>,
        /// Only items in this status.
        #[arg(long, value_parser = feedback_statuses(), ignore_case = true)]
        status: Option<FeedbackStatus>,
        /// Only items whose title, body, branch, repository or PR number match.
        #[arg(long, value_name = "WORDS")]
        search: Option<String>,
        #[command(flatten)]
        output: JsonFlag,
    },
    /// Show one item with its status history, follow-up thread and runs.
    Show {
        /// The feedback id (the number in the first column of `handoff feedback list`).
        id: i64,
        #[command(flatten)]
        output: JsonFlag,
    },
    /// Let the agent run on an item someone else opened on GitHub.
    ///
    /// An issue opened by anyone but you is untrusted text: the agent does not run on it
    /// until you approve it, and even then it reaches the prompt and the PR fenced and
    /// marked as untrusted.
    Approve {
        /// The feedback id.
        id: i64,
    },
}

#[derive(Debug, Subcommand)]
pub enum FollowUpCommand {
    /// Append the owner's message to a feedback item's thread (refused when MERGED).
    ///
    /// The next run of the item (`Update PR`) includes it in the agent's prompt.
    Add {
        /// The feedback id.
        feedback: i64,
        /// The message. "-" reads standard input.
        #[arg(
            short = 'm',
            long = "message",
            conflicts_with = "file",
            required_unless_present = "file"
        )]
        message: Option<String>,
        /// Read the message from a file.
        #[arg(long, value_name = "PATH")]
        file: Option<PathBuf>,
        #[command(flatten)]
        output: JsonFlag,
    },
    /// Let a visitor's follow-up, or a candidate taken from the PR (a review, an inline
    /// comment, a failing check), into the next run's prompt. Anyone's text but yours is
    /// marked there as untrusted.
    Include {
        /// The follow-up's id (the first column of `handoff followup list`).
        follow_up: i64,
    },
    /// List a feedback item's thread in order.
    List {
        /// The feedback id.
        feedback: i64,
        #[command(flatten)]
        output: JsonFlag,
    },
}

#[derive(Debug, Subcommand)]
pub enum RunsCommand {
    /// Print a run's log; with --follow, keep printing until the run ends.
    Logs {
        /// The run id.
        run: i64,
        #[arg(long, short = 'f')]
        follow: bool,
    },
    /// Cancel an active run: its sandbox is stopped and the run marked cancelled.
    Cancel {
        /// The run id.
        run: i64,
    },
    /// Show one run: stage, backend, times, result, notes, and (with --output) its output.
    Show {
        /// The run id.
        run: i64,
        /// Print the stage's full output (the whole text, even where GitHub got it cut).
        #[arg(long)]
        output: bool,
        #[command(flatten)]
        format: JsonFlag,
    },
    /// Show what a held run would push: a run of an item a visitor opened whose commits
    /// change CI entry points waits for your approval before anything is pushed.
    Held {
        /// The run id.
        run: i64,
        #[command(flatten)]
        output: JsonFlag,
    },
    /// Push a held run's commits after you read them (`handoff runs held RUN`): exactly
    /// the commits ending at END_SHA, never forced; then open or update the PR.
    ApprovePush {
        /// The run id.
        run: i64,
        /// The last commit `handoff runs held RUN` showed, so that only what you read is
        /// pushed.
        #[arg(long, value_name = "SHA")]
        end: String,
    },
    /// List runs, newest first.
    List {
        /// Only the runs of this feedback id.
        #[arg(long, value_name = "ID")]
        feedback: Option<i64>,
        /// Only queued and running runs.
        #[arg(long)]
        active: bool,
        /// At most this many runs.
        #[arg(long, value_name = "N")]
        limit: Option<u32>,
        #[command(flatten)]
        output: JsonFlag,
    },
}

fn parse_repo_name(text: &str) -> Result<RepoName, String> {
    text.parse::<RepoName>().map_err(|error| error.to_string())
}

/// A value parser for an enum of the core with fixed words: `--help` lists the words, and
/// a wrong value is answered with them.
macro_rules! words_of {
    ($kind:ty) => {
        PossibleValuesParser::new(<$kind>::ALL.iter().map(|value| value.as_str())).map(|word| {
            word.parse::<$kind>()
                .expect("clap lets only the listed words through")
        })
    };
}
use words_of;

/// The statuses as typed (`waiting-for-review`), with the stored words as aliases.
fn feedback_statuses() -> impl TypedValueParser<Value = FeedbackStatus> {
    const TYPED: [&str; 5] = ["new", "coding", "waiting-for-review", "failed", "merged"];
    let values = FeedbackStatus::ALL
        .iter()
        .zip(TYPED)
        .map(|(status, typed)| PossibleValue::new(typed).alias(status.as_str()));
    PossibleValuesParser::new(values).map(|word| {
        word.parse::<FeedbackStatus>()
            .expect("clap lets only the listed statuses through")
    })
}

/// The QA stages, with `auto` (all four in a row) also spelled `full-auto`.
fn qa_stages() -> impl TypedValueParser<Value = Stage> {
    PossibleValuesParser::new([
        PossibleValue::new("review"),
        PossibleValue::new("plan"),
        PossibleValue::new("test"),
        PossibleValue::new("fix"),
        PossibleValue::new("auto")
            .alias("full-auto")
            .help("review, plan, test and fix without pausing"),
    ])
    .map(|word| match word.as_str() {
        "review" => Stage::Review,
        "plan" => Stage::Plan,
        "test" => Stage::Test,
        "fix" => Stage::Fix,
        _ => Stage::FullAuto,
    })
}

/// The stages that have a prompt template of their own.
fn prompt_stages() -> impl TypedValueParser<Value = Stage> {
    PossibleValuesParser::new(["review", "plan", "test", "fix"]).map(|word| match word.as_str() {
        "review" => Stage::Review,
        "plan" => Stage::Plan,
        "test" => Stage::Test,
        _ => Stage::Fix,
    })
}

/// The agent presets, and `custom` (a command of the repository's own).
fn agent_presets() -> PossibleValuesParser {
    PossibleValuesParser::new(
        handoff::pipeline::agent_presets::PRESETS
            .iter()
            .map(|preset| preset.name)
            .chain(["custom"]),
    )
}

/// The recipes an agent image can be built from.
fn image_presets() -> PossibleValuesParser {
    PossibleValuesParser::new(handoff::agent_image::image_presets())
}

/// The settings a person may change here (the others are kept by other commands).
pub const EDITABLE_SETTINGS: &[SettingKey] = &[
    SettingKey::GithubApiBase,
    SettingKey::GithubDeviceClientId,
    SettingKey::AgentGitName,
    SettingKey::AgentGitEmail,
    SettingKey::DockerDefaultImage,
    SettingKey::E2bApiBase,
    SettingKey::E2bEnvdUrl,
    SettingKey::AgentImageBase,
    SettingKey::AgentImageStandIn,
    SettingKey::AnthropicApiBase,
    SettingKey::OpenaiApiBase,
    SettingKey::LogLevel,
    SettingKey::KeptCopyDays,
];

/// The settings `handoff config` reads and changes.
fn setting_names() -> PossibleValuesParser {
    PossibleValuesParser::new(EDITABLE_SETTINGS.iter().map(|key| key.as_str()))
}
