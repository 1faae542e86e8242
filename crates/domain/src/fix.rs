//! What gets the owner past a problem: a line of Check setup that is not ok, or an error
//! a step of theirs can get past. It is a word, not text: the command line turns it into
//! a command to type, the window into a button, each keyed on the variant.

use serde::Serialize;

/// What fixes it: a check of Check setup that is not ok, or an error that a step of the
/// owner's can get past. The front ends turn it into their own button or command (the
/// core names no command and no button); [`std::fmt::Display`] says it in one sentence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Fix {
    /// Connect `repo` (again).
    ConnectRepository {
        repo: String,
    },
    /// Raise (or lift) `repo`'s monthly run quota.
    RaiseQuota {
        repo: String,
    },
    /// Raise (or lift) `repo`'s monthly budget.
    RaiseMonthlyBudget {
        repo: String,
    },
    /// Raise (or lift) the installation's budget of a day.
    RaiseDayBudget,
    /// A full-auto chain cannot hold back its stages' budgets: run them one at a time,
    /// lower the run budget, or raise the month's or the day's.
    RunStagesOneAtATime {
        repo: String,
    },
    /// The database is from a newer Handoff.
    InstallNewerHandoff,
    /// The database file is damaged: move it away or restore a backup.
    SetDamagedDatabaseAside,
    /// Another process holds the database: try again once it is done.
    TryAgainLater,
    /// The item, run or lesson named is not there: look at the list.
    LookUpItems,
    LookUpRuns,
    LookUpLessons,
    /// Accept lesson `id` first.
    AcceptLesson {
        id: i64,
    },
    /// Mirror the open PRs again.
    SyncPullRequests,
    /// Read the visitor's item, then approve it.
    ApproveFeedback {
        feedback_id: i64,
    },
    /// Read someone else's edit of a comment, then approve that version.
    ApproveCommentVersion {
        comment: String,
    },
    /// The owner's edit would be replaced: read it, then run again on purpose.
    ReplaceOwnerEdit {
        comment: String,
    },
    /// The code stage runs as a code run, not a QA stage.
    RunAsCodeRun,
    /// The lessons section was edited on GitHub: read it, then replace it on purpose.
    ReplaceLessonsFileEdits,
    /// There is nothing new to learn from: correct the agent first.
    CorrectTheAgentFirst,
    /// Choose the local backend for `repo` on purpose, or run in a sandbox.
    ConfirmLocalBackend {
        repo: String,
    },
    /// Run someone else's code in a sandbox (Docker or E2B).
    UseASandbox,
    /// Look at how run `run` ended.
    ShowRun {
        run: i64,
    },
    SignIn,
    GetWriteAccess {
        repo: String,
    },
    TurnOnIssues {
        repo: String,
    },
    StartKeyring,
    StartDocker,
    BuildImage {
        preset: String,
        image: String,
    },
    LoadImage {
        image: String,
    },
    /// Build `repo`'s agent environment (again, once what its last build says is
    /// mended).
    BuildEnvironment {
        repo: String,
    },
    AddKey {
        provider: String,
    },
    AddE2bKey,
    ReplaceE2bKey,
    UseHttpsForE2b,
    UseHttpsForProvider {
        provider: String,
    },
    ChooseAnotherAgent {
        repo: String,
    },
    FreeDisk {
        path: String,
    },
    InstallEgressGate,
    /// The token lacks a permission (a fine-grained token): give it `permission` on
    /// `repo`, on GitHub, or sign in with one that has it.
    GrantTokenPermission {
        permission: String,
        repo: String,
    },
    /// Send `repo`'s agent branches to a fork (in `place` when the owner has one).
    MakeAgentFork {
        repo: String,
        place: Option<String>,
    },
}

