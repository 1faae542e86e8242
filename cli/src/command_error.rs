//! How a command fails: the core's message (what happened), the hint this command line
//! adds (what to type next: the core names no command or flag), and an exit code that
//! tells usage errors (2) from failures and refusals (1).

use handoff::domain::budgets::BudgetRefusal;
use handoff::error_code::ErrorCode;
use handoff::github::GithubError;
use handoff::pipeline::PipelineError;
use handoff::setup_check::Fix;
use handoff::store::StoreError;

/// Exit code of a command that was understood but failed or was refused.
pub const EXIT_FAILURE: u8 = 1;
/// Exit code of a command line that can never work as written.
pub const EXIT_USAGE: u8 = 2;

#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The input can never be right: fix the command line.
    #[error("{0}")]
    Usage(String),
    /// The command failed or was refused.
    #[error("{0}")]
    Failure(String),
}

impl CliError {
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Usage(_) => EXIT_USAGE,
            CliError::Failure(_) => EXIT_FAILURE,
        }
    }
}

impl CliError {
    /// The core's `message` with this command line's `hint` under it, as usage error or
    /// failure by the error's `code`.
    fn coded(code: ErrorCode, message: String, hint: Option<String>) -> CliError {
        let text = match hint {
            Some(hint) => format!("{message}\nhint: {hint}"),
            None => message,
        };
        match code {
            ErrorCode::InvalidInput => CliError::Usage(text),
            _ => CliError::Failure(text),
        }
    }
}

/// What to type after a GitHub error.
fn github_hint(error: &GithubError) -> Option<String> {
    match error {
        GithubError::NotSignedIn { .. } => Some("sign in with `handoff auth login`".to_owned()),
        GithubError::Unauthorized { .. } => {
            Some("sign in again with `handoff auth login`".to_owned())
        }
        GithubError::Store(error) => store_hint(error),
        _ => None,
    }
}

/// What to type after a store error.
fn store_hint(error: &StoreError) -> Option<String> {
    match error {
        StoreError::RepoNotFound(repo) => Some(format!("connect it with `handoff repo add {repo}`")),
        StoreError::QuotaExhausted { repo, .. } => Some(format!(
            "raise it with `handoff repo set {repo} --quota N`, or lift it with --no-quota"
        )),
        StoreError::BudgetSpent(BudgetRefusal::RepoMonthSpent { repo, .. }) => Some(format!(
            "raise it with `handoff repo set {repo} --monthly-budget DOLLARS` (or `none`); \
             `handoff spend --repo {repo}` shows where it went"
        )),
        StoreError::BudgetSpent(BudgetRefusal::ChainNeedsMore { repo, .. }) => Some(format!(
            "run the stages one at a time, lower `budget.run_usd`, or raise the budget with \
             `handoff repo set {repo} --monthly-budget DOLLARS` or `handoff config set budget.day_usd DOLLARS`"
        )),
        StoreError::BudgetSpent(BudgetRefusal::DaySpent { .. }) => Some(
            "raise it with `handoff config set budget.day_usd DOLLARS` (or `none`); \
             `handoff spend` shows where it went"
                .to_owned(),
        ),
        StoreError::NewerVersion { .. } => Some(
            "install the newer Handoff, or use another data folder (--data-dir or HANDOFF_DATA_DIR)"
                .to_owned(),
        ),
        StoreError::Damaged { .. } => Some(
            "move the file away or restore a backup, or use another data folder (--data-dir)"
                .to_owned(),
        ),
        StoreError::FeedbackNotFound(_) => Some("`handoff feedback list` shows the ids".to_owned()),
        StoreError::Locked { .. } => Some(
            "nothing was changed; try again once the other process is done (the app and \
             commands take turns on their own)"
                .to_owned(),
        ),
        StoreError::RunNotFound(_) => Some("`handoff runs list` shows the ids".to_owned()),
        StoreError::LessonNotFound(_) => {
            Some("`handoff lessons list OWNER/NAME` shows the ids".to_owned())
        }
        StoreError::LessonNotAccepted { id, .. } => {
            Some(format!("accept it first with `handoff lessons accept {id}`"))
        }
        StoreError::PullRequestNotFound { .. } => {
            Some("mirror the open PRs with `handoff sync`".to_owned())
        }
        _ => None,
    }
}

