//! Automatic updates decided and begun: after a sync recorded reasons to update a
//! feedback PR by itself (a failing check), each
//! is decided here — an Update PR run begun for the caller to drive, skipped because a
//! guardrail held, or stopped because the same check failed the same way twice in a
//! row — and every decision says why, in the store, for the window and the CLI.

use crate::pipeline::handles::CodeRuns;
use std::collections::BTreeMap;

use super::code_run::{BegunCodeRun, CodeRunOptions};
use super::{Pipeline, PipelineError};
use crate::domain::automatic_update::{
    automatic_follow_up_body, failure_signature, guardrail_refusal, log_tail,
    repeats_the_previous_failure, PullRequestFacts,
};
use crate::domain::{
    AutomaticDecision, AutomaticTrigger, AutomaticUpdate, Feedback, FeedbackId, FeedbackStatus,
    FollowUpId, PullRequest, Repo,
};
use crate::store::AutomaticStart;

/// What deciding the pending reasons did.
#[derive(Debug, Default)]
pub struct AutomaticUpdatesBegun {
    /// The Update PR runs begun (queued), for the caller to drive.
    pub runs: Vec<BegunCodeRun>,
    /// Every reason decided now (started, skipped or stopped), with why.
    pub decided: Vec<AutomaticUpdate>,
}

/// A reason that passed every guardrail, with what its run's prompt gets.
struct ReadyUpdate {
    update: AutomaticUpdate,
    log_tail: Option<String>,
    signature: Option<String>,
}

impl Pipeline {
    async fn decide_for_item(
        &self,
        feedback_id: FeedbackId,
        updates: Vec<AutomaticUpdate>,
        begun: &mut AutomaticUpdatesBegun,
    ) -> Result<(), PipelineError> {
        let item = self.store.feedback().feedback(feedback_id).await?;
        if item.status == FeedbackStatus::Coding {
            return Ok(());
        }
        let repo = self.store.repositories().repo(item.repo_id).await?;
        if let Some(reason) = refusal_for_all(&repo, &item) {
            for update in updates {
                self.skip(&update, &reason, None, begun).await?;
            }
            return Ok(());
        }

        let mut ready = Vec::new();
        for update in updates {
            if let Some(next) = self.check_guardrails(&repo, update, begun).await? {
                ready.push(next);
            }
        }
        if ready.is_empty() {
            return Ok(());
        }
        let (options, started_because) = one_run_for(&ready);
        match self.code_runs().begin_code_run(feedback_id, options).await {
            Ok(run) => {
                tracing::info!(
                    feedback = %feedback_id, run = %run.run_id(), because = %started_because,
                    "an automatic update started"
                );
                for next in &ready {
                    begun.decided.push(
                        self.store
                            .automatic_updates()
                            .automatic_update(next.update.id)
                            .await?,
                    );
                }
                begun.runs.push(run);
            }
            Err(error) => {
                let reason = format!("the Update PR run was refused: {error}");
                tracing::info!(feedback = %feedback_id, %reason, "an automatic update did not start");
                for next in ready {
                    self.skip(&next.update, &reason, next.signature.as_deref(), begun)
                        .await?;
                }
            }
        }
        Ok(())
    }

    /// The failing check's log tail (when its job's log can be read), and the signature
    /// of how it failed: what its follow-ups say, without the link to the check's page
    /// (it names its run, which differs every time), and the tail.
    async fn failure_of(
        &self,
        repo: &Repo,
        update: &AutomaticUpdate,
    ) -> Result<(Option<String>, String), PipelineError> {
        let tail = match update.actions_job_id {
            Some(job) => match self.github.actions_job_log(&repo.name, job).await {
                Ok(log) => Some(log_tail(&log)),
                Err(error) => {
                    tracing::warn!(repo = %repo.name, job, %error, "the failing job's log could not be read");
                    None
                }
            },
            None => None,
        };
        let mut failure = String::new();
        for id in &update.follow_up_ids {
            let output = self.store.feedback().follow_up(FollowUpId(*id)).await?;
            for line in output
                .body
                .lines()
                .filter(|line| !line.starts_with("Details: "))
            {
                failure.push_str(line);
                failure.push('\n');
            }
        }
        failure.push_str(tail.as_deref().unwrap_or_default());
        let signature = failure_signature(&update.subject, &update.head_sha, &failure);
        Ok((tail, signature))
    }

    /// Why a guardrail holds `update` back, if one does: the PR's facts (whose it is,
    /// open, draft) and how many automatic runs it had in the last day.
    async fn guardrail_held(
        &self,
        repo: &Repo,
        update: &AutomaticUpdate,
        pull: &PullRequest,
    ) -> Result<Option<String>, PipelineError> {
        let repo_full_name = repo.name.full_name();
        let push_fork = repo.push_fork.as_ref().map(|fork| fork.full_name());
        let facts = PullRequestFacts {
            repo_full_name: &repo_full_name,
            push_fork: push_fork.as_deref(),
            head_repo: pull.head_repo.as_deref(),
            author_login: pull.author_login.as_deref(),
            head_sha: &pull.head_sha,
            open: pull.state == crate::domain::PullRequestState::Open,
            draft: pull.draft,
            marked_draft: pull.marked_draft,
            opened_as_drafts: repo.draft_pull_requests,
        };
        let a_day_ago = self.store.now() - chrono::Duration::hours(24);
        let started_in_a_day = self
            .store
            .automatic_updates()
            .automatic_runs_since(repo.id, update.pr_number, a_day_ago)
            .await?;
        Ok(guardrail_refusal(
            update,
            &facts,
            started_in_a_day,
            repo.automatic_attempts_per_day,
        ))
    }

