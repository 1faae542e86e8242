//! The journal of what changed in the mirror, read by the window to draw only what a
//! change touched: a heartbeat or a log line touches nothing shown; a follow-up touches
//! its item; a run touches its item (and its PR); a stage comment touches its PR; a
//! repository, or more changes than can be listed, touches everything.

use handoff_test_support as support;

use handoff::domain::{CommentKind, LogStream, RepoId, RunId, VersionOrigin};
use handoff::store::{MirrorChanges, NewCommentVersion};
use support::seed;
use support::temp_store;

#[tokio::test]
async fn each_change_names_what_it_touched_and_a_heartbeat_touches_nothing() {
    let (_dir, store) = temp_store().await;
    let items = seed::seed_dashboard(&store).await;
    let mut watch = store.watch_changes().await.unwrap();
    assert_eq!(
        watch.changes().await.unwrap(),
        None,
        "nothing committed yet"
    );

    let coding = items
        .iter()
        .find(|item| item.title == seed::CODING_TITLE)
        .unwrap();
    let run = seed::active_run(&store, coding).await;
    store.runs().heartbeat(run.id).await.unwrap();
    store
        .runs()
        .append_run_log(run.id, LogStream::Stdout, "working\n")
        .await
        .unwrap();
    let quiet = watch.changes().await.unwrap().expect("commits were made");
    assert!(quiet.is_empty(), "{quiet:?}");

    let new = &items[0];
    store
        .feedback()
        .add_owner_follow_up(new.id, "Also the login page.")
        .await
        .unwrap();
    assert_eq!(
        watch.changes().await.unwrap(),
        Some(MirrorChanges {
            feedback_ids: [new.id].into(),
            ..MirrorChanges::default()
        })
    );

    store.runs().mark_run_running(run.id, None).await.unwrap();
    let running = watch.changes().await.unwrap().unwrap();
    assert_eq!(running.feedback_ids, [coding.id].into());
    assert_eq!(running.run_ids, [RunId(run.id.0)].into());
    assert_eq!(running.pull_requests, Default::default(), "not yet on a PR");
    assert!(!running.everything);

    let repo = store
        .repositories()
        .repo_by_name(&seed::DEMO_REPO.parse().unwrap())
        .await
        .unwrap();
    let comment = store
        .comments()
        .ensure_managed_comment(repo.id, 7, CommentKind::Review)
        .await
        .unwrap();
    store
        .comments()
        .add_comment_version(
            comment.id,
            &NewCommentVersion {
                body: "Looks fine.".to_owned(),
                content: "Looks fine.".to_owned(),
                full_content: None,
                origin: VersionOrigin::Agent,
                author_login: None,
                run_id: None,
                based_on: None,
                edited_by_other: false,
            },
        )
        .await
        .unwrap();
    let commented = watch.changes().await.unwrap().unwrap();
    assert_eq!(commented.pull_requests, [(RepoId(repo.id.0), 7)].into());
    assert_eq!(commented.feedback_ids, Default::default());

    seed::add_repo(&store, "octocat/third").await;
    assert!(watch.changes().await.unwrap().unwrap().everything);
    assert_eq!(watch.changes().await.unwrap(), None);
}
