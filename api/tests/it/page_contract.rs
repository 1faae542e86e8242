//! The page's contract: what the window receives from the core comes in one casing
//! (camelCase keys, never a snake_case one), with fixed choices as enum words.

use handoff_test_support as support;

use handoff_api::records::{BoardView, RepoRecord};
use handoff_api::{feedback_view, AppCore, DashboardQuery};
use serde_json::Value;
use support::{seed, temp_store};

/// Every key of `value` (objects inside arrays and objects included) with its path.
fn keys(value: &Value, path: &str, found: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                found.push(format!("{path}.{key}"));
                keys(inner, &format!("{path}.{key}"), found);
            }
        }
        Value::Array(items) => {
            for (index, inner) in items.iter().enumerate() {
                keys(inner, &format!("{path}[{index}]"), found);
            }
        }
        _ => {}
    }
}

fn snake_case_keys(value: &Value) -> Vec<String> {
    let mut found = Vec::new();
    keys(value, "", &mut found);
    found
        .into_iter()
        .filter(|path| path.rsplit('.').next().is_some_and(|key| key.contains('_')))
        .collect()
}

#[tokio::test]
async fn the_board_the_detail_and_the_repositories_arrive_in_camel_case() {
    let (dir, store) = temp_store().await;
    let items = seed::seed_dashboard(&store).await;
    let core = AppCore::new(store.clone(), dir.path());

    let board: BoardView = handoff_api::dashboard(&core.store, &DashboardQuery::default())
        .await
        .unwrap();
    let board = serde_json::to_value(&board).unwrap();
    assert!(board["groups"][0]["cards"].as_array().is_some());
    assert_eq!(snake_case_keys(&board), Vec::<String>::new());

    let mut seen_failure_code = false;
    for item in &items {
        let detail = feedback_view::feedback_detail(&core.store, item.id.0)
            .await
            .unwrap();
        let detail = serde_json::to_value(&detail).unwrap();
        assert_eq!(snake_case_keys(&detail), Vec::<String>::new(), "{detail:#}");
        assert!(
            ["first", "iterate", "retry", "none"]
                .contains(&detail["nextRun"]["kind"].as_str().unwrap()),
            "{detail:#}"
        );
        for run in detail["runs"].as_array().unwrap() {
            if let Some(code) = run["failureCode"].as_str() {
                assert!(
                    code.parse::<handoff::domain::RunFailureCode>().is_ok(),
                    "{code} is a failure code"
                );
                seen_failure_code = true;
            }
        }
    }
    assert!(seen_failure_code, "the seeded board has a failed run");

    let repos: Vec<RepoRecord> = handoff_api::repos(&core.store).await.unwrap();
    let repos = serde_json::to_value(&repos).unwrap();
    assert!(repos[0]["defaultBranch"].is_string(), "{repos:#}");
    assert_eq!(snake_case_keys(&repos), Vec::<String>::new());
}

#[test]
fn a_filter_takes_its_choices_as_enum_words_and_empty_as_all() {
    use handoff::domain::{CheckStatus, FeedbackStatus};
    use handoff_api::pull_requests::{PullRequestOrigin, PullRequestQuery};

    let all: DashboardQuery =
        serde_json::from_value(serde_json::json!({ "repo": "", "status": "", "search": "" }))
            .unwrap();
    assert_eq!(all.status, None);
    let merged: DashboardQuery =
        serde_json::from_value(serde_json::json!({ "status": "MERGED" })).unwrap();
    assert_eq!(merged.status, Some(FeedbackStatus::Merged));
    let wrong = serde_json::from_value::<DashboardQuery>(serde_json::json!({ "status": "DONE" }))
        .unwrap_err()
        .to_string();
    assert!(
        wrong.contains("DONE") && wrong.contains("WAITING_FOR_REVIEW"),
        "a wrong word names the right ones: {wrong}"
    );

    let pulls: PullRequestQuery = serde_json::from_value(
        serde_json::json!({ "repo": "", "search": "", "checks": "failure", "origin": "feedback" }),
    )
    .unwrap();
    assert_eq!(pulls.checks, Some(CheckStatus::Failure));
    assert_eq!(pulls.origin, Some(PullRequestOrigin::Feedback));
    let every: PullRequestQuery =
        serde_json::from_value(serde_json::json!({ "checks": "", "origin": "" })).unwrap();
    assert_eq!((every.checks, every.origin), (None, None));
    let wrong = serde_json::from_value::<PullRequestQuery>(serde_json::json!({ "origin": "fork" }))
        .unwrap_err()
        .to_string();
    assert!(wrong.contains("feedback or other"), "{wrong}");
}

#[test]
fn a_pane_preview_marks_its_changed_lines_with_enum_words_in_camel_case() {
    let preview = handoff_api::comments::preview_edit(
        "Keep this line.\nThe owner's line.",
        Some("Keep this line.\nThe agent's line."),
    );
    let preview = serde_json::to_value(&preview).unwrap();
    assert_eq!(snake_case_keys(&preview), Vec::<String>::new());
    let changes: Vec<(String, String)> = preview["changesFromAgent"]
        .as_array()
        .unwrap()
        .iter()
        .map(|line| {
            (
                line["change"].as_str().unwrap().to_owned(),
                line["text"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        changes,
        [
            ("same".to_owned(), "Keep this line.".to_owned()),
            ("removed".to_owned(), "The agent's line.".to_owned()),
            ("added".to_owned(), "The owner's line.".to_owned()),
        ]
    );
}
