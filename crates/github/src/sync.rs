//! Background sync with GitHub in place of webhooks: send the outbox, mirror issues that
//! carry the feedback label, mirror other people's comments on them as visitor
//! follow-ups, mirror every open PR with its head commit's checks, follow each feedback
//! PR's state, take its reviews, inline comments and failing checks as follow-up
//! candidates, and notice edits and deletions of managed comments made on GitHub.
//!
//! A repository's first sync, and one an hour after that, is a complete pass over every
//! list and thread; the others ask only for what changed since the last
//! ([`super::sync_changes`]), so a sync costs a few requests whatever the number of PRs.
//! Every GET is conditional, so an idle sync costs nothing against the rate limit; a
//! rate limit is waited out by the client.
//!
//! Whose text is whose is decided here as everywhere: an issue opened by anyone but the
//! signed-in owner becomes an item marked as opened by a visitor (untrusted, and held
//! for the owner's approval); a visitor's comment is a visitor follow-up even when it
//! starts with a managed comment's marker; and an edit of a managed comment records
//! who made it. Text too long to keep is cut with a notice rather than stopping the
//! sync.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use super::base_conflicts::follow_base_conflicts;
use super::check_runs::check_runs_of_open_pulls;
use super::client::{GithubClient, RequestCount};
use super::comment_authorship::SignedInAccount;
use super::error::GithubError;
use super::owner_edits::{send_outbox, OutboxPass};
use super::pull_request_candidates::{take_follow_up_candidates, CandidatesOf};
use super::sync_steps::{
    apply_pull_request_state, feedback_of, followed_managed_comments, in_flight, not_merged,
    notice_managed_comment, take_command_comment, take_feedback_issue,
    take_pull_request_opened_elsewhere, take_visitor_comment, Newest, CLOCK_MARGIN,
};
pub use super::sync_steps::{SyncReport, SyncedStatusChange};
use super::wire::{WireCheckRun, WirePull};
use handoff_domain::{CheckStatus, Feedback, PullRequestState, Repo};
use handoff_store::{SettingKey, Store};

/// The signed-in owner, asked of GitHub (the stored login is only what the window
/// shows: whatever can write the database must not be able to change whom Handoff
/// trusts).
pub async fn signed_in_owner(
    client: &GithubClient,
    store: &Store,
) -> Result<SignedInAccount, GithubError> {
    let account = SignedInAccount::of(client, store).await?;
    if store
        .settings()
        .setting(SettingKey::GithubLogin)
        .await?
        .as_deref()
        != Some(&account.login)
    {
        store
            .settings()
            .set_setting(SettingKey::GithubLogin, &account.login)
            .await?;
    }
    Ok(account)
}

