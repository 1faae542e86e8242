//! `@handoff` commands with two installations of the same owner (a desktop and a
//! laptop, each with its own data folder) on one fake GitHub: a command is taken once,
//! even when both claim it at the same moment; a PR one opened is the item's PR in the
//! other too, and commands on it reach both; and a run one answered counts against the
//! other's month.

use handoff_test_support as support;

use handoff::domain::{CommandState, FeedbackStatus, RunStatus, SandboxBackend, Stage};
use handoff::github::command_claims::{post_claim, settle_claim, ClaimSettled};
use handoff::github::comment_authorship::SignedInAccount;
use handoff::github::sync::sync;
use support::fake_github::OWNER;
use support::pipeline_world::{pr_number, Installation, PipelineWorld, REPO};

use super::github_commands::{drive_the_one_run, item_with_a_pull_request, replies, sync_and_take};

/// A desktop and a laptop installation of the owner's on one fake GitHub, and an issue
/// of the owner's labelled as feedback with `body`, synced into an item by both.
async fn desktop_and_laptop_with_an_issue(body: &str) -> (PipelineWorld, Installation, u64) {
    let world = PipelineWorld::new(SandboxBackend::Local).await;
    let laptop = world.another_installation().await;
    let issue = world
        .fake
        .create_issue(REPO, OWNER, "Greeting", body, &["feedback"]);
    for (store, pipeline) in [
        (&world.store, &world.pipeline),
        (&laptop.store, &laptop.pipeline),
    ] {
        let report = sync(&pipeline.github, store, None).await.unwrap();
        assert_eq!(report.new_feedback.len(), 1, "{report:?}");
    }
    (world, laptop, issue)
}

#[tokio::test]
async fn a_command_on_a_feedback_issue_runs_once_across_two_installations_of_the_owner() {
    let (world, laptop, issue) =
        desktop_and_laptop_with_an_issue("Say hello on the front page.").await;
    let command = world.fake.add_comment(
        REPO,
        issue,
        OWNER,
        "@handoff Start with this.\n@@write hello.txt hello",
    );

    // Both see it at their next sync, at the same moment.
    let (desktop_took, laptop_took) = futures::future::join(
        sync_and_take(&world.store, &world.pipeline),
        sync_and_take(&laptop.store, &laptop.pipeline),
    )
    .await;
    let runs = desktop_took.runs.len() + laptop_took.runs.len();
    assert_eq!(
        runs, 1,
        "one run between them: {:?} / {:?}",
        desktop_took.decided, laptop_took.decided
    );
    let (winner, loser, winners_pipeline) = if desktop_took.runs.len() == 1 {
        (desktop_took, laptop_took, &world.pipeline)
    } else {
        (laptop_took, desktop_took, &laptop.pipeline)
    };
    assert_eq!(loser.decided.len(), 1);
    assert_eq!(loser.decided[0].state, CommandState::TakenElsewhere);
    assert_eq!(
        world.fake.reactions_on(command).len(),
        1,
        "one reaction, by the winner"
    );
    assert_eq!(
        replies(&world, issue, "<!-- handoff:claim ").len(),
        1,
        "the losing claim, if one was posted, was withdrawn"
    );
    let run = drive_the_one_run(winner).await;
    assert_eq!(
        run.status,
        RunStatus::Succeeded,
        "{:?}",
        run.failure_message
    );
    assert_eq!(run.stage, Stage::Code);
    let answers = replies(&world, issue, "<!-- handoff:answer ");
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert!(
        answers[0].contains(&format!("(run {}) succeeded: PR #", run.id)),
        "the first run opened a PR: {}",
        answers[0]
    );
    // Once answered, neither takes it again.
    assert!(winners_pipeline
        .github_commands()
        .begin_github_commands()
        .await
        .unwrap()
        .decided
        .is_empty());
}

#[tokio::test]
async fn of_two_claims_posted_at_the_same_moment_the_earliest_wins_and_the_other_withdraws() {
    let world = PipelineWorld::new(SandboxBackend::Local).await;
    let laptop = world.another_installation().await;
    let (feedback, number) = item_with_a_pull_request(&world).await;
    world
        .fake
        .add_comment(REPO, number, OWNER, "@handoff Greet in French too.");
    sync(&world.pipeline.github, &world.store, None)
        .await
        .unwrap();
    let command = world
        .store
        .github_commands()
        .github_commands_of(feedback.id)
        .await
        .unwrap()
        .remove(0);
    let owner = SignedInAccount {
        login: OWNER.to_owned(),
    };
    let repo = &world.repo.name;
    // Both post before either reads the thread again.
    let desktop_claim = post_claim(
        &world.pipeline.github,
        repo,
        &command,
        &world.installation,
        "desktop",
    )
    .await
    .unwrap();
    let laptop_claim = post_claim(
        &laptop.pipeline.github,
        repo,
        &command,
        &laptop.installation,
        "laptop",
    )
    .await
    .unwrap();
    assert!(desktop_claim < laptop_claim);
    let laptop_settled = settle_claim(
        &laptop.pipeline.github,
        &laptop.store,
        &owner,
        repo,
        &command,
        &laptop.installation,
        laptop_claim,
    )
    .await
    .unwrap();
    let desktop_settled = settle_claim(
        &world.pipeline.github,
        &world.store,
        &owner,
        repo,
        &command,
        &world.installation,
        desktop_claim,
    )
    .await
    .unwrap();
    assert_eq!(desktop_settled, ClaimSettled::Won);
    assert_eq!(
        laptop_settled,
        ClaimSettled::Lost {
            installation: world.installation.clone()
        }
    );
    assert_eq!(world.fake.comment_body(laptop_claim), None, "withdrawn");
    assert!(world.fake.comment_body(desktop_claim).is_some());
}

