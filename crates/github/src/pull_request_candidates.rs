//! Follow-up candidates taken from a feedback PR itself: the bodies of its reviews, its
//! inline review comments, and the check runs that failed on its head commit. Each
//! lands in the item's thread once (keyed by what it was taken from) and reaches the
//! next "Update PR" only when the owner includes it. Whose words they are is decided
//! here: the signed-in owner's reviews are the owner's; anyone else's, and every
//! check's output, are untrusted and fenced in a prompt.

use super::client::GithubClient;
use super::comment_authorship::SignedInAccount;
use super::error::GithubError;
use super::wire::{WireCheckRun, WireReview, WireReviewComment};
use handoff_domain::follow_up::fit_mirrored_text;
use handoff_domain::{
    AutomaticTrigger, FeedbackId, FollowUpId, FollowUpOrigin, FollowUpSource, RepoName,
};
use handoff_store::{NewAutomaticUpdate, NewFollowUpCandidate, Store};

/// A candidate as read from GitHub, before it is stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundCandidate {
    pub body: String,
    pub source: FollowUpSource,
    pub author_login: Option<String>,
    pub origin: FollowUpOrigin,
    pub github_source: String,
    pub written_at: chrono::DateTime<chrono::Utc>,
    /// What it asks of an automatic update, where the repository lets them run.
    pub asks: Option<CandidateAsks>,
}

/// A candidate that can start an automatic update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CandidateAsks {
    /// A failed check: its name, the commit, and its job when GitHub Actions ran it.
    CheckFixed {
        check_name: String,
        head_sha: String,
        actions_job_id: Option<u64>,
    },
}

/// The app that reports GitHub Actions jobs as check runs (a run's id is its job's).
const GITHUB_ACTIONS_APP: &str = "github-actions";

fn source_of(owner: &SignedInAccount, login: Option<&str>) -> FollowUpSource {
    match login {
        Some(login) if owner.is(login) => FollowUpSource::Owner,
        _ => FollowUpSource::Visitor,
    }
}

/// A review's body as a candidate; `None` for a review without words (an approval with
/// nothing said) or one still pending.
pub fn review_candidate(owner: &SignedInAccount, review: &WireReview) -> Option<FoundCandidate> {
    if review.state == "PENDING" {
        return None;
    }
    let body = fit_mirrored_text(review.body.as_deref().unwrap_or_default())?;
    let login = review.user.as_ref().map(|user| user.login.clone());
    let source = source_of(owner, login.as_deref());
    Some(FoundCandidate {
        body,
        source,
        author_login: login,
        origin: FollowUpOrigin::Review,
        github_source: format!("review:{}", review.id),
        written_at: review.submitted_at.unwrap_or_else(chrono::Utc::now),
        // GitHub refuses a review requesting changes from a PR's own author, and
        // Handoff opens PRs as the owner: the owner asks for work with `@handoff`.
        asks: None,
    })
}

/// An inline comment as a candidate, saying which file and line it is on.
pub fn review_comment_candidate(
    owner: &SignedInAccount,
    comment: &WireReviewComment,
) -> Option<FoundCandidate> {
    let words = fit_mirrored_text(&comment.body)?;
    let place = match comment.line.or(comment.original_line) {
        Some(line) => format!("On `{}`, line {line}:", comment.path),
        None => format!("On `{}`:", comment.path),
    };
    let body = fit_mirrored_text(&format!("{place}\n\n{words}"))?;
    let login = comment.user.as_ref().map(|user| user.login.clone());
    Some(FoundCandidate {
        body,
        source: source_of(owner, login.as_deref()),
        author_login: login,
        origin: FollowUpOrigin::ReviewComment,
        github_source: format!("review_comment:{}", comment.id),
        written_at: comment.created_at,
        asks: None,
    })
}