/// Syncs every connected repository (or only `only`).
pub async fn sync(
    client: &GithubClient,
    store: &Store,
    only: Option<&handoff_domain::RepoName>,
) -> Result<SyncReport, GithubError> {
    let before = client.request_count();
    let mut report = SyncReport {
        outbox: send_outbox(client, store, OutboxPass::DueOnly).await?,
        ..SyncReport::default()
    };
    let owner = signed_in_owner(client, store).await?;
    for repo in store.repositories().repos().await? {
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

/// How often a repository gets a complete pass (every list and every thread) instead
/// of the listings of what changed: a deleted comment, or checks run again on an old
/// commit, leave no trace in those.
const COMPLETE_PASS_EVERY: chrono::Duration = chrono::Duration::hours(1);

/// Syncs one repository: a complete pass the first time and once an hour, otherwise only
/// what changed since the last sync (see [`super::sync_changes`]).
async fn sync_repo(
    client: &GithubClient,
    store: &Store,
    repo: &Repo,
    owner: &SignedInAccount,
    report: &mut SyncReport,
) -> Result<(), GithubError> {
    let started = store.now();
    match store.sync_state().sync_cursor(repo.id).await? {
        Some(cursor) if started - cursor.complete_pass_at < COMPLETE_PASS_EVERY => {
            super::sync_changes::sync_changes(client, store, repo, owner, &cursor, report).await
        }
        cursor => {
            // The owner's `@handoff` comments written since the last listing (or since
            // the repository was connected: older ones are never run) are taken from
            // one listing of the repository's comments, wherever they are.
            let commands_since = match cursor {
                Some(cursor) => cursor.comments_since,
                None => store.repositories().repo_connected_at(repo.id).await?,
            };
            complete_pass(client, store, repo, owner, started, report).await?;
            take_commands_since(client, store, repo, owner, commands_since, report).await
        }
    }
}

/// Takes the owner's commands among `repo`'s comments updated since `since`.
async fn take_commands_since(
    client: &GithubClient,
    store: &Store,
    repo: &Repo,
    owner: &SignedInAccount,
    since: DateTime<Utc>,
    report: &mut SyncReport,
) -> Result<(), GithubError> {
    let items = feedback_of(store, repo).await?;
    let open_items = not_merged(&items);
    for comment in client
        .repository_comments_since(store, &repo.name, since)
        .await?
    {
        take_command_comment(store, repo, owner, &open_items, &comment, report).await?;
    }
    Ok(())
}

/// Reads every list and thread of `repo` that the mirror follows.
async fn complete_pass(
    client: &GithubClient,
    store: &Store,
    repo: &Repo,
    owner: &SignedInAccount,
    started: DateTime<Utc>,
    report: &mut SyncReport,
) -> Result<(), GithubError> {
    let pass = Pass {
        client,
        store,
        repo,
        owner,
    };
    let mut newest = Newest::default();
    pass.take_labelled_issues(&mut newest, report).await?;
    let items = feedback_of(store, repo).await?;
    let open_items = not_merged(&items);
    pass.take_visitor_comments(&open_items, &mut newest, report)
        .await?;

    // Every open PR, with how its head commit's checks stand. A repository whose checks
    // cannot be read (a token without that permission) still syncs the rest. The list is
    // written to the mirror last, so that what a failed sync did not finish is asked
    // again next time.
    let (open_pulls, _) = client.open_pull_requests(store, &repo.name).await?;
    open_pulls
        .iter()
        .filter_map(|pull| pull.updated_at)
        .for_each(|updated_at| newest.issue(updated_at));
    let reviews_read_at = store.pull_requests().reviews_read_at(repo.id).await?;
    let reading_reviews_at = store.now();
    report.open_pull_requests += open_pulls.len() as u32;
    // Checks belong to a commit: PRs on the same head commit share one request, and
    // many PRs are asked at once.
    let wanted: Vec<(u64, &str)> = open_pulls
        .iter()
        .map(|pull| (pull.number, pull.head.sha.as_str()))
        .collect();
    let check_runs_at =
        check_runs_of_open_pulls(client, store, repo, &wanted, &mut report.errors).await?;
    let check_runs_of: BTreeMap<u64, &Vec<WireCheckRun>> = open_pulls
        .iter()
        .filter_map(|pull| {
            check_runs_at
                .get(pull.head.sha.as_str())
                .map(|runs| (pull.number, runs))
        })
        .collect();

    pass.follow_feedback_pull_requests(&open_items, &open_pulls, report)
        .await?;
    let read = pass
        .take_candidates(
            &open_items,
            &open_pulls,
            &reviews_read_at,
            &check_runs_of,
            report,
        )
        .await?;
    pass.mirror_open_pulls(&open_pulls, &read, reading_reviews_at, &check_runs_of)
        .await?;
    pass.follow_the_other_pulls(&open_items, &open_pulls, report)
        .await?;
    pass.notice_managed_comment_edits(&items, &mut newest, report)
        .await?;
    store
        .sync_state()
        .set_sync_cursor(repo.id, &newest.cursor(started, store.now()))
        .await?;
    Ok(())
}

/// The numbers of the open pull requests among `open_pulls` that carry an item of
/// `open_items`.
fn open_feedback_pull_numbers(open_items: &[&Feedback], open_pulls: &[WirePull]) -> Vec<u64> {
    open_items
        .iter()
        .filter_map(|item| item.pr_number)
        .filter(|number| open_pulls.iter().any(|pull| pull.number == *number))
        .collect()
}

/// One repository's complete pass: what each of its steps reads.
#[derive(Clone, Copy)]
struct Pass<'a> {
    client: &'a GithubClient,
    store: &'a Store,
    repo: &'a Repo,
    owner: &'a SignedInAccount,
}

impl Pass<'_> {
    /// PRs opened elsewhere that carry an item are taken; whether the open feedback PRs
    /// conflict with their base is asked.
    async fn follow_the_other_pulls(
        &self,
        open_items: &[&Feedback],
        open_pulls: &[WirePull],
        report: &mut SyncReport,
    ) -> Result<(), GithubError> {
        let (store, repo) = (self.store, self.repo);
        for pull in open_pulls {
            take_pull_request_opened_elsewhere(store, repo, self.owner, open_items, pull, report)
                .await?;
        }
        let open_feedback_pulls = open_feedback_pull_numbers(open_items, open_pulls);
        follow_base_conflicts(
            self.client,
            store,
            repo,
            &open_feedback_pulls,
            &[],
            &mut report.errors,
        )
        .await?;
        Ok(())
    }

    /// Issues with the feedback label become feedback items.
    async fn take_labelled_issues(
        &self,
        newest: &mut Newest,
        report: &mut SyncReport,
    ) -> Result<(), GithubError> {
        let Pass {
            client,
            store,
            repo,
            owner,
        } = *self;
        // Issues with the feedback label become feedback items; one a visitor opened is
        // untrusted and waits for the owner's approval before the agent runs on it.
        let (issues, _) = client
            .labeled_issues(store, &repo.name, &repo.feedback_label)
            .await?;
        for issue in &issues {
            newest.issue(issue.updated_at);
            take_feedback_issue(store, repo, owner, issue, report).await?;
        }
        Ok(())
    }

    /// Other people's comments on the open items' issues.
    async fn take_visitor_comments(
        &self,
        open_items: &[&Feedback],
        newest: &mut Newest,
        report: &mut SyncReport,
    ) -> Result<(), GithubError> {
        let Pass {
            client,
            store,
            repo,
            owner,
        } = *self;
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
            for comment in &comments {
                newest.comment(comment.updated_at);
                take_visitor_comment(store, owner, item.id, comment, report).await?;
            }
        }
        Ok(())
    }

    /// The state of each open item's PR.
    async fn follow_feedback_pull_requests(
        &self,
        open_items: &[&Feedback],
        open_pulls: &[WirePull],
        report: &mut SyncReport,
    ) -> Result<(), GithubError> {
        let Pass {
            client,
            store,
            repo,
            ..
        } = *self;
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
            apply_pull_request_state(store, item, state, report).await?;
        }
        Ok(())
    }

    /// Follow-up candidates from the open feedback PRs; returns the PRs whose reviews
    /// were read.
    async fn take_candidates(
        &self,
        open_items: &[&Feedback],
        open_pulls: &[WirePull],
        reviews_read_at: &BTreeMap<u64, DateTime<Utc>>,
        check_runs_of: &BTreeMap<u64, &Vec<WireCheckRun>>,
        report: &mut SyncReport,
    ) -> Result<Vec<u64>, GithubError> {
        let Pass {
            client,
            store,
            repo,
            owner,
        } = *self;
        let pull_items: Vec<_> = open_items
            .iter()
            .filter_map(|item| item.pr_number.map(|number| (*item, number)))
            .collect();
        let open_pull = |number: u64| open_pulls.iter().find(|pull| pull.number == number);
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
                            check_runs: check_runs_of
                                .get(&pull.number)
                                .copied()
                                .unwrap_or(&no_runs),
                            automatic_updates: repo.automatic_updates,
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
        Ok(read)
    }

    /// The open PRs written to the mirror, with when their reviews were read and how
    /// their checks stand (last, so that what a failed pass did not finish is asked
    /// again).
    async fn mirror_open_pulls(
        &self,
        open_pulls: &[WirePull],
        read: &[u64],
        reading_reviews_at: DateTime<Utc>,
        check_runs_of: &BTreeMap<u64, &Vec<WireCheckRun>>,
    ) -> Result<(), GithubError> {
        let Pass { store, repo, .. } = *self;
        let open_pull = |number: u64| open_pulls.iter().find(|pull| pull.number == number);
        let mirrored: Vec<_> = open_pulls.iter().map(WirePull::mirrored).collect();
        store
            .pull_requests()
            .mirror_open_pull_requests(repo.id, &mirrored)
            .await?;
        for number in read.iter().copied() {
            store
                .pull_requests()
                .set_reviews_read_at(repo.id, number, reading_reviews_at)
                .await?;
        }
        for (number, runs) in check_runs_of {
            if let Some(pull) = open_pull(*number) {
                let status = CheckStatus::of(runs.iter().map(WireCheckRun::state));
                store
                    .pull_requests()
                    .set_pull_request_checks(repo.id, pull.number, &pull.head.sha, status)
                    .await?;
            }
        }
        Ok(())
    }

    /// Edits and deletions of managed comments made on GitHub.
    async fn notice_managed_comment_edits(
        &self,
        items: &[Feedback],
        newest: &mut Newest,
        report: &mut SyncReport,
    ) -> Result<(), GithubError> {
        let Pass {
            client,
            store,
            repo,
            owner,
        } = *self;
        // Edits and deletions of managed comments made on GitHub, each edit with who made it.
        let mut by_pr: BTreeMap<u64, Vec<_>> = BTreeMap::new();
        for comment in followed_managed_comments(store, repo, items).await? {
            by_pr.entry(comment.pr_number).or_default().push(comment);
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
            for remote in &remote_comments {
                newest.comment(remote.updated_at);
            }
            for comment in comments {
                notice_managed_comment(
                    client,
                    store,
                    owner,
                    &comment,
                    &remote_comments,
                    true,
                    report,
                )
                .await?;
            }
        }
        Ok(())
    }
}
