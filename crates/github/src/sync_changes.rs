//! A sync that asks GitHub only for what changed since the last one, so that it costs a
//! few requests per repository whatever the number of PRs: the repository's issues and
//! PRs updated since its cursor (one listing, sorted by update), its issue comments
//! updated since (one listing), and, only when a PR changed, the PRs by last update
//! (as many pages as reach back to the cursor), then each changed feedback PR's reviews
//! and thread. Checks are asked for only where they can still change: a head commit
//! whose checks are pending, or a PR updated within the last hour; for many such PRs,
//! in one GraphQL query a hundred open PRs (see `check_runs`). Every REST request is
//! conditional, so an idle sync costs nothing against the rate limit either.
//!
//! What these listings cannot show (a deleted comment on a PR that did not otherwise
//! change, checks run again on an old commit) is caught by the complete pass that the
//! sync makes once an hour.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};

use super::base_conflicts::follow_base_conflicts;
use super::check_runs::check_runs_of_open_pulls;
use super::client::GithubClient;
use super::comment_authorship::SignedInAccount;
use super::error::GithubError;
use super::pull_request_candidates::{take_follow_up_candidates, CandidatesOf};
use super::sync_steps::{
    apply_pull_request_state, feedback_of, followed_managed_comments, in_flight, not_merged,
    notice_managed_comment, take_command_comment, take_feedback_issue,
    take_pull_request_opened_elsewhere, take_visitor_comment, Newest, SyncReport, CLOCK_MARGIN,
};
use super::wire::{WireCheckRun, WireComment};
use handoff_domain::{CheckStatus, Feedback, ManagedComment, PullRequest, PullRequestState, Repo};
use handoff_store::{PullRequestFilter, Store, SyncCursor};

/// How long after its last update a PR's checks are still asked for when they are not
/// pending (CI starts and ends within that time of a push).
const CHECKS_FOLLOWED_FOR: chrono::Duration = chrono::Duration::hours(1);

/// Syncs what changed in `repo` since `cursor`.
pub(super) async fn sync_changes(
    client: &GithubClient,
    store: &Store,
    repo: &Repo,
    owner: &SignedInAccount,
    cursor: &SyncCursor,
    report: &mut SyncReport,
) -> Result<(), GithubError> {
    let sync = ChangesSync {
        client,
        store,
        repo,
        owner,
    };
    let mut newest = Newest::default();
    let moved_pulls = sync
        .take_changed_issues(cursor, &mut newest, report)
        .await?;
    let items = feedback_of(store, repo).await?;
    let open_items = not_merged(&items);
    let (comments, last_comment_on) = sync
        .take_changed_comments(cursor, &open_items, &mut newest, report)
        .await?;
    let changed_pulls = sync
        .pulls_that_changed(moved_pulls, &last_comment_on)
        .await?;
    let managed = followed_managed_comments(store, repo, &items).await?;
    sync.notice_listed_comment_edits(&managed, &comments, report)
        .await?;
    let (moved_heads, reviews_to_read) = if changed_pulls.is_empty() {
        (BTreeSet::new(), BTreeSet::new())
    } else {
        sync.follow_changed_pulls(cursor, &changed_pulls, &open_items, &managed, report)
            .await?
    };

    // Checks, where they can still change.
    let open_pulls = store
        .pull_requests()
        .open_pull_requests(&PullRequestFilter {
            repo_id: Some(repo.id),
            ..PullRequestFilter::default()
        })
        .await?;
    report.open_pull_requests += open_pulls.len() as u32;
    let runs_at = sync
        .follow_checks(&open_pulls, &moved_heads, report)
        .await?;

    // Whether the open feedback PRs conflict with their base.
    let open_feedback_pulls: Vec<u64> = open_items
        .iter()
        .filter_map(|item| item.pr_number)
        .filter(|number| open_pulls.iter().any(|pull| pull.number == *number))
        .collect();
    let changed_numbers: Vec<u64> = changed_pulls.keys().copied().collect();
    follow_base_conflicts(
        client,
        store,
        repo,
        &open_feedback_pulls,
        &changed_numbers,
        &mut report.errors,
    )
    .await?;

    sync.take_candidates(&open_items, &open_pulls, &runs_at, &reviews_to_read, report)
        .await?;
    store
        .sync_state()
        .set_sync_cursor(repo.id, &newest.advance(cursor, store.now()))
        .await?;
    Ok(())
}

