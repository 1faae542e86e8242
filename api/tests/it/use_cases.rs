//! The use cases both front ends share, tested below either of them: what the command
//! line and the window call, with the mirror in a temporary folder and no GitHub.

use handoff_test_support as support;

use handoff::store::SettingKey;
use handoff_api::comment_versions::known_comment;
use handoff_api::core_types::{CommentKind, ErrorCode, FeedbackFilter};
use handoff_api::feedback_items::{add_follow_up, approve_item, board, item_history};
use handoff_api::installation_settings::{editable_setting, set_setting, setting, unset_setting};
use handoff_api::repositories::repository;
use handoff_api::run_queue::runs_going_and_waiting;
use handoff_api::session::session_status;
use handoff_api::AppCore;
use support::secret_service::SecretService;
use support::{seed, temp_store};

async fn core_with_an_item() -> (tempfile::TempDir, AppCore, i64) {
    let (dir, store) = temp_store().await;
    seed::add_repo(&store, seed::DEMO_REPO).await;
    let item = seed::add_feedback(&store, seed::DEMO_REPO, "Dark mode", "Please").await;
    let core = AppCore::new(store, dir.path());
    (dir, core, item.id.0)
}

#[tokio::test]
async fn an_installation_setting_is_checked_before_it_is_kept_and_unset_goes_back() {
    let (_dir, core, _) = core_with_an_item().await;
    let unknown = editable_setting("no.such.setting").expect_err("an unknown name is refused");
    assert_eq!(unknown.code, ErrorCode::InvalidInput);
    assert!(
        unknown.message.contains("no.such.setting"),
        "{}",
        unknown.message
    );

    let key = SettingKey::AgentGitName;
    let empty = set_setting(&core, key, "   ")
        .await
        .expect_err("an empty value is refused");
    assert!(
        empty.message.contains("cannot be empty: unset it"),
        "{}",
        empty.message
    );
    assert_eq!(setting(&core, key).await.unwrap(), None, "nothing kept");

    set_setting(&core, key, " Handoff's agent ").await.unwrap();
    assert_eq!(
        setting(&core, key).await.unwrap().as_deref(),
        Some("Handoff's agent")
    );
    unset_setting(&core, key).await.unwrap();
    assert_eq!(setting(&core, key).await.unwrap(), None);
}

#[tokio::test]
async fn an_owners_item_needs_no_approval_and_its_follow_ups_are_counted() {
    let (_dir, core, item) = core_with_an_item().await;
    let approved = approve_item(&core, item).await.unwrap();
    assert!(!approved.opened_by_visitor, "the owner's own item");
    let (_, count) = add_follow_up(&core, item, "Also the sidebar")
        .await
        .unwrap();
    assert_eq!(count, 1);
    let history = item_history(&core, item).await.unwrap();
    assert_eq!(history.follow_ups.len(), 1);
    assert_eq!(history.follow_ups[0].body, "Also the sidebar");
    let shown = board(&core, &FeedbackFilter::default()).await.unwrap();
    assert_eq!(shown.total, 1);

    let missing = item_history(&core, item + 100)
        .await
        .expect_err("no such item");
    assert_eq!(missing.code, ErrorCode::NotFound);
    let empty = add_follow_up(&core, item, "  ")
        .await
        .expect_err("an empty follow-up is refused");
    assert_eq!(empty.code, ErrorCode::InvalidInput);
    assert_eq!(
        item_history(&core, item).await.unwrap().follow_ups.len(),
        1,
        "nothing added"
    );
}

#[tokio::test]
async fn a_comment_no_run_wrote_is_not_found_by_its_repository_and_pull_request() {
    let (_dir, core, _) = core_with_an_item().await;
    let repo = repository(&core, &seed::DEMO_REPO.parse().unwrap())
        .await
        .unwrap();
    let missing = known_comment(&core, &repo, 7, CommentKind::Review)
        .await
        .expect_err("no review was written on #7");
    assert_eq!(missing.code, ErrorCode::NotFound);
    assert_eq!(
        missing.message,
        format!("no review comment is known on {} #7", seed::DEMO_REPO)
    );
}

#[tokio::test]
async fn with_nothing_running_and_nobody_signed_in_the_status_says_so() {
    // Who is signed in is read from the keyring: a real one, on a private session bus.
    let keyring = SecretService::start();
    std::env::set_var("DBUS_SESSION_BUS_ADDRESS", keyring.bus_address());
    let (_dir, core, _) = core_with_an_item().await;
    assert_eq!(runs_going_and_waiting(&core).await.unwrap(), (0, 0));
    let status = session_status(&core).await.unwrap();
    assert!(!status.signed_in);
    assert_eq!(status.login, None);
    assert!(!status.token_may_change_workflows);
    assert_eq!(status.connected_repos, 1);
}

#[tokio::test]
async fn an_item_put_away_leaves_the_board_is_found_by_the_archive_filter_and_comes_back() {
    use handoff_api::archive::{archive_item, restore_item};
    use handoff_api::core_types::ArchiveState;

    let (_dir, core, item) = core_with_an_item().await;
    let on_the_board = FeedbackFilter {
        archived: Some(false),
        ..FeedbackFilter::default()
    };
    let refused = archive_item(&core, item, "deleted")
        .await
        .expect_err("only dismissed or archived");
    assert_eq!(refused.code, ErrorCode::InvalidInput);
    assert_eq!(
        board(&core, &on_the_board).await.unwrap().total,
        1,
        "a refused word changes nothing"
    );

    let archived = archive_item(&core, item, "archived").await.unwrap();
    assert_eq!(archived.archived_as, Some(ArchiveState::Archived));
    assert_eq!(board(&core, &on_the_board).await.unwrap().total, 0);
    let put_away = FeedbackFilter {
        archived: Some(true),
        ..FeedbackFilter::default()
    };
    assert_eq!(board(&core, &put_away).await.unwrap().total, 1);

    let back = restore_item(&core, item).await.unwrap();
    assert_eq!(back.archived_as, None);
    assert_eq!(board(&core, &on_the_board).await.unwrap().total, 1);
    let history = item_history(&core, item).await.unwrap();
    assert_eq!(
        history.archive_history.len(),
        2,
        "both changes are in the item's history: {:?}",
        history.archive_history
    );
}

#[tokio::test]
async fn the_run_queues_slots_are_saved_together_and_a_bad_number_changes_none() {
    use handoff_api::queue_slots::{queue_slots, set_queue_slots, QueueSlotsInput};

    let (_dir, core, _) = core_with_an_item().await;
    let before = queue_slots(&core).await.unwrap();
    let refused = set_queue_slots(
        &core,
        &QueueSlotsInput {
            installation: "3".to_owned(),
            docker: "two".to_owned(),
            e2b: String::new(),
            local: String::new(),
        },
    )
    .await
    .expect_err("a word is not a number");
    assert_eq!(refused.code, ErrorCode::InvalidInput);
    assert!(refused.message.contains("Docker"), "{}", refused.message);
    assert_eq!(
        queue_slots(&core).await.unwrap().installation,
        before.installation,
        "the good number before the bad one was not saved either"
    );

    let saved = set_queue_slots(
        &core,
        &QueueSlotsInput {
            installation: "3".to_owned(),
            docker: "2".to_owned(),
            e2b: String::new(),
            local: "1".to_owned(),
        },
    )
    .await
    .unwrap();
    assert_eq!(saved.installation, 3);
    assert_eq!(saved.docker, Some(2));
    assert_eq!(saved.e2b, None);
    assert_eq!(saved.local, Some(1));
    assert_eq!(queue_slots(&core).await.unwrap().docker, Some(2));
}
