//! Check setup's line on where a repository's agent branches go. Branches in the
//! repository itself run its `push` and `pull_request` workflows with its secrets,
//! drafts included, so CI runs the agent's code with them: a warning whose fix makes a
//! fork. Branches in a fork run CI without the repository's secrets (GitHub's rule for
//! forks): ok, once the fork is found to be this repository's and the owner may push to
//! it.

use crate::domain::Repo;
use crate::github::agent_forks::AgentForkError;
use crate::github::GithubClient;

use super::{CheckLine, CheckStatus, Fix};

/// The line of `repo`'s agent branches; `place` is where a new fork would go when the
/// owner has a place (the last fork's, or the one organization they may fork to).
pub async fn agent_branches(client: &GithubClient, repo: &Repo, place: Option<&str>) -> CheckLine {
    let name = repo.name.full_name();
    let id = format!("agent-branches:{name}");
    let subject = format!("{name}'s agent branches");
    let fix = Fix::MakeAgentFork {
        repo: name.clone(),
        place: place.map(str::to_owned),
    };
    let Some(fork) = &repo.push_fork else {
        return CheckLine::not_ok(
            CheckStatus::Warning,
            id,
            subject,
            "they go to the repository itself, so CI runs the agent's code with the \
             repository's secrets (drafts too)",
            fix,
        );
    };
    match client.check_agent_fork(&repo.name, fork).await {
        Ok(()) => CheckLine::ok(
            id,
            subject,
            format!(
                "they go to the fork {fork}, whose PRs run CI without the repository's secrets"
            ),
        ),
        Err(AgentForkError::Github(error)) => CheckLine::not_ok(
            CheckStatus::Failure,
            id,
            subject,
            format!("the fork {fork} could not be checked: {error}"),
            fix,
        ),
        Err(refusal) => CheckLine::not_ok(
            CheckStatus::Failure,
            id,
            subject,
            format!("they go to {fork}, but {refusal}"),
            fix,
        ),
    }
}
