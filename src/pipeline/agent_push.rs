//! Bringing an agent's commits back from its sandbox and pushing them: the bundle
//! checked and built on the start commit, the CI entry points they change named (and
//! held for the owner on an item a visitor opened), GitHub asked whether the branch may
//! be pushed to, then the push, never forced, to the repository or the fork its agent
//! branches go to.

use std::path::Path;

use super::agent_job::{Stop, WorkingCopy};
use super::host_git::{GitError, HostGit};
use super::run_log::RunLog;
use super::Pipeline;
use crate::domain::{Repo, RepoName, RunFailureCode, RunId};

impl Pipeline {
    /// Brings the agent's commits back (from `out/changes.bundle`) and pushes them to
    /// `to.branch`, never forced, never to a protected branch or one GitHub guards, and,
    /// when they change a CI entry point that waits for the owner, not before the
    /// owner approved. `None` when the agent left no commit.
    pub(crate) async fn push_agent_commits(
        &self,
        log: &RunLog,
        run_id: RunId,
        out: &Path,
        copy: &WorkingCopy,
        repo: &Repo,
        to: PushTo<'_>,
    ) -> Result<Option<PushedCommits>, Stop> {
        let PushTo {
            repository,
            branch,
            protected,
            ci_changes_wait_for_owner,
        } = to;
        let bundle = out.join("changes.bundle");
        if !bundle.exists() {
            return Ok(None);
        }
        let git = self.host_git();
        let _cache_lock = self.lock_cache(log, repo).await?;
        let run_ref = format!("refs/handoff/runs/{run_id}");
        let (end_sha, commits) = import_agent_commits(&git, copy, &bundle, &run_ref).await?;
        // The copy holds the agent's commits too (recorded, with its backend, when the
        // sandbox ended).
        if let Some((kept, record)) = copy
            .kept
            .as_ref()
            .and_then(|kept| kept.record().map(|record| (kept, record)))
        {
            if let Err(error) = kept.remember(record.backend, &[&copy.start_sha, &end_sha]) {
                tracing::warn!(item = %kept.feedback_id, %error, "the kept copy's record cannot be written; the next run makes a fresh copy");
            }
        }
        let ci_entry_points = self
            .say_ci_entry_points(
                log,
                run_id,
                copy,
                &end_sha,
                &run_ref,
                ci_changes_wait_for_owner,
            )
            .await?;
        self.check_branch_guard(repository, branch, &run_ref)
            .await?;
        log.say(&format!("pushing {commits} commit(s) to {branch}"))
            .await?;
        // Known as Handoff's before they leave: a push whose answer is lost still did.
        self.store
            .runs()
            .record_handoff_push(repo.id, Some(run_id), Some(&copy.start_sha), &end_sha)
            .await?;
        git.push(&copy.cache, repository, &run_ref, branch, protected)
            .await
            .map_err(|error| match error {
                GitError::Rejected { .. } => Stop::failed(
                    RunFailureCode::PushRejected,
                    format!("{error}; the agent's commits are kept in Handoff's cache as {run_ref}: run again to build on the new tip"),
                ),
                GitError::RefusedByGithub { .. } => Stop::failed(
                    RunFailureCode::PushRefused,
                    format!("{error}; the agent's commits are kept in Handoff's cache as {run_ref}"),
                ),
                other => Stop::failed(RunFailureCode::Push, other.to_string()),
            })?;
        Ok(Some(PushedCommits {
            end_sha,
            commits,
            ci_entry_points,
        }))
    }

