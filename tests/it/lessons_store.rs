//! The store's side of lessons: which follow-ups are corrections (the owner's, after a
//! code run of the item succeeded; never a visitor's, included or not), what the owner
//! may decide about a lesson, a lessons run one at a time per repository, and the
//! migration that admits the lessons stage keeping every run whole.

use handoff_test_support as support;

use std::sync::Arc;

use handoff::domain::clock::SettableClock;
use handoff::domain::lesson::{CorrectionId, LessonProposal, LessonState};
use handoff::domain::Stage;
use handoff::store::{LessonDecision, LessonEdit, Store, StoreError};
use support::seed;

const DEMO_REPO: &str = "octocat/hello-world";

async fn temp_store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_in(dir.path()).await.unwrap();
    (dir, store)
}

#[tokio::test]
async fn only_the_owners_follow_ups_after_the_pr_opened_are_corrections() {
    let (_dir, store) = temp_store().await;
    let clock = SettableClock::at(chrono::Utc::now());
    let store = store.with_clock(Arc::new(clock.clone()));
    let repo = seed::add_repo(&store, DEMO_REPO).await;
    let item = seed::add_feedback(&store, DEMO_REPO, "Bigger button", "Make it bigger").await;
    let too_early = store
        .feedback()
        .add_owner_follow_up(item.id, "Before any run: use 48px")
        .await
        .unwrap();
    clock.advance(chrono::Duration::seconds(1));
    seed::run_to_end(&store, &item, seed::success(0.01)).await;
    clock.advance(chrono::Duration::seconds(1));
    let owners = store
        .feedback()
        .add_owner_follow_up(item.id, "Never hard-code pixel sizes")
        .await
        .unwrap();
    let visitors = store
        .feedback()
        .add_visitor_follow_up(item.id, "Make it pink", "visitor", 7001)
        .await
        .unwrap()
        .unwrap();
    // Included by the owner, a visitor's text reaches prompts, but it is still theirs.
    store
        .feedback()
        .include_follow_up(visitors.id)
        .await
        .unwrap();

    let corrections = store.lessons().corrections_of(repo.id, None).await.unwrap();
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
    let run = store
        .stage_runs()
        .start_stage_run(&seed::lessons_run(repo.id))
        .await
        .unwrap();
    // One lessons run at a time per repository.
    let second = store
        .stage_runs()
        .start_stage_run(&seed::lessons_run(repo.id))
        .await
        .unwrap_err();
    assert!(
        matches!(second, StoreError::LessonsRunAlreadyActive { .. }),
        "{second}"
    );
    let ids = store
        .lessons()
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
        .lessons()
        .decide_lesson(keep, LessonDecision::Enable(false))
        .await
        .unwrap_err();
    assert!(
        matches!(refused, StoreError::LessonNotAccepted { .. }),
        "{refused}"
    );
    assert_eq!(refused.code().as_str(), "illegal_transition");

    let accepted = store
        .lessons()
        .decide_lesson(keep, LessonDecision::Accept)
        .await
        .unwrap();
    assert_eq!(accepted.state, LessonState::Accepted);
    assert!(accepted.is_carried());
    let edited = store
        .lessons()
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
        .lessons()
        .decide_lesson(keep, LessonDecision::Enable(false))
        .await
        .unwrap();
    assert!(!off.is_carried());
    let rejected = store
        .lessons()
        .decide_lesson(drop, LessonDecision::Reject)
        .await
        .unwrap();
    assert_eq!(rejected.state, LessonState::Rejected);
    assert!(!rejected.is_carried());

    let missing = store
        .lessons()
        .decide_lesson(
            handoff::domain::lesson::LessonId(999),
            LessonDecision::Accept,
        )
        .await
        .unwrap_err();
    assert_eq!(missing.code().as_str(), "not_found");
    // Nothing was lost by the refusals.
    assert_eq!(store.lessons().lessons_of(repo.id).await.unwrap().len(), 2);

    // The lessons file is a path inside the repository, or it is refused as typed.
    for outside in ["../AGENTS.md", "/etc/AGENTS.md", "  "] {
        let refused = store
            .lessons()
            .set_lesson_settings(
                repo.id,
                &handoff::store::LessonSettings {
                    after_corrections: None,
                    file: outside.to_owned(),
                },
            )
            .await
            .unwrap_err();
        assert_eq!(refused.code().as_str(), "invalid_input", "{outside}");
    }
    assert_eq!(
        store.lessons().lesson_settings(repo.id).await.unwrap().file,
        "AGENTS.md"
    );
}

