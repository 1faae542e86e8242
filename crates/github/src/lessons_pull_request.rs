//! The pull request that keeps the lessons file in step: opened once from its own
//! branch (in the fork the repository's agent branches go to, when it has one), then
//! updated by new commits on that branch while it is open.

use serde_json::json;

use super::client::GithubClient;
use super::error::GithubError;
use super::wire::WirePull;
use handoff_domain::Repo;

/// Opens the lessons PR of `repo` from `branch`, which changes `path`.
pub async fn open_lessons_pull_request(
    client: &GithubClient,
    repo: &Repo,
    branch: &str,
    path: &str,
) -> Result<WirePull, GithubError> {
    let body = format!(
        "The lessons the owner accepted in Handoff, drawn from their own corrections of AI \
         agents' work, in a marked section of `{path}`: every agent and every person on the \
         project reads them there. Only the section between the \
         `<!-- handoff:lessons:start -->` and `<!-- handoff:lessons:end -->` lines is \
         Handoff's; the rest of the file stays as it is.\n\n---\n_Opened by Handoff. When \
         more lessons are accepted, \"Write to {path}\" adds commits to this PR._"
    );
    let mut request = json!({
        "title": format!("Lessons for agents in {path}"),
        "head": branch,
        "base": repo.default_branch,
        "body": body,
    });
    // From the fork the repository's agent branches go to, when it has one.
    if let Some(fork) = &repo.push_fork {
        request["head"] = json!(format!("{}:{branch}", fork.owner));
        request["head_repo"] = json!(fork.full_name());
    }
    client
        .post_json(
            &format!("/repos/{}/{}/pulls", repo.name.owner, repo.name.name),
            &request,
        )
        .await
}
