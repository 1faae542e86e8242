//! Items off the board: dismissed and archived by the owner, closed with their issue on
//! GitHub (and back when it is reopened); their history stays, a filter finds them, no
//! run starts on them, and an item with a run going stays on the board.

use handoff_test_support as support;

use handoff::domain::{ArchiveActor, ArchiveState, FeedbackStatus, NewRepo, SandboxBackend};
use handoff::error_code::ErrorCode;
use handoff::github::sync::sync;
use handoff::github::GithubClient;
use handoff::pipeline::CodeRunOptions;
use handoff::store::{FeedbackFilter, StoreError};
use handoff::Store;
use support::fake_github::{FakeGithub, OWNER};
use support::pipeline_world::{github_client_at, PipelineWorld};
use support::seed;

const REPO: &str = "octocat/hello-world";

fn on_the_board() -> FeedbackFilter {
    FeedbackFilter {
        archived: Some(false),
        ..FeedbackFilter::default()
    }
}

fn off_the_board() -> FeedbackFilter {
    FeedbackFilter {
        archived: Some(true),
        ..FeedbackFilter::default()
    }
}

#[tokio::test]
async fn dismissed_and_archived_items_leave_the_board_with_their_history_and_come_back() {
    let (_dir, store) = support::temp_store().await;
    seed::add_repo(&store, REPO).await;
    let dismissed = seed::add_feedback(&store, REPO, "Not doing this", "Nope").await;
    let archived = seed::add_feedback(&store, REPO, "Done with it", "Old").await;
    let kept = seed::add_feedback(&store, REPO, "Still wanted", "Yes").await;
    store
        .feedback()
        .add_owner_follow_up(dismissed.id, "A note that stays")
        .await
        .unwrap();

    store
        .feedback()
        .set_archive_state(
            dismissed.id,
            Some(ArchiveState::Dismissed),
            ArchiveActor::Owner,
        )
        .await
        .unwrap();
    let (item, changed) = store
        .feedback()
        .set_archive_state(
            archived.id,
            Some(ArchiveState::Archived),
            ArchiveActor::Owner,
        )
        .await
        .unwrap();
    assert!(changed);
    assert_eq!(item.archived_as, Some(ArchiveState::Archived));
    assert!(item.archived_at.is_some());

    let board = store.feedback().dashboard(&on_the_board()).await.unwrap();
    assert_eq!(board.total, 1);
    assert_eq!(board.groups[0].cards[0].feedback_id, kept.id);
    let shelf = store.feedback().dashboard(&off_the_board()).await.unwrap();
    assert_eq!(shelf.total, 2);
    let mut states: Vec<_> = shelf.groups[0]
        .cards
        .iter()
        .map(|card| card.archived_as)
        .collect();
    states.sort_by_key(|state| state.map(ArchiveState::as_str));
    assert_eq!(
        states,
        [Some(ArchiveState::Archived), Some(ArchiveState::Dismissed)]
    );
    assert_eq!(
        store
            .feedback()
            .follow_ups(dismissed.id)
            .await
            .unwrap()
            .len(),
        1,
        "its thread stays"
    );

    // Back on the board, with both changes in its history.
    store
        .feedback()
        .set_archive_state(dismissed.id, None, ArchiveActor::Owner)
        .await
        .unwrap();
    assert_eq!(
        store
            .feedback()
            .dashboard(&on_the_board())
            .await
            .unwrap()
            .total,
        2
    );
    let history = store
        .feedback()
        .archive_history(dismissed.id)
        .await
        .unwrap();
    let changes: Vec<_> = history
        .iter()
        .map(|change| (change.archived_as, change.changed_by))
        .collect();
    assert_eq!(
        changes,
        [
            (Some(ArchiveState::Dismissed), ArchiveActor::Owner),
            (None, ArchiveActor::Owner)
        ]
    );
    // Asking again for what it already is changes nothing.
    let (_, changed) = store
        .feedback()
        .set_archive_state(dismissed.id, None, ArchiveActor::Owner)
        .await
        .unwrap();
    assert!(!changed);
    assert_eq!(
        store
            .feedback()
            .archive_history(dismissed.id)
            .await
            .unwrap()
            .len(),
        2
    );
}

#[tokio::test]
async fn an_item_with_a_run_going_stays_on_the_board() {
    let (_dir, store) = support::temp_store().await;
    seed::add_repo(&store, REPO).await;
    let item = seed::add_feedback(&store, REPO, "Running", "Busy").await;
    seed::start_run(&store, &item).await;

    let refused = store
        .feedback()
        .set_archive_state(item.id, Some(ArchiveState::Archived), ArchiveActor::Owner)
        .await
        .unwrap_err();

    assert!(matches!(refused, StoreError::ArchiveWhileRunning(id) if id == item.id));
    assert_eq!(refused.code(), ErrorCode::RunActive);
    assert_eq!(
        store
            .feedback()
            .feedback(item.id)
            .await
            .unwrap()
            .archived_as,
        None
    );
    assert!(store
        .feedback()
        .archive_history(item.id)
        .await
        .unwrap()
        .is_empty());
}

