//! A repository's lessons as both front ends change them (the window's Lessons section,
//! `handoff lessons`): the owner's words are checked before anything is kept, an edit is
//! marked as the owner's, and a lesson turned off is filed as off and left out of later
//! prompts. The window's own test keeps what only the window shows.

use handoff_test_support as support;

use std::sync::Arc;

use handoff::domain::clock::SettableClock;
use handoff::domain::fix::Fix;
use handoff::domain::lesson::LessonProposal;
use handoff::error_code::ErrorCode;
use handoff_api::lessons::{
    decide_lesson, edit_lesson, lessons_view, LessonDecisionWord, LessonEditInput,
};
use handoff_api::AppCore;
use support::{seed, temp_store};

const RULE: &str = "Buttons are 48px high, never 44px.";

/// A core whose repository has one lesson proposed by a lessons run; returns its id.
async fn core_with_a_proposal() -> (tempfile::TempDir, AppCore, i64) {
    let (dir, store) = temp_store().await;
    let repo = seed::add_repo(&store, seed::DEMO_REPO).await;
    let run = store
        .stage_runs()
        .start_stage_run(&seed::lessons_run(repo.id))
        .await
        .unwrap();
    let ids = store
        .lessons()
        .record_lesson_proposals(repo.id, run.id, &[proposal()])
        .await
        .unwrap();
    let core = AppCore::new(store, dir.path());
    (dir, core, ids[0].0)
}

fn proposal() -> LessonProposal {
    LessonProposal {
        rule: RULE.to_owned(),
        why: "corrected twice".to_owned(),
        sources: Vec::new(),
        paths: vec!["src".to_owned()],
    }
}

fn new_rule(rule: &str) -> LessonEditInput {
    LessonEditInput {
        rule: Some(rule.to_owned()),
        ..LessonEditInput::default()
    }
}

#[tokio::test]
async fn a_lessons_words_are_checked_before_anything_is_kept_and_an_edit_is_the_owners() {
    let (_dir, core, id) = core_with_a_proposal().await;
    let refusals = [
        (new_rule("   \n "), "needs a rule"),
        (new_rule(&"x".repeat(2_000)), "at most"),
        (
            LessonEditInput {
                paths: Some(vec!["../outside".to_owned()]),
                ..LessonEditInput::default()
            },
            "not a path inside the repository",
        ),
    ];
    for (input, words) in refusals {
        let refused = edit_lesson(&core, id, &input).await.expect_err("refused");
        assert_eq!(refused.code, ErrorCode::InvalidInput, "{}", refused.message);
        assert!(refused.message.contains(words), "{}", refused.message);
    }
    let kept = &lessons_view(&core, seed::DEMO_REPO)
        .await
        .unwrap()
        .proposals[0];
    assert_eq!(
        (kept.rule.as_str(), kept.paths.clone(), kept.edited_by_owner),
        (RULE, vec!["src".to_owned()], false),
        "nothing of a refused edit is kept"
    );

    // The owner's words, as one paragraph; what was not sent stays as it was.
    let edited = edit_lesson(&core, id, &new_rule("Buttons are\n48px high."))
        .await
        .unwrap();
    assert_eq!(edited.rule, "Buttons are 48px high.");
    assert_eq!(edited.why, "corrected twice");
    assert_eq!(edited.paths, ["src"]);
    assert!(edited.edited_by_owner);
    assert!(
        edited.origin.ends_with("edited by you"),
        "{}",
        edited.origin
    );
}

#[tokio::test]
async fn an_accepted_lesson_turned_off_is_filed_off_and_later_prompts_leave_it_out() {
    let (_dir, core, id) = core_with_a_proposal().await;
    // Only an accepted lesson has a switch: the refusal names the step that gets there.
    let early = decide_lesson(&core, id, LessonDecisionWord::Disable)
        .await
        .expect_err("a proposal cannot be turned off");
    assert_eq!(early.code, ErrorCode::IllegalTransition);
    assert_eq!(early.fix, Some(Fix::AcceptLesson { id }));

    let accepted = decide_lesson(&core, id, LessonDecisionWord::Accept)
        .await
        .unwrap();
    assert!(accepted.enabled && accepted.carried, "{accepted:?}");
    let off = decide_lesson(&core, id, LessonDecisionWord::Disable)
        .await
        .unwrap();
    assert!(!off.enabled && !off.carried, "{off:?}");
    let view = lessons_view(&core, seed::DEMO_REPO).await.unwrap();
    assert!(view.proposals.is_empty());
    assert_eq!(view.accepted.len(), 1);
    assert!(
        !view.accepted[0].enabled && !view.accepted[0].carried,
        "filed as off, and later prompts leave it out: {:?}",
        view.accepted[0]
    );

    let on = decide_lesson(&core, id, LessonDecisionWord::Enable)
        .await
        .unwrap();
    assert!(on.enabled && on.carried, "{on:?}");
}

#[tokio::test]
async fn deciding_about_a_lesson_that_is_not_there_says_where_to_look() {
    let (_dir, core, id) = core_with_a_proposal().await;
    let missing = decide_lesson(&core, id + 100, LessonDecisionWord::Accept)
        .await
        .expect_err("no such lesson");
    assert_eq!(missing.code, ErrorCode::NotFound);
    assert_eq!(missing.fix, Some(Fix::LookUpLessons));
    let missing_edit = edit_lesson(&core, id + 100, &new_rule("A rule."))
        .await
        .expect_err("no such lesson");
    assert_eq!(missing_edit.code, ErrorCode::NotFound);
}

#[tokio::test]
async fn corrections_a_lessons_run_is_reading_wait_again_only_when_it_fails() {
    let (dir, store) = temp_store().await;
    let repo = seed::add_repo(&store, seed::DEMO_REPO).await;
    let item = seed::add_feedback(&store, seed::DEMO_REPO, "Login button", "Make it bigger").await;
    seed::run_to_end(&store, &item, seed::success(0.02)).await;
    let seconds_later = |seconds| {
        let clock = SettableClock::at(chrono::Utc::now() + chrono::Duration::seconds(seconds));
        store.clone().with_clock(Arc::new(clock))
    };
    // The owner writes after the run ended: a correction.
    seconds_later(1)
        .feedback()
        .add_owner_follow_up(item.id, "48px, please: 44px is too small on phones.")
        .await
        .unwrap();
    let core = AppCore::new(store.clone(), dir.path());
    let view = lessons_view(&core, seed::DEMO_REPO).await.unwrap();
    assert_eq!(view.new_corrections.len(), 1);

    // A lessons run reads it and records its proposal before it is marked ended: the
    // correction no longer waits, whichever the window draws first.
    let run = seconds_later(2)
        .stage_runs()
        .start_stage_run(&seed::lessons_run(repo.id))
        .await
        .unwrap();
    store.runs().mark_run_running(run.id, None).await.unwrap();
    store
        .lessons()
        .record_lesson_proposals(repo.id, run.id, &[proposal()])
        .await
        .unwrap();
    let view = lessons_view(&core, seed::DEMO_REPO).await.unwrap();
    assert_eq!(view.active_run_id, Some(run.id.0));
    assert_eq!(view.proposals.len(), 1);
    assert!(
        view.new_corrections.is_empty(),
        "{:?}",
        view.new_corrections
    );

    // The run fails: what it read waits for the next one again.
    store
        .runs()
        .finish_run(run.id, &seed::failure("the agent stopped").outcome)
        .await
        .unwrap();
    let view = lessons_view(&core, seed::DEMO_REPO).await.unwrap();
    assert_eq!(view.active_run_id, None);
    assert_eq!(view.new_corrections.len(), 1);
}
