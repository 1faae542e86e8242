//! The local SQLite mirror: how it opens, what the database itself guarantees, and how
//! bad input is refused without losing anything.

use handoff_test_support as support;

use handoff::domain::feedback::PullRequestState;
use handoff::domain::{
    FeedbackSource, FeedbackStatus, FollowUpSource, RunStatus, SandboxBackend, StatusEvent,
};
use handoff::store::{
    CodeRunRequest, FeedbackFilter, NewFeedback, RepoSettingsChange, RunFilter, DATABASE_FILE_NAME,
};
use handoff::{Store, StoreError};
use support::seed::{self, DEMO_REPO};
use support::temp_store;

fn code_run(feedback_id: handoff::domain::FeedbackId) -> CodeRunRequest {
    CodeRunRequest {
        feedback_id,
        backend: SandboxBackend::Local,
        agent_preset: "scripted".to_owned(),
        instructions: None,
    }
}

#[tokio::test]
async fn opening_turns_on_wal_foreign_keys_and_a_busy_timeout() {
    let (_dir, store) = temp_store().await;
    let mut connection = store.pool().acquire().await.unwrap();
    let journal: String = sqlx::query_scalar("PRAGMA journal_mode")
        .fetch_one(&mut *connection)
        .await
        .unwrap();
    let foreign_keys: i64 = sqlx::query_scalar("PRAGMA foreign_keys")
        .fetch_one(&mut *connection)
        .await
        .unwrap();
    let busy_timeout: i64 = sqlx::query_scalar("PRAGMA busy_timeout")
        .fetch_one(&mut *connection)
        .await
        .unwrap();
    assert_eq!(journal, "wal");
    assert_eq!(foreign_keys, 1);
    assert!(busy_timeout >= 5_000, "busy timeout {busy_timeout} ms");
}

#[tokio::test]
async fn reopening_keeps_everything() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_in(dir.path()).await.unwrap();
    seed::seed_dashboard(&store).await;
    store.close().await;

    let store = Store::open_in(dir.path()).await.unwrap();
    let dashboard = store
        .feedback()
        .dashboard(&FeedbackFilter::default())
        .await
        .unwrap();
    assert_eq!(dashboard.total, 5);
}

#[tokio::test]
async fn a_damaged_file_is_refused_and_left_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(DATABASE_FILE_NAME);
    let garbage: Vec<u8> = (0..8192u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&path, &garbage).unwrap();

    let error = Store::open_in(dir.path()).await.unwrap_err();

    assert!(matches!(error, StoreError::Damaged { .. }), "{error:?}");
    assert!(error.to_string().contains("damaged"), "{error}");
    assert!(error.to_string().contains("left as it is"), "{error}");
    assert_eq!(std::fs::read(&path).unwrap(), garbage);
    let files: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(files.len(), 1, "no -wal or -shm file was made beside it");
}

#[tokio::test]
async fn a_truncated_database_is_refused_and_left_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_in(dir.path()).await.unwrap();
    seed::seed_dashboard(&store).await;
    store.close().await;
    let path = dir.path().join(DATABASE_FILE_NAME);
    let whole = std::fs::read(&path).unwrap();
    let cut = &whole[..whole.len() / 2];
    std::fs::write(&path, cut).unwrap();

    let error = Store::open_in(dir.path()).await.unwrap_err();

    assert!(matches!(error, StoreError::Damaged { .. }), "{error:?}");
    assert_eq!(std::fs::read(&path).unwrap(), cut);
}

#[tokio::test]
async fn a_database_from_a_newer_version_is_refused_and_left_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_in(dir.path()).await.unwrap();
    seed::seed_dashboard(&store).await;
    sqlx::query(
        "INSERT INTO _sqlx_migrations (version, description, installed_on, success, checksum, execution_time) \
         VALUES (99990101000000, 'from the future', CURRENT_TIMESTAMP, 1, x'00', 1)",
    )
    .execute(store.pool())
    .await
    .unwrap();
    store.close().await;
    let path = dir.path().join(DATABASE_FILE_NAME);
    let before = std::fs::read(&path).unwrap();

    let error = Store::open_in(dir.path()).await.unwrap_err();

    match &error {
        StoreError::NewerVersion {
            found, supported, ..
        } => {
            assert_eq!(*found, 99990101000000);
            assert!(supported < found);
        }
        other => panic!("expected NewerVersion, got {other:?}"),
    }
    assert!(error.to_string().contains("newer Handoff"), "{error}");
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "the file was not touched"
    );
}

