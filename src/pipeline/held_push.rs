//! A held run's commits: what they change, for the owner to read, and their push once
//! the owner approved exactly them.
//!
//! A code run of an item a visitor opened whose commits change CI entry points ends
//! without pushing (`ci_change_awaits_approval`); its commits wait in the repository's
//! cache as `refs/handoff/runs/N`. Approving pushes those commits, and no others, to
//! the item's branch (never forced: if the branch moved meanwhile, GitHub refuses and
//! nothing is lost), opens or updates the PR with the CI entry points named in its
//! body, and puts the item back to waiting for review. The held run stays as it ended;
//! the approval and the push are kept beside it.

use crate::pipeline::handles::HeldPushes;
use serde::Serialize;

use super::{Pipeline, PipelineError};
use crate::domain::ci_entry_points::ci_entry_points;
use crate::domain::run_event::RunEventKind;
use crate::domain::{Feedback, Repo, Run, RunFailureCode, RunId, RunStatus, Stage};
use crate::github::feedback_pull_request::{ensure_feedback_pull_request, PullRequestAction};
use crate::github::review_requests::ask_for_labels_and_reviews;
use crate::pipeline::cache_lock::CacheLock;
use crate::pipeline::host_git::GitError;
use crate::store::RunFilter;

/// The most of a held run's diff shown to the owner.
const LARGEST_SHOWN_DIFF_BYTES: usize = 2 * 1024 * 1024;

/// What a held run would push, for the owner to read before approving.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HeldCommits {
    pub run_id: RunId,
    pub branch: String,
    pub end_sha: String,
    pub commits: u32,
    pub changed_paths: Vec<String>,
    /// The CI entry points among them, each with why it is one.
    pub ci_entry_points: Vec<(String, String)>,
    /// The diff of the commits (cut when very large, with a line that says so).
    pub diff: String,
}

/// What pushing a held run did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HeldPushReport {
    pub run_id: RunId,
    pub pr_number: u64,
    pub pr_url: String,
    pub commits: u32,
}

fn not_held(run: RunId, why: impl Into<String>) -> PipelineError {
    PipelineError::NotHeld {
        run,
        why: why.into(),
    }
}

impl Pipeline {
    /// The held run `run_id`, its item and repository; refused unless its commits still
    /// wait (no later code run of the item came after it).
    async fn held_run(&self, run_id: RunId) -> Result<(Run, Feedback, Repo), PipelineError> {
        let run = self.store.runs().run(run_id).await?;
        let held = run.stage == Stage::Code
            && run.status == RunStatus::Failed
            && run.failure_code == Some(RunFailureCode::CiChangeAwaitsApproval);
        if !held {
            return Err(not_held(run_id, "it holds no commits waiting for approval"));
        }
        let Some(feedback_id) = run.feedback_id else {
            return Err(not_held(run_id, "it belongs to no feedback item"));
        };
        let later = self
            .store
            .runs()
            .runs(&RunFilter {
                feedback_id: Some(feedback_id),
                ..RunFilter::default()
            })
            .await?
            .into_iter()
            .any(|other| other.stage == Stage::Code && other.id.0 > run_id.0);
        if later {
            return Err(not_held(
                run_id,
                "a later run of its item came after it; its commits no longer wait",
            ));
        }
        if let Some(approval) = self.store.runs().held_push_approval(run_id).await? {
            if approval.pushed_at.is_some() {
                return Err(not_held(run_id, "its commits were pushed already"));
            }
        }
        let feedback = self.store.feedback().feedback(feedback_id).await?;
        let repo = self.store.repositories().repo(feedback.repo_id).await?;
        Ok((run, feedback, repo))
    }

    fn cache_of(&self, repo: &Repo) -> std::path::PathBuf {
        crate::pipeline::host_git::cache_path(&self.cache_root(), &repo.name)
    }

    /// Pushes run `run_id`'s commits (kept under its ref in the repository's cache) to the
    /// item's branch, with the cache locked and the branch's guard asked first.
    async fn push_held_commits(
        &self,
        run_id: RunId,
        repo: &Repo,
        feedback: &Feedback,
    ) -> Result<(), PipelineError> {
        let git = self.host_git();
        let cache = self.cache_of(repo);
        let run_ref = format!("refs/handoff/runs/{run_id}");
        let (_lock, _) = CacheLock::acquire(&self.cache_root(), &repo.name, async {})
            .await
            .map_err(|error| {
                not_held(
                    run_id,
                    format!("its repository's cache cannot be locked: {error}"),
                )
            })?;
        if let Some(guard) = self
            .github
            .branch_guard(&self.store, repo.head_repository(), &feedback.head_branch)
            .await?
        {
            return Err(not_held(
                run_id,
                format!("Handoff does not push to {}: {guard}", feedback.head_branch),
            ));
        }
        git.push(
            &cache,
            repo.head_repository(),
            &run_ref,
            &feedback.head_branch,
            &[repo.default_branch.as_str()],
        )
        .await
        .map_err(|error| not_held(run_id, error.to_string()))?;
        Ok(())
    }
}

