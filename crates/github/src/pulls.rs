//! Pull requests: one by number (its state, head and base), and the list of a
//! repository's open ones.

use super::client::GithubClient;
use super::error::GithubError;
use super::wire::WirePull;
use handoff_domain::RepoName;
use handoff_store::Store;

fn pull_path(repo: &RepoName, number: u64) -> String {
    format!("/repos/{}/{}/pulls/{number}", repo.owner, repo.name)
}

impl GithubClient {
    /// PR `number`, conditionally: `changed` is false when GitHub answered 304.
    pub async fn pull_request(
        &self,
        store: &Store,
        repo: &RepoName,
        number: u64,
    ) -> Result<(WirePull, bool), GithubError> {
        let path = pull_path(repo, number);
        let answer = self.get_conditional(store, &path).await?;
        let pull = self.parse_json(
            &http::Method::GET,
            &path,
            &http::HeaderMap::new(),
            answer.body.as_bytes(),
        )?;
        Ok((pull, answer.changed))
    }

    /// PR `number`, or `None` when GitHub has no such PR.
    pub async fn pull_request_if_any(
        &self,
        store: &Store,
        repo: &RepoName,
        number: u64,
    ) -> Result<Option<WirePull>, GithubError> {
        match self.pull_request(store, repo, number).await {
            Ok((pull, _)) => Ok(Some(pull)),
            Err(GithubError::NotFound { .. }) => Ok(None),
            Err(error) => Err(error),
        }
    }

    /// The PRs of `repo` (open or not) updated at or after `since`, newest update
    /// first: pages are read until one reaches back past `since`.
    pub async fn pulls_updated_since(
        &self,
        store: &Store,
        repo: &RepoName,
        since: chrono::DateTime<chrono::Utc>,
    ) -> Result<Vec<WirePull>, GithubError> {
        let (pulls, _) = self
            .get_pages_while(
                store,
                &format!(
                    "/repos/{}/{}/pulls?state=all&sort=updated&direction=desc&per_page=100",
                    repo.owner, repo.name
                ),
                |page: &[WirePull]| {
                    page.last()
                        .and_then(|pull| pull.updated_at)
                        .is_some_and(|updated_at| updated_at >= since)
                },
            )
            .await?;
        Ok(pulls
            .into_iter()
            .filter(|pull| pull.updated_at.is_none_or(|updated_at| updated_at >= since))
            .collect())
    }

    /// Every open PR of `repo`, all pages, conditionally.
    pub async fn open_pull_requests(
        &self,
        store: &Store,
        repo: &RepoName,
    ) -> Result<(Vec<WirePull>, bool), GithubError> {
        self.get_all_pages(
            store,
            &format!(
                "/repos/{}/{}/pulls?state=open&per_page=100",
                repo.owner, repo.name
            ),
        )
        .await
    }
}
