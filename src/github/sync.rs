//! Background sync with GitHub in place of webhooks: send the outbox, mirror issues that
//! carry the feedback label, mirror other people's comments on them as visitor
//! follow-ups, mirror every open PR with its head commit's checks, follow each feedback
//! PR's state, take its reviews, inline comments and failing checks as follow-up
//! candidates, and notice edits and deletions of managed comments made on GitHub. Every GET is conditional, so an idle sync costs
//! nothing against the rate limit; a rate limit is waited out by the client.
//!
//! Whose text is whose is decided here as everywhere: an issue opened by anyone but the
//! signed-in owner becomes an item marked as opened by a visitor (untrusted, and held
//! for the owner's approval); a visitor's comment is a visitor follow-up even when it
//! starts with a managed comment's marker; and an edit of a managed comment records
//! who made it. Text too long to keep is cut with a notice rather than stopping the
//! sync.

use std::collections::BTreeMap;

use futures::StreamExt as _;
use serde::Serialize;

use super::client::{GithubClient, RequestCount};
use super::comment_authorship::SignedInAccount;
use super::comment_publishing::{record_remote_body, search_for_marker};
use super::error::GithubError;
use super::owner_edits::{send_outbox, OutboxPass, OutboxReport};
use super::pull_request_candidates::{take_follow_up_candidates, CandidatesOf};
use super::wire::{WireCheckRun, WirePull};
use crate::domain::follow_up::fit_mirrored_text;
use crate::domain::{
    CheckStatus, CommentKind, FeedbackId, FeedbackSource, FeedbackStatus, PullRequestState, Repo,
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
    /// Open PRs mirrored, across the repositories synced.
    pub open_pull_requests: u32,
    /// Reviews, inline comments and failing checks newly taken from feedback PRs.
    pub new_follow_up_candidates: u32,
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

/// How far GitHub's clock and this machine's may differ, for telling whether a PR was
/// updated after its reviews were last read.
const CLOCK_MARGIN: chrono::Duration = chrono::Duration::seconds(60);

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

/// The signed-in owner, asked of GitHub (the stored login is only what the window
/// shows: whatever can write the database must not be able to change whom Handoff
/// trusts).
pub async fn signed_in_owner(
    client: &GithubClient,
    store: &Store,
) -> Result<SignedInAccount, GithubError> {
    let account = SignedInAccount::of(client, store).await?;
    if store.setting(SettingKey::GithubLogin).await?.as_deref() != Some(&account.login) {
        store
            .set_setting(SettingKey::GithubLogin, &account.login)
            .await?;
    }
    Ok(account)
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
    let owner = signed_in_owner(client, store).await?;
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
    owner: &SignedInAccount,
    report: &mut SyncReport,
) -> Result<(), GithubError> {
    // Issues with the feedback label become feedback items; one a visitor opened is
    // untrusted and waits for the owner's approval before the agent runs on it.
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
        let Some(body) = issue
            .body
            .as_deref()
            .and_then(fit_mirrored_text)
            .or_else(|| fit_mirrored_text(&issue.title))
        else {
            continue;
        };
        let author = issue.user.map(|user| user.login).unwrap_or_default();
        let opened_by_visitor = !owner.is(&author);
        let feedback = store
            .add_feedback(&NewFeedback {
                repo: repo.name.clone(),
                title: Some(issue.title.clone()),
                body,
                source: FeedbackSource::GithubIssue,
                github_issue: Some((issue.number, author)),
                opened_by_visitor,
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

    // Other people's comments on a feedback issue are visitor follow-ups (untrusted),
    // even one that starts with a managed comment's marker: only the owner's (and so
    // Handoff's) own comments are not.
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
            let is_owner = owner.is(&user.login);
            let is_bot =
                user.account_type == "Bot" && CommentKind::of_body(comment.body_text()).is_none();
            let Some(body) = fit_mirrored_text(comment.body_text()) else {
                continue;
            };
            if is_owner || is_bot {
                continue;
            }
            if store
                .add_visitor_follow_up(item.id, &body, &user.login, comment.id)
                .await?
                .is_some()
            {
                report.new_visitor_follow_ups += 1;
            }
        }
    }

    // Every open PR, with how its head commit's checks stand. A repository whose checks
    // cannot be read (a token without that permission) still syncs the rest. The list is
    // written to the mirror last, so that what a failed sync did not finish is asked
    // again next time.
    let (open_pulls, _) = client.open_pull_requests(store, &repo.name).await?;
    let reviews_read_at = store.reviews_read_at(repo.id).await?;
    let reading_reviews_at = chrono::Utc::now();
    report.open_pull_requests += open_pulls.len() as u32;
    // Checks belong to a commit: PRs on the same head commit share one request.
    let mut heads: Vec<&str> = open_pulls
        .iter()
        .map(|pull| pull.head.sha.as_str())
        .collect();
    heads.sort_unstable();
    heads.dedup();
    let check_answers = in_flight(
        heads
            .iter()
            .map(|sha| client.check_runs(store, &repo.name, sha))
            .collect(),
    )
    .await;
    let mut check_runs_at: BTreeMap<&str, Vec<WireCheckRun>> = BTreeMap::new();
    let mut checks_unreadable = None;
    for (sha, answer) in heads.iter().zip(check_answers) {
        match answer {
            Ok((runs, _)) => {
                check_runs_at.insert(sha, runs);
            }
            Err(GithubError::Store(error)) => return Err(error.into()),
            Err(error) => checks_unreadable = Some(error),
        }
    }
    let check_runs_of: BTreeMap<u64, &Vec<WireCheckRun>> = open_pulls
        .iter()
        .filter_map(|pull| {
            check_runs_at
                .get(pull.head.sha.as_str())
                .map(|runs| (pull.number, runs))
        })
        .collect();
    if let Some(error) = checks_unreadable {
        tracing::warn!(repo = %repo.name, %error, "check runs could not be read");
        report.errors.push(format!(
            "{}: check runs could not be read: {error}",
            repo.name
        ));
    }

    // A merged PR gives MERGED, closed unmerged FAILED, reopened WAITING_FOR_REVIEW. An
    // item whose PR is in the open list needs no request of its own.
    let pull_items: Vec<_> = open_items
        .iter()
        .filter_map(|item| item.pr_number.map(|number| (*item, number)))
        .collect();
    let open_pull = |number: u64| open_pulls.iter().find(|pull| pull.number == number);
    let closed_items: Vec<_> = pull_items
        .iter()
        .filter(|(_, number)| open_pull(*number).is_none())
        .collect();
    let pulls = in_flight(
        closed_items
            .iter()
            .map(|(_, number)| client.pull_request(store, &repo.name, *number))
            .collect(),
    )
    .await;
    let mut states = Vec::new();
    for ((item, _), pull) in closed_items.iter().zip(pulls) {
        let (pull, _) = pull?;
        states.push((*item, pull.state()));
    }
    for (item, _) in pull_items
        .iter()
        .filter(|(_, number)| open_pull(*number).is_some())
    {
        states.push((*item, PullRequestState::Open));
    }
    for (item, state) in states {
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

    // What reviewers and checks said on an open feedback PR: candidates for the next
    // "Update PR", which reach a prompt only when the owner includes them. A review or an
    // inline comment moves the PR's last update, so they are asked for only when that is
    // not well before they were last read (GitHub's times have whole seconds, and the two
    // clocks differ); the checks were read above.
    let no_runs = Vec::new();
    let reviewed: Vec<_> = pull_items
        .iter()
        .filter_map(|(item, number)| open_pull(*number).map(|pull| (item, pull)))
        .map(|(item, pull)| {
            let moved = match (pull.updated_at, reviews_read_at.get(&pull.number)) {
                (Some(updated_at), Some(read_at)) => updated_at + CLOCK_MARGIN >= *read_at,
                _ => true,
            };
            (item, pull, moved)
        })
        .collect();
    let taken = in_flight(
        reviewed
            .iter()
            .map(|(item, pull, moved)| {
                take_follow_up_candidates(
                    client,
                    store,
                    owner,
                    CandidatesOf {
                        repo: &repo.name,
                        feedback_id: item.id,
                        pr_number: pull.number,
                        read_reviews: *moved,
                        check_runs: check_runs_of.get(&pull.number).copied().unwrap_or(&no_runs),
                    },
                )
            })
            .collect(),
    )
    .await;
    let mut read = Vec::new();
    for ((_, pull, moved), added) in reviewed.iter().zip(taken) {
        report.new_follow_up_candidates += added?;
        if *moved {
            read.push(pull.number);
        }
    }

    let mirrored: Vec<_> = open_pulls.iter().map(WirePull::mirrored).collect();
    store.mirror_open_pull_requests(repo.id, &mirrored).await?;
    for number in read {
        store
            .set_reviews_read_at(repo.id, number, reading_reviews_at)
            .await?;
    }
    for (number, runs) in &check_runs_of {
        if let Some(pull) = open_pull(*number) {
            let status = CheckStatus::of(runs.iter().map(WireCheckRun::state));
            store
                .set_pull_request_checks(repo.id, pull.number, &pull.head.sha, status)
                .await?;
        }
    }

    // Edits and deletions of managed comments made on GitHub, each edit with who made it.
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
                .cloned()
                .or_else(|| {
                    search_for_marker(remote_comments.iter().cloned(), owner, comment.kind).comment
                });
            match remote {
                Some(remote) => {
                    let (_, new) =
                        record_remote_body(client, store, owner, &comment, &remote).await?;
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
