//! Runs: one execution of the agent in a sandbox for one stage, kept for ever.

use super::ids::RunId;

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::ids::FeedbackId;
use super::ids::RepoId;
use super::iterate_rules::CodeRunKind;

crate::stored_text_enum! {
    /// Where a run stands. `queued` and `running` are the active ones: the database
    /// allows at most one active run per feedback item.
    pub enum RunStatus as "run status" {
        Queued => "queued",
        Running => "running",
        Succeeded => "succeeded",
        Failed => "failed",
        Cancelled => "cancelled",
    }
}

impl RunStatus {
    pub fn is_active(self) -> bool {
        matches!(self, RunStatus::Queued | RunStatus::Running)
    }
}

crate::stored_text_enum! {
    /// Where a run's tokens and cost come from.
    pub enum SpendSource as "spend source" {
        /// Measured by the key forwarder, from every answer of the provider: the agent
        /// can neither hide nor misstate it.
        Metered => "metered",
        /// As the agent reported it (where no forwarder stands: E2B, an agent's own
        /// account file).
        Reported => "reported",
    }
}

crate::stored_text_enum! {
    /// What paid for a run's model calls.
    pub enum PaidWith as "paid with" {
        /// The provider's API key, billed by the provider at its rates.
        ApiKey => "api-key",
        /// The owner's Claude plan, drawing on its monthly credit for headless runs.
        ClaudePlan => "claude-plan",
    }
}

crate::stored_text_enum! {
    /// Why a run did not succeed: the page and `--json` act on these words, the
    /// run's failure message says the rest.
    pub enum RunFailureCode as "run failure code" {
        /// Its process stopped without ending it (a crash or a kill); ended by the next
        /// process that looks (at start, and every few seconds while the window is open).
        Abandoned => "abandoned",
        /// The task driving it panicked (a fault in Handoff itself; the log file has
        /// where): ended at once, its sandbox removed.
        DrivingPanicked => "driving_panicked",
        /// A stage of a full-auto chain failed, so the chain stopped.
        StageFailed => "stage_failed",
        /// The local database could not record a step.
        Store => "store",
        /// A GitHub request failed.
        Github => "github",
        /// The base branch is not on GitHub.
        NoBaseBranch => "no_base_branch",
        /// The feedback item's branch is gone from GitHub.
        NoBranch => "no_branch",
        /// The comment the stage reads was edited by someone else and awaits approval.
        EditAwaitsApproval => "edit_awaits_approval",
        /// GitHub refused the push.
        PushRejected => "push_rejected",
        /// GitHub's own checks refused the push (a ruleset, branch protection, a
        /// workflow change without the `workflow` scope, a file too large).
        PushRefused => "push_refused",
        /// The commits change CI entry points for an item a visitor opened: they wait
        /// for the owner's approval before anything is pushed.
        CiChangeAwaitsApproval => "ci_change_awaits_approval",
        /// The agent exited with an error.
        AgentFailed => "agent_failed",
        /// The run's budget was spent: its next model call was refused, and nothing
        /// was pushed. Its working copy is kept for a retry.
        BudgetReached => "budget_reached",
        /// The repository's monthly budget or the installation's daily one is spent:
        /// the run was refused before any sandbox started.
        BudgetSpent => "budget_spent",
        /// The run would have worked on what someone other than the owner wrote (their
        /// commits on the branch, a visitor's words) on the local backend, which has no
        /// isolation: it stopped before anything of the tree ran.
        NeedsSandbox => "needs_sandbox",
        /// Fix cannot push to the pull request (a fork, or no access).
        FixCannotPush => "fix_cannot_push",
        /// The agent changed nothing.
        NoChanges => "no_changes",
        /// The agent wrote none of the output the stage needs.
        NoOutput => "no_output",
        /// The lessons the agent proposed cannot be read (not the JSON asked for, a
        /// rule missing, a source that is not one of the corrections given, a path
        /// outside the repository).
        BadLessons => "bad_lessons",
        /// There are no test results to fix.
        NoResults => "no_results",
        /// The branch is protected against the push.
        ProtectedBranch => "protected_branch",
        /// The agent rewrote the branch's history.
        RewrittenHistory => "rewritten_history",
        /// The run took longer than its time limit.
        TimedOut => "timed_out",
        /// The test results the agent wrote cannot be read.
        BadResults => "bad_results",
        /// The git bundle for the sandbox could not be made or read.
        Bundle => "bundle",
        /// The working copy could not be checked out.
        GitCheckout => "git_checkout",
        /// The diff for the review could not be made.
        GitDiff => "git_diff",
        /// Fetching from GitHub failed.
        GitFetch => "git_fetch",
        /// The run's log could not be written.
        Log => "log",
        /// The pull request could not be opened or read.
        PullRequest => "pull_request",
        /// Pushing to GitHub failed.
        Push => "push",
        /// The results comment could not be read.
        Results => "results",
        /// The sandbox failed.
        Sandbox => "sandbox",
        /// The run's workspace could not be prepared.
        Workspace => "workspace",
        /// The agent's environment, as the repository's base branch names it, could
        /// not be built (its recipe was refused, or a step of its build failed): no
        /// agent ran, and the build's log says why.
        Environment => "environment",
        /// The feedback item's kept working copy could not be brought to the branch's
        /// tip (the agent did not run; a code run then starts once more from a fresh
        /// copy).
        KeptCopyUnusable => "kept_copy_unusable",
        /// The owner cancelled the run.
        Cancelled => "cancelled",
        /// What the agent left in out/ broke a cap (too large, sparse, too many files).
        OutputTooLarge => "output_too_large",
    }
}

