//! Background sync with GitHub (D8, F1, F2) in place of webhooks: send the outbox, mirror
//! issues that carry the feedback label, mirror other people's comments on them as
//! visitor follow-ups, follow each feedback PR's state, and notice edits and deletions
//! of managed comments made on GitHub. Every GET is conditional, so an idle sync costs
//! nothing against the rate limit; a rate limit is waited out by the client.

use std::collections::BTreeMap;

use futures::StreamExt as _;
use serde::Serialize;

use super::client::{GithubClient, RequestCount};
use super::comment_publishing::record_remote_body;
use super::error::GithubError;
use super::owner_edits::{send_outbox, OutboxPass, OutboxReport};
use super::wire::WireUser;
use crate::domain::{
    CommentKind, FeedbackId, FeedbackSource, FeedbackStatus, PullRequestState, Repo,
};
use crate::store::{FeedbackFilter, NewFeedback, SettingKey, Store};

/// A status a sync changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SyncedStatusChange {
    pub feedback_id: FeedbackId,
    pub from: FeedbackStatus,
    pub to: FeedbackStatus,
}

/// What a sync found and did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SyncReport {
    pub repos: u32,
    pub new_feedback: Vec<FeedbackId>,
    pub new_visitor_follow_ups: u32,
    pub status_changes: Vec<SyncedStatusChange>,
    /// Managed comments whose text was changed on GitHub (each now a version).
    pub comment_edits_found: u32,
    /// Managed comments found deleted on GitHub.
    pub comments_missing: u32,
    pub outbox: OutboxReport,
    pub requests: RequestCount,
    /// Repositories that could not be synced, with why.
    pub errors: Vec<String>,
}

/// How many GitHub requests a sync has in flight at once.
const REQUESTS_IN_FLIGHT: usize = 8;

/// Awaits `requests` several at a time and returns their results in order (so what is
/// written to the store does not depend on timing).
async fn in_flight<F: std::future::Future>(requests: Vec<F>) -> Vec<F::Output> {
    futures::stream::iter(requests)
        .buffered(REQUESTS_IN_FLIGHT)
        .collect()
        .await
}

/// The login of the signed-in owner, from the settings or (once) from GitHub.
pub async fn owner_login(client: &GithubClient, store: &Store) -> Result<String, GithubError> {
    if let Some(login) = store.setting(SettingKey::GithubLogin).await? {
        return Ok(login);
    }
    let user: WireUser = client.get_json("/user").await?;
    store
        .set_setting(SettingKey::GithubLogin, &user.login)
        .await?;
    Ok(user.login)
}

/// Syncs every connected repository (or only `only`).
pub async fn sync(
    client: &GithubClient,
    store: &Store,
    only: Option<&crate::domain::RepoName>,
) -> Result<SyncReport, GithubError> {
    let before = client.request_count();
    let mut report = SyncReport {
        outbox: send_outbox(client, store, OutboxPass::DueOnly).await?,
        ..SyncReport::default()
    };
    let owner = owner_login(client, store).await?;
    for repo in store.repos().await? {
        if only.is_some_and(|only| *only != repo.name) {
            continue;
        }
        report.repos += 1;
        match sync_repo(client, store, &repo, &owner, &mut report).await {
            Ok(()) => {}
            Err(GithubError::Store(error)) => return Err(error.into()),
            Err(error @ (GithubError::Unauthorized { .. } | GithubError::Secrets(_))) => {
                return Err(error)
            }
            Err(error) => report.errors.push(format!("{}: {error}", repo.name)),
        }
    }
    let after = client.request_count();
    report.requests = RequestCount {
        sent: after.sent - before.sent,
        not_modified: after.not_modified - before.not_modified,
        rate_limit_waits: after.rate_limit_waits - before.rate_limit_waits,
    };
    Ok(report)
}

