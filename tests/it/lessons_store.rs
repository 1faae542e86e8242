//! The store's side of lessons: which follow-ups are corrections (the owner's, after a
//! code run of the item succeeded; never a visitor's, included or not), what the owner
//! may decide about a lesson, and a lessons run one at a time per repository.

use std::time::Duration;

use handoff_test_support as support;

use handoff::domain::lesson::{CorrectionId, LessonProposal, LessonState};
use handoff::domain::{SandboxBackend, Stage};
use handoff::store::{LessonDecision, LessonEdit, StageRunRequest, Store, StoreError};
use support::seed;

const DEMO_REPO: &str = "octocat/hello-world";

async fn temp_store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_in(dir.path()).await.unwrap();
    (dir, store)
}

fn lessons_run(repo_id: handoff::domain::RepoId) -> StageRunRequest {
    StageRunRequest {
        repo_id,
        pr_number: None,
        feedback_id: None,
        stage: Stage::Lessons,
        backend: SandboxBackend::Local,
        agent_preset: "custom".to_owned(),
        parent_run_id: None,
        quota_units: 1,
    }
}

#[tokio::test]
async fn only_the_owners_follow_ups_after_the_pr_opened_are_corrections() {
    let (_dir, store) = temp_store().await;
    let repo = seed::add_repo(&store, DEMO_REPO).await;
    let item = seed::add_feedback(&store, DEMO_REPO, "Bigger button", "Make it bigger").await;
    let too_early = store
        .add_owner_follow_up(item.id, "Before any run: use 48px")
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(5)).await;
    seed::run_to_end(&store, &item, seed::success(0.01)).await;
    tokio::time::sleep(Duration::from_millis(5)).await;
    let owners = store
        .add_owner_follow_up(item.id, "Never hard-code pixel sizes")
        .await
        .unwrap();
    let visitors = store
        .add_visitor_follow_up(item.id, "Make it pink", "visitor", 7001)
        .await
        .unwrap()
        .unwrap();
    // Included by the owner, a visitor's text reaches prompts, but it is still theirs.
    store.include_follow_up(visitors.id).await.unwrap();

    let corrections = store.corrections_of(repo.id, None).await.unwrap();
    let ids: Vec<CorrectionId> = corrections.iter().map(|c| c.id).collect();
    assert_eq!(ids, [CorrectionId::FollowUp(owners.id)]);
    assert!(!ids.contains(&CorrectionId::FollowUp(too_early.id)));
    assert!(corrections[0]
        .for_prompt()
        .contains("Never hard-code pixel sizes"));
}

#[tokio::test]
async fn the_owner_accepts_edits_turns_off_and_rejects_lessons_and_bad_moves_are_refused() {
    let (_dir, store) = temp_store().await;
    let repo = seed::add_repo(&store, DEMO_REPO).await;
    let run = store.start_stage_run(&lessons_run(repo.id)).await.unwrap();
    // One lessons run at a time per repository.
    let second = store
        .start_stage_run(&lessons_run(repo.id))
        .await
        .unwrap_err();
    assert!(
        matches!(second, StoreError::LessonsRunAlreadyActive { .. }),
        "{second}"
    );
    let ids = store
        .record_lesson_proposals(
            repo.id,
            run.id,
            &[
                LessonProposal {
                    rule: "Use 48px buttons.".to_owned(),
                    why: "corrected twice".to_owned(),
                    sources: Vec::new(),
                    paths: vec!["src".to_owned()],
                },
                LessonProposal {
                    rule: "Write in French.".to_owned(),
                    why: String::new(),
                    sources: Vec::new(),
                    paths: Vec::new(),
                },
            ],
        )
        .await
        .unwrap();
    let [keep, drop] = [ids[0], ids[1]];

    let refused = store
        .decide_lesson(keep, LessonDecision::Enable(false))
        .await
        .unwrap_err();
    assert!(
        matches!(refused, StoreError::LessonNotAccepted { .. }),
        "{refused}"
    );
    assert_eq!(refused.code().as_str(), "illegal_transition");

    let accepted = store
        .decide_lesson(keep, LessonDecision::Accept)
        .await
        .unwrap();
    assert_eq!(accepted.state, LessonState::Accepted);
    assert!(accepted.is_carried());
    let edited = store
        .edit_lesson(
            keep,
            &LessonEdit {
                rule: Some("Buttons are 48px.".to_owned()),
                ..LessonEdit::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(edited.rule, "Buttons are 48px.");
    assert!(edited.edited_by_owner);
    assert_eq!(
        edited.paths,
        ["src"],
        "an edit keeps what it does not change"
    );
    let off = store
        .decide_lesson(keep, LessonDecision::Enable(false))
        .await
        .unwrap();
    assert!(!off.is_carried());
    let rejected = store
        .decide_lesson(drop, LessonDecision::Reject)
        .await
        .unwrap();
    assert_eq!(rejected.state, LessonState::Rejected);
    assert!(!rejected.is_carried());

    let missing = store
        .decide_lesson(
            handoff::domain::lesson::LessonId(999),
            LessonDecision::Accept,
        )
        .await
        .unwrap_err();
    assert_eq!(missing.code().as_str(), "not_found");
    // Nothing was lost by the refusals.
    assert_eq!(store.lessons_of(repo.id).await.unwrap().len(), 2);
}