impl std::fmt::Display for Fix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Every variant is routed to the sentences of its kind; a new variant must be
        // placed here before it compiles.
        match self {
            Fix::ConnectRepository { .. }
            | Fix::RaiseQuota { .. }
            | Fix::RaiseMonthlyBudget { .. }
            | Fix::RaiseDayBudget
            | Fix::RunStagesOneAtATime { .. } => self.limits_and_connection_sentence(f),
            Fix::InstallNewerHandoff
            | Fix::SetDamagedDatabaseAside
            | Fix::TryAgainLater
            | Fix::LookUpItems
            | Fix::LookUpRuns
            | Fix::LookUpLessons
            | Fix::SyncPullRequests
            | Fix::ShowRun { .. } => self.records_sentence(f),
            Fix::AcceptLesson { .. }
            | Fix::ApproveFeedback { .. }
            | Fix::ApproveCommentVersion { .. }
            | Fix::ReplaceOwnerEdit { .. }
            | Fix::RunAsCodeRun
            | Fix::ReplaceLessonsFileEdits
            | Fix::CorrectTheAgentFirst
            | Fix::ConfirmLocalBackend { .. }
            | Fix::UseASandbox => self.owners_decisions_sentence(f),
            Fix::SignIn
            | Fix::GetWriteAccess { .. }
            | Fix::TurnOnIssues { .. }
            | Fix::GrantTokenPermission { .. }
            | Fix::MakeAgentFork { .. }
            | Fix::AddKey { .. }
            | Fix::AddE2bKey
            | Fix::ReplaceE2bKey
            | Fix::UseHttpsForE2b
            | Fix::UseHttpsForProvider { .. }
            | Fix::ChooseAnotherAgent { .. } => self.github_and_keys_sentence(f),
            Fix::StartKeyring
            | Fix::StartDocker
            | Fix::BuildImage { .. }
            | Fix::LoadImage { .. }
            | Fix::BuildEnvironment { .. }
            | Fix::FreeDisk { .. }
            | Fix::InstallEgressGate => self.this_machine_sentence(f),
        }
    }
}

