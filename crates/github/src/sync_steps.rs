//! What both kinds of sync pass (the complete one and the one over what changed) do
//! with what GitHub lists: the report they fill, where the next listings start, and how
//! an issue, a comment, a PR's state and a managed comment are taken into the mirror.
//! Whose text is whose is decided here: an issue opened by anyone but the signed-in
//! owner is marked as opened by a visitor; a visitor's comment is a visitor follow-up
//! even when it starts with a managed comment's marker; an edit of a managed comment
//! records who made it.

use chrono::{DateTime, Utc};
use futures::StreamExt as _;
use serde::Serialize;

use super::client::{GithubClient, RequestCount};
use super::comment_authorship::SignedInAccount;
use super::comment_publishing::{record_remote_body, search_for_marker};
use super::error::GithubError;
use super::owner_edits::OutboxReport;
use super::wire::{WireComment, WireIssue};
use handoff_domain::follow_up::fit_mirrored_text;
use handoff_domain::github_command::{is_command_reply, parse_command, CommandAnswer};
use handoff_domain::{
    ArchiveActor, ArchiveState, CommentKind, Feedback, FeedbackId, FeedbackSource, FeedbackStatus,
    ManagedComment, PullRequestState, Repo,
};
use handoff_store::{FeedbackFilter, NewFeedback, NewGithubCommand, Store, SyncCursor};

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
    /// The owner's `@handoff` commands newly seen on feedback issues and PRs.
    pub new_commands: u32,
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
pub(super) const CLOCK_MARGIN: chrono::Duration = chrono::Duration::seconds(60);

/// How many GitHub requests a sync has in flight at once.
const REQUESTS_IN_FLIGHT: usize = 8;

/// Awaits `requests` several at a time and returns their results in order (so what is
/// written to the store does not depend on timing).
pub(super) async fn in_flight<F: std::future::Future>(requests: Vec<F>) -> Vec<F::Output> {
    futures::stream::iter(requests)
        .buffered(REQUESTS_IN_FLIGHT)
        .collect()
        .await
}

/// How far before the newest update seen the next listings start while that update is
/// recent, so that what changed while a pass ran (and any difference between GitHub's
/// clock and this one) is covered.
pub(super) const CURSOR_MARGIN: chrono::Duration = chrono::Duration::minutes(10);

/// The newest updates a pass saw, from which the next sync's listings start.
#[derive(Debug, Default)]
pub(super) struct Newest {
    issue: Option<DateTime<Utc>>,
    comment: Option<DateTime<Utc>>,
}

impl Newest {
    pub(super) fn issue(&mut self, updated_at: DateTime<Utc>) {
        self.issue = self.issue.max(Some(updated_at));
    }

    pub(super) fn comment(&mut self, updated_at: DateTime<Utc>) {
        self.comment = self.comment.max(Some(updated_at));
    }

    /// The cursor after a complete pass that started at `started` and ends `now` (when
    /// nothing was seen, listings start a margin before the start).
    pub(super) fn cursor(&self, started: DateTime<Utc>, now: DateTime<Utc>) -> SyncCursor {
        SyncCursor {
            issues_since: next_since(self.issue, started - CURSOR_MARGIN, now),
            comments_since: next_since(self.comment, started - CURSOR_MARGIN, now),
            complete_pass_at: now,
        }
    }

    /// The cursor after a pass over what changed since `before`: it never moves back.
    pub(super) fn advance(&self, before: &SyncCursor, now: DateTime<Utc>) -> SyncCursor {
        SyncCursor {
            issues_since: before
                .issues_since
                .max(next_since(self.issue, before.issues_since, now)),
            comments_since: before.comments_since.max(next_since(
                self.comment,
                before.comments_since,
                now,
            )),
            complete_pass_at: before.complete_pass_at,
        }
    }
}

