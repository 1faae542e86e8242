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
