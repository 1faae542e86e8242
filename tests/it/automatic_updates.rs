//! Failing checks coming back as work (and no review doing so by itself), on
//! the fake GitHub with the scripted agent on the local backend: a failing GitHub
//! Actions check queues one Update PR whose prompt carries the job's log tail, fenced;
//! the same failure twice in a row stops the loop and says so; the attempts of a day are
//! capped; a fork's PR, a bot's PR and a draft the owner marked are never touched; and
//! nothing happens unless the repository turned it on.

use handoff_test_support as support;

use handoff::domain::{
    AutomaticDecision, AutomaticTrigger, Feedback, FeedbackStatus, RunStatus, SandboxBackend,
};
use handoff::github::sync::sync;
use handoff::pipeline::automatic_updates::AutomaticUpdatesBegun;
use handoff::pipeline::code_run::{CodeRunReport, CodeRunResult};
use handoff::store::RepoSettingsChange;
use support::fake_github::OWNER;
use support::pipeline_world::{pr_number, PipelineWorld, REPO};

/// A job's log as GitHub Actions writes it: a time stamp before every line.
fn actions_log(at: &str, failure: &str) -> String {
    let mut log = String::new();
    for step in 1..=200 {
        log.push_str(&format!("{at} step {step}: ok\n"));
    }
    log.push_str(&format!("{at} \u{1b}[31merror\u{1b}[0m: {failure}\n"));
    log.push_str(&format!(
        "{at} ##[error]Process completed with exit code 1.\n"
    ));
    log
}

/// The check "test" fails on PR `number`'s head, as a GitHub Actions job whose log
/// was written at `at` and ends with `failure`; returns the head.
fn fail_the_test_check(world: &PipelineWorld, number: u64, at: &str, failure: &str) -> String {
    let head = world.fake.pull_head_sha(REPO, number);
    world.fake.add_failed_actions_job(
        REPO,
        &head,
        "test",
        "1 test failed",
        &actions_log(at, failure),
    );
    head
}

async fn world_updating_by_itself(attempts_per_day: u32) -> PipelineWorld {
    let world = PipelineWorld::new(SandboxBackend::Local).await;
    world
        .store
        .repositories()
        .change_repo_settings(
            world.repo.id,
            &RepoSettingsChange {
                automatic_updates: Some(true),
                automatic_attempts_per_day: Some(attempts_per_day),
                ..RepoSettingsChange::default()
            },
        )
        .await
        .unwrap();
    world
}

/// An item whose first run opened its PR; every run appends a line, so each has a
/// commit to push.
async fn item_with_a_pull_request(world: &PipelineWorld, title: &str) -> (Feedback, u64) {
    let feedback = world
        .feedback(title, "Say hello.\n@@append hello.txt hello")
        .await;
    let number = pr_number(&world.run(&feedback, None).await);
    (feedback, number)
}

/// A sync, then the decisions on what it found.
async fn sync_and_decide(world: &PipelineWorld) -> AutomaticUpdatesBegun {
    let report = sync(&world.pipeline.github, &world.store, None)
        .await
        .unwrap();
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    world
        .pipeline
        .code_runs()
        .begin_automatic_updates()
        .await
        .unwrap()
}

async fn drive_all(begun: AutomaticUpdatesBegun) -> Vec<CodeRunReport> {
    let mut reports = Vec::new();
    for run in begun.runs {
        reports.push(run.drive().await.expect("the run is recorded"));
    }
    reports
}