/// Where the next listing starts, given the newest update seen (GitHub's clock; `since`
/// is inclusive). When that update is older than the margin by this machine's clock,
/// nothing can still be on its way into the listing: the next one starts just after it.
/// Otherwise it starts the margin before it, so that an update made while the listing
/// was read, or not yet shown in it, is not missed.
fn next_since(
    newest: Option<DateTime<Utc>>,
    otherwise: DateTime<Utc>,
    now: DateTime<Utc>,
) -> DateTime<Utc> {
    match newest {
        Some(newest) if newest + CURSOR_MARGIN < now => newest + chrono::Duration::seconds(1),
        Some(newest) => newest - CURSOR_MARGIN,
        None => otherwise,
    }
}

/// Every feedback item of `repo`.
pub(super) async fn feedback_of(store: &Store, repo: &Repo) -> Result<Vec<Feedback>, GithubError> {
    Ok(store
        .feedback()
        .feedback_list(&FeedbackFilter {
            repo: Some(repo.name.clone()),
            ..FeedbackFilter::default()
        })
        .await?)
}

/// The items of `items` a sync still follows: those not merged.
pub(super) fn not_merged(items: &[Feedback]) -> Vec<&Feedback> {
    items
        .iter()
        .filter(|item| item.status != FeedbackStatus::Merged)
        .collect()
}

/// `repo`'s managed comments a sync still follows: neither known to be deleted nor on a
/// merged PR of `items`.
pub(super) async fn followed_managed_comments(
    store: &Store,
    repo: &Repo,
    items: &[Feedback],
) -> Result<Vec<ManagedComment>, GithubError> {
    let merged_prs: Vec<u64> = items
        .iter()
        .filter(|item| item.pr_state == Some(PullRequestState::Merged))
        .filter_map(|item| item.pr_number)
        .collect();
    Ok(store
        .comments()
        .managed_comments_of_repo(repo.id)
        .await?
        .into_iter()
        .filter(|comment| {
            !merged_prs.contains(&comment.pr_number) && comment.missing_since.is_none()
        })
        .collect())
}

/// Makes a feedback item of a labelled issue not mirrored yet (one a visitor opened is
/// marked so; one closed on GitHub is imported closed), and keeps a mirrored item closed
/// or open as its issue is.
pub(super) async fn take_feedback_issue(
    store: &Store,
    repo: &Repo,
    owner: &SignedInAccount,
    issue: &WireIssue,
    report: &mut SyncReport,
) -> Result<(), GithubError> {
    if let Some(item) = store
        .feedback()
        .feedback_for_issue(&repo.name, issue.number)
        .await?
    {
        return follow_issue_state(store, &item, issue).await;
    }
    let Some(body) = issue
        .body
        .as_deref()
        .and_then(fit_mirrored_text)
        .or_else(|| fit_mirrored_text(&issue.title))
    else {
        return Ok(());
    };
    let author = issue
        .user
        .as_ref()
        .map(|user| user.login.clone())
        .unwrap_or_default();
    let opened_by_visitor = !owner.is(&author);
    let feedback = store
        .feedback()
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
    follow_issue_state(store, &feedback, issue).await
}

/// An item whose issue was closed on GitHub leaves the board as closed, and comes back
/// when the issue is reopened. A merged item stays as it is (its merge closed the issue),
/// and so does one the owner dismissed or archived.
async fn follow_issue_state(
    store: &Store,
    item: &Feedback,
    issue: &WireIssue,
) -> Result<(), GithubError> {
    let closed_on_github = issue.state == "closed";
    let next = match (closed_on_github, item.archived_as) {
        (true, None) if item.status != FeedbackStatus::Merged => Some(ArchiveState::Closed),
        (false, Some(ArchiveState::Closed)) => None,
        _ => return Ok(()),
    };
    store
        .feedback()
        .set_archive_state(item.id, next, ArchiveActor::Github)
        .await?;
    tracing::info!(
        feedback = %item.id,
        issue = issue.number,
        "the item's issue was {} on GitHub",
        if closed_on_github { "closed" } else { "reopened" }
    );
    Ok(())
}

