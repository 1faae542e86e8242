//! The repositories the signed-in account can see (`GET /user/repos`), for picking one to
//! connect, and one repository's own answer (`GET /repos/{owner}/{repo}`).

use serde::Deserialize;

use super::client::GithubClient;
use super::error::GithubError;
use handoff_domain::RepoName;
use handoff_store::Store;

/// The most repositories listed (ten pages of 100, most recently updated first).
pub const MOST_LISTED: usize = 1000;

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct RepositoryPermissions {
    #[serde(default)]
    pub push: bool,
    #[serde(default)]
    pub admin: bool,
}

/// The parts of a repository Handoff reads.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct GithubRepository {
    pub full_name: String,
    pub default_branch: String,
    #[serde(default)]
    pub private: bool,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub permissions: Option<RepositoryPermissions>,
    #[serde(default = "issues_on")]
    pub has_issues: bool,
}

fn issues_on() -> bool {
    true
}

impl GithubRepository {
    /// Whether the signed-in account may push to it.
    pub fn can_push(&self) -> bool {
        self.permissions
            .as_ref()
            .is_some_and(|permissions| permissions.push || permissions.admin)
    }
}

impl GithubClient {
    /// The repositories the signed-in account owns, collaborates on or sees through an
    /// organization, most recently updated first, all pages up to [`MOST_LISTED`];
    /// conditional, so an unchanged list costs no rate limit.
    pub async fn user_repositories(
        &self,
        store: &Store,
    ) -> Result<Vec<GithubRepository>, GithubError> {
        let (mut repositories, _) = self
            .get_all_pages::<GithubRepository>(
                store,
                "/user/repos?per_page=100&sort=updated&affiliation=owner,collaborator,organization_member",
            )
            .await?;
        repositories.truncate(MOST_LISTED);
        Ok(repositories)
    }

    /// One repository, with the signed-in account's permissions on it.
    pub async fn repository(&self, name: &RepoName) -> Result<GithubRepository, GithubError> {
        self.get_json(&format!("/repos/{}/{}", name.owner, name.name))
            .await
    }
}