#[tokio::test]
async fn no_run_starts_on_an_item_off_the_board() {
    let world = PipelineWorld::new(SandboxBackend::Local).await;
    let item = world.feedback("Dismissed", "@@write a.txt a").await;
    world
        .store
        .feedback()
        .set_archive_state(item.id, Some(ArchiveState::Dismissed), ArchiveActor::Owner)
        .await
        .unwrap();

    let refused = world
        .pipeline
        .code_runs()
        .begin_code_run(item.id, CodeRunOptions::default())
        .await
        .unwrap_err();

    assert_eq!(refused.code(), ErrorCode::IllegalTransition);
    assert!(refused.to_string().contains("dismissed"), "{refused}");
    assert!(world
        .store
        .runs()
        .runs(&Default::default())
        .await
        .unwrap()
        .is_empty());
    // "Run all new" leaves it out too.
    assert!(world
        .store
        .feedback()
        .new_items_of(&REPO.parse().unwrap())
        .await
        .unwrap()
        .is_empty());
}

fn client(fake: &FakeGithub) -> GithubClient {
    github_client_at(&fake.api_base(), fake.owner_token())
}

async fn synced_store(dir: &tempfile::TempDir) -> Store {
    let store = Store::open_in(dir.path()).await.unwrap();
    store
        .repositories()
        .add_repo(&NewRepo::with_defaults(REPO.parse().unwrap()))
        .await
        .unwrap();
    store
}

#[tokio::test]
async fn an_issue_closed_on_github_closes_its_item_and_reopening_brings_it_back() {
    let fake = FakeGithub::start().await;
    fake.create_repo(REPO, "main");
    let open = fake.create_issue(REPO, OWNER, "Still open", "Wanted", &["feedback"]);
    let closed_before = fake.create_issue(REPO, OWNER, "Closed already", "Old", &["feedback"]);
    fake.set_issue_closed(REPO, closed_before, true);
    let dir = tempfile::tempdir().unwrap();
    let store = synced_store(&dir).await;
    let github = client(&fake);

    // An issue closed on GitHub is imported closed.
    sync(&github, &store, None).await.unwrap();
    let item_of = |number: u64| {
        let store = store.clone();
        async move {
            store
                .feedback()
                .feedback_for_issue(&REPO.parse().unwrap(), number)
                .await
                .unwrap()
                .expect("the issue's item")
        }
    };
    assert_eq!(
        item_of(closed_before).await.archived_as,
        Some(ArchiveState::Closed)
    );
    assert_eq!(item_of(open).await.archived_as, None);
    assert_eq!(
        store
            .feedback()
            .dashboard(&on_the_board())
            .await
            .unwrap()
            .total,
        1
    );

    // Closing an open item's issue closes the item, at the next sync.
    fake.set_issue_closed(REPO, open, true);
    sync(&github, &store, None).await.unwrap();
    let closed = item_of(open).await;
    assert_eq!(closed.archived_as, Some(ArchiveState::Closed));
    assert_eq!(closed.status, FeedbackStatus::New, "its status is kept");
    assert_eq!(
        store
            .feedback()
            .dashboard(&on_the_board())
            .await
            .unwrap()
            .total,
        0
    );

    // Reopened on GitHub: back on the board; GitHub's part is in its history.
    fake.set_issue_closed(REPO, open, false);
    sync(&github, &store, None).await.unwrap();
    assert_eq!(item_of(open).await.archived_as, None);
    let history = store.feedback().archive_history(closed.id).await.unwrap();
    assert!(history
        .iter()
        .all(|change| change.changed_by == ArchiveActor::Github));
    assert_eq!(history.len(), 2);

    // An item the owner dismissed stays dismissed whatever its issue does.
    store
        .feedback()
        .set_archive_state(
            closed.id,
            Some(ArchiveState::Dismissed),
            ArchiveActor::Owner,
        )
        .await
        .unwrap();
    fake.set_issue_closed(REPO, open, true);
    sync(&github, &store, None).await.unwrap();
    fake.set_issue_closed(REPO, open, false);
    sync(&github, &store, None).await.unwrap();
    assert_eq!(
        item_of(open).await.archived_as,
        Some(ArchiveState::Dismissed)
    );
}