/// Keeps a comment on a feedback issue as a visitor follow-up, unless the owner (and so
/// Handoff) or a bot wrote it; once per comment.
pub(super) async fn take_visitor_comment(
    store: &Store,
    owner: &SignedInAccount,
    item: FeedbackId,
    comment: &WireComment,
    report: &mut SyncReport,
) -> Result<(), GithubError> {
    let Some(user) = &comment.user else {
        return Ok(());
    };
    let is_owner = owner.is(&user.login);
    let is_bot = user.account_type == "Bot" && CommentKind::of_body(comment.body_text()).is_none();
    let Some(body) = fit_mirrored_text(comment.body_text()) else {
        return Ok(());
    };
    if is_owner || is_bot {
        return Ok(());
    }
    if store
        .feedback()
        .add_visitor_follow_up(item, &body, &user.login, comment.id)
        .await?
        .is_some()
    {
        report.new_visitor_follow_ups += 1;
    }
    Ok(())
}

/// Takes open PR `pull` as the PR of the item among `items` whose head branch it is,
/// when that item has none: another installation of the owner's opened it for the same
/// issue (an issue's item has the same head branch in every installation). Only the
/// owner's PR from the repository or its fork for the agent counts.
pub(super) async fn take_pull_request_opened_elsewhere(
    store: &Store,
    repo: &Repo,
    owner: &SignedInAccount,
    items: &[&Feedback],
    pull: &super::wire::WirePull,
    report: &mut SyncReport,
) -> Result<(), GithubError> {
    if pull.state() != PullRequestState::Open
        || !pull.user.as_ref().is_some_and(|user| owner.is(&user.login))
        || items.iter().any(|item| item.pr_number == Some(pull.number))
    {
        return Ok(());
    }
    let head_repo = pull.head.repo.as_ref().map(|repo| repo.full_name.as_str());
    let from_ours = head_repo.is_some_and(|head| {
        head.eq_ignore_ascii_case(&repo.name.full_name())
            || repo
                .push_fork
                .as_ref()
                .is_some_and(|fork| head.eq_ignore_ascii_case(&fork.full_name()))
    });
    if !from_ours {
        return Ok(());
    }
    let Some(item) = items.iter().find(|item| {
        item.pr_number.is_none()
            && item.github_issue_number.is_some()
            && item.archived_as.is_none()
            && item.head_branch == pull.head.name
    }) else {
        return Ok(());
    };
    if store
        .feedback()
        .take_pull_request_opened_elsewhere(item.id, pull.number, &pull.html_url)
        .await?
    {
        tracing::info!(
            repo = %repo.name, feedback = %item.id, pr = pull.number,
            "the item's PR was opened by another installation: it is the item's PR here too"
        );
        report.status_changes.push(SyncedStatusChange {
            feedback_id: item.id,
            from: item.status,
            to: FeedbackStatus::WaitingForReview,
        });
    }
    Ok(())
}

/// Records the run that another installation of the owner's says, in its answer
/// `comment` to a command, it made: it counts against this installation's month too.
/// Only the owner's answers count (a visitor cannot spend the owner's quota).
async fn take_run_seen_elsewhere(
    store: &Store,
    repo: &Repo,
    owner: &SignedInAccount,
    comment: &WireComment,
) -> Result<(), GithubError> {
    let by_owner = comment
        .user
        .as_ref()
        .is_some_and(|user| owner.is(&user.login));
    let Some(answer) = CommandAnswer::of_body(comment.body_text()).filter(|_| by_owner) else {
        return Ok(());
    };
    let Some(run_id) = answer.run_id else {
        return Ok(());
    };
    if answer.installation == store.settings().installation_id().await? {
        return Ok(());
    }
    let cost = answer.cost_usd.unwrap_or_default();
    if store
        .github_commands()
        .record_run_seen_elsewhere(
            repo.id,
            &answer.installation,
            run_id,
            cost,
            comment.created_at,
            comment.id,
        )
        .await?
    {
        tracing::info!(
            repo = %repo.name, installation = %answer.installation, run = run_id, cost,
            "another installation's run counts against this month too"
        );
    }
    Ok(())
}

