//! Issues for failing QA scenarios: one per scenario of a PR, found again on a
//! re-run (by the stored number, else by the marker on its first line) and updated
//! rather than filed twice; closed when the scenario passes again.

use serde_json::json;

use super::client::GithubClient;
use super::comment_authorship::SignedInAccount;
use super::error::GithubError;
use super::wire::WireIssue;
use handoff_domain::test_results::{failure_issue_body, failure_issue_marker};
use handoff_domain::untrusted_text::without_mentions;
use handoff_domain::{Repo, RunId};
use handoff_store::{Store, StoredTestResult};

/// The label every QA failure issue carries.
pub const QA_LABEL: &str = "handoff-qa";

fn issue_path(repo: &Repo, number: u64) -> String {
    format!(
        "/repos/{}/{}/issues/{number}",
        repo.name.owner, repo.name.name
    )
}

/// Files (or updates and reopens) the issue of a failing scenario; returns its number.
pub async fn file_failure_issue(
    client: &GithubClient,
    store: &Store,
    repo: &Repo,
    pr_number: u64,
    run_id: RunId,
    result: &StoredTestResult,
) -> Result<u64, GithubError> {
    let body = failure_issue_body(pr_number, run_id.0, &result.result);
    let title = format!(
        "QA: {} (#{pr_number})",
        without_mentions(&result.result.name)
    );
    let update = json!({ "title": title, "body": body, "state": "open" });

    let mut known = store
        .stage_runs()
        .qa_issue(repo.id, pr_number, &result.scenario_key)
        .await?;
    if known.is_none() {
        // Only an issue the signed-in account opened is Handoff's: anyone can open an
        // issue with the label and the marker (the marker is no secret).
        let owner = SignedInAccount::of(client, store).await?;
        let marker = failure_issue_marker(pr_number, &result.scenario_key);
        let (issues, _) = client.labeled_issues(store, &repo.name, QA_LABEL).await?;
        let marked = issues.iter().filter(|issue| {
            issue
                .body
                .as_deref()
                .and_then(|b| b.lines().next())
                .map(str::trim)
                == Some(marker.as_str())
        });
        for issue in marked {
            let ours = issue
                .user
                .as_ref()
                .is_some_and(|user| owner.is(&user.login));
            if ours {
                known = Some(issue.number);
                break;
            }
            tracing::warn!(
                issue = issue.number,
                author = issue.user.as_ref().map_or("someone", |user| user.login.as_str()),
                "an issue carries a QA failure's marker but was not opened by the signed-in account; it is not adopted"
            );
        }
    }
    if let Some(number) = known {
        match client
            .patch_json::<WireIssue>(&issue_path(repo, number), &update)
            .await
        {
            Ok(issue) => {
                store
                    .stage_runs()
                    .set_test_result_issue(result, repo.id, pr_number, issue.number)
                    .await?;
                return Ok(issue.number);
            }
            Err(GithubError::NotFound { .. }) => {}
            Err(error) => return Err(error),
        }
    }
    let created: WireIssue = client
        .post_json(
            &format!("/repos/{}/{}/issues", repo.name.owner, repo.name.name),
            &json!({ "title": title, "body": body, "labels": [QA_LABEL] }),
        )
        .await?;
    store
        .stage_runs()
        .set_test_result_issue(result, repo.id, pr_number, created.number)
        .await?;
    Ok(created.number)
}

/// Closes the issue of a scenario that passes now.
pub async fn close_fixed_issue(
    client: &GithubClient,
    repo: &Repo,
    number: u64,
) -> Result<(), GithubError> {
    match client
        .patch_json::<WireIssue>(&issue_path(repo, number), &json!({ "state": "closed" }))
        .await
    {
        Ok(_) | Err(GithubError::NotFound { .. }) => Ok(()),
        Err(error) => Err(error),
    }
}
