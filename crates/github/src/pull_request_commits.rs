//! A PR's commits as GitHub lists them (`GET /repos/{owner}/{repo}/pulls/{n}/commits`,
//! at most 250), with the accounts GitHub links their author and committer to: what
//! [`handoff_domain::head_commits`] sorts into the owner's and everyone else's.

use serde::Deserialize;

use super::client::GithubClient;
use super::error::GithubError;
use handoff_domain::head_commits::HeadCommit;
use handoff_domain::RepoName;
use handoff_store::Store;

/// An account GitHub links a commit to: a user, or `{}` (or `null`) when none.
#[derive(Debug, Clone, Default, Deserialize)]
struct LinkedAccount {
    #[serde(default)]
    login: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
struct GitIdentity {
    #[serde(default)]
    name: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
struct GitCommit {
    #[serde(default)]
    author: Option<GitIdentity>,
}

#[derive(Debug, Clone, Deserialize)]
struct ParentRef {
    sha: String,
}

#[derive(Debug, Clone, Deserialize)]
struct WirePullCommit {
    sha: String,
    #[serde(default)]
    parents: Vec<ParentRef>,
    #[serde(default)]
    author: Option<LinkedAccount>,
    #[serde(default)]
    committer: Option<LinkedAccount>,
    commit: GitCommit,
}

impl From<WirePullCommit> for HeadCommit {
    fn from(wire: WirePullCommit) -> Self {
        HeadCommit {
            sha: wire.sha,
            parents: wire.parents.into_iter().map(|parent| parent.sha).collect(),
            author_login: wire.author.and_then(|account| account.login),
            committer_login: wire.committer.and_then(|account| account.login),
            author_name: wire
                .commit
                .author
                .and_then(|identity| identity.name)
                .unwrap_or_default(),
        }
    }
}

impl GithubClient {
    /// The commits of PR `number`, oldest first, every page (GitHub stops at 250),
    /// conditionally.
    pub async fn pull_request_commits(
        &self,
        store: &Store,
        repo: &RepoName,
        number: u64,
    ) -> Result<Vec<HeadCommit>, GithubError> {
        let (commits, _) = self
            .get_all_pages::<WirePullCommit>(
                store,
                &format!(
                    "/repos/{}/{}/pulls/{number}/commits?per_page=100",
                    repo.owner, repo.name
                ),
            )
            .await?;
        Ok(commits.into_iter().map(HeadCommit::from).collect())
    }
}