/// Takes a `@handoff` command from `comment` if it is on one of `items`' issue or PR.
/// The owner's is recorded (once; the pipeline claims it and carries it out); anyone
/// else's is never run: on a PR it becomes a visitor follow-up, a candidate the owner
/// may include, fenced as every visitor's words are (on an issue every visitor comment
/// already is one).
pub(super) async fn take_command_comment(
    store: &Store,
    repo: &Repo,
    owner: &SignedInAccount,
    items: &[&Feedback],
    comment: &WireComment,
    report: &mut SyncReport,
) -> Result<(), GithubError> {
    let (Some(number), Some(user)) = (comment.issue_number(), &comment.user) else {
        return Ok(());
    };
    let body = comment.body_text();
    if is_command_reply(body) {
        return take_run_seen_elsewhere(store, repo, owner, comment).await;
    }
    let Some(ask) = parse_command(body) else {
        return Ok(());
    };
    let Some((item, on_pull_request)) = items.iter().find_map(|item| {
        if item.pr_number == Some(number) {
            Some((*item, true))
        } else if item.github_issue_number == Some(number) {
            Some((*item, false))
        } else {
            None
        }
    }) else {
        return Ok(());
    };
    if !owner.is(&user.login) {
        if on_pull_request {
            if let Some(words) = fit_mirrored_text(body) {
                if store
                    .feedback()
                    .add_visitor_follow_up(item.id, &words, &user.login, comment.id)
                    .await?
                    .is_some()
                {
                    report.new_visitor_follow_ups += 1;
                }
            }
        }
        return Ok(());
    }
    let recorded = store
        .github_commands()
        .record_github_command(&NewGithubCommand {
            repo_id: repo.id,
            feedback_id: item.id,
            comment_id: comment.id,
            thread_number: number,
            on_pull_request,
            ask: &ask,
            written_at: comment.created_at,
        })
        .await?;
    if let Some(command) = recorded {
        tracing::info!(
            repo = %repo.name, thread = number, comment = comment.id, ask = command.ask.word(),
            "the owner gave a @handoff command"
        );
        report.new_commands += 1;
    }
    Ok(())
}

/// Moves `item` to what its PR's `state` means (merged, closed, open again).
pub(super) async fn apply_pull_request_state(
    store: &Store,
    item: &Feedback,
    state: PullRequestState,
    report: &mut SyncReport,
) -> Result<(), GithubError> {
    if item.pr_state == Some(state) {
        return Ok(());
    }
    let (after, changed) = store
        .feedback()
        .apply_pull_request_state(item.id, state)
        .await?;
    if changed {
        report.status_changes.push(SyncedStatusChange {
            feedback_id: item.id,
            from: item.status,
            to: after.status,
        });
    }
    // The merge closed its issue ("Fixes #12"), which the same sync may have seen
    // first: a merged item belongs on the board, in its MERGED column.
    if after.status == FeedbackStatus::Merged && after.archived_as == Some(ArchiveState::Closed) {
        store
            .feedback()
            .set_archive_state(item.id, None, ArchiveActor::Github)
            .await?;
    }
    Ok(())
}

/// Records an edit made on GitHub of managed `comment`, found among `remote_comments`;
/// when those are its PR's whole thread (`whole_thread`), a comment not among them was
/// deleted on GitHub.
pub(super) async fn notice_managed_comment(
    client: &GithubClient,
    store: &Store,
    owner: &SignedInAccount,
    comment: &ManagedComment,
    remote_comments: &[WireComment],
    whole_thread: bool,
    report: &mut SyncReport,
) -> Result<(), GithubError> {
    let remote = match comment.github_comment_id {
        Some(id) => remote_comments
            .iter()
            .find(|remote| remote.id == id)
            .cloned(),
        None => {
            let on_its_pull_request = remote_comments
                .iter()
                .filter(|remote| {
                    remote
                        .issue_number()
                        .is_none_or(|number| number == comment.pr_number)
                })
                .cloned();
            search_for_marker(on_its_pull_request, owner, comment.kind).comment
        }
    };
    match remote {
        Some(remote) => {
            let (_, new) = record_remote_body(client, store, owner, comment, &remote).await?;
            if new && store.comments().comment_versions(comment.id).await?.len() > 1 {
                report.comment_edits_found += 1;
            }
        }
        None if whole_thread && comment.github_comment_id.is_some() => {
            store.comments().mark_comment_missing(comment.id).await?;
            report.comments_missing += 1;
        }
        None => {}
    }
    Ok(())
}