#[tokio::test]
async fn a_foreign_sqlite_database_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(DATABASE_FILE_NAME);
    {
        let other = Store::open_file(&dir.path().join("other.sqlite3"))
            .await
            .unwrap();
        other.close().await;
    }
    // A SQLite file with someone else's tables.
    let options = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(&path)
        .create_if_missing(true);
    let pool = sqlx::SqlitePool::connect_with(options).await.unwrap();
    sqlx::query("CREATE TABLE contacts (name TEXT)")
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;

    let error = Store::open_in(dir.path()).await.unwrap_err();
    assert!(
        error.to_string().contains("not one of Handoff's"),
        "{error}"
    );
}

#[tokio::test]
async fn two_runs_started_at_once_for_one_item_one_is_refused() {
    let (_dir, store) = temp_store().await;
    seed::add_repo(&store, DEMO_REPO).await;
    let feedback = seed::add_feedback(&store, DEMO_REPO, "Race", "Two clicks at once.").await;

    let first = tokio::spawn({
        let store = store.clone();
        let id = feedback.id;
        async move { store.runs().start_code_run(&code_run(id)).await }
    });
    let second = tokio::spawn({
        let store = store.clone();
        let id = feedback.id;
        async move { store.runs().start_code_run(&code_run(id)).await }
    });
    let results = [first.await.unwrap(), second.await.unwrap()];

    let started = results.iter().filter(|r| r.is_ok()).count();
    assert_eq!(started, 1, "{results:?}");
    let refusal = results.iter().find_map(|r| r.as_ref().err()).unwrap();
    assert!(
        refusal.to_string().contains("one run at a time"),
        "{refusal}"
    );
    let runs = store
        .runs()
        .runs(&RunFilter {
            feedback_id: Some(feedback.id),
            ..RunFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(runs.len(), 1);
    let quota = store
        .spend()
        .quota_status(feedback.repo_id, chrono::Utc::now())
        .await
        .unwrap();
    assert_eq!(quota.used, 1, "the refused run took no quota");
}

#[tokio::test]
async fn the_database_itself_refuses_a_second_active_run() {
    let (_dir, store) = temp_store().await;
    seed::add_repo(&store, DEMO_REPO).await;
    let feedback = seed::add_feedback(&store, DEMO_REPO, "Race", "Bypassing the code.").await;
    store
        .runs()
        .start_code_run(&code_run(feedback.id))
        .await
        .unwrap();

    // Straight past every check in code: only the partial unique index stands in the way.
    let inserted = sqlx::query(
        "INSERT INTO runs (repo_id, feedback_id, stage, backend, agent_preset, status, created_at) \
         VALUES (?, ?, 'code', 'local', 'x', 'running', '2026-01-01T00:00:00.000Z')",
    )
    .bind(feedback.repo_id.0)
    .bind(feedback.id.0)
    .execute(store.pool())
    .await;

    let error = inserted.unwrap_err();
    assert!(
        error.to_string().contains("UNIQUE constraint failed"),
        "{error}"
    );
}

#[tokio::test]
async fn a_finished_run_frees_the_item_for_an_iterate() {
    let (_dir, store) = temp_store().await;
    seed::add_repo(&store, DEMO_REPO).await;
    let feedback = seed::add_feedback(&store, DEMO_REPO, "Iterate", "First try.").await;
    seed::run_to_end(&store, &feedback, seed::success(0.1)).await;

    let mut request = code_run(feedback.id);
    request.instructions = Some("Make it bigger".to_owned());
    let started = store.runs().start_code_run(&request).await.unwrap();

    assert_eq!(started.kind, handoff::domain::CodeRunKind::Iterate);
    let thread = store.feedback().follow_ups(feedback.id).await.unwrap();
    assert_eq!(thread.len(), 1);
    assert_eq!(thread[0].body, "Make it bigger");
    assert_eq!(thread[0].source, FollowUpSource::Owner);
}

#[tokio::test]
async fn every_status_change_is_stored_with_its_time() {
    let (_dir, store) = temp_store().await;
    seed::add_repo(&store, DEMO_REPO).await;
    let feedback = seed::add_feedback(&store, DEMO_REPO, "History", "Watch it move.").await;
    seed::run_to_end(&store, &feedback, seed::success(0.1)).await;
    store
        .feedback()
        .record_pull_request(
            feedback.id,
            1,
            "https://github.com/octocat/hello-world/pull/1",
        )
        .await
        .unwrap();
    store
        .feedback()
        .apply_pull_request_state(feedback.id, PullRequestState::Closed)
        .await
        .unwrap();

    let history = store.feedback().status_history(feedback.id).await.unwrap();
    let steps: Vec<_> = history.iter().map(|c| (c.from, c.to, c.event)).collect();
    assert_eq!(
        steps,
        [
            (None, FeedbackStatus::New, StatusEvent::Created),
            (
                Some(FeedbackStatus::New),
                FeedbackStatus::Coding,
                StatusEvent::RunStarted
            ),
            (
                Some(FeedbackStatus::Coding),
                FeedbackStatus::WaitingForReview,
                StatusEvent::RunSucceeded
            ),
            (
                Some(FeedbackStatus::WaitingForReview),
                FeedbackStatus::Failed,
                StatusEvent::PullRequestClosedUnmerged
            ),
        ]
    );
    assert!(history.windows(2).all(|pair| pair[0].at <= pair[1].at));
    assert!(history[1].run_id.is_some());
}

#[tokio::test]
async fn merged_is_final_even_for_code_that_writes_the_row_directly() {
    let (_dir, store) = temp_store().await;
    let items = seed::seed_dashboard(&store).await;
    let merged = items
        .iter()
        .find(|item| item.status == FeedbackStatus::Merged)
        .unwrap();

    let error = sqlx::query("UPDATE feedback SET status = 'NEW' WHERE id = ?")
        .bind(merged.id.0)
        .execute(store.pool())
        .await
        .unwrap_err();
    assert!(error.to_string().contains("final"), "{error}");

    let refusal = store
        .runs()
        .start_code_run(&code_run(merged.id))
        .await
        .unwrap_err();
    assert_eq!(
        refusal.to_string(),
        format!("feedback {} is MERGED: submit new feedback", merged.id)
    );
}

#[tokio::test]
async fn status_changes_are_never_edited_or_removed() {
    let (_dir, store) = temp_store().await;
    seed::add_repo(&store, DEMO_REPO).await;
    let feedback = seed::add_feedback(&store, DEMO_REPO, "History", "Body.").await;
    let before: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM status_changes WHERE feedback_id = ?")
            .bind(feedback.id.0)
            .fetch_one(store.pool())
            .await
            .unwrap();
    assert!(before > 0, "an item starts with its first status change");

    let edit = sqlx::query("UPDATE status_changes SET to_status = 'MERGED' WHERE feedback_id = ?")
        .bind(feedback.id.0)
        .execute(store.pool())
        .await
        .unwrap_err();
    let removal = sqlx::query("DELETE FROM status_changes WHERE feedback_id = ?")
        .bind(feedback.id.0)
        .execute(store.pool())
        .await
        .unwrap_err();

    assert!(edit.to_string().contains("never edited"), "{edit}");
    assert!(removal.to_string().contains("never removed"), "{removal}");
    let after: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM status_changes WHERE feedback_id = ?")
            .bind(feedback.id.0)
            .fetch_one(store.pool())
            .await
            .unwrap();
    assert_eq!(after, before, "nothing was lost");
}

#[tokio::test]
async fn follow_ups_are_append_only_in_the_database() {
    let (_dir, store) = temp_store().await;
    seed::add_repo(&store, DEMO_REPO).await;
    let feedback = seed::add_feedback(&store, DEMO_REPO, "Thread", "Body.").await;
    let first = store
        .feedback()
        .add_owner_follow_up(feedback.id, "one")
        .await
        .unwrap();
    store
        .feedback()
        .add_owner_follow_up(feedback.id, "two")
        .await
        .unwrap();

    let edit = sqlx::query("UPDATE followups SET body = 'changed' WHERE id = ?")
        .bind(first.id.0)
        .execute(store.pool())
        .await
        .unwrap_err();
    let removal = sqlx::query("DELETE FROM followups WHERE id = ?")
        .bind(first.id.0)
        .execute(store.pool())
        .await
        .unwrap_err();

    assert!(edit.to_string().contains("append-only"), "{edit}");
    assert!(removal.to_string().contains("append-only"), "{removal}");
    let bodies: Vec<_> = store
        .feedback()
        .follow_ups(feedback.id)
        .await
        .unwrap()
        .into_iter()
        .map(|f| f.body)
        .collect();
    assert_eq!(bodies, ["one", "two"]);
}

#[tokio::test]
async fn visitor_follow_ups_stay_out_of_prompts_until_the_owner_includes_them() {
    let (_dir, store) = temp_store().await;
    seed::add_repo(&store, DEMO_REPO).await;
    let feedback = seed::add_feedback(&store, DEMO_REPO, "Visitor", "Body.").await;
    let visitor = store
        .feedback()
        .add_visitor_follow_up(feedback.id, "please also do X", "someone", 77)
        .await
        .unwrap()
        .unwrap();
    assert!(!visitor.included_in_prompts);

    let again = store
        .feedback()
        .add_visitor_follow_up(feedback.id, "please also do X", "someone", 77)
        .await
        .unwrap();
    assert!(again.is_none(), "a mirrored comment is not added twice");

    let included = store
        .feedback()
        .include_follow_up(visitor.id)
        .await
        .unwrap();
    assert!(included.included_in_prompts);
    assert_eq!(
        store
            .feedback()
            .follow_ups(feedback.id)
            .await
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test]
async fn a_candidate_from_the_pr_is_taken_once_and_reaches_prompts_only_when_included() {
    let (_dir, store) = temp_store().await;
    seed::add_repo(&store, DEMO_REPO).await;
    let feedback = seed::add_feedback(&store, DEMO_REPO, "Candidate", "Body.").await;
    let candidate = handoff::store::NewFollowUpCandidate {
        body: "On `a.rs`, line 3:\n\nRename this.",
        source: handoff::domain::FollowUpSource::Owner,
        author_login: Some("octocat"),
        origin: handoff::domain::FollowUpOrigin::ReviewComment,
        github_source: "review_comment:42",
        written_at: chrono::Utc::now(),
    };

    let taken = store
        .feedback()
        .add_follow_up_candidate(feedback.id, &candidate)
        .await
        .unwrap()
        .unwrap();
    assert!(taken.candidate);
    assert!(
        !taken.included_in_prompts,
        "even the owner's own review comment waits to be included"
    );
    let again = store
        .feedback()
        .add_follow_up_candidate(feedback.id, &candidate)
        .await
        .unwrap();
    assert!(
        again.is_none(),
        "what was taken from GitHub is not taken twice"
    );
    let blank = store
        .feedback()
        .add_follow_up_candidate(
            feedback.id,
            &handoff::store::NewFollowUpCandidate {
                body: "   ",
                github_source: "review:43",
                ..candidate
            },
        )
        .await;
    assert!(blank.is_err(), "an empty candidate is refused");

    let included = store.feedback().include_follow_up(taken.id).await.unwrap();
    assert!(included.included_in_prompts);
    assert_eq!(
        store
            .feedback()
            .follow_ups(feedback.id)
            .await
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test]
async fn an_exhausted_quota_refuses_the_run_and_keeps_nothing_of_it() {
    let (_dir, store) = temp_store().await;
    let repo = seed::add_repo(&store, DEMO_REPO).await;
    store
        .repositories()
        .change_repo_settings(
            repo.id,
            &RepoSettingsChange {
                monthly_run_quota: Some(Some(1)),
                ..RepoSettingsChange::default()
            },
        )
        .await
        .unwrap();
    let feedback = seed::add_feedback(&store, DEMO_REPO, "Quota", "Body.").await;
    seed::run_to_end(&store, &feedback, seed::success(0.1)).await;

    let mut request = code_run(feedback.id);
    request.instructions = Some("one more time".to_owned());
    let error = store.runs().start_code_run(&request).await.unwrap_err();

    assert!(
        matches!(
            error,
            StoreError::QuotaExhausted {
                quota: 1,
                used: 1,
                ..
            }
        ),
        "{error:?}"
    );
    assert!(
        error
            .to_string()
            .contains("quota of octocat/hello-world is used up"),
        "{error}"
    );
    let feedback = store.feedback().feedback(feedback.id).await.unwrap();
    assert_eq!(feedback.status, FeedbackStatus::WaitingForReview);
    assert!(store
        .feedback()
        .follow_ups(feedback.id)
        .await
        .unwrap()
        .is_empty());
    let runs = store
        .runs()
        .runs(&RunFilter {
            feedback_id: Some(feedback.id),
            ..RunFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(runs.len(), 1);
}

#[tokio::test]
async fn bad_input_is_refused_with_a_clear_error_and_nothing_stored() {
    let (_dir, store) = temp_store().await;
    seed::add_repo(&store, DEMO_REPO).await;

    let empty = store
        .feedback()
        .add_feedback(&NewFeedback {
            repo: DEMO_REPO.parse().unwrap(),
            title: None,
            body: "   \n".to_owned(),
            source: FeedbackSource::Cli,
            github_issue: None,
            opened_by_visitor: false,
        })
        .await
        .unwrap_err();
    assert_eq!(
        empty.to_string(),
        "feedback body is empty: write what should change"
    );

    let unknown_repo = store
        .feedback()
        .add_feedback(&NewFeedback {
            repo: "nobody/nothing".parse().unwrap(),
            title: None,
            body: "text".to_owned(),
            source: FeedbackSource::Cli,
            github_issue: None,
            opened_by_visitor: false,
        })
        .await
        .unwrap_err();
    assert!(unknown_repo
        .to_string()
        .starts_with("no repository nobody/nothing"));

    let unknown_item = store
        .feedback()
        .add_owner_follow_up(handoff::domain::FeedbackId(404), "hello")
        .await
        .unwrap_err();
    assert_eq!(unknown_item.to_string(), "no feedback 404");

    let duplicate = store
        .repositories()
        .add_repo(&handoff::domain::NewRepo::with_defaults(
            "OctoCat/Hello-World".parse().unwrap(),
        ))
        .await
        .unwrap_err();
    assert!(matches!(duplicate, StoreError::RepoAlreadyConnected(_)));

    assert_eq!(
        store
            .feedback()
            .dashboard(&FeedbackFilter::default())
            .await
            .unwrap()
            .total,
        0
    );
    assert_eq!(store.repositories().repos().await.unwrap().len(), 1);
}

#[tokio::test]
async fn dashboard_groups_cards_by_status_with_counts_and_last_run() {
    let (_dir, store) = temp_store().await;
    seed::seed_dashboard(&store).await;

    let dashboard = store
        .feedback()
        .dashboard(&FeedbackFilter::default())
        .await
        .unwrap();

    let shape: Vec<_> = dashboard
        .groups
        .iter()
        .map(|group| (group.status, group.cards.len()))
        .collect();
    assert_eq!(
        shape,
        [
            (FeedbackStatus::New, 1),
            (FeedbackStatus::Coding, 1),
            (FeedbackStatus::WaitingForReview, 1),
            (FeedbackStatus::Failed, 1),
            (FeedbackStatus::Merged, 1),
        ]
    );
    let waiting = &dashboard.groups[2].cards[0];
    assert_eq!(waiting.title, seed::WAITING_TITLE);
    assert_eq!(waiting.repo, DEMO_REPO);
    assert_eq!(waiting.pr_number, Some(7));
    assert_eq!(waiting.owner_follow_up_count, 1);
    assert_eq!(waiting.visitor_follow_up_count, 1);
    assert!((waiting.total_cost_usd - 0.42).abs() < 1e-9);
    let last_run = waiting.last_run.as_ref().unwrap();
    assert_eq!(last_run.status, RunStatus::Succeeded);
    let coding = &dashboard.groups[1].cards[0];
    assert_eq!(coding.last_run.as_ref().unwrap().status, RunStatus::Queued);
}

#[tokio::test]
async fn dashboard_filters_by_repo_status_and_search() {
    let (_dir, store) = temp_store().await;
    seed::seed_dashboard(&store).await;

    let by_repo = store
        .feedback()
        .dashboard(&FeedbackFilter {
            repo: Some(seed::SECOND_REPO.parse().unwrap()),
            ..FeedbackFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(by_repo.total, 2);

    let by_status = store
        .feedback()
        .dashboard(&FeedbackFilter {
            status: Some(FeedbackStatus::Failed),
            ..FeedbackFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(by_status.total, 1);

    let by_words = store
        .feedback()
        .dashboard(&FeedbackFilter {
            search: Some("PRICING".to_owned()),
            ..FeedbackFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(by_words.total, 1);

    let by_pr = store
        .feedback()
        .dashboard(&FeedbackFilter {
            search: Some("#3".to_owned()),
            ..FeedbackFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(by_pr.total, 1);
    assert_eq!(by_pr.groups[4].cards[0].title, seed::MERGED_TITLE);

    let literal = store
        .feedback()
        .dashboard(&FeedbackFilter {
            search: Some("%".to_owned()),
            ..FeedbackFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(literal.total, 0, "% is searched for literally");
}

#[tokio::test]
async fn a_disconnected_repository_keeps_its_history_and_connects_again_as_it_was() {
    let (_dir, store) = support::temp_store().await;
    let repo = support::seed::add_repo(&store, "octocat/kept").await;
    let item = support::seed::add_feedback(&store, "octocat/kept", "Kept", "Kept body").await;
    store
        .repositories()
        .change_repo_settings(
            repo.id,
            &handoff::store::RepoSettingsChange {
                feedback_label: Some("wish".to_owned()),
                ..Default::default()
            },
        )
        .await
        .unwrap();

    let disconnected = store.repositories().disconnect_repo(repo.id).await.unwrap();

    assert!(disconnected.disconnected_at.is_some());
    assert!(
        store.repositories().repos().await.unwrap().is_empty(),
        "no longer listed"
    );
    assert_eq!(
        store.feedback().feedback(item.id).await.unwrap().title,
        "Kept",
        "history kept"
    );
    let again = store
        .repositories()
        .add_repo(&handoff::domain::NewRepo::with_defaults(
            "octocat/kept".parse().unwrap(),
        ))
        .await
        .unwrap();
    assert_eq!(again.id, repo.id);
    assert_eq!(again.feedback_label, "wish", "as it was");
    assert!(again.disconnected_at.is_none());
    assert!(matches!(
        store
            .repositories()
            .add_repo(&handoff::domain::NewRepo::with_defaults(
                "octocat/kept".parse().unwrap()
            ))
            .await,
        Err(handoff::StoreError::RepoAlreadyConnected(_))
    ));
}

#[tokio::test]
async fn a_limited_dashboard_gives_each_column_its_newest_cards_and_its_whole_count() {
    let (_dir, store) = temp_store().await;
    seed::seed_dashboard(&store).await;
    let mut newest = Vec::new();
    for number in 0..7 {
        let item = seed::add_feedback(&store, DEMO_REPO, &format!("Idea {number}"), "More.").await;
        newest.push(item.title);
    }
    newest.reverse();

    let limited = store
        .feedback()
        .dashboard_limited(&FeedbackFilter::default(), Some(3))
        .await
        .unwrap();
    assert_eq!(limited.total, 12, "every item is counted");
    let new = &limited.groups[0];
    assert_eq!(new.status, FeedbackStatus::New);
    assert_eq!(new.total, 8);
    let titles: Vec<&str> = new.cards.iter().map(|card| card.title.as_str()).collect();
    assert_eq!(titles, newest[..3], "the most recently changed first");
    for group in &limited.groups[1..] {
        assert_eq!(
            (group.total, group.cards.len()),
            (1, 1),
            "{:?}",
            group.status
        );
    }

    let whole = store
        .feedback()
        .dashboard(&FeedbackFilter::default())
        .await
        .unwrap();
    assert_eq!(whole.groups[0].cards.len(), 8);
    let searched = store
        .feedback()
        .dashboard_limited(
            &FeedbackFilter {
                search: Some("Idea".to_owned()),
                ..FeedbackFilter::default()
            },
            Some(2),
        )
        .await
        .unwrap();
    assert_eq!((searched.total, searched.groups[0].cards.len()), (7, 2));
}
