//! The command line's grammar: the top level (`Cli`, `Command`). Each command's own
//! arguments are beside its handler, in its `*_command.rs`; what several commands share
//! is in `shared_arguments.rs`.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::agent_image_command::AgentImageCommand;
use crate::auth_command::AuthCommand;
use crate::comment_command::CommentCommand;
use crate::config_command::ConfigCommand;
use crate::feedback_command::FeedbackCommand;
use crate::follow_up_command::FollowUpCommand;
use crate::log_command::LogArguments;
use crate::outbox_command::OutboxArguments;
use crate::pr_command::PrCommand;
use crate::qa_command::QaArguments;
use crate::repo_command::RepoCommand;
use crate::run_command::{IterateArguments, RunArguments};
use crate::runs_command::RunsCommand;
use crate::secrets_command::SecretsCommand;
use crate::shared_arguments::JsonFlag;
use crate::spend_command::SpendArguments;
use crate::sync_command::SyncArguments;

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

// Parsed once per process: the size of its largest variant costs nothing.
#[allow(clippy::large_enum_variant)]
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
    /// The run queue: every run waits there for a slot (`queue.slots` for the whole
    /// installation, `queue.slots.docker|e2b|local` per backend, `repo set --run-slots`
    /// per repository). List it, cancel a queued run, queue several items at once, or
    /// take over queued runs whose process stopped.
    #[command(subcommand)]
    Queue(crate::queue_command::QueueCommand),
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
    /// comment edits. Then runs Suggest lessons for each repository set to start it by
    /// itself whose new corrections reached its number; where a repository lets PRs
    /// update themselves, an Update PR for each new failing check (or says why not);
    /// and your `@handoff` comments on feedback issues and PRs (claimed, so that one
    /// installation takes each), their runs driven to the end and answered on GitHub.
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
    /// The agent's environment: what a repository's base branch says it is made of
    /// (a dev container, .handoff/setup.sh, or the agent image alone).
    Env(crate::env_command::EnvArguments),
    /// Show what runs cost in a month: per day, the top items, per model and per stage,
    /// against the repository's monthly budget.
    Spend(SpendArguments),
    /// Lessons drawn from your corrections (your edits of the agent's PR comments, your
    /// follow-ups on feedback PRs): suggest them, accept, edit, reject, turn off.
    /// Every later run of the repository carries the accepted ones.
    Lessons(crate::lessons_command::LessonsArguments),
    /// Show where the data lives and the schema version.
    Info(JsonFlag),
    /// Print the end of the log file (what the app and the command line did in the
    /// background, and what failed); with --follow, keep printing new lines.
    Log(LogArguments),
    /// The daemon: keep the run queue, the sync with GitHub, automatic updates, due
    /// lessons and `@handoff` commands going with no window open, until Ctrl-C or
    /// SIGTERM (which lets the runs
    /// under way end first). `--install` starts it at every login (systemd, Linux).
    Serve(crate::serve_command::ServeArguments),
    /// Whether a daemon serves this data folder and what it is doing, and the queue.
    Status(JsonFlag),
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
            Command::Queue(_) => "queue",
            Command::Secrets(_) => "secrets",
            Command::Config(_) => "config",
            Command::Auth(_) => "auth",
            Command::Comment(_) => "comment",
            Command::Sync(_) => "sync",
            Command::Outbox(_) => "outbox",
            Command::Pr(_) => "pr",
            Command::Doctor(_) => "doctor",
            Command::AgentImage(_) => "agent-image",
            Command::Env(_) => "env",
            Command::Spend(_) => "spend",
            Command::Lessons(_) => "lessons",
            Command::Info(_) => "info",
            Command::Log(_) => "log",
            Command::Serve(_) => "serve",
            Command::Status(_) => "status",
        }
    }
}