    /// Files that decide what CI runs, with the repository's secrets, among the agent's
    /// commits: said wherever the run shows, and for an item a visitor opened
    /// (`wait_for_owner`), not pushed before the owner says so.
    async fn say_ci_entry_points(
        &self,
        log: &RunLog,
        run_id: RunId,
        copy: &WorkingCopy,
        end_sha: &str,
        run_ref: &str,
        ci_changes_wait_for_owner: bool,
    ) -> Result<Vec<(String, &'static str)>, Stop> {
        let changed = self
            .host_git()
            .changed_paths(&copy.cache, &copy.start_sha, end_sha)
            .await
            .map_err(|error| Stop::failed(RunFailureCode::Bundle, error.to_string()))?;
        let ci_entry_points = crate::domain::ci_entry_points::ci_entry_points(&changed);
        if !ci_entry_points.is_empty() {
            let named = crate::domain::ci_entry_points::describe_ci_entry_points(&ci_entry_points);
            let note = format!("the agent's commits change CI entry points: {named}");
            log.say(&format!("warning: {note}")).await?;
            self.store
                .runs()
                .add_run_note(run_id, &log.redactor().redact(&note))
                .await?;
            if ci_changes_wait_for_owner {
                return Err(Stop::failed(
                    RunFailureCode::CiChangeAwaitsApproval,
                    format!(
                        "the agent's commits change CI entry points ({named}) for an item a \
                         visitor opened; nothing was pushed: the commits wait in Handoff's \
                         cache as {run_ref} for your approval"
                    ),
                ));
            }
        }
        Ok(ci_entry_points)
    }

    /// GitHub's word on the branch, asked now: its default branch, branch protection and
    /// rulesets. A guarded branch is not pushed to at all.
    async fn check_branch_guard(
        &self,
        repository: &RepoName,
        branch: &str,
        run_ref: &str,
    ) -> Result<(), Stop> {
        match self
            .github
            .branch_guard(&self.store, repository, branch)
            .await
        {
            Ok(None) => Ok(()),
            Ok(Some(guard)) => Err(Stop::failed(
                RunFailureCode::ProtectedBranch,
                format!(
                    "Handoff does not push to {branch}: {guard}; nothing was pushed, and the \
                         agent's commits are kept in Handoff's cache as {run_ref}"
                ),
            )),
            Err(error) => Err(Stop::failed(
                RunFailureCode::Push,
                format!(
                    "GitHub could not say whether {branch} may be pushed to ({error}); \
                         nothing was pushed, and the agent's commits are kept in Handoff's \
                         cache as {run_ref}"
                ),
            )),
        }
    }
}
/// The agent's commits, from its bundle into the repository's cache as `run_ref`: their
/// last commit and how many there are. A history that does not grow from the start is
/// refused.
async fn import_agent_commits(
    git: &HostGit,
    copy: &WorkingCopy,
    bundle: &Path,
    run_ref: &str,
) -> Result<(String, u32), Stop> {
    let end_sha = git
        .import_bundle(&copy.cache, bundle, run_ref)
        .await
        .map_err(|error| Stop::failed(RunFailureCode::Bundle, error.to_string()))?;
    if !git
        .is_ancestor(&copy.cache, &copy.start_sha, &end_sha)
        .await
    {
        return Err(Stop::failed(
            RunFailureCode::RewrittenHistory,
            GitError::RewrittenHistory.to_string(),
        ));
    }
    let commits = git
        .commits_between(&copy.cache, &copy.start_sha, &end_sha)
        .await
        .map_err(|error| Stop::failed(RunFailureCode::Bundle, error.to_string()))?;
    Ok((end_sha, commits))
}

/// Where and how a run's commits are pushed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PushTo<'a> {
    /// The repository the branch lives in: the repository, or a fork the owner chose.
    pub repository: &'a RepoName,
    pub branch: &'a str,
    /// Branches never pushed to (the base, the default).
    pub protected: &'a [&'a str],
    /// Whether a change to a CI entry point waits for the owner's approval.
    pub ci_changes_wait_for_owner: bool,
}

/// What a push sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PushedCommits {
    pub end_sha: String,
    pub commits: u32,
    /// The CI entry points the commits change, each with why.
    pub ci_entry_points: Vec<(String, &'static str)>,
}