#[tokio::test]
async fn a_pr_another_installation_opened_is_the_items_pr_there_too_and_its_commands_run_once() {
    let (world, laptop, issue) =
        desktop_and_laptop_with_an_issue("Say hello.\n@@append hello.txt hello").await;
    let desktops_item = world
        .store
        .feedback()
        .feedback_for_issue(&world.repo.name, issue)
        .await
        .unwrap()
        .unwrap();
    let number = pr_number(&world.run(&desktops_item, None).await);

    let report = sync(&laptop.pipeline.github, &laptop.store, None)
        .await
        .unwrap();
    let laptops_item = laptop
        .store
        .feedback()
        .feedback_for_issue(&laptop.repo.name, issue)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(laptops_item.pr_number, Some(number), "{report:?}");
    assert_eq!(laptops_item.status, FeedbackStatus::WaitingForReview);
    assert!(laptops_item
        .pr_url
        .as_deref()
        .is_some_and(|url| url.ends_with(&format!("/pull/{number}"))));

    // A command on that PR is now seen by both, and taken by the first to claim it.
    // (Had the laptop taken it, it would treat the desktop's agent commits as someone
    // else's work: on this local backend it would refuse, in a sandbox it would run.)
    let command = world.fake.add_comment(
        REPO,
        number,
        OWNER,
        "@handoff Greet in French too.\n@@append hello.txt bonjour",
    );
    let desktop_took = sync_and_take(&world.store, &world.pipeline).await;
    let laptop_took = sync_and_take(&laptop.store, &laptop.pipeline).await;
    assert_eq!(desktop_took.runs.len(), 1, "{:?}", desktop_took.decided);
    assert!(laptop_took.runs.is_empty());
    assert_eq!(laptop_took.decided.len(), 1, "the laptop saw it on its PR");
    assert_eq!(laptop_took.decided[0].comment_id, command);
    assert_eq!(laptop_took.decided[0].state, CommandState::TakenElsewhere);
    let run = drive_the_one_run(desktop_took).await;
    assert_eq!(
        run.status,
        RunStatus::Succeeded,
        "{:?}",
        run.failure_message
    );
    let hello = world
        .fake
        .file_on_branch(REPO, &format!("refs/pull/{number}/head"), "hello.txt")
        .unwrap();
    // The item's own directive runs in every run of it, the command's once: the first
    // run and one update, on the same PR.
    assert_eq!(hello, "hello\nhello\nbonjour\n");
    assert_eq!(world.fake.pulls(REPO).len(), 1);
}

#[tokio::test]
async fn a_run_another_installation_made_counts_against_this_installations_month() {
    let (world, laptop, issue) = desktop_and_laptop_with_an_issue("Say hello.").await;
    world.fake.add_comment(
        REPO,
        issue,
        OWNER,
        "@handoff Start.\n@@write hello.txt hello\n@@usage 0.25",
    );
    let took = sync_and_take(&world.store, &world.pipeline).await;
    let run = drive_the_one_run(took).await;
    assert_eq!(
        run.status,
        RunStatus::Succeeded,
        "{:?}",
        run.failure_message
    );
    assert_eq!(run.llm_cost_usd, Some(0.25));

    // The laptop reads the desktop's answer at its next sync.
    let laptops = sync_and_take(&laptop.store, &laptop.pipeline).await;
    assert!(laptops.runs.is_empty());
    let now = chrono::Utc::now();
    let quota = laptop
        .store
        .spend()
        .quota_status(laptop.repo.id, now)
        .await
        .unwrap();
    assert_eq!(quota.used, 1, "the desktop's run is one of the month's");
    let spent = laptop
        .store
        .spend()
        .spent_so_far(laptop.repo.id, now)
        .await
        .unwrap();
    assert!(
        (spent.repo_month_usd - 0.25).abs() < 1e-9 && (spent.day_usd - 0.25).abs() < 1e-9,
        "{spent:?}"
    );

    // Read again, it counts once; and the desktop does not count its own answer twice.
    sync(&laptop.pipeline.github, &laptop.store, None)
        .await
        .unwrap();
    sync(&world.pipeline.github, &world.store, None)
        .await
        .unwrap();
    assert_eq!(
        laptop
            .store
            .spend()
            .quota_status(laptop.repo.id, now)
            .await
            .unwrap()
            .used,
        1
    );
    assert_eq!(
        world
            .store
            .spend()
            .quota_status(world.repo.id, now)
            .await
            .unwrap()
            .used,
        1
    );
    let desktop_spent = world
        .store
        .spend()
        .spent_so_far(world.repo.id, now)
        .await
        .unwrap();
    assert!(
        (desktop_spent.repo_month_usd - 0.25).abs() < 1e-9,
        "{desktop_spent:?}"
    );
}
