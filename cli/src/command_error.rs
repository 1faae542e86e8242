//! How a command fails: the core's message (what happened), the hint this command line
//! adds (what to type next: the core names no command or flag), and an exit code that
//! tells usage errors (2) from failures and refusals (1).

use handoff_api::core_types::{CodedError, ErrorCode, Fix};

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

/// What to type to get past an error, for the step its `fix` names; the core names no
/// command or flag, so this command line words each step as its own commands.
fn hint_for(code: ErrorCode, fix: &Fix) -> Option<String> {
    // Check setup's lines: the one command, and where to check the rest.
    if code == ErrorCode::SetupIncomplete {
        return fix_command(fix)
            .map(|command| format!("`{command}`; `handoff doctor` checks everything a run needs"));
    }
    Some(match fix {
        Fix::SignIn => "sign in with `handoff auth login`".to_owned(),
        Fix::ConnectRepository { repo } => format!("connect it with `handoff repo add {repo}`"),
        Fix::RaiseQuota { repo } => format!(
            "raise it with `handoff repo set {repo} --quota N`, or lift it with --no-quota"
        ),
        Fix::RaiseMonthlyBudget { repo } => format!(
            "raise it with `handoff repo set {repo} --monthly-budget DOLLARS` (or `none`); \
             `handoff spend --repo {repo}` shows where it went"
        ),
        Fix::RunStagesOneAtATime { repo } => format!(
            "run the stages one at a time, lower `budget.run_usd`, or raise the budget with \
             `handoff repo set {repo} --monthly-budget DOLLARS` or `handoff config set budget.day_usd DOLLARS`"
        ),
        Fix::RaiseDayBudget => "raise it with `handoff config set budget.day_usd DOLLARS` (or \
             `none`); `handoff spend` shows where it went"
            .to_owned(),
        Fix::InstallNewerHandoff => "install the newer Handoff, or use another data folder \
             (--data-dir or HANDOFF_DATA_DIR)"
            .to_owned(),
        Fix::SetDamagedDatabaseAside => "move the file away or restore a backup, or use \
             another data folder (--data-dir)"
            .to_owned(),
        Fix::LookUpItems => "`handoff feedback list` shows the ids".to_owned(),
        Fix::TryAgainLater => "nothing was changed; try again once the other process is done \
             (the app and commands take turns on their own)"
            .to_owned(),
        Fix::LookUpRuns => "`handoff runs list` shows the ids".to_owned(),
        Fix::LookUpLessons => "`handoff lessons list OWNER/NAME` shows the ids".to_owned(),
        Fix::AcceptLesson { id } => format!("accept it first with `handoff lessons accept {id}`"),
        Fix::SyncPullRequests => "mirror the open PRs with `handoff sync`".to_owned(),
        Fix::ApproveFeedback { feedback_id } => format!(
            "read it (`handoff feedback show {feedback_id}`), then approve it with \
             `handoff feedback approve {feedback_id}`"
        ),
        Fix::ApproveCommentVersion { comment } => format!(
            "read that version (`handoff comment history OWNER/NAME PR {comment}`), then approve \
             it with `handoff comment approve OWNER/NAME PR {comment}`"
        ),
        Fix::ReplaceOwnerEdit { comment } => format!(
            "read your edit (`handoff comment history OWNER/NAME PR {comment}`); run again with \
             --force to replace it"
        ),
        Fix::RunAsCodeRun => "the code stage runs with `handoff run`".to_owned(),
        Fix::ReplaceLessonsFileEdits => {
            "read it on GitHub; `handoff lessons write OWNER/NAME --replace-edits` replaces it"
                .to_owned()
        }
        Fix::CorrectTheAgentFirst => "edit the agent's review, plan or results on a PR, or send \
             a follow-up on a feedback PR, then ask again"
            .to_owned(),
        Fix::ConfirmLocalBackend { repo } => format!(
            "run it in a sandbox (--backend docker or e2b), or choose local for the repository \
             with `handoff repo set {repo} --backend local --confirm-no-isolation`"
        ),
        Fix::UseASandbox => "run it in a sandbox: add --backend docker (or e2b), or set the \
             repository's backend with `handoff repo set OWNER/NAME --backend docker`"
            .to_owned(),
        Fix::ShowRun { run } => format!(
            "`handoff runs show {run}` shows how it ended; `handoff runs list --feedback ID` the \
             item's later runs"
        ),
        other => return fix_command(other).map(|command| format!("`{command}`")),
    })
}

impl From<CodedError> for CliError {
    /// An error of the core or the application API: its code decides usage error or
    /// failure, its fix the hint.
    fn from(error: CodedError) -> Self {
        let hint = match &error.fix {
            Some(fix) => hint_for(error.code, fix),
            None => hint_for_code(error.code),
        };
        CliError::coded(error.code, error.message, hint)
    }
}

/// What to type next for an error that names no step of its own.
fn hint_for_code(code: ErrorCode) -> Option<String> {
    match code {
        ErrorCode::NeedsClientId => Some(
            "name the OAuth app: `handoff auth login --device --client-id ID` (or set \
             HANDOFF_GITHUB_CLIENT_ID)"
                .to_owned(),
        ),
        _ => None,
    }
}

/// The command that carries out `fix`, when there is one.
pub fn fix_command(fix: &Fix) -> Option<String> {
    Some(match fix {
        Fix::SignIn => "handoff auth login".to_owned(),
        Fix::AddKey { provider } => format!("handoff secrets set {provider}"),
        Fix::AddE2bKey | Fix::ReplaceE2bKey => "handoff secrets set e2b".to_owned(),
        Fix::BuildImage { preset, .. } => format!("handoff agent-image build --preset {preset}"),
        Fix::BuildEnvironment { repo } => format!("handoff env build {repo}"),
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
        // Steps past an error: `hint_for` words them.
        _ => return None,
    })
}