async fn sync_repo(
    client: &GithubClient,
    store: &Store,
    repo: &Repo,
    owner: &str,
    report: &mut SyncReport,
) -> Result<(), GithubError> {
    // F1: issues with the feedback label become feedback items.
    let (issues, _) = client
        .labeled_issues(store, &repo.name, &repo.feedback_label)
        .await?;
    for issue in issues {
        if store
            .feedback_for_issue(&repo.name, issue.number)
            .await?
            .is_some()
        {
            continue;
        }
        let body = issue
            .body
            .as_deref()
            .filter(|body| !body.trim().is_empty())
            .unwrap_or(&issue.title)
            .to_owned();
        let feedback = store
            .add_feedback(&NewFeedback {
                repo: repo.name.clone(),
                title: Some(issue.title.clone()),
                body,
                source: FeedbackSource::GithubIssue,
                github_issue: Some((
                    issue.number,
                    issue.user.map(|user| user.login).unwrap_or_default(),
                )),
            })
            .await?;
        report.new_feedback.push(feedback.id);
    }

    let items = store
        .feedback_list(&FeedbackFilter {
            repo: Some(repo.name.clone()),
            ..FeedbackFilter::default()
        })
        .await?;
    let open_items: Vec<_> = items
        .iter()
        .filter(|item| item.status != FeedbackStatus::Merged)
        .collect();

    // F1, F4: other people's comments on a feedback issue are visitor follow-ups.
    let issue_items: Vec<_> = open_items
        .iter()
        .filter_map(|item| item.github_issue_number.map(|number| (*item, number)))
        .collect();
    let threads = in_flight(
        issue_items
            .iter()
            .map(|(_, number)| client.issue_comments(store, &repo.name, *number))
            .collect(),
    )
    .await;
    for ((item, _), thread) in issue_items.iter().zip(threads) {
        let (comments, _) = thread?;
        for comment in comments {
            let Some(user) = &comment.user else { continue };
            let is_owner = user.login.eq_ignore_ascii_case(owner);
            let is_bot = user.account_type == "Bot";
            let is_managed = CommentKind::of_body(comment.body_text()).is_some();
            if is_owner || is_bot || is_managed || comment.body_text().trim().is_empty() {
                continue;
            }
            if store
                .add_visitor_follow_up(item.id, comment.body_text(), &user.login, comment.id)
                .await?
                .is_some()
            {
                report.new_visitor_follow_ups += 1;
            }
        }
    }

    // F2: a merged PR gives MERGED, closed unmerged FAILED, reopened WAITING_FOR_REVIEW.
    let pull_items: Vec<_> = open_items
        .iter()
        .filter_map(|item| item.pr_number.map(|number| (*item, number)))
        .collect();
    let pulls = in_flight(
        pull_items
            .iter()
            .map(|(_, number)| client.pull_request(store, &repo.name, *number))
            .collect(),
    )
    .await;
    for ((item, _), pull) in pull_items.iter().zip(pulls) {
        let (pull, _) = pull?;
        let state = pull.state();
        if item.pr_state == Some(state) {
            continue;
        }
        let (after, changed) = store.apply_pull_request_state(item.id, state).await?;
        if changed {
            report.status_changes.push(SyncedStatusChange {
                feedback_id: item.id,
                from: item.status,
                to: after.status,
            });
        }
    }

    // H9, D4: edits and deletions of managed comments made on GitHub.
    let merged_prs: Vec<u64> = items
        .iter()
        .filter(|item| item.pr_state == Some(PullRequestState::Merged))
        .filter_map(|item| item.pr_number)
        .collect();
    let mut by_pr: BTreeMap<u64, Vec<_>> = BTreeMap::new();
    for comment in store.managed_comments_of_repo(repo.id).await? {
        if !merged_prs.contains(&comment.pr_number) && comment.missing_since.is_none() {
            by_pr.entry(comment.pr_number).or_default().push(comment);
        }
    }
    let by_pr: Vec<(u64, Vec<_>)> = by_pr.into_iter().collect();
    let threads = in_flight(
        by_pr
            .iter()
            .map(|(pr_number, _)| client.issue_comments(store, &repo.name, *pr_number))
            .collect(),
    )
    .await;
    for ((_, comments), thread) in by_pr.into_iter().zip(threads) {
        let (remote_comments, _) = thread?;
        for comment in comments {
            let remote = comment
                .github_comment_id
                .and_then(|id| remote_comments.iter().find(|remote| remote.id == id))
                .or_else(|| {
                    remote_comments.iter().find(|remote| {
                        CommentKind::of_body(remote.body_text()) == Some(comment.kind)
                    })
                });
            match remote {
                Some(remote) => {
                    let (_, new) = record_remote_body(store, &comment, remote).await?;
                    if new && store.comment_versions(comment.id).await?.len() > 1 {
                        report.comment_edits_found += 1;
                    }
                }
                None if comment.github_comment_id.is_some() => {
                    store.mark_comment_missing(comment.id).await?;
                    report.comments_missing += 1;
                }
                None => {}
            }
        }
    }
    Ok(())
}