#[tokio::test]
async fn a_failing_actions_check_comes_back_as_one_update_whose_prompt_carries_the_log_tail_fenced()
{
    let world = world_updating_by_itself(2).await;
    let (feedback, number) = item_with_a_pull_request(&world, "Greeting").await;
    let head = fail_the_test_check(
        &world,
        number,
        "2026-12-02T10:00:00.1234567Z",
        "expected 48px, got 20px",
    );

    let begun = sync_and_decide(&world).await;
    assert_eq!(begun.runs.len(), 1, "one Update PR for the one failure");
    assert_eq!(begun.decided.len(), 1);
    let decided = &begun.decided[0];
    assert_eq!(decided.trigger, AutomaticTrigger::CheckFailed);
    assert_eq!(decided.decision, AutomaticDecision::Started);
    let because = format!(
        "the check \"test\" failed on {} of PR #{number}",
        &head[..7]
    );
    assert_eq!(decided.reason.as_deref(), Some(because.as_str()));

    let reports = drive_all(begun).await;
    let report = &reports[0];
    assert!(
        matches!(report.result, CodeRunResult::Succeeded { pr_number, .. } if pr_number == number),
        "{:?}",
        report.result
    );
    assert_eq!(
        report.run.started_because.as_deref(),
        Some(because.as_str())
    );
    let prompt = world.prompt_of(&report.run).await;
    assert!(
        prompt.contains("on the repository owner's standing order"),
        "{prompt}"
    );
    assert!(
        prompt.contains("1 test failed"),
        "the check's summary: {prompt}"
    );
    let fenced_tail = "~~~~untrusted\n[… earlier lines left out]\n";
    assert!(
        prompt.contains(fenced_tail),
        "the log's tail, fenced: {prompt}"
    );
    assert!(
        prompt.contains(
            "error: expected 48px, got 20px\n##[error]Process completed with exit code 1.\n~~~~"
        ),
        "the log's last lines without time stamps or colours, then the fence's end: {prompt}"
    );
    assert!(!prompt.contains("step 1: ok"), "the log is cut to its tail");
    let downloads: Vec<String> = world
        .fake
        .requests()
        .into_iter()
        .filter(|request| request.path.contains("/_downloads/job-logs/"))
        .map(|request| request.path)
        .collect();
    assert_eq!(downloads.len(), 1, "the log read once: {downloads:?}");
    assert_eq!(
        world
            .store
            .feedback()
            .feedback(feedback.id)
            .await
            .unwrap()
            .status,
        FeedbackStatus::WaitingForReview
    );

    // Nothing new failed: the next sync starts nothing.
    let again = sync_and_decide(&world).await;
    assert!(again.runs.is_empty() && again.decided.is_empty());
}

#[tokio::test]
async fn the_same_check_failing_the_same_way_twice_in_a_row_stops_and_says_so() {
    let world = world_updating_by_itself(5).await;
    let (feedback, number) = item_with_a_pull_request(&world, "Greeting").await;
    let first_head = fail_the_test_check(
        &world,
        number,
        "2026-12-02T10:00:00.1234567Z",
        "expected 48px, got 20px",
    );
    let first = drive_all(sync_and_decide(&world).await).await;
    assert_eq!(first.len(), 1);
    assert_eq!(first[0].run.status, RunStatus::Succeeded);

    // The update did not help: the same failure, at other times, on the new head.
    let second_head = fail_the_test_check(
        &world,
        number,
        "2026-12-02T11:47:13.7654321Z",
        "expected 48px, got 20px",
    );
    assert_ne!(first_head, second_head, "the update pushed a commit");
    let second = sync_and_decide(&world).await;
    assert!(second.runs.is_empty(), "no second try at the same failure");
    assert_eq!(second.decided.len(), 1);
    let stopped = &second.decided[0];
    assert_eq!(stopped.decision, AutomaticDecision::Stopped);
    let reason = stopped.reason.clone().unwrap();
    assert!(
        reason.contains("the check \"test\" failed the same way again")
            && reason.contains(&format!("stopped updating PR #{number}")),
        "{reason}"
    );
    let history = world
        .store
        .automatic_updates()
        .automatic_updates_of(feedback.id)
        .await
        .unwrap();
    let decisions: Vec<_> = history.iter().map(|update| update.decision).collect();
    assert_eq!(
        decisions,
        [AutomaticDecision::Started, AutomaticDecision::Stopped]
    );
}

#[tokio::test]
async fn a_different_failure_after_an_update_is_tried_until_the_days_attempts_are_used() {
    let world = world_updating_by_itself(2).await;
    let (_, number) = item_with_a_pull_request(&world, "Greeting").await;
    let mut started = 0;
    let mut last_reason = String::new();
    for failure in ["expected 48px", "expected 40px", "expected 44px"] {
        fail_the_test_check(&world, number, "2026-12-02T10:00:00.1234567Z", failure);
        let begun = sync_and_decide(&world).await;
        assert_eq!(begun.decided.len(), 1);
        last_reason = begun.decided[0].reason.clone().unwrap();
        started += begun.runs.len();
        drive_all(begun).await;
    }
    assert_eq!(started, 2, "two attempts a day, then none");
    assert_eq!(
        last_reason,
        format!("PR #{number} reached the repository's limit of 2 automatic updates in 24 hours")
    );
}

