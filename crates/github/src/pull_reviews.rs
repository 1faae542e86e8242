//! What reviewers wrote on a PR: the reviews (their bodies) and the inline comments on
//! lines of the diff. Both lists are read conditionally, all pages.

use super::client::GithubClient;
use super::error::GithubError;
use super::wire::{WireReview, WireReviewComment};
use handoff_domain::RepoName;
use handoff_store::Store;

impl GithubClient {
    /// Every review of PR `number`, oldest first.
    pub async fn pull_request_reviews(
        &self,
        store: &Store,
        repo: &RepoName,
        number: u64,
    ) -> Result<(Vec<WireReview>, bool), GithubError> {
        self.get_all_pages(
            store,
            &format!(
                "/repos/{}/{}/pulls/{number}/reviews?per_page=100",
                repo.owner, repo.name
            ),
        )
        .await
    }

    /// Every inline review comment of PR `number`, oldest first.
    pub async fn pull_request_review_comments(
        &self,
        store: &Store,
        repo: &RepoName,
        number: u64,
    ) -> Result<(Vec<WireReviewComment>, bool), GithubError> {
        self.get_all_pages(
            store,
            &format!(
                "/repos/{}/{}/pulls/{number}/comments?per_page=100",
                repo.owner, repo.name
            ),
        )
        .await
    }
}
