//! `sync` against the fake GitHub: labelled issues become feedback, other
//! people's comments become visitor follow-ups, PR state drives status, edits and
//! deletions of managed comments are noticed; idle syncs are free; rate limits are
//! waited out; failures are reported and lose nothing; the token stays out of the store.

use handoff_test_support as support;

use std::time::Duration;

use handoff::domain::{
    CheckStatus, CommentKind, FeedbackSource, FeedbackStatus, FollowUpSource, NewRepo,
    SandboxBackend, VersionOrigin,
};
use handoff::github::comment_publishing::publish_agent_output;
use handoff::github::sync::sync;
use handoff::github::{CommentPlace, GithubClient, GithubEndpoints, GithubError, RequestPolicy};
use handoff::secrets::Secret;
use handoff::store::{CodeRunRequest, FeedbackFilter, NewFeedback, RunOutcome, SettingKey};
use handoff::Store;
use support::fake_github::{FakeGithub, Fault, FaultRule, OWNER};

const REPO: &str = "octocat/hello-world";

fn client(fake: &FakeGithub, max_rate_limit_wait: Duration) -> GithubClient {
    GithubClient::new(
        GithubEndpoints::new(&fake.api_base()).unwrap(),
        Secret::new(fake.owner_token()),
        RequestPolicy {
            attempts: 2,
            first_retry_delay: Duration::from_millis(10),
            max_rate_limit_wait,
            timeout: Duration::from_secs(2),
        },
    )
    .unwrap()
}

async fn store_with_repo(dir: &tempfile::TempDir) -> Store {
    let store = Store::open_in(dir.path()).await.unwrap();
    store
        .repositories()
        .add_repo(&NewRepo::with_defaults(REPO.parse().unwrap()))
        .await
        .unwrap();
    store
}

/// A feedback item whose first run opened PR `number` on the fake.
async fn item_with_pull(
    store: &Store,
    fake: &FakeGithub,
    title: &str,
) -> (handoff::domain::Feedback, u64) {
    let feedback = store
        .feedback()
        .add_feedback(&NewFeedback {
            repo: REPO.parse().unwrap(),
            title: Some(title.to_owned()),
            body: format!("{title}, please"),
            source: FeedbackSource::App,
            github_issue: None,
            opened_by_visitor: false,
        })
        .await
        .unwrap();
    let started = store
        .runs()
        .start_code_run(&CodeRunRequest {
            feedback_id: feedback.id,
            backend: SandboxBackend::Local,
            agent_preset: "scripted".to_owned(),
            instructions: None,
        })
        .await
        .unwrap();
    store
        .runs()
        .finish_run(
            started.run.id,
            &RunOutcome::Succeeded {
                exit_code: Some(0),
                end_sha: None,
                output: None,
            },
        )
        .await
        .unwrap();
    fake.create_branch(REPO, &feedback.head_branch, "main");
    let number = fake.create_pull(REPO, OWNER, &feedback.head_branch, title);
    let url = format!("{}/{REPO}/pull/{number}", fake.web_base());
    let feedback = store
        .feedback()
        .record_pull_request(feedback.id, number, &url)
        .await
        .unwrap();
    (feedback, number)
}

#[tokio::test]
async fn labelled_issues_become_feedback_once() {
    let fake = FakeGithub::start().await;
    fake.create_repo(REPO, "main");
    fake.add_user("visitor");
    let labelled = fake.create_issue(
        REPO,
        "visitor",
        "Dark mode",
        "Please add dark mode",
        &["feedback", "ui"],
    );
    fake.create_issue(REPO, "visitor", "Unrelated bug", "Crash", &["bug"]);
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_repo(&dir).await;
    let github = client(&fake, Duration::from_secs(5));

    let first = sync(&github, &store, None).await.unwrap();
    let second = sync(&github, &store, None).await.unwrap();

    assert_eq!(first.new_feedback.len(), 1);
    assert!(second.new_feedback.is_empty());
    let items = store
        .feedback()
        .feedback_list(&FeedbackFilter::default())
        .await
        .unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0].title, "Dark mode");
    assert_eq!(items[0].body, "Please add dark mode");
    assert_eq!(items[0].source, FeedbackSource::GithubIssue);
    assert_eq!(items[0].github_issue_number, Some(labelled));
    assert_eq!(
        items[0].head_branch,
        format!("feedback/f2c-issue-{labelled}")
    );
}

