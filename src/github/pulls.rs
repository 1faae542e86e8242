//! Pull requests: reading one's state (merged, closed, open).

use super::client::GithubClient;
use super::error::GithubError;
use super::wire::WirePull;
use crate::domain::RepoName;
use crate::store::Store;

impl GithubClient {
    /// PR `number`, conditionally: `changed` is false when GitHub answered 304.
    pub async fn pull_request(
        &self,
        store: &Store,
        repo: &RepoName,
        number: u64,
    ) -> Result<(WirePull, bool), GithubError> {
        let path = format!("/repos/{}/{}/pulls/{number}", repo.owner, repo.name);
        let answer = self.get_conditional(store, &path).await?;
        let pull = self.parse_json(
            &http::Method::GET,
            &path,
            &http::HeaderMap::new(),
            answer.body.as_bytes(),
        )?;
        Ok((pull, answer.changed))
    }
}