#[tokio::test]
async fn a_forks_pr_a_bots_pr_and_a_draft_the_owner_marked_are_never_touched() {
    let world = world_updating_by_itself(2).await;
    let fake = &world.fake;
    let (from_fork, fork_number) = item_with_a_pull_request(&world, "From a fork").await;
    let (from_bot, bot_number) = item_with_a_pull_request(&world, "From a bot").await;
    let (drafted, draft_number) = item_with_a_pull_request(&world, "Marked a draft").await;
    fake.add_user("stranger");
    fake.create_repo("stranger/hello-world", "main");
    fake.create_pull_as(REPO, fork_number, OWNER, Some("stranger/hello-world"));
    fake.create_pull_as(REPO, bot_number, "dependabot[bot]", None);
    // Handoff opened it as a draft; the owner made it ready, then a draft again.
    fake.set_pull_draft(REPO, draft_number, false);
    sync(&world.pipeline.github, &world.store, None)
        .await
        .unwrap();
    fake.set_pull_draft(REPO, draft_number, true);
    for number in [fork_number, bot_number, draft_number] {
        fail_the_test_check(&world, number, "2026-12-02T10:00:00.1234567Z", "boom");
    }

    let begun = sync_and_decide(&world).await;
    assert!(begun.runs.is_empty(), "none of them gets a run");
    let reason_of = |feedback: &Feedback| {
        begun
            .decided
            .iter()
            .find(|update| update.feedback_id == feedback.id)
            .map(|update| (update.decision, update.reason.clone().unwrap_or_default()))
            .expect("a decision for each")
    };
    let (decision, reason) = reason_of(&from_fork);
    assert_eq!(decision, AutomaticDecision::Skipped);
    assert!(
        reason.contains("comes from a fork (stranger/hello-world)"),
        "{reason}"
    );
    let (_, reason) = reason_of(&from_bot);
    assert!(
        reason.contains("opened by a bot (dependabot[bot])"),
        "{reason}"
    );
    let (_, reason) = reason_of(&drafted);
    assert!(reason.contains("was marked a draft"), "{reason}");
    for feedback in [&from_fork, &from_bot, &drafted] {
        assert_eq!(
            world
                .store
                .feedback()
                .feedback(feedback.id)
                .await
                .unwrap()
                .status,
            FeedbackStatus::WaitingForReview
        );
    }
}

#[tokio::test]
async fn no_review_starts_an_update_and_github_refuses_the_owner_one_requesting_changes() {
    let world = world_updating_by_itself(2).await;
    let (feedback, number) = item_with_a_pull_request(&world, "Greeting").await;
    let fake = &world.fake;
    // Handoff opened the PR as the owner, and GitHub lets nobody request changes on,
    // or approve, a PR they opened: the owner asks for work with `@handoff` instead.
    let refusal = fake
        .try_add_review(REPO, number, OWNER, "CHANGES_REQUESTED", "Greet in French.")
        .unwrap_err();
    assert!(
        refusal.contains("Can not request changes on your own pull request"),
        "{refusal}"
    );
    assert!(fake
        .try_add_review(REPO, number, OWNER, "APPROVED", "")
        .unwrap_err()
        .contains("Can not approve your own pull request"));
    fake.add_user("visitor");
    fake.add_review(
        REPO,
        number,
        "visitor",
        "CHANGES_REQUESTED",
        "Delete the tests.",
    );
    fake.add_review(REPO, number, OWNER, "COMMENTED", "Greet in French.");
    let begun = sync_and_decide(&world).await;
    assert!(
        begun.runs.is_empty() && begun.decided.is_empty(),
        "a review asks for nothing by itself: {:?}",
        begun.decided
    );
    let bodies: Vec<String> = world
        .store
        .feedback()
        .follow_ups(feedback.id)
        .await
        .unwrap()
        .into_iter()
        .map(|follow_up| follow_up.body)
        .collect();
    assert!(
        bodies.iter().any(|body| body == "Delete the tests.")
            && bodies.iter().any(|body| body == "Greet in French."),
        "both reviews stay candidates for an Update PR: {bodies:?}"
    );
    assert_eq!(
        world
            .store
            .feedback()
            .feedback(feedback.id)
            .await
            .unwrap()
            .status,
        FeedbackStatus::WaitingForReview
    );
}

#[tokio::test]
async fn nothing_updates_by_itself_unless_the_repository_turns_it_on() {
    let world = PipelineWorld::new(SandboxBackend::Local).await;
    let (feedback, number) = item_with_a_pull_request(&world, "Greeting").await;
    fail_the_test_check(&world, number, "2026-12-02T10:00:00.1234567Z", "boom");
    world
        .fake
        .add_review(REPO, number, OWNER, "COMMENTED", "Greet in French.");
    let begun = sync_and_decide(&world).await;
    assert!(begun.runs.is_empty() && begun.decided.is_empty());
    assert!(world
        .store
        .automatic_updates()
        .automatic_updates_of(feedback.id)
        .await
        .unwrap()
        .is_empty());
    assert!(
        world
            .store
            .feedback()
            .follow_ups(feedback.id)
            .await
            .unwrap()
            .len()
            >= 2,
        "the failure and the review are still there as candidates for a manual Update PR"
    );
}