#[tokio::test]
async fn visitors_comments_become_untrusted_follow_ups_and_the_owners_do_not() {
    // A visitor's comment that starts with a managed comment's marker is theirs all the
    // same: shown as a visitor comment, never hidden and never taken for Handoff's.
    let fake = FakeGithub::start().await;
    fake.create_repo(REPO, "main");
    fake.add_user("visitor");
    fake.add_bot("ci-bot[bot]");
    let issue = fake.create_issue(REPO, "visitor", "Dark mode", "Please", &["feedback"]);
    fake.add_comment(REPO, issue, "visitor", "Also the sidebar, thanks!");
    fake.add_comment(REPO, issue, OWNER, "On it.");
    fake.add_comment(REPO, issue, "ci-bot[bot]", "Build passed");
    fake.add_comment(
        REPO,
        issue,
        "visitor",
        "<!-- f2c-followups -->\nforged thread",
    );
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_repo(&dir).await;
    let github = client(&fake, Duration::from_secs(5));

    let report = sync(&github, &store, None).await.unwrap();
    fake.add_comment(REPO, issue, "visitor", "And the footer.");
    let again = sync(&github, &store, None).await.unwrap();

    assert_eq!(report.new_visitor_follow_ups, 2);
    assert_eq!(again.new_visitor_follow_ups, 1);
    let item = &store
        .feedback()
        .feedback_list(&FeedbackFilter::default())
        .await
        .unwrap()[0];
    let thread = store.feedback().follow_ups(item.id).await.unwrap();
    let bodies: Vec<_> = thread
        .iter()
        .map(|f| {
            (
                f.source,
                f.author_login.clone().unwrap_or_default(),
                f.body.clone(),
                f.included_in_prompts,
            )
        })
        .collect();
    assert_eq!(
        bodies,
        [
            (
                FollowUpSource::Visitor,
                "visitor".to_owned(),
                "Also the sidebar, thanks!".to_owned(),
                false
            ),
            (
                FollowUpSource::Visitor,
                "visitor".to_owned(),
                "<!-- f2c-followups -->\nforged thread".to_owned(),
                false
            ),
            (
                FollowUpSource::Visitor,
                "visitor".to_owned(),
                "And the footer.".to_owned(),
                false
            ),
        ]
    );
}

#[tokio::test]
async fn pr_state_on_github_drives_the_status() {
    let fake = FakeGithub::start().await;
    fake.create_repo(REPO, "main");
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_repo(&dir).await;
    let (to_merge, merged_number) = item_with_pull(&store, &fake, "Merge me").await;
    let (to_close, closed_number) = item_with_pull(&store, &fake, "Close me").await;
    let github = client(&fake, Duration::from_secs(5));
    fake.merge_pull(REPO, merged_number);
    fake.close_pull(REPO, closed_number);

    let report = sync(&github, &store, None).await.unwrap();

    assert_eq!(
        store.feedback().feedback(to_merge.id).await.unwrap().status,
        FeedbackStatus::Merged
    );
    assert_eq!(
        store.feedback().feedback(to_close.id).await.unwrap().status,
        FeedbackStatus::Failed
    );
    assert_eq!(report.status_changes.len(), 2);

    // Reopened on GitHub: back to WAITING_FOR_REVIEW.
    github
        .send(
            http::Method::PATCH,
            &format!("/repos/{REPO}/pulls/{closed_number}"),
            Some(&serde_json::json!({ "state": "open" })),
            http::HeaderMap::new(),
        )
        .await
        .unwrap();
    sync(&github, &store, None).await.unwrap();
    assert_eq!(
        store.feedback().feedback(to_close.id).await.unwrap().status,
        FeedbackStatus::WaitingForReview
    );
}