impl Fix {
    /// What stops a run from starting: the repository's connection, its quota and its budgets.
    fn limits_and_connection_sentence(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fix::ConnectRepository { repo } => write!(f, "Connect {repo} again."),
            Fix::RaiseQuota { repo } => write!(f, "Raise or lift {repo}'s monthly run quota."),
            Fix::RaiseMonthlyBudget { repo } => write!(
                f,
                "Raise or lift {repo}'s monthly budget; its month's spend shows where it went."
            ),
            Fix::RaiseDayBudget => write!(
                f,
                "Raise or lift the budget of a day; the month's spend shows where it went."
            ),
            Fix::RunStagesOneAtATime { repo } => write!(
                f,
                "Run {repo}'s stages one at a time, lower the budget of a run, or raise the \
                 month's or the day's budget."
            ),
            // Not reached: `fmt` sends only this kind here.
            other => write!(f, "{other:?}"),
        }
    }

    /// The database and the records in it: another Handoff's, damaged, busy, or a record not there.
    fn records_sentence(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fix::InstallNewerHandoff => write!(
                f,
                "Install the newer Handoff that wrote the database, or use another data folder."
            ),
            Fix::SetDamagedDatabaseAside => write!(
                f,
                "Move the damaged database away or restore a backup, or use another data folder."
            ),
            Fix::TryAgainLater => write!(
                f,
                "Nothing was changed: try again once the other process is done."
            ),
            Fix::LookUpItems => write!(f, "Look the item up among the feedback."),
            Fix::LookUpRuns => write!(f, "Look the run up among the runs."),
            Fix::LookUpLessons => write!(f, "Look the lesson up among the repository's lessons."),
            Fix::SyncPullRequests => write!(f, "Sync, to mirror the open PRs."),
            Fix::ShowRun { run } => write!(f, "Look at how run {run} ended."),
            // Not reached: `fmt` sends only this kind here.
            other => write!(f, "{other:?}"),
        }
    }

    /// What waits on a decision of the owner's: an approval, a lesson, where a run may run.
    fn owners_decisions_sentence(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fix::AcceptLesson { id } => write!(f, "Accept lesson {id} first."),
            Fix::ApproveFeedback { feedback_id } => write!(
                f,
                "Read feedback {feedback_id} as the agent would get it, then approve it."
            ),
            Fix::ApproveCommentVersion { comment } => write!(
                f,
                "Read that version of the {comment} comment, then approve it."
            ),
            Fix::ReplaceOwnerEdit { comment } => write!(
                f,
                "Read your edit of the {comment} comment; run the stage again on purpose to replace \
                 it."
            ),
            Fix::RunAsCodeRun => write!(f, "The code stage runs as a code run."),
            Fix::ReplaceLessonsFileEdits => write!(
                f,
                "Read the lessons section on GitHub; write the lessons again on purpose to \
                 replace it."
            ),
            Fix::CorrectTheAgentFirst => write!(
                f,
                "Edit the agent's review, plan or results on a PR, or send a follow-up on a \
                 feedback PR, then ask again."
            ),
            Fix::ConfirmLocalBackend { repo } => write!(
                f,
                "Run it in a sandbox (Docker or E2B), or choose the local backend for {repo} on \
                 purpose."
            ),
            Fix::UseASandbox => write!(
                f,
                "Run it in a sandbox (Docker or E2B), or set the repository's backend to one."
            ),
            // Not reached: `fmt` sends only this kind here.
            other => write!(f, "{other:?}"),
        }
    }

    /// What the owner's accounts need: GitHub's sign-in and permissions, a provider's or E2B's key.
    fn github_and_keys_sentence(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fix::SignIn => write!(f, "Sign in to GitHub again."),
            Fix::GetWriteAccess { repo } => write!(
                f,
                "Ask for write access to {repo}, or sign in with an account that has it."
            ),
            Fix::TurnOnIssues { repo } => {
                write!(f, "Turn issues on in {repo}'s settings on GitHub.")
            }
            Fix::AddKey { provider } => write!(f, "Add an API key for {provider}."),
            Fix::AddE2bKey => write!(f, "Add the E2B API key."),
            Fix::ReplaceE2bKey => write!(f, "Replace the E2B API key with one E2B accepts."),
            Fix::UseHttpsForE2b => write!(
                f,
                "Set E2B's addresses (e2b.api_base, e2b.envd_url) to https ones, or remove them."
            ),
            Fix::UseHttpsForProvider { provider } => write!(
                f,
                "Set {provider}'s address (provider.{provider}.api_base) to an https one, or \
                 remove it."
            ),
            Fix::ChooseAnotherAgent { repo } => write!(
                f,
                "Choose claude, codex or opencode for {repo} to run the QA stages."
            ),
            Fix::GrantTokenPermission { permission, repo } => write!(
                f,
                "Give the token the \"{permission}\" permission on {repo} (GitHub → Settings → \
                 Developer settings → Fine-grained tokens), or sign in with a token that has it."
            ),
            Fix::MakeAgentFork {
                repo,
                place: Some(place),
            } => write!(
                f,
                "Make a fork of {repo} in {place} for the agent's branches: its PRs run CI \
                 without the repository's secrets."
            ),
            Fix::MakeAgentFork { repo, place: None } => write!(
                f,
                "Make a fork of {repo} for the agent's branches, in an organization you belong \
                 to or a second account of yours (GitHub does not let an account fork its own \
                 repository into itself): its PRs run CI without the repository's secrets."
            ),
            // Not reached: `fmt` sends only this kind here.
            other => write!(f, "{other:?}"),
        }
    }

    /// What this machine needs: its keyring, the Docker engine and its images, disk space, the egress gate.
    fn this_machine_sentence(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fix::StartKeyring => write!(
                f,
                "Start a Secret Service (gnome-keyring or KWallet) in your desktop session."
            ),
            Fix::StartDocker => write!(
                f,
                "Start the Docker engine (or point DOCKER_HOST at one) and check again."
            ),
            Fix::BuildImage { preset, image } => {
                write!(f, "Build the {preset} agent image ({image}).")
            }
            Fix::LoadImage { image } => write!(
                f,
                "Put the image {image} on this engine yourself (build it where its agent can \
                 be fetched, then `docker save` and `docker load`), or name another image in \
                 the repository's settings (empty: Handoff's own)."
            ),
            Fix::BuildEnvironment { repo } => write!(
                f,
                "Build {repo}'s agent environment now, after mending what its last build's \
                 log says if it failed."
            ),
            Fix::FreeDisk { path } => write!(f, "Free some disk space where {path} is."),
            Fix::InstallEgressGate => write!(
                f,
                "Install Handoff's egress gate, handoff-egress, beside Handoff (its package \
                 does), or name a Linux build of it for the engine's machine in \
                 HANDOFF_EGRESS_PROGRAM."
            ),
            // Not reached: `fmt` sends only this kind here.
            other => write!(f, "{other:?}"),
        }
    }
}