    /// The reason ready to run, or `None` when a guardrail held (and it was decided so).
    async fn check_guardrails(
        &self,
        repo: &Repo,
        update: AutomaticUpdate,
        begun: &mut AutomaticUpdatesBegun,
    ) -> Result<Option<ReadyUpdate>, PipelineError> {
        let Some(pull) = self
            .store
            .pull_requests()
            .pull_request(repo.id, update.pr_number)
            .await?
        else {
            let reason = format!("PR #{} is not in the mirror", update.pr_number);
            self.skip(&update, &reason, None, begun).await?;
            return Ok(None);
        };
        if let Some(reason) = self.guardrail_held(repo, &update, &pull).await? {
            self.skip(&update, &reason, None, begun).await?;
            return Ok(None);
        }
        if update.trigger != AutomaticTrigger::CheckFailed {
            return Ok(Some(ReadyUpdate {
                update,
                log_tail: None,
                signature: None,
            }));
        }

        let (tail, signature) = self.failure_of(repo, &update).await?;
        let previous = self
            .store
            .automatic_updates()
            .previous_check_update(repo.id, update.pr_number, &update.subject, update.id)
            .await?;
        if repeats_the_previous_failure(previous.as_ref(), &update.subject, &signature) {
            let reason = format!(
                "the check \"{}\" failed the same way again after an automatic update \
                 (now on {}): Handoff stopped updating PR #{} for it; the owner decides what next",
                update.subject,
                &update.head_sha[..update.head_sha.len().min(7)],
                update.pr_number
            );
            tracing::info!(repo = %repo.name, pr = update.pr_number, %reason, "automatic updates stopped");
            let decided = self
                .store
                .automatic_updates()
                .decide_automatic_update(
                    update.id,
                    AutomaticDecision::Stopped,
                    &reason,
                    Some(&signature),
                )
                .await?;
            begun.decided.push(decided);
            return Ok(None);
        }
        Ok(Some(ReadyUpdate {
            update,
            log_tail: tail,
            signature: Some(signature),
        }))
    }

    async fn skip(
        &self,
        update: &AutomaticUpdate,
        reason: &str,
        signature: Option<&str>,
        begun: &mut AutomaticUpdatesBegun,
    ) -> Result<(), PipelineError> {
        tracing::info!(
            feedback = %update.feedback_id, pr = update.pr_number, %reason,
            "an automatic update was skipped"
        );
        let decided = self
            .store
            .automatic_updates()
            .decide_automatic_update(update.id, AutomaticDecision::Skipped, reason, signature)
            .await?;
        begun.decided.push(decided);
        Ok(())
    }
}

impl CodeRuns<'_> {
    /// Decides every pending reason to update a PR by itself. An item whose run is
    /// going keeps its reasons pending until the run ends; an item's reasons that pass
    /// the guardrails are answered by one run together.
    pub async fn begin_automatic_updates(&self) -> Result<AutomaticUpdatesBegun, PipelineError> {
        let mut by_item: BTreeMap<FeedbackId, Vec<AutomaticUpdate>> = BTreeMap::new();
        for update in self
            .pipeline
            .store
            .automatic_updates()
            .pending_automatic_updates()
            .await?
        {
            by_item.entry(update.feedback_id).or_default().push(update);
        }
        let mut begun = AutomaticUpdatesBegun::default();
        for (feedback_id, updates) in by_item {
            self.pipeline
                .decide_for_item(feedback_id, updates, &mut begun)
                .await?;
        }
        Ok(begun)
    }
}
/// Why none of an item's automatic updates may start: updates turned off for its
/// repository, the item archived, or not waiting for review.
fn refusal_for_all(repo: &Repo, item: &Feedback) -> Option<String> {
    if !repo.automatic_updates {
        Some(format!(
            "automatic updates were turned off for {}",
            repo.name
        ))
    } else if let Some(state) = item.archived_as {
        Some(format!("feedback {} is {}", item.id, state.label()))
    } else if item.status != FeedbackStatus::WaitingForReview {
        Some(format!(
            "feedback {} is {}, not waiting for review",
            item.id, item.status
        ))
    } else {
        None
    }
}

/// One Update PR run for every reason `ready`: its instructions say each, and it
/// includes each one's follow-ups. Returns its options, and why it started.
fn one_run_for(ready: &[ReadyUpdate]) -> (CodeRunOptions, String) {
    let started_because = ready
        .iter()
        .map(|next| next.update.started_because())
        .collect::<Vec<_>>()
        .join("; ");
    let instructions = ready
        .iter()
        .map(|next| automatic_follow_up_body(&next.update, next.log_tail.as_deref()))
        .collect::<Vec<_>>()
        .join("\n\n");
    let start = AutomaticStart {
        updates: ready
            .iter()
            .map(|next| (next.update.id, next.signature.clone()))
            .collect(),
        started_because: started_because.clone(),
        include: ready
            .iter()
            .flat_map(|next| next.update.follow_up_ids.iter().map(|id| FollowUpId(*id)))
            .collect(),
    };
    let options = CodeRunOptions {
        instructions: Some(instructions),
        automatic: Some(start),
        ..CodeRunOptions::default()
    };
    (options, started_because)
}