#[tokio::test]
async fn edits_and_deletions_of_managed_comments_on_github_are_noticed() {
    let fake = FakeGithub::start().await;
    fake.create_repo(REPO, "main");
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_repo(&dir).await;
    let (_, number) = item_with_pull(&store, &fake, "Reviewed").await;
    let github = client(&fake, Duration::from_secs(5));
    let repo = store
        .repositories()
        .repo_by_name(&REPO.parse().unwrap())
        .await
        .unwrap();
    let place = |kind| CommentPlace {
        repo: &repo,
        pr_number: number,
        kind,
    };
    let review = publish_agent_output(
        &github,
        &store,
        place(CommentKind::Review),
        "review",
        None,
        None,
    )
    .await
    .unwrap();
    let plan = publish_agent_output(
        &github,
        &store,
        place(CommentKind::Plan),
        "plan",
        None,
        None,
    )
    .await
    .unwrap();
    let review_id = review.comment.github_comment_id.unwrap();
    let original = fake.comment_body(review_id).unwrap();
    fake.edit_comment(review_id, &format!("{}, corrected", original));
    fake.delete_comment(plan.comment.github_comment_id.unwrap());

    let report = sync(&github, &store, None).await.unwrap();

    assert_eq!(report.comment_edits_found, 1);
    assert_eq!(report.comments_missing, 1);
    let versions = store
        .comments()
        .comment_versions(review.comment.id)
        .await
        .unwrap();
    assert_eq!(versions.last().unwrap().origin, VersionOrigin::EditOnGithub);
    assert_eq!(versions.last().unwrap().content, "review, corrected");
    let plan = store
        .comments()
        .managed_comment(repo.id, number, CommentKind::Plan)
        .await
        .unwrap()
        .unwrap();
    assert!(plan.missing_since.is_some());
}

#[tokio::test]
async fn an_idle_sync_of_many_prs_costs_nothing_against_the_rate_limit() {
    let fake = FakeGithub::start().await;
    fake.create_repo(REPO, "main");
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_repo(&dir).await;
    let github = client(&fake, Duration::from_secs(5));
    let repo = store
        .repositories()
        .repo_by_name(&REPO.parse().unwrap())
        .await
        .unwrap();
    for n in 0..25 {
        let (_, number) = item_with_pull(&store, &fake, &format!("Item {n}")).await;
        publish_agent_output(
            &github,
            &store,
            CommentPlace {
                repo: &repo,
                pr_number: number,
                kind: CommentKind::FollowUps,
            },
            "thread",
            None,
            None,
        )
        .await
        .unwrap();
    }
    // The PRs were last updated an hour ago (their checks have settled).
    fake.backdate_issues(REPO, chrono::Duration::hours(1));
    // The first sync reads everything; the next asks for what changed since, in
    // listings it has not asked for before.
    sync(&github, &store, None).await.unwrap();
    fake.clear_requests();
    let after_the_first = sync(&github, &store, None).await.unwrap();
    assert!(
        after_the_first.requests.sent <= 3,
        "the second sync asked for what changed, not for each PR: {:?}",
        fake.requests()
    );
    fake.clear_requests();

    let idle = sync(&github, &store, None).await.unwrap();

    assert_eq!(fake.rate_limit_cost(), 0, "{:?}", fake.requests());
    assert!(
        idle.requests.sent <= 3,
        "an idle sync costs a few requests whatever the number of PRs: {:?}",
        fake.requests()
    );
    assert_eq!(idle.requests.not_modified, idle.requests.sent);
    assert!(idle.status_changes.is_empty() && idle.new_feedback.is_empty());
    assert_eq!(
        idle.open_pull_requests, 25,
        "the mirror still has every open PR"
    );
}

