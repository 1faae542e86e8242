//! Issue comments (a PR's conversation comments are issue comments): list every page,
//! get, create, update.

use serde_json::json;

use super::client::GithubClient;
use super::error::GithubError;
use super::wire::WireComment;
use handoff_domain::RepoName;
use handoff_store::Store;

impl GithubClient {
    /// Every comment of issue or PR `number`, oldest first, all pages; conditional,
    /// so an unchanged thread costs no rate limit. `changed` says if any page changed.
    pub async fn issue_comments(
        &self,
        store: &Store,
        repo: &RepoName,
        number: u64,
    ) -> Result<(Vec<WireComment>, bool), GithubError> {
        self.get_all_pages(
            store,
            &format!(
                "/repos/{}/{}/issues/{number}/comments?per_page=100",
                repo.owner, repo.name
            ),
        )
        .await
    }

    /// Every issue comment of `repo` (on issues and PRs alike) updated at or after
    /// `since`, oldest update first, all pages, conditionally.
    pub async fn repository_comments_since(
        &self,
        store: &Store,
        repo: &RepoName,
        since: chrono::DateTime<chrono::Utc>,
    ) -> Result<Vec<WireComment>, GithubError> {
        let (comments, _) = self
            .get_all_pages(
                store,
                &format!(
                    "/repos/{}/{}/issues/comments?sort=updated&direction=asc&since={}&per_page=100",
                    repo.owner,
                    repo.name,
                    super::issues::since_value(since)
                ),
            )
            .await?;
        Ok(comments)
    }

    /// One comment; `None` when it is gone (deleted on GitHub).
    pub async fn issue_comment(
        &self,
        repo: &RepoName,
        id: u64,
    ) -> Result<Option<WireComment>, GithubError> {
        match self
            .get_json(&format!(
                "/repos/{}/{}/issues/comments/{id}",
                repo.owner, repo.name
            ))
            .await
        {
            Ok(comment) => Ok(Some(comment)),
            Err(GithubError::NotFound { .. }) => Ok(None),
            Err(error) => Err(error),
        }
    }

    pub async fn create_issue_comment(
        &self,
        repo: &RepoName,
        number: u64,
        body: &str,
    ) -> Result<WireComment, GithubError> {
        self.post_json(
            &format!(
                "/repos/{}/{}/issues/{number}/comments",
                repo.owner, repo.name
            ),
            &json!({ "body": body }),
        )
        .await
    }

    /// Replaces a comment's body; `None` when the comment is gone.
    pub async fn update_issue_comment(
        &self,
        repo: &RepoName,
        id: u64,
        body: &str,
    ) -> Result<Option<WireComment>, GithubError> {
        match self
            .patch_json(
                &format!("/repos/{}/{}/issues/comments/{id}", repo.owner, repo.name),
                &json!({ "body": body }),
            )
            .await
        {
            Ok(comment) => Ok(Some(comment)),
            Err(GithubError::NotFound { .. }) => Ok(None),
            Err(error) => Err(error),
        }
    }
}
