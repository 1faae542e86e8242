//! The pull request of a feedback item: found by its stored number or by its head
//! branch, never opened twice; a PR closed unmerged is reopened, and when that fails a
//! new PR from the same branch is opened and recorded. The body of a PR for an issue a
//! visitor opened carries the visitor's text fenced as untrusted. When the repository
//! pushes agent branches to a fork the owner controls, the PR's head is that fork's
//! branch (`fork-owner:branch`).

use serde::Serialize;
use serde_json::json;

use super::client::GithubClient;
use super::error::GithubError;
use super::wire::WirePull;
use handoff_domain::untrusted_text::fence_untrusted;
use handoff_domain::{Feedback, PullRequestState, Repo};
use handoff_store::Store;

/// What became of the PR.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PullRequestAction {
    /// A new PR (the item had none).
    Opened,
    /// The open PR the item already had.
    Kept,
    /// The item's PR was closed unmerged and is open again.
    Reopened,
    /// The old PR could not be reopened; a new one from the same branch took its place.
    Replaced,
}

/// The PRs from `branch`, newest first.
async fn pulls_from_branch(
    client: &GithubClient,
    repo: &Repo,
    branch: &str,
) -> Result<Vec<WirePull>, GithubError> {
    client
        .get_json(&format!(
            "/repos/{}/{}/pulls?state=all&head={}:{}&per_page=100",
            repo.name.owner,
            repo.name.name,
            repo.head_repository().owner,
            super::issues::query_value(branch)
        ))
        .await
}

/// The PR body's section that names the CI entry points the agent's commits change.
const CI_SECTION_START: &str = "<!-- handoff-ci-entry-points -->";
const CI_SECTION_END: &str = "<!-- /handoff-ci-entry-points -->";