/// Open PRs that are not Handoff's, each with its own head and checks that settled
/// (passed, failed, or none at all): an idle sync asks for none of their checks again.
#[tokio::test]
async fn an_idle_sync_of_two_hundred_prs_that_are_not_handoffs_asks_a_few_requests() {
    let fake = FakeGithub::start().await;
    fake.create_repo(REPO, "main");
    fake.add_user("contributor");
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_repo(&dir).await;
    let github = client(&fake, Duration::from_secs(5));
    fake.open_pulls_with_settled_checks(REPO, "contributor", 200);
    fake.backdate_issues(REPO, chrono::Duration::hours(1));
    let first = sync(&github, &store, None).await.unwrap();
    assert_eq!(first.open_pull_requests, 200);
    sync(&github, &store, None).await.unwrap();
    fake.clear_requests();

    let idle = sync(&github, &store, None).await.unwrap();

    assert!(
        idle.requests.sent <= 3,
        "an idle sync asks a few requests whatever the number of PRs: {} {:?}",
        idle.requests.sent,
        fake.requests()
    );
    assert_eq!(fake.rate_limit_cost(), 0, "{:?}", fake.requests());
    assert_eq!(idle.open_pull_requests, 200);
    let failing = store
        .pull_requests()
        .open_pull_requests(&handoff::store::PullRequestFilter {
            checks: Some(handoff::domain::CheckStatus::Failure),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(
        failing.len(),
        67,
        "the checks read by the first sync stay mirrored"
    );
}

#[tokio::test]
async fn a_rate_limit_is_waited_out_instead_of_failing() {
    let fake = FakeGithub::start().await;
    fake.create_repo(REPO, "main");
    fake.add_user("visitor");
    fake.create_issue(REPO, "visitor", "Dark mode", "Please", &["feedback"]);
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_repo(&dir).await;
    let github = client(&fake, Duration::from_secs(10));
    fake.inject(FaultRule::new(
        "/issues?labels",
        Fault::RateLimited {
            reset_in: Duration::from_secs(1),
        },
    ));
    fake.inject(FaultRule::new(
        "/comments",
        Fault::TooManyRequests {
            retry_after_seconds: 1,
        },
    ));

    let report = sync(&github, &store, None).await.unwrap();

    assert_eq!(report.requests.rate_limit_waits, 2);
    assert_eq!(report.new_feedback.len(), 1);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
}

#[tokio::test]
async fn a_rate_limit_too_far_away_is_reported_with_its_reset_time_and_loses_nothing() {
    let fake = FakeGithub::start().await;
    fake.create_repo(REPO, "main");
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_repo(&dir).await;
    let (item, _) = item_with_pull(&store, &fake, "Waiting").await;
    let github = client(&fake, Duration::from_secs(1));
    fake.inject(
        FaultRule::new(
            "/pulls/",
            Fault::RateLimited {
                reset_in: Duration::from_secs(3600),
            },
        )
        .times(5),
    );

    let report = sync(&github, &store, None).await.unwrap();

    assert_eq!(report.errors.len(), 1);
    assert!(
        report.errors[0].contains("rate limit is used up until"),
        "{:?}",
        report.errors
    );
    assert_eq!(
        store.feedback().feedback(item.id).await.unwrap().status,
        FeedbackStatus::WaitingForReview
    );
}

#[tokio::test]
async fn github_failing_for_one_repo_is_reported_and_the_others_still_sync() {
    let fake = FakeGithub::start().await;
    fake.create_repo(REPO, "main");
    fake.create_repo("octocat/docs", "main");
    fake.add_user("visitor");
    fake.create_issue(
        "octocat/docs",
        "visitor",
        "Typo",
        "in the intro",
        &["feedback"],
    );
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_repo(&dir).await;
    store
        .repositories()
        .add_repo(&NewRepo::with_defaults("octocat/docs".parse().unwrap()))
        .await
        .unwrap();
    let github = client(&fake, Duration::from_secs(5));
    fake.inject(FaultRule::new("/repos/octocat/hello-world/issues", Fault::Status(500)).times(10));

    let report = sync(&github, &store, None).await.unwrap();

    assert_eq!(report.errors.len(), 1);
    assert!(
        report.errors[0].starts_with(
            "octocat/hello-world: GitHub failed on GET /repos/octocat/hello-world/issues with 500"
        ),
        "{:?}",
        report.errors
    );
    assert_eq!(report.new_feedback.len(), 1, "the docs repository synced");
}

#[tokio::test]
async fn html_instead_of_json_is_a_clear_error_and_nothing_changes() {
    let fake = FakeGithub::start().await;
    fake.create_repo(REPO, "main");
    fake.add_user("visitor");
    fake.create_issue(REPO, "visitor", "Dark mode", "Please", &["feedback"]);
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_repo(&dir).await;
    let github = client(&fake, Duration::from_secs(5));
    fake.inject(FaultRule::new("/issues?labels", Fault::Html));

    let report = sync(&github, &store, None).await.unwrap();

    assert_eq!(report.errors.len(), 1);
    assert!(
        report.errors[0].contains("it is HTML, not JSON"),
        "{:?}",
        report.errors
    );
    assert!(store
        .feedback()
        .feedback_list(&FeedbackFilter::default())
        .await
        .unwrap()
        .is_empty());
    // The garbled page was not kept as the cached answer: the next sync reads it right.
    let report = sync(&github, &store, None).await.unwrap();
    assert_eq!(report.new_feedback.len(), 1);
}

#[tokio::test]
async fn a_bad_token_stops_the_sync_with_a_sign_in_hint() {
    let fake = FakeGithub::start().await;
    fake.create_repo(REPO, "main");
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_repo(&dir).await;
    store
        .settings()
        .set_setting(SettingKey::GithubLogin, OWNER)
        .await
        .unwrap();
    let github = GithubClient::new(
        GithubEndpoints::new(&fake.api_base()).unwrap(),
        Secret::new("ghp_revoked_token_000"),
        RequestPolicy::default(),
    )
    .unwrap();

    let error = sync(&github, &store, None).await.unwrap_err();

    assert!(
        matches!(error, GithubError::Unauthorized { .. }),
        "{error:?}"
    );
    assert_eq!(error.code(), handoff::error_code::ErrorCode::GithubAuth);
    // The core says what happened; what to do is each front end's to say.
    assert!(!error.to_string().contains("handoff "), "{error}");
    assert!(!error.to_string().contains("ghp_revoked_token_000"));
}

#[tokio::test]
async fn the_token_never_reaches_the_database() {
    let fake = FakeGithub::start().await;
    fake.create_repo(REPO, "main");
    fake.add_user("visitor");
    let issue = fake.create_issue(REPO, "visitor", "Dark mode", "Please", &["feedback"]);
    fake.add_comment(REPO, issue, "visitor", "more");
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_repo(&dir).await;
    let github = client(&fake, Duration::from_secs(5));
    fake.inject(FaultRule::new("/issues", Fault::Status(500)).times(2));
    let failing = sync(&github, &store, None).await.unwrap();
    assert!(!failing.errors.is_empty());
    let succeeding = sync(&github, &store, None).await.unwrap();
    assert!(succeeding.errors.is_empty());
    let path = store.path().to_owned();
    store.close().await;

    let token = fake.owner_token().as_bytes().to_vec();
    for entry in std::fs::read_dir(path.parent().unwrap()).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        assert!(
            !bytes
                .windows(token.len())
                .any(|window| window == token.as_slice()),
            "the token is in a file of the data folder"
        );
    }
}

#[tokio::test]
async fn a_slow_answer_times_out_and_the_retry_succeeds() {
    let fake = FakeGithub::start().await;
    fake.create_repo(REPO, "main");
    fake.add_user("visitor");
    fake.create_issue(REPO, "visitor", "Dark mode", "Please", &["feedback"]);
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_repo(&dir).await;
    let github = GithubClient::new(
        GithubEndpoints::new(&fake.api_base()).unwrap(),
        Secret::new(fake.owner_token()),
        RequestPolicy {
            attempts: 2,
            first_retry_delay: Duration::from_millis(10),
            max_rate_limit_wait: Duration::from_secs(5),
            timeout: Duration::from_millis(500),
        },
    )
    .unwrap();
    fake.inject(FaultRule::new(
        "/issues?labels",
        Fault::Slow(Duration::from_secs(3)),
    ));

    let report = sync(&github, &store, None).await.unwrap();

    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(report.new_feedback.len(), 1);
    // GET /user, the labelled issues twice (the first given up on), the issue's comments,
    // the open PRs, the repository's comments since it was connected (for the owner's
    // commands).
    assert_eq!(
        github.request_count().sent,
        6,
        "the slow answer was given up on and asked again"
    );
}

/// A fine-grained token without "Checks: read": every check-runs request is refused, yet
/// the sync goes on and reports no failure; the repository is marked until the token may
/// read them again, when the mark goes and the checks come back.
#[tokio::test]
async fn a_token_that_may_not_read_checks_syncs_the_rest_and_the_repository_says_so() {
    let fake = FakeGithub::start().await;
    fake.create_repo(REPO, "main");
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_repo(&dir).await;
    let github = client(&fake, Duration::from_secs(5));
    let (feedback, number) = item_with_pull(&store, &fake, "Checked").await;
    let branch = fake.pulls(REPO)[0].1.clone();
    let head = fake.branch_sha(REPO, &branch).expect("the PR's head");
    fake.add_check_run(REPO, &head, "ci", "test", Some("failure"), "1 failed");
    fake.inject(
        FaultRule::new(
            "/check-runs",
            Fault::NotAccessible {
                permission: "checks=read".to_owned(),
            },
        )
        .times(2),
    );
    let repo_id = store
        .repositories()
        .repo_by_name(&REPO.parse().unwrap())
        .await
        .unwrap()
        .id;

    let first = sync(&github, &store, None).await.unwrap();

    assert!(first.errors.is_empty(), "{:?}", first.errors);
    let repo = store.repositories().repo(repo_id).await.unwrap();
    let since = repo.checks_unreadable_since.expect("marked");
    let pull = store
        .pull_requests()
        .pull_request(repo_id, number)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(pull.checks, handoff::domain::CheckStatus::NoChecks);
    assert_eq!(
        store
            .feedback()
            .feedback(feedback.id)
            .await
            .unwrap()
            .pr_number,
        Some(number),
        "the rest synced"
    );
    // Refused again: still marked, from the first time.
    let second = sync(&github, &store, None).await.unwrap();
    assert!(second.errors.is_empty(), "{:?}", second.errors);
    assert_eq!(
        store
            .repositories()
            .repo(repo_id)
            .await
            .unwrap()
            .checks_unreadable_since,
        Some(since)
    );
    // Allowed again: the mark goes and the failing check is read.
    let third = sync(&github, &store, None).await.unwrap();
    assert!(third.errors.is_empty(), "{:?}", third.errors);
    assert_eq!(
        store
            .repositories()
            .repo(repo_id)
            .await
            .unwrap()
            .checks_unreadable_since,
        None
    );
    let pull = store
        .pull_requests()
        .pull_request(repo_id, number)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(pull.checks, handoff::domain::CheckStatus::Failure);
}

/// 150 open PRs, each on its own head commit and all updated within the hour (so their
/// checks may still change): the checks of every one come in one GraphQL query a
/// hundred PRs, not a request a commit, at the first sync and at the next; and they say
/// what the checks say.
#[tokio::test]
async fn the_checks_of_many_busy_prs_come_in_one_query_a_hundred_prs() {
    let fake = FakeGithub::start().await;
    fake.create_repo(REPO, "main");
    fake.add_user("contributor");
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_repo(&dir).await;
    let github = client(&fake, Duration::from_secs(5));
    let numbers = fake.open_pulls_with_settled_checks(REPO, "contributor", 150);
    let asked = |fake: &FakeGithub| {
        let requests = fake.requests();
        fake.clear_requests();
        let graphql = requests.iter().filter(|r| r.path == "/graphql").count();
        let per_commit = requests
            .iter()
            .filter(|r| r.path.contains("/check-runs"))
            .count();
        (graphql, per_commit)
    };
    fake.clear_requests();

    let first = sync(&github, &store, None).await.unwrap();
    assert!(first.errors.is_empty(), "{:?}", first.errors);
    assert_eq!(
        asked(&fake),
        (2, 0),
        "two pages of open PRs, no commit asked"
    );
    let second = sync(&github, &store, None).await.unwrap();
    assert!(second.errors.is_empty(), "{:?}", second.errors);
    assert_eq!(
        asked(&fake),
        (2, 0),
        "busy PRs are asked at every sync, at once"
    );

    let repo_id = store
        .repositories()
        .repo_by_name(&REPO.parse().unwrap())
        .await
        .unwrap()
        .id;
    for (n, number) in numbers.iter().enumerate() {
        let pull = store
            .pull_requests()
            .pull_request(repo_id, *number)
            .await
            .unwrap()
            .unwrap();
        let expected = match n % 3 {
            0 => CheckStatus::Success,
            1 => CheckStatus::Failure,
            _ => CheckStatus::NoChecks,
        };
        assert_eq!(pull.checks, expected, "PR #{number}");
    }
}

/// GraphQL refusing the checks (a token that may not read them): each commit is asked
/// of REST instead, which names the missing permission, and the rest syncs.
#[tokio::test]
async fn a_refused_checks_query_falls_back_to_each_commit() {
    let fake = FakeGithub::start().await;
    fake.create_repo(REPO, "main");
    fake.add_user("contributor");
    let dir = tempfile::tempdir().unwrap();
    let store = store_with_repo(&dir).await;
    let github = client(&fake, Duration::from_secs(5));
    fake.open_pulls_with_settled_checks(REPO, "contributor", 6);
    for path in ["/graphql", "/check-runs"] {
        fake.inject(FaultRule::new(
            path,
            Fault::NotAccessible {
                permission: "checks=read".to_owned(),
            },
        ));
    }

    let report = sync(&github, &store, None).await.unwrap();

    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(report.open_pull_requests, 6);
    let repo = store
        .repositories()
        .repo_by_name(&REPO.parse().unwrap())
        .await
        .unwrap();
    assert!(
        repo.checks_unreadable_since.is_some(),
        "the repository says its checks cannot be read"
    );
}