/// A failed check run as a candidate (`None` unless it failed): its name, conclusion
/// and the output it wrote, which comes from running the PR's code and so is untrusted.
pub fn check_run_candidate(run: &WireCheckRun) -> Option<FoundCandidate> {
    if !run.state().failed() {
        return None;
    }
    let mut body = format!(
        "The check \"{}\" ended with {} on commit {}.",
        run.name,
        run.conclusion.as_deref().unwrap_or("failure"),
        &run.head_sha[..run.head_sha.len().min(12)]
    );
    for part in [&run.output.title, &run.output.summary, &run.output.text]
        .into_iter()
        .flatten()
    {
        if !part.trim().is_empty() {
            body.push_str("\n\n");
            body.push_str(part.trim());
        }
    }
    if let Some(url) = &run.html_url {
        body.push_str(&format!("\n\nDetails: {url}"));
    }
    Some(FoundCandidate {
        body: fit_mirrored_text(&body)?,
        source: FollowUpSource::Visitor,
        author_login: Some(run.reporter().to_owned()),
        origin: FollowUpOrigin::CheckRun,
        github_source: format!("check_run:{}", run.id),
        written_at: run.completed_at.unwrap_or_else(chrono::Utc::now),
        asks: Some(CandidateAsks::CheckFixed {
            check_name: run.name.clone(),
            head_sha: run.head_sha.clone(),
            actions_job_id: (run.reporter() == GITHUB_ACTIONS_APP).then_some(run.id),
        }),
    })
}

/// Where to take candidates from, and what to read.
#[derive(Debug, Clone, Copy)]
pub struct CandidatesOf<'a> {
    pub repo: &'a RepoName,
    pub feedback_id: FeedbackId,
    pub pr_number: u64,
    /// Ask GitHub for the PR's reviews and inline comments (they can only be new when
    /// the PR's last update moved).
    pub read_reviews: bool,
    /// The check runs of the PR's head commit, already read.
    pub check_runs: &'a [WireCheckRun],
    /// The repository lets failing checks come back as work: what new asks for an
    /// update is recorded for the pipeline to decide on.
    pub automatic_updates: bool,
}

/// Stores what is new among the PR's reviews and inline comments (when asked to read
/// them) and the failed ones of its check runs as candidates of the feedback item;
/// returns how many were new. Where the repository lets them, a new failed check is
/// recorded as a reason for an automatic update.
pub async fn take_follow_up_candidates(
    client: &GithubClient,
    store: &Store,
    owner: &SignedInAccount,
    of: CandidatesOf<'_>,
) -> Result<u32, GithubError> {
    let (reviews, comments) = if of.read_reviews {
        let (reviews, _) = client
            .pull_request_reviews(store, of.repo, of.pr_number)
            .await?;
        let (comments, _) = client
            .pull_request_review_comments(store, of.repo, of.pr_number)
            .await?;
        (reviews, comments)
    } else {
        (Vec::new(), Vec::new())
    };
    let found = reviews
        .iter()
        .filter_map(|review| review_candidate(owner, review))
        .chain(
            comments
                .iter()
                .filter_map(|comment| review_comment_candidate(owner, comment)),
        )
        .chain(of.check_runs.iter().filter_map(check_run_candidate));
    let mut added = 0;
    let mut new_candidates = Vec::new();
    for candidate in found {
        let stored = store
            .feedback()
            .add_follow_up_candidate(
                of.feedback_id,
                &NewFollowUpCandidate {
                    body: &candidate.body,
                    source: candidate.source,
                    author_login: candidate.author_login.as_deref(),
                    origin: candidate.origin,
                    github_source: &candidate.github_source,
                    written_at: candidate.written_at,
                },
            )
            .await?;
        if let Some(stored) = stored {
            added += 1;
            new_candidates.push((candidate, stored.id));
        }
    }
    if of.automatic_updates {
        record_automatic_updates(store, &of, &new_candidates).await?;
    }
    Ok(added)
}

/// The reasons for an automatic update among the candidates just stored.
async fn record_automatic_updates(
    store: &Store,
    of: &CandidatesOf<'_>,
    new_candidates: &[(FoundCandidate, FollowUpId)],
) -> Result<(), GithubError> {
    for (candidate, id) in new_candidates {
        let Some(CandidateAsks::CheckFixed {
            check_name,
            head_sha,
            actions_job_id,
        }) = &candidate.asks
        else {
            continue;
        };
        let (trigger, subject, head_sha, actions_job_id, follow_up_ids) = (
            AutomaticTrigger::CheckFailed,
            check_name.as_str(),
            head_sha.as_str(),
            *actions_job_id,
            vec![*id],
        );
        let recorded = store
            .automatic_updates()
            .record_automatic_update(&NewAutomaticUpdate {
                feedback_id: of.feedback_id,
                pr_number: of.pr_number,
                trigger,
                github_source: &candidate.github_source,
                head_sha,
                subject,
                actions_job_id,
                follow_up_ids: &follow_up_ids,
            })
            .await?;
        if let Some(update) = recorded {
            tracing::info!(
                repo = %of.repo, pr = of.pr_number, reason = %update.started_because(),
                "a reason for an automatic update was recorded"
            );
        }
    }
    Ok(())
}
