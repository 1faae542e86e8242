//! What of a run's tree someone other than the owner wrote or steered: commits on the
//! branch by another account (or by no account Handoff vouches for), an item a visitor
//! opened (the agent wrote its code at their word). Such a run never runs on the local
//! backend, and in a sandbox its agent starts with the tree's own agent configuration
//! switched off. A visitor's follow-up the owner included reaches only the prompt,
//! fenced.

use crate::domain::head_commits::strangers_commits;
use crate::domain::{FeedbackId, FollowUpSource, Repo};
use crate::github::comment_authorship::SignedInAccount;
use crate::pipeline::{Pipeline, PipelineError};

impl Pipeline {
    /// What PR `number`'s head holds that `owner` did not write, if anything (see
    /// [`strangers_commits`]): GitHub's list of its commits against what Handoff pushed.
    pub(crate) async fn strangers_commits_of(
        &self,
        repo: &Repo,
        number: u64,
        owner: &SignedInAccount,
    ) -> Result<Option<String>, PipelineError> {
        let commits = self
            .github
            .pull_request_commits(&self.store, &repo.name, number)
            .await?;
        let pushes = self.store.runs().handoff_pushes(repo.id).await?;
        Ok(strangers_commits(&commits, &owner.login, &pushes))
    }

    /// Whether a visitor opened item `item`: its agent's code was written at their word.
    pub(crate) async fn visitor_opened(
        &self,
        item: FeedbackId,
    ) -> Result<Option<String>, PipelineError> {
        let feedback = self.store.feedback().feedback(item).await?;
        Ok(feedback.opened_by_visitor.then(|| {
            format!(
                "its feedback was opened by @{}",
                feedback
                    .github_issue_author
                    .as_deref()
                    .unwrap_or("a visitor")
            )
        }))
    }

    /// Whether a visitor's follow-up is among the ones the owner let into item `item`'s
    /// prompts (fenced there as untrusted).
    pub(crate) async fn visitor_words_included(
        &self,
        item: FeedbackId,
    ) -> Result<Option<String>, PipelineError> {
        let included = self
            .store
            .feedback()
            .follow_ups(item)
            .await?
            .iter()
            .any(|follow_up| {
                follow_up.source == FollowUpSource::Visitor && follow_up.included_in_prompts
            });
        Ok(included.then(|| "a visitor's follow-up is in its prompts".to_owned()))
    }

    /// What of the tree a code run of item `item` works on someone else wrote or
    /// steered: the item, when a visitor opened it, and commits by others on its PR's
    /// branch (GitHub is asked when it has a PR). A visitor's follow-up the owner
    /// included is only in the prompt, fenced, and does not count here.
    pub(crate) async fn strangers_part_in_code_run(
        &self,
        repo: &Repo,
        item: FeedbackId,
        pr_number: Option<u64>,
    ) -> Result<Option<String>, PipelineError> {
        let mut why: Vec<String> = self.visitor_opened(item).await?.into_iter().collect();
        if let Some(number) = pr_number {
            match SignedInAccount::of(&self.github, &self.store).await {
                Ok(owner) => {
                    if let Some(strangers) = self.strangers_commits_of(repo, number, &owner).await?
                    {
                        why.push(format!("PR #{number}: {strangers}"));
                    }
                }
                Err(error) => {
                    tracing::warn!(%error, "the signed-in account cannot be told; the branch counts as someone else's");
                    why.push(format!(
                        "who wrote PR #{number}'s commits cannot be told ({error})"
                    ));
                }
            }
        }
        Ok((!why.is_empty()).then(|| why.join("; ")))
    }
}