/// A PR the issue listing shows as updated: its number, its update, and the head the
/// mirror knew for it (none for a PR the mirror does not have).
type MovedPull = (u64, DateTime<Utc>, Option<String>);

/// What each step of one repository's sync of changes works with.
struct ChangesSync<'a> {
    client: &'a GithubClient,
    store: &'a Store,
    repo: &'a Repo,
    owner: &'a SignedInAccount,
}

impl ChangesSync<'_> {
    /// Issues and PRs updated since the cursor: new feedback issues are taken; the PRs
    /// that moved are returned.
    async fn take_changed_issues(
        &self,
        cursor: &SyncCursor,
        newest: &mut Newest,
        report: &mut SyncReport,
    ) -> Result<Vec<MovedPull>, GithubError> {
        let (store, repo) = (self.store, self.repo);
        let changed = self
            .client
            .issues_updated_since(store, &repo.name, cursor.issues_since)
            .await?;
        let mut moved_pulls = Vec::new();
        for issue in &changed {
            newest.issue(issue.updated_at);
            if issue.pull_request.is_some() {
                // The listing may start a margin back, so it can hold PRs the mirror already
                // has as they are: a PR counts as moved when its update is later than the
                // mirror's, or close to when the mirror last wrote it (GitHub's times have
                // whole seconds, and the two clocks differ).
                let known = store
                    .pull_requests()
                    .pull_request(repo.id, issue.number)
                    .await?;
                if known.as_ref().is_none_or(|known| {
                    known.github_updated_at < issue.updated_at
                        || issue.updated_at + CLOCK_MARGIN >= known.synced_at
                }) {
                    let known_head = known.map(|known| known.head_sha);
                    moved_pulls.push((issue.number, issue.updated_at, known_head));
                }
            } else if issue
                .labels
                .iter()
                .any(|label| label.name == repo.feedback_label)
            {
                take_feedback_issue(store, repo, self.owner, issue, report).await?;
            }
        }
        Ok(moved_pulls)
    }

    /// Comments updated since the cursor: visitors' words on feedback issues and commands
    /// are taken. Returns them, with when each issue or PR was last commented on.
    async fn take_changed_comments(
        &self,
        cursor: &SyncCursor,
        open_items: &[&Feedback],
        newest: &mut Newest,
        report: &mut SyncReport,
    ) -> Result<(Vec<WireComment>, BTreeMap<u64, DateTime<Utc>>), GithubError> {
        let (store, repo, owner) = (self.store, self.repo, self.owner);
        let comments = self
            .client
            .repository_comments_since(store, &repo.name, cursor.comments_since)
            .await?;
        let mut last_comment_on: BTreeMap<u64, DateTime<Utc>> = BTreeMap::new();
        for comment in &comments {
            newest.comment(comment.updated_at);
            let Some(number) = comment.issue_number() else {
                continue;
            };
            let last = last_comment_on.entry(number).or_insert(comment.updated_at);
            *last = (*last).max(comment.updated_at);
            if let Some(item) = open_items
                .iter()
                .find(|item| item.github_issue_number == Some(number))
            {
                take_visitor_comment(store, owner, item.id, comment, report).await?;
            }
            take_command_comment(store, repo, owner, open_items, comment, report).await?;
        }
        Ok((comments, last_comment_on))
    }

    /// A mirrored PR whose last update is a comment's did not change itself: its state,
    /// head and reviews are as the mirror has them, and only its update is noted. The
    /// others are returned with the head the mirror knew.
    async fn pulls_that_changed(
        &self,
        moved_pulls: Vec<MovedPull>,
        last_comment_on: &BTreeMap<u64, DateTime<Utc>>,
    ) -> Result<BTreeMap<u64, Option<String>>, GithubError> {
        let mut changed_pulls = BTreeMap::new();
        for (number, updated_at, known_head) in moved_pulls {
            if known_head.is_some()
                && last_comment_on
                    .get(&number)
                    .is_some_and(|commented_at| *commented_at >= updated_at)
            {
                self.store
                    .pull_requests()
                    .set_pull_request_updated_at(self.repo.id, number, updated_at)
                    .await?;
            } else {
                changed_pulls.insert(number, known_head);
            }
        }
        Ok(changed_pulls)
    }

    /// Edits of managed comments made on GitHub, among the `comments` listed.
    async fn notice_listed_comment_edits(
        &self,
        managed: &[ManagedComment],
        comments: &[WireComment],
        report: &mut SyncReport,
    ) -> Result<(), GithubError> {
        for comment in managed {
            let on_its_pull_request: Vec<_> = comments
                .iter()
                .filter(|remote| remote.issue_number() == Some(comment.pr_number))
                .cloned()
                .collect();
            if !on_its_pull_request.is_empty() {
                notice_managed_comment(
                    self.client,
                    self.store,
                    self.owner,
                    comment,
                    &on_its_pull_request,
                    false,
                    report,
                )
                .await?;
            }
        }
        Ok(())
    }

    /// The PRs that changed, as the PR listing gives them (state, head, branch): each is
    /// mirrored and its items follow its state. Returns the PRs whose head moved, and
    /// the open feedback PRs whose reviews are to be read.
    async fn follow_changed_pulls(
        &self,
        cursor: &SyncCursor,
        changed_pulls: &BTreeMap<u64, Option<String>>,
        open_items: &[&Feedback],
        managed: &[ManagedComment],
        report: &mut SyncReport,
    ) -> Result<(BTreeSet<u64>, BTreeSet<u64>), GithubError> {
        let (store, repo) = (self.store, self.repo);
        let mut moved_heads = BTreeSet::new();
        let mut reviews_to_read = BTreeSet::new();
        let pulls = self
            .client
            .pulls_updated_since(store, &repo.name, cursor.issues_since)
            .await?;
        for pull in pulls
            .iter()
            .filter(|pull| changed_pulls.contains_key(&pull.number))
        {
            let known_head = changed_pulls.get(&pull.number).and_then(Option::as_deref);
            if known_head != Some(pull.head.sha.as_str()) {
                moved_heads.insert(pull.number);
            }
            store
                .pull_requests()
                .mirror_pull_request(repo.id, &pull.mirrored())
                .await?;
            take_pull_request_opened_elsewhere(store, repo, self.owner, open_items, pull, report)
                .await?;
            for item in open_items
                .iter()
                .filter(|item| item.pr_number == Some(pull.number))
            {
                apply_pull_request_state(store, item, pull.state(), report).await?;
                if pull.state() == PullRequestState::Open {
                    reviews_to_read.insert(pull.number);
                }
            }
        }
        self.read_changed_threads(changed_pulls, managed, report)
            .await?;
        Ok((moved_heads, reviews_to_read))
    }

    /// A changed PR's thread is read whole, so that a managed comment deleted on GitHub
    /// is noticed.
    async fn read_changed_threads(
        &self,
        changed_pulls: &BTreeMap<u64, Option<String>>,
        managed: &[ManagedComment],
        report: &mut SyncReport,
    ) -> Result<(), GithubError> {
        let mut by_pr: BTreeMap<u64, Vec<_>> = BTreeMap::new();
        for comment in managed
            .iter()
            .filter(|comment| changed_pulls.contains_key(&comment.pr_number))
        {
            by_pr.entry(comment.pr_number).or_default().push(comment);
        }
        let by_pr: Vec<_> = by_pr.into_iter().collect();
        let threads = in_flight(
            by_pr
                .iter()
                .map(|(number, _)| {
                    self.client
                        .issue_comments(self.store, &self.repo.name, *number)
                })
                .collect(),
        )
        .await;
        for ((_, comments), thread) in by_pr.into_iter().zip(threads) {
            let (remote_comments, _) = thread?;
            for comment in comments {
                notice_managed_comment(
                    self.client,
                    self.store,
                    self.owner,
                    comment,
                    &remote_comments,
                    true,
                    report,
                )
                .await?;
            }
        }
        Ok(())
    }

    /// The checks of the open PRs whose checks can still change: pending, on a head that
    /// moved, or updated lately. Returns the check runs read, by head commit.
    async fn follow_checks<'p>(
        &self,
        open_pulls: &'p [PullRequest],
        moved_heads: &BTreeSet<u64>,
        report: &mut SyncReport,
    ) -> Result<BTreeMap<&'p str, Vec<WireCheckRun>>, GithubError> {
        let (store, repo) = (self.store, self.repo);
        let now = store.now();
        let followed: Vec<&PullRequest> = open_pulls
            .iter()
            .filter(|pull| {
                pull.checks == CheckStatus::Pending
                    || moved_heads.contains(&pull.number)
                    || now - pull.github_updated_at < CHECKS_FOLLOWED_FOR
            })
            .collect();
        let wanted: Vec<(u64, &'p str)> = followed
            .iter()
            .map(|pull| (pull.number, pull.head_sha.as_str()))
            .collect();
        let runs_at =
            check_runs_of_open_pulls(self.client, store, repo, &wanted, &mut report.errors).await?;
        for pull in &followed {
            if let Some(runs) = runs_at.get(pull.head_sha.as_str()) {
                let status = CheckStatus::of(runs.iter().map(WireCheckRun::state));
                store
                    .pull_requests()
                    .set_pull_request_checks(repo.id, pull.number, &pull.head_sha, status)
                    .await?;
            }
        }
        Ok(runs_at)
    }

    /// Follow-up candidates of the open feedback PRs that changed (`reviews_to_read`) or
    /// whose checks were read (`runs_at`, by head commit).
    async fn take_candidates(
        &self,
        open_items: &[&Feedback],
        open_pulls: &[PullRequest],
        runs_at: &BTreeMap<&str, Vec<WireCheckRun>>,
        reviews_to_read: &BTreeSet<u64>,
        report: &mut SyncReport,
    ) -> Result<(), GithubError> {
        let (store, repo) = (self.store, self.repo);
        let no_runs = Vec::new();
        let reading_reviews_at = store.now();
        let candidates_of: Vec<_> = open_items
            .iter()
            .filter_map(|item| {
                let pull = open_pulls
                    .iter()
                    .find(|pull| Some(pull.number) == item.pr_number)?;
                let runs = runs_at.get(pull.head_sha.as_str());
                let read_reviews = reviews_to_read.contains(&pull.number);
                (read_reviews || runs.is_some()).then_some((
                    item.id,
                    pull.number,
                    read_reviews,
                    runs,
                ))
            })
            .collect();
        let taken = in_flight(
            candidates_of
                .iter()
                .map(|(feedback_id, number, read_reviews, runs)| {
                    take_follow_up_candidates(
                        self.client,
                        store,
                        self.owner,
                        CandidatesOf {
                            repo: &repo.name,
                            feedback_id: *feedback_id,
                            pr_number: *number,
                            read_reviews: *read_reviews,
                            check_runs: runs.unwrap_or(&no_runs),
                            automatic_updates: repo.automatic_updates,
                        },
                    )
                })
                .collect(),
        )
        .await;
        for ((_, number, read_reviews, _), added) in candidates_of.iter().zip(taken) {
            report.new_follow_up_candidates += added?;
            if *read_reviews {
                store
                    .pull_requests()
                    .set_reviews_read_at(repo.id, *number, reading_reviews_at)
                    .await?;
            }
        }
        Ok(())
    }
}