/// The lessons migration makes `runs` again (SQLite changes a CHECK only so): a database
/// of the schema before it keeps every run and every row that names one, whole.
#[tokio::test]
async fn runs_and_every_row_naming_them_survive_the_lessons_migration() {
    use sqlx::sqlite::{SqliteConnectOptions, SqlitePool};
    use sqlx::Row as _;

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("handoff.sqlite3");
    let connect = || {
        SqlitePool::connect_with(
            SqliteConnectOptions::new()
                .filename(&path)
                .create_if_missing(true)
                .foreign_keys(true),
        )
    };
    let pool = connect().await.unwrap();
    let mut before = sqlx::migrate::Migrator::new(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations"),
    )
    .await
    .unwrap();
    before.migrations = before
        .migrations
        .iter()
        .filter(|migration| migration.version < 16)
        .cloned()
        .collect::<Vec<_>>()
        .into();
    before.run(&pool).await.unwrap();
    let at = "2026-11-20T10:00:00.000Z";
    for statement in [
        "INSERT INTO repos (id, owner, name, created_at) VALUES (1, 'octocat', 'hello-world', ?1)",
        "INSERT INTO feedback (id, repo_id, public_id, title, body, source, head_branch, created_at, updated_at) \
         VALUES (1, 1, 'fb-one', 'Bigger button', 'Make it bigger', 'app', 'feedback/f2c-fb-one', ?1, ?1)",
        "INSERT INTO runs (id, repo_id, feedback_id, stage, backend, agent_preset, status, created_at, finished_at, llm_cost_usd, spend_source) \
         VALUES (1, 1, 1, 'code', 'local', 'claude', 'succeeded', ?1, ?1, 0.25, 'metered')",
        "INSERT INTO runs (id, repo_id, pr_number, stage, backend, agent_preset, status, created_at, finished_at) \
         VALUES (2, 1, 7, 'full-auto', 'docker', 'claude', 'failed', ?1, ?1)",
        "INSERT INTO runs (id, repo_id, pr_number, parent_run_id, stage, backend, agent_preset, status, created_at, finished_at) \
         VALUES (3, 1, 7, 2, 'review', 'docker', 'claude', 'succeeded', ?1, ?1)",
        "INSERT INTO run_log_chunks (run_id, seq, stream, at, text) VALUES (1, 1, 'stdout', ?1, 'hello')",
        "INSERT INTO run_events (run_id, feedback_id, kind, message, created_at) VALUES (1, 1, 'pr_opened', 'PR #7', ?1)",
        "INSERT INTO quota_uses (repo_id, run_id, used_at, units) VALUES (1, 2, ?1, 4)",
        "INSERT INTO status_changes (feedback_id, from_status, to_status, event, run_id, at) VALUES (1, 'NEW', 'CODING', 'run_started', 1, ?1)",
        "INSERT INTO agent_steps (run_id, position, model, began_at, duration_ms, status, input_tokens, cache_write_tokens, \
         cache_read_tokens, output_tokens, reasoning_tokens, cost_usd, tool_calls, text) \
         VALUES (1, 0, 'claude-opus-5-5', ?1, 900, 200, 1000, 0, 0, 100, 0, 0.25, '[]', '')",
    ] {
        sqlx::query(statement).bind(at).execute(&pool).await.unwrap();
    }
    pool.close().await;

    let store = Store::open_file(&path).await.unwrap();
    let code = store.runs().run(handoff::domain::RunId(1)).await.unwrap();
    assert_eq!(code.stage, Stage::Code);
    assert_eq!(code.llm_cost_usd, Some(0.25));
    let review = store.runs().run(handoff::domain::RunId(3)).await.unwrap();
    assert_eq!(review.parent_run_id, Some(handoff::domain::RunId(2)));
    // A lessons run is now a run like any other.
    let lessons = store
        .stage_runs()
        .start_stage_run(&seed::lessons_run(code.repo_id))
        .await
        .unwrap();
    assert_eq!(lessons.stage, Stage::Lessons);
    store.close().await;

    let pool = connect().await.unwrap();
    let broken = sqlx::query("PRAGMA foreign_key_check")
        .fetch_all(&pool)
        .await
        .unwrap();
    assert!(
        broken.is_empty(),
        "{} rows name a run that is gone",
        broken.len()
    );
    for (count, rows) in [
        ("SELECT count(*) AS n FROM run_log_chunks", 1),
        ("SELECT count(*) AS n FROM run_events", 1),
        ("SELECT count(*) AS n FROM quota_uses", 2),
        ("SELECT count(*) AS n FROM status_changes", 1),
        ("SELECT count(*) AS n FROM agent_steps", 1),
        ("SELECT count(*) AS n FROM runs", 4),
    ] {
        let found: i64 = sqlx::query(count).fetch_one(&pool).await.unwrap().get("n");
        assert_eq!(found, rows, "{count}");
    }
    // The window still hears of a run's change: its triggers came back with the table.
    let heard = |pool: &SqlitePool| {
        let pool = pool.clone();
        async move {
            sqlx::query("SELECT count(*) AS n FROM mirror_changes WHERE subject = 'run'")
                .fetch_one(&pool)
                .await
                .unwrap()
                .get::<i64, _>("n")
        }
    };
    let changes = heard(&pool).await;
    sqlx::query("UPDATE runs SET notes = 'noted' WHERE id = 1")
        .execute(&pool)
        .await
        .unwrap();
    assert_eq!(heard(&pool).await, changes + 1);
    // One active run per item still holds.
    let second = sqlx::query(
        "INSERT INTO runs (repo_id, feedback_id, stage, backend, agent_preset, status, created_at) \
         VALUES (1, 1, 'code', 'local', 'claude', 'queued', ?1), (1, 1, 'code', 'local', 'claude', 'queued', ?1)",
    )
    .bind(at)
    .execute(&pool)
    .await;
    assert!(second.is_err(), "two active runs of one item were taken");
}