/// What to type after a pipeline error.
fn pipeline_hint(error: &PipelineError) -> Option<String> {
    match error {
        PipelineError::Store(error) => store_hint(error),
        PipelineError::Github(error) => github_hint(error),
        PipelineError::FeedbackAwaitsApproval { feedback_id, .. } => Some(format!(
            "read it (`handoff feedback show {feedback_id}`), then approve it with \
             `handoff feedback approve {feedback_id}`"
        )),
        PipelineError::SetupIncomplete(line) => {
            line.fix.as_ref().and_then(fix_command).map(|command| {
                format!("`{command}`; `handoff doctor` checks everything a run needs")
            })
        }
        PipelineError::EditAwaitsApproval { kind, .. } => Some(format!(
            "read that version (`handoff comment history OWNER/NAME PR {kind}`), then approve \
             it with `handoff comment approve OWNER/NAME PR {kind}`"
        )),
        PipelineError::OwnerEdits { kind, .. } => Some(format!(
            "read your edit (`handoff comment history OWNER/NAME PR {kind}`); run again with \
             --force to replace it"
        )),
        PipelineError::NotAQaStage => Some("the code stage runs with `handoff run`".to_owned()),
        PipelineError::LessonsFileEdited { .. } => Some(
            "read it on GitHub; `handoff lessons write OWNER/NAME --replace-edits` replaces it"
                .to_owned(),
        ),
        PipelineError::NoNewCorrections { .. } => Some(
            "edit the agent's review, plan or results on a PR, or send a follow-up on a feedback PR, then ask again"
                .to_owned(),
        ),
        PipelineError::LocalNotConfirmed { repo } => Some(format!(
            "run it in a sandbox (--backend docker or e2b), or choose local for the repository \
             with `handoff repo set {repo} --backend local --confirm-no-isolation`"
        )),
        PipelineError::StrangersCodeNeedsSandbox { .. } => Some(
            "run it in a sandbox: add --backend docker (or e2b), or set the repository's \
             backend with `handoff repo set OWNER/NAME --backend docker`"
                .to_owned(),
        ),
        PipelineError::NotHeld { run, .. } => Some(format!(
            "`handoff runs show {run}` shows how it ended; `handoff runs list --feedback ID` the item's later runs"
        )),
        PipelineError::RepoDisconnected(repo) => {
            Some(format!("connect it again with `handoff repo add {repo}`"))
        }
        _ => None,
    }
}

impl From<GithubError> for CliError {
    fn from(error: GithubError) -> Self {
        let hint = github_hint(&error);
        CliError::coded(error.code(), error.to_string(), hint)
    }
}

impl From<PipelineError> for CliError {
    fn from(error: PipelineError) -> Self {
        let hint = pipeline_hint(&error);
        CliError::coded(error.code(), error.to_string(), hint)
    }
}

impl From<handoff::agent_image::AgentImageError> for CliError {
    fn from(error: handoff::agent_image::AgentImageError) -> Self {
        CliError::Failure(error.to_string())
    }
}

impl From<handoff::secrets::SecretError> for CliError {
    fn from(error: handoff::secrets::SecretError) -> Self {
        CliError::Failure(error.to_string())
    }
}

impl From<handoff::error_code::CodedError> for CliError {
    /// An error of the application API: its code decides usage error or failure.
    fn from(error: handoff::error_code::CodedError) -> Self {
        CliError::coded(error.code, error.message, None)
    }
}

impl From<StoreError> for CliError {
    fn from(error: StoreError) -> Self {
        let hint = store_hint(&error);
        CliError::coded(error.code(), error.to_string(), hint)
    }
}

/// The command that carries out `fix`, when there is one.
pub fn fix_command(fix: &Fix) -> Option<String> {
    Some(match fix {
        Fix::SignIn => "handoff auth login".to_owned(),
        Fix::AddKey { provider } => format!("handoff secrets set {provider}"),
        Fix::AddE2bKey | Fix::ReplaceE2bKey => "handoff secrets set e2b".to_owned(),
        Fix::BuildImage { preset, .. } => format!("handoff agent-image build --preset {preset}"),
        Fix::ChooseAnotherAgent { repo } => format!("handoff repo set {repo} --agent claude"),
        Fix::MakeAgentFork {
            repo,
            place: Some(place),
        } => format!("handoff repo fork {repo} --into {place}"),
        Fix::MakeAgentFork { repo, place: None } => {
            format!("handoff repo fork {repo} --into ORG_OR_ACCOUNT")
        }
        Fix::GetWriteAccess { .. }
        | Fix::GrantTokenPermission { .. }
        | Fix::TurnOnIssues { .. }
        | Fix::StartKeyring
        | Fix::UseHttpsForE2b
        | Fix::UseHttpsForProvider { .. }
        | Fix::StartDocker
        | Fix::LoadImage { .. }
        | Fix::FreeDisk { .. }
        | Fix::InstallEgressGate => return None,
    })
}
