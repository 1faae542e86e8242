//! Labels and review requests on a PR Handoff opened, as its repository asks for them
//! (each repository's own list). What GitHub refuses (a reviewer who is not a
//! collaborator, the PR's own author) is said on the run, never fails it: the PR is
//! there either way.

use serde_json::json;

use super::client::GithubClient;
use super::error::GithubError;
use handoff_domain::review_requests::Reviewer;
use handoff_domain::{Repo, RepoName};

impl GithubClient {
    /// Adds `labels` to issue or PR `number` (GitHub makes a label that does not exist).
    pub async fn add_labels(
        &self,
        repo: &RepoName,
        number: u64,
        labels: &[String],
    ) -> Result<(), GithubError> {
        let _: serde_json::Value = self
            .post_json(
                &format!("/repos/{}/{}/issues/{number}/labels", repo.owner, repo.name),
                &json!({ "labels": labels }),
            )
            .await?;
        Ok(())
    }

    /// Requests reviews of PR `number` from `reviewers` (people and teams).
    pub async fn request_reviewers(
        &self,
        repo: &RepoName,
        number: u64,
        reviewers: &[Reviewer],
    ) -> Result<(), GithubError> {
        let mut users = Vec::new();
        let mut teams = Vec::new();
        for reviewer in reviewers {
            match reviewer {
                Reviewer::User(login) => users.push(login.as_str()),
                Reviewer::Team { slug, .. } => teams.push(slug.as_str()),
            }
        }
        let _: serde_json::Value = self
            .post_json(
                &format!(
                    "/repos/{}/{}/pulls/{number}/requested_reviewers",
                    repo.owner, repo.name
                ),
                &json!({ "reviewers": users, "team_reviewers": teams }),
            )
            .await?;
        Ok(())
    }
}

/// Puts `repo`'s labels on PR `number` and requests its reviewers; returns what GitHub
/// refused, as notes for the run.
pub async fn ask_for_labels_and_reviews(
    client: &GithubClient,
    repo: &Repo,
    number: u64,
) -> Vec<String> {
    let mut notes = Vec::new();
    if !repo.pull_request_labels.is_empty() {
        if let Err(error) = client
            .add_labels(&repo.name, number, &repo.pull_request_labels)
            .await
        {
            tracing::warn!(repo = %repo.name, pr = number, %error, "the PR's labels could not be added");
            notes.push(format!(
                "the labels could not be put on PR #{number}: {error}"
            ));
        }
    }
    if !repo.pull_request_reviewers.is_empty() {
        if let Err(error) = client
            .request_reviewers(&repo.name, number, &repo.pull_request_reviewers)
            .await
        {
            tracing::warn!(repo = %repo.name, pr = number, %error, "reviews could not be requested");
            notes.push(format!(
                "reviews could not be requested on PR #{number}: {error}"
            ));
        }
    }
    notes
}
