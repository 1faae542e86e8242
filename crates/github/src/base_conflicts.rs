//! Whether each open feedback PR conflicts with its base branch: an Update PR never
//! rebases, so the owner needs to know. GitHub says so only in the answer for one PR
//! (`mergeable`), so a sync asks a feedback PR only when that could have changed: when
//! the base branch moved (one conditional request tells), when the PR itself changed,
//! or while GitHub did not know yet. Every request is conditional.

use super::client::GithubClient;
use super::error::GithubError;
use super::issues::query_value;
use super::sync_steps::in_flight;
use handoff_domain::Repo;
use handoff_store::Store;

/// Asks the open feedback PRs `numbers` of `repo` whether they conflict with the base,
/// as above; `asked_anyway` are PRs that changed. What cannot be read is a line in
/// `errors`; only a failing store stops the sync.
pub(super) async fn follow_base_conflicts(
    client: &GithubClient,
    store: &Store,
    repo: &Repo,
    numbers: &[u64],
    asked_anyway: &[u64],
    errors: &mut Vec<String>,
) -> Result<(), GithubError> {
    if numbers.is_empty() {
        return Ok(());
    }
    let branch = format!(
        "/repos/{}/{}/branches/{}",
        repo.name.owner,
        repo.name.name,
        query_value(&repo.default_branch)
    );
    let base_moved = match client.get_conditional(store, &branch).await {
        Ok(answer) => answer.changed,
        Err(GithubError::Store(error)) => return Err(GithubError::Store(error)),
        Err(error) => {
            errors.push(format!(
                "{}: whether its PRs conflict with {} could not be read: {error}",
                repo.name, repo.default_branch
            ));
            return Ok(());
        }
    };
    let mut asked = Vec::new();
    for number in numbers {
        let unknown = store
            .pull_requests()
            .pull_request(repo.id, *number)
            .await?
            .is_none_or(|pull| pull.conflicts_with_base.is_none());
        if base_moved || unknown || asked_anyway.contains(number) {
            asked.push(*number);
        }
    }
    let answers = in_flight(
        asked
            .iter()
            .map(|number| client.pull_request(store, &repo.name, *number))
            .collect(),
    )
    .await;
    for (number, answer) in asked.iter().zip(answers) {
        match answer {
            Ok((pull, _)) => {
                let conflicts = pull.mergeable.map(|mergeable| !mergeable);
                if store
                    .pull_requests()
                    .set_pull_request_conflicts(repo.id, *number, conflicts)
                    .await?
                    && conflicts == Some(true)
                {
                    tracing::info!(repo = %repo.name, pr = number, "a feedback PR conflicts with its base");
                }
            }
            Err(GithubError::Store(error)) => return Err(GithubError::Store(error)),
            Err(error) => errors.push(format!(
                "{}: whether PR #{number} conflicts with {} could not be read: {error}",
                repo.name, repo.default_branch
            )),
        }
    }
    Ok(())
}