impl HeldPushes<'_> {
    /// What held run `run_id` would push.
    pub async fn held_commits(&self, run_id: RunId) -> Result<HeldCommits, PipelineError> {
        let (run, feedback, repo) = self.pipeline.held_run(run_id).await?;
        let git = self.pipeline.host_git();
        let cache = self.pipeline.cache_of(&repo);
        let (_lock, _) = CacheLock::acquire(&self.pipeline.cache_root(), &repo.name, async {})
            .await
            .map_err(|error| {
                not_held(
                    run_id,
                    format!("its repository's cache cannot be locked: {error}"),
                )
            })?;
        let git_failed =
            |error: GitError| not_held(run_id, format!("its commits cannot be read: {error}"));
        let end_sha = git
            .resolve(&cache, &format!("refs/handoff/runs/{run_id}"))
            .await
            .map_err(git_failed)?;
        let start_sha = run
            .start_sha
            .clone()
            .ok_or_else(|| not_held(run_id, "it recorded no start commit"))?;
        let changed_paths = git
            .changed_paths(&cache, &start_sha, &end_sha)
            .await
            .map_err(git_failed)?;
        let commits = git
            .commits_between(&cache, &start_sha, &end_sha)
            .await
            .map_err(git_failed)?;
        let diff = git
            .diff_between(&cache, &start_sha, &end_sha, LARGEST_SHOWN_DIFF_BYTES)
            .await
            .map_err(git_failed)?;
        Ok(HeldCommits {
            run_id,
            branch: feedback.head_branch,
            end_sha,
            commits,
            ci_entry_points: ci_entry_points(&changed_paths)
                .into_iter()
                .map(|(path, why)| (path, why.to_owned()))
                .collect(),
            changed_paths,
            diff,
        })
    }

    /// Pushes held run `run_id`'s commits, approved by the owner as `approved_end_sha`
    /// (what the owner read), then makes sure of the PR.
    pub async fn push_held_run(
        &self,
        run_id: RunId,
        approved_end_sha: &str,
    ) -> Result<HeldPushReport, PipelineError> {
        let held = self.pipeline.held_pushes().held_commits(run_id).await?;
        if held.end_sha != approved_end_sha {
            return Err(not_held(
                run_id,
                format!(
                    "its commits end at {}, not at the {} that was approved",
                    held.end_sha, approved_end_sha
                ),
            ));
        }
        let (_, feedback, repo) = self.pipeline.held_run(run_id).await?;
        self.pipeline
            .store
            .runs()
            .approve_held_push(run_id, &held.end_sha)
            .await?;
        self.pipeline
            .push_held_commits(run_id, &repo, &feedback)
            .await?;
        let ci: Vec<(String, &'static str)> = ci_entry_points(&held.changed_paths);
        let (pull, action) = ensure_feedback_pull_request(
            &self.pipeline.github,
            &self.pipeline.store,
            &repo,
            &feedback,
            &ci,
        )
        .await?;
        self.pipeline
            .store
            .pull_requests()
            .mirror_pull_request(repo.id, &pull.mirrored())
            .await?;
        if action != PullRequestAction::Kept {
            for note in ask_for_labels_and_reviews(&self.pipeline.github, &repo, pull.number).await
            {
                self.pipeline
                    .store
                    .runs()
                    .add_run_note(run_id, &note)
                    .await?;
            }
        }
        self.pipeline
            .store
            .runs()
            .finish_held_push(run_id, feedback.id, pull.number, &pull.html_url)
            .await?;
        self.pipeline
            .store
            .runs()
            .record_run_event(
                run_id,
                Some(feedback.id),
                RunEventKind::PullRequestUpdated,
                &format!(
                    "Run {run_id}'s commits, which change CI entry points, were pushed after \
                     your approval (PR #{})",
                    pull.number
                ),
            )
            .await?;
        tracing::info!(run = %run_id, pr = pull.number, "a held run's commits were pushed after the owner's approval");
        Ok(HeldPushReport {
            run_id,
            pr_number: pull.number,
            pr_url: pull.html_url,
            commits: held.commits,
        })
    }
}