/// `body` with its CI section saying `ci_entry_points` (added, or replaced).
pub fn with_ci_section(body: &str, ci_entry_points: &[(String, &'static str)]) -> String {
    let kept = match (body.find(CI_SECTION_START), body.find(CI_SECTION_END)) {
        (Some(start), Some(end)) if end > start => format!(
            "{}{}",
            body[..start].trim_end(),
            &body[end + CI_SECTION_END.len()..]
        ),
        _ => body.to_owned(),
    };
    let mut listed = String::new();
    for (path, why) in ci_entry_points {
        listed.push_str(&format!("- `{}`: {why}\n", path.replace('`', "'")));
    }
    format!(
        "{}\n\n{CI_SECTION_START}\n> [!WARNING]\n> **This PR changes CI entry points.** Files that \
         decide what runs in CI, with the repository's secrets, were changed by the agent: \
         read them before CI runs them or before you merge.\n\n{listed}{CI_SECTION_END}",
        kept.trim_end()
    )
}

/// The title of the item's PR: an item a visitor opened is named by its issue, so that
/// no visitor's words become a title the later stages read as the owner's.
pub fn pull_request_title(feedback: &Feedback) -> String {
    if feedback.opened_by_visitor {
        return match feedback.github_issue_number {
            Some(issue) => format!(
                "Feedback from issue #{issue} by @{}",
                feedback
                    .github_issue_author
                    .as_deref()
                    .unwrap_or("a visitor")
            ),
            None => format!("Feedback {}", feedback.public_id),
        };
    }
    feedback.title.clone()
}

/// The PR's head as GitHub names it: the branch, or `fork-owner:branch` when the
/// agent's branches go to a fork.
fn head_of(repo: &Repo, feedback: &Feedback) -> String {
    match &repo.push_fork {
        Some(fork) => format!("{}:{}", fork.owner, feedback.head_branch),
        None => feedback.head_branch.clone(),
    }
}

async fn open_new(
    client: &GithubClient,
    repo: &Repo,
    feedback: &Feedback,
    ci_entry_points: &[(String, &'static str)],
) -> Result<WirePull, GithubError> {
    let request = if feedback.opened_by_visitor {
        format!(
            "Feedback from @{}, who is not the repository owner, as they wrote it:\n\n{}",
            feedback.github_issue_author.as_deref().unwrap_or("someone"),
            fence_untrusted(&feedback.body)
        )
    } else {
        feedback.body.clone()
    };
    let mut body = format!(
        "{request}\n\n---\n_Opened by Handoff for feedback `{}`. Follow-up instructions add commits to this PR._",
        feedback.public_id
    );
    if let Some(issue) = feedback.github_issue_number {
        body.push_str(&format!("\n\nCloses #{issue}."));
    }
    if !ci_entry_points.is_empty() {
        body = with_ci_section(&body, ci_entry_points);
    }
    let mut request = json!({
        "title": pull_request_title(feedback),
        "head": head_of(repo, feedback),
        "base": repo.default_branch,
        "body": body,
        // A draft is not ready for review: CI treats it as such, and so do people.
        "draft": repo.draft_pull_requests,
    });
    if let Some(fork) = &repo.push_fork {
        request["head_repo"] = json!(fork.full_name());
    }
    client
        .post_json(
            &format!("/repos/{}/{}/pulls", repo.name.owner, repo.name.name),
            &request,
        )
        .await
}

/// Says in an existing PR's body which CI entry points the latest commits change.
async fn flag_ci_changes(
    client: &GithubClient,
    repo: &Repo,
    pull: &WirePull,
    ci_entry_points: &[(String, &'static str)],
) -> Result<WirePull, GithubError> {
    let body = with_ci_section(pull.body.as_deref().unwrap_or_default(), ci_entry_points);
    client
        .patch_json(
            &format!(
                "/repos/{}/{}/pulls/{}",
                repo.name.owner, repo.name.name, pull.number
            ),
            &json!({ "body": body }),
        )
        .await
}

async fn reopen(client: &GithubClient, repo: &Repo, number: u64) -> Result<WirePull, GithubError> {
    client
        .patch_json(
            &format!(
                "/repos/{}/{}/pulls/{number}",
                repo.name.owner, repo.name.name
            ),
            &json!({ "state": "open" }),
        )
        .await
}

/// Makes sure the item's branch has an open PR and records it on the item.
pub async fn ensure_feedback_pull_request(
    client: &GithubClient,
    store: &Store,
    repo: &Repo,
    feedback: &Feedback,
    ci_entry_points: &[(String, &'static str)],
) -> Result<(WirePull, PullRequestAction), GithubError> {
    let stored = match feedback.pr_number {
        Some(number) => {
            client
                .pull_request_if_any(store, &repo.name, number)
                .await?
        }
        None => None,
    };
    let existing = match stored {
        Some(found)
            if found.head.name == feedback.head_branch
                && found.head_is_in(repo.head_repository()) =>
        {
            Some(found)
        }
        _ => {
            let mut from_branch = pulls_from_branch(client, repo, &feedback.head_branch).await?;
            from_branch.retain(|pull| pull.head_is_in(repo.head_repository()));
            from_branch.sort_by_key(|pull| {
                (
                    pull.state() != PullRequestState::Open,
                    std::cmp::Reverse(pull.number),
                )
            });
            from_branch.into_iter().next()
        }
    };
    let (pull, action) = match existing {
        Some(found) if found.state() == PullRequestState::Open => (found, PullRequestAction::Kept),
        Some(found) if found.state() == PullRequestState::Closed => {
            match reopen(client, repo, found.number).await {
                Ok(reopened) => (reopened, PullRequestAction::Reopened),
                Err(GithubError::Unprocessable { .. } | GithubError::Forbidden { .. }) => (
                    open_new(client, repo, feedback, ci_entry_points).await?,
                    PullRequestAction::Replaced,
                ),
                Err(error) => return Err(error),
            }
        }
        Some(_merged) => (
            open_new(client, repo, feedback, ci_entry_points).await?,
            PullRequestAction::Replaced,
        ),
        None => match open_new(client, repo, feedback, ci_entry_points).await {
            Ok(opened) => (opened, PullRequestAction::Opened),
            // Someone (or an earlier, interrupted run) opened it meanwhile.
            Err(GithubError::Unprocessable { message, .. })
                if message.contains("already exists") =>
            {
                let found = pulls_from_branch(client, repo, &feedback.head_branch)
                    .await?
                    .into_iter()
                    .find(|pull| pull.state() == PullRequestState::Open)
                    .ok_or(GithubError::Unprocessable {
                        request: "POST pulls".to_owned(),
                        message,
                    })?;
                (found, PullRequestAction::Kept)
            }
            Err(error) => return Err(error),
        },
    };
    let pull = if !ci_entry_points.is_empty() && action != PullRequestAction::Opened {
        flag_ci_changes(client, repo, &pull, ci_entry_points).await?
    } else {
        pull
    };
    store
        .feedback()
        .record_pull_request(feedback.id, pull.number, &pull.html_url)
        .await?;
    Ok((pull, action))
}