crate::stored_text_enum! {
    /// What a run does: `code` creates or iterates a feedback PR; `review` to
    /// `full-auto` are the QA stages on a PR; `lessons` proposes lessons from the
    /// owner's corrections on a repository.
    pub enum Stage as "stage" {
        Code => "code",
        Review => "review",
        Plan => "plan",
        Test => "test",
        Fix => "fix",
        FullAuto => "full-auto",
        Lessons => "lessons",
    }
}

crate::stored_text_enum! {
    /// Where the agent runs.
    pub enum SandboxBackend as "sandbox backend" {
        /// A container on a Docker engine, local or remote.
        Docker => "docker",
        /// A cloud sandbox from E2B.
        E2b => "e2b",
        /// A plain process in the working copy: no isolation; for development only.
        Local => "local",
    }
}

/// One run as the mirror holds it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Run {
    pub id: RunId,
    pub repo_id: RepoId,
    pub feedback_id: Option<FeedbackId>,
    pub pr_number: Option<u64>,
    pub parent_run_id: Option<RunId>,
    pub stage: Stage,
    pub code_run_kind: Option<CodeRunKind>,
    pub backend: SandboxBackend,
    pub agent_preset: String,
    pub status: RunStatus,
    pub instructions: Option<String>,
    pub created_at: DateTime<Utc>,
    pub started_at: Option<DateTime<Utc>>,
    pub finished_at: Option<DateTime<Utc>>,
    pub exit_code: Option<i64>,
    pub failure_code: Option<RunFailureCode>,
    pub failure_message: Option<String>,
    pub notes: Vec<String>,
    pub llm_cost_usd: Option<f64>,
    pub tokens_in: Option<i64>,
    pub tokens_out: Option<i64>,
    /// Where the tokens and cost come from; `None` while nothing is known.
    pub spend_source: Option<SpendSource>,
    /// What paid for its model calls; `None` when Handoff gave it no key.
    pub paid_with: Option<PaidWith>,
    /// Tokens of calls whose model has no price: the cost leaves them out ("price
    /// unknown").
    pub unpriced_tokens: Option<i64>,
    /// Where the run's sandbox lives (container id, E2B sandbox id, `pid:N`).
    pub sandbox_id: Option<String>,
    pub head_branch: Option<String>,
    /// The commit the working copy started from, and the one pushed.
    pub start_sha: Option<String>,
    pub end_sha: Option<String>,
    /// The last sign of life of the process driving the run; a restart ends a run whose
    /// heartbeat stopped.
    pub heartbeat_at: Option<DateTime<Utc>>,
    pub cancel_requested_at: Option<DateTime<Utc>>,
    /// Why it started by itself (an automatic update); `None` when the owner started it.
    pub started_because: Option<String>,
}

impl Run {
    /// Wall-clock time from start to finish, when both are known.
    pub fn duration(&self) -> Option<chrono::Duration> {
        Some(self.finished_at? - self.started_at?)
    }
}

crate::stored_text_enum! {
    /// The stream a line of a run's log came from.
    pub enum LogStream as "log stream" {
        Stdout => "stdout",
        Stderr => "stderr",
        /// What Handoff itself says about the run (steps, warnings, the failure).
        Handoff => "handoff",
    }
}

/// One piece of a run's log.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LogChunk {
    pub run_id: RunId,
    pub seq: i64,
    pub stream: LogStream,
    pub at: DateTime<Utc>,
    pub text: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_words_round_trip() {
        for stage in Stage::ALL {
            assert_eq!(stage.as_str().parse::<Stage>().unwrap(), *stage);
        }
        let error = "podman".parse::<SandboxBackend>().unwrap_err();
        assert_eq!(
            error.to_string(),
            "unknown sandbox backend \"podman\": expected one of docker, e2b, local"
        );
    }

    #[test]
    fn only_queued_and_running_are_active() {
        let active: Vec<_> = RunStatus::ALL.iter().filter(|s| s.is_active()).collect();
        assert_eq!(active, [&RunStatus::Queued, &RunStatus::Running]);
    }
}
