//! A feedback PR that conflicts with its base, on the fake GitHub (which works it out
//! with `git merge-tree`): the sync records it when the base branch moves, the board's
//! card says so, and an idle sync asks no PR again.

use handoff_test_support as support;

use handoff::domain::SandboxBackend;
use handoff::github::sync::sync;
use handoff::store::FeedbackFilter;
use support::pipeline_world::{pr_number, PipelineWorld, REPO};

async fn conflicts_of(world: &PipelineWorld, number: u64) -> Option<bool> {
    world
        .store
        .pull_requests()
        .pull_request(world.repo.id, number)
        .await
        .unwrap()
        .expect("the PR is mirrored")
        .conflicts_with_base
}

async fn card_says_conflicts(world: &PipelineWorld) -> bool {
    let board = world
        .store
        .feedback()
        .dashboard(&FeedbackFilter::default())
        .await
        .unwrap();
    board
        .groups
        .iter()
        .flat_map(|group| &group.cards)
        .any(|card| card.conflicts_with_base)
}

#[tokio::test]
async fn a_feedback_pr_that_conflicts_with_its_moved_base_says_so_and_an_idle_sync_asks_nothing_more(
) {
    let world = PipelineWorld::new(SandboxBackend::Local).await;
    let feedback = world
        .feedback("Greeting", "Say hello.\n@@write hello.txt hello")
        .await;
    let number = pr_number(&world.run(&feedback, None).await);
    let github = &world.pipeline.github;

    sync(github, &world.store, None).await.unwrap();
    assert_eq!(conflicts_of(&world, number).await, Some(false));
    assert!(!card_says_conflicts(&world).await);

    // Someone changes the same file on the base branch.
    world.fake.push_commit(
        REPO,
        "main",
        "Greet in French",
        &[("hello.txt", "bonjour\n")],
    );
    let report = sync(github, &world.store, None).await.unwrap();
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(conflicts_of(&world, number).await, Some(true));
    assert!(card_says_conflicts(&world).await);

    // Nothing moved (the PR was last updated an hour ago): the PR is not asked again.
    world.fake.backdate_issues(REPO, chrono::Duration::hours(1));
    sync(github, &world.store, None).await.unwrap();
    let before = world.fake.requests().len();
    let idle = sync(github, &world.store, None).await.unwrap();
    let asked_the_pull = world.fake.requests()[before..]
        .iter()
        .any(|request| request.path.contains(&format!("/pulls/{number}")));
    assert!(!asked_the_pull, "{:?}", &world.fake.requests()[before..]);
    // What it costs: one conditional request for the base branch, answered 304.
    let base_asks: Vec<_> = world.fake.requests()[before..]
        .iter()
        .filter(|request| request.path.ends_with("/branches/main"))
        .map(|request| request.status)
        .collect();
    assert_eq!(base_asks, [304]);
    assert_eq!(idle.requests.not_modified, idle.requests.sent);
    assert_eq!(conflicts_of(&world, number).await, Some(true));
}
