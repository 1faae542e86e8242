//! A pull request of a connected repository as the mirror keeps it — any open PR, not
//! only the ones Handoff opened for feedback — and the summary of its head commit's
//! checks.

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::feedback::PullRequestState;
use super::ids::FeedbackId;
use super::ids::RepoId;
use super::repo_name::RepoName;

crate::stored_text_enum! {
    /// How the checks of a PR's head commit stand, taken together.
    pub enum CheckStatus as "check status" {
        /// Every check finished and none failed.
        Success => "success",
        /// At least one check failed, timed out or was cancelled.
        Failure => "failure",
        /// None failed yet and at least one is still queued or running.
        Pending => "pending",
        /// The commit has no checks.
        NoChecks => "none",
    }
}

/// What one check run says, as far as the summary is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckRunState<'a> {
    /// `queued`, `in_progress` or `completed` (and GitHub's rarer waiting states).
    pub status: &'a str,
    /// Set once completed: `success`, `failure`, `neutral`, `cancelled`, `skipped`,
    /// `timed_out`, `action_required`, `stale`, `startup_failure`.
    pub conclusion: Option<&'a str>,
}

impl CheckRunState<'_> {
    /// A completed run whose conclusion means something is wrong.
    pub fn failed(&self) -> bool {
        self.status == "completed"
            && matches!(
                self.conclusion,
                Some("failure" | "timed_out" | "cancelled" | "action_required" | "startup_failure")
            )
    }
}

impl CheckStatus {
    /// The summary of a commit's check runs: a failure outweighs a pending run, which
    /// outweighs success.
    pub fn of<'a>(runs: impl IntoIterator<Item = CheckRunState<'a>>) -> CheckStatus {
        let mut status = CheckStatus::NoChecks;
        for run in runs {
            if run.failed() {
                return CheckStatus::Failure;
            }
            if run.status != "completed" {
                status = CheckStatus::Pending;
            } else if status == CheckStatus::NoChecks {
                status = CheckStatus::Success;
            }
        }
        status
    }
}

/// A PR as it was when last mirrored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PullRequest {
    pub repo_id: RepoId,
    pub repo: RepoName,
    pub number: u64,
    pub title: String,
    pub author_login: Option<String>,
    pub head_ref: String,
    /// `owner/name` of the repository the head branch lives in (a fork's), `None` when
    /// the fork was deleted.
    pub head_repo: Option<String>,
    pub head_sha: String,
    pub base_ref: String,
    pub state: PullRequestState,
    pub draft: bool,
    /// The mirror saw it go from ready for review to draft: someone marked it a draft
    /// after it was opened.
    pub marked_draft: bool,
    /// Whether it conflicts with its base branch, as GitHub last said (`None`: not
    /// known yet, or not asked: only feedback PRs are).
    pub conflicts_with_base: Option<bool>,
    pub checks: CheckStatus,
    pub github_updated_at: DateTime<Utc>,
    pub synced_at: DateTime<Utc>,
    /// The feedback item the PR was opened for, when it was.
    pub feedback_id: Option<FeedbackId>,
}

impl PullRequest {
    /// Whether the head branch lives in a fork rather than the repository itself.
    pub fn from_fork(&self) -> bool {
        !self
            .head_repo
            .as_deref()
            .is_some_and(|head| head.eq_ignore_ascii_case(&self.repo.full_name()))
    }

    /// Why the fix stage may not push to this PR's branch, if it may not.
    pub fn push_refusal(&self, default_branch: &str) -> Option<String> {
        push_refusal(
            &self.repo,
            default_branch,
            &self.head_ref,
            self.head_repo.as_deref(),
            &self.base_ref,
        )
    }
}

/// Why Handoff may not push to a PR's branch, if it may not: only to a branch of the
/// repository `repo` itself, and never to its base or default branch (a fork's PR from
/// its `main` must never make Handoff push to the owner's `main`). `head_repo` is the
/// `owner/name` the branch lives in, `None` when that fork was deleted.
pub fn push_refusal(
    repo: &RepoName,
    default_branch: &str,
    head_ref: &str,
    head_repo: Option<&str>,
    base_ref: &str,
) -> Option<String> {
    let in_repo = head_repo.is_some_and(|head| head.eq_ignore_ascii_case(&repo.full_name()));
    if !in_repo {
        let from = head_repo
            .map(|fork| format!("the fork {fork}"))
            .unwrap_or_else(|| "a deleted fork".to_owned());
        return Some(format!(
            "its branch {head_ref} lives in {from}, not in {repo}: Handoff pushes only to \
             branches of the repository itself"
        ));
    }
    if head_ref == base_ref || head_ref == default_branch {
        return Some(format!(
            "its branch {head_ref} is the repository's {} branch, which Handoff never pushes to",
            if head_ref == base_ref {
                "base"
            } else {
                "default"
            }
        ));
    }
    None
}

/// A PR as a sync or a run read it from GitHub, to be mirrored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MirroredPullRequest {
    pub number: u64,
    pub title: String,
    pub author_login: Option<String>,
    pub head_ref: String,
    pub head_repo: Option<String>,
    pub head_sha: String,
    pub base_ref: String,
    pub state: PullRequestState,
    pub draft: bool,
    pub github_updated_at: DateTime<Utc>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run<'a>(status: &'a str, conclusion: Option<&'a str>) -> CheckRunState<'a> {
        CheckRunState { status, conclusion }
    }

    #[test]
    fn a_failure_outweighs_pending_and_success() {
        let runs = [
            run("completed", Some("success")),
            run("in_progress", None),
            run("completed", Some("timed_out")),
        ];
        assert_eq!(CheckStatus::of(runs), CheckStatus::Failure);
    }

    #[test]
    fn a_running_check_makes_the_commit_pending() {
        let runs = [run("completed", Some("success")), run("queued", None)];
        assert_eq!(CheckStatus::of(runs), CheckStatus::Pending);
    }

    #[test]
    fn skipped_and_neutral_checks_do_not_fail_a_commit() {
        let runs = [
            run("completed", Some("skipped")),
            run("completed", Some("neutral")),
            run("completed", Some("success")),
        ];
        assert_eq!(CheckStatus::of(runs), CheckStatus::Success);
    }

    #[test]
    fn a_commit_without_checks_says_so() {
        assert_eq!(CheckStatus::of([]), CheckStatus::NoChecks);
    }
}
