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

    let board: BoardView = handoff_api::dashboard(&core, &DashboardQuery::default())
        .await
        .unwrap();
    let board = serde_json::to_value(&board).unwrap();
    assert!(board["groups"][0]["cards"].as_array().is_some());
    assert_eq!(snake_case_keys(&board), Vec::<String>::new());

    let mut seen_failure_code = false;
    for item in &items {
        let detail = feedback_view::feedback_detail(&core, item.id.0)
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

    let repos: Vec<RepoRecord> = handoff_api::repos(&core).await.unwrap();
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

/// The typedefs the page's modules are checked against are generated from the records
/// above: a record changed without the file is a failure (and the file is written anew,
/// to be looked at and committed).
#[test]
fn the_page_contract_file_is_current() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui/js/contract.js");
    let wanted = handoff_api::page_contract::page_contract_file();
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    if current != wanted {
        std::fs::write(&path, &wanted).expect("ui/js/contract.js is written");
        panic!(
            "ui/js/contract.js was stale and has been written anew from the records: look at \
             the change and commit it"
        );
    }
}

/// Every type a page module names from the contract is one the contract declares.
#[test]
fn every_type_the_page_names_is_in_the_contract() {
    let ui = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui/js");
    let contract = handoff_api::page_contract::page_contract_file();
    let mut named = 0;
    for entry in std::fs::read_dir(&ui).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("js") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with("// @ts-check"),
            "{} is not checked: it must start with `// @ts-check`",
            path.display()
        );
        for piece in text.split("import(\"./contract.js\").").skip(1) {
            let name: String = piece
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            named += 1;
            assert!(
                contract.contains(&format!("}} {name}\n")),
                "{} names {name}, which the contract does not declare",
                path.display()
            );
        }
    }
    assert!(named > 20, "the page names only {named} contract types");
}

/// Every key and word `value` holds appears in `typescript` (the shape's inline type).
fn assert_described(value: &serde_json::Value, typescript: &str, what: &str) {
    match value {
        serde_json::Value::String(word) => assert!(
            typescript.contains(&format!("\"{word}\"")),
            "{what}: the word {word:?} is not in {typescript}"
        ),
        serde_json::Value::Object(map) => {
            for (key, inner) in map {
                assert!(
                    typescript.contains(&format!("{key}: "))
                        || typescript.contains(&format!("\"{key}\": ")),
                    "{what}: the key {key:?} is not in {typescript}"
                );
                if key == "kind" {
                    assert_described(inner, typescript, what);
                }
            }
        }
        other => panic!("{what}: unexpected {other}"),
    }
}

/// The core's records that the page receives whole are described by shapes in the
/// contract; each variant of each is held to its shape, so a change in the core cannot
/// leave the contract behind (a new variant fails to compile here until it is listed).
#[test]
fn the_shapes_match_what_the_core_serializes() {
    use handoff::pull_request_workspace::StageState;
    use handoff::setup_check::{CheckStatus, Fix};
    use handoff_api::page_contract::*;

    let repo: handoff::domain::RepoName = "octocat/hello-world".parse().unwrap();
    assert_described(
        &serde_json::to_value(&repo).unwrap(),
        &inline_type::<RepoNameShape>(),
        "RepoName",
    );
    let revealed = handoff::revealed_text::reveal_hidden_parts("a <!-- hidden --> text");
    assert_described(
        &serde_json::to_value(&revealed).unwrap(),
        &inline_type::<RevealedTextShape>(),
        "RevealedText",
    );
    for state in [
        StageState::Running,
        StageState::Failed,
        StageState::OutOfDate,
        StageState::EditedByYou,
        StageState::Done,
        StageState::NotRun,
    ] {
        // Listed whole: a new state makes this match fail to compile.
        match state {
            StageState::Running
            | StageState::Failed
            | StageState::OutOfDate
            | StageState::EditedByYou
            | StageState::Done
            | StageState::NotRun => {}
        }
        assert_described(
            &serde_json::to_value(state).unwrap(),
            &inline_type::<StageStateShape>(),
            "StageState",
        );
    }
    for status in [CheckStatus::Ok, CheckStatus::Warning, CheckStatus::Failure] {
        match status {
            CheckStatus::Ok | CheckStatus::Warning | CheckStatus::Failure => {}
        }
        assert_described(
            &serde_json::to_value(status).unwrap(),
            &inline_type::<SetupCheckStatusShape>(),
            "SetupCheckStatus",
        );
    }
    let text = || "x".to_owned();
    let fixes = [
        Fix::SignIn,
        Fix::GetWriteAccess { repo: text() },
        Fix::TurnOnIssues { repo: text() },
        Fix::StartKeyring,
        Fix::StartDocker,
        Fix::BuildImage {
            preset: text(),
            image: text(),
        },
        Fix::LoadImage { image: text() },
        Fix::BuildEnvironment { repo: text() },
        Fix::AddKey { provider: text() },
        Fix::AddE2bKey,
        Fix::ReplaceE2bKey,
        Fix::UseHttpsForE2b,
        Fix::UseHttpsForProvider { provider: text() },
        Fix::ChooseAnotherAgent { repo: text() },
        Fix::FreeDisk { path: text() },
        Fix::InstallEgressGate,
        Fix::GrantTokenPermission {
            permission: text(),
            repo: text(),
        },
        Fix::MakeAgentFork {
            repo: text(),
            place: Some(text()),
        },
        Fix::MakeAgentFork {
            repo: text(),
            place: None,
        },
        Fix::ConnectRepository { repo: text() },
        Fix::RaiseQuota { repo: text() },
        Fix::RaiseMonthlyBudget { repo: text() },
        Fix::RaiseDayBudget,
        Fix::RunStagesOneAtATime { repo: text() },
        Fix::InstallNewerHandoff,
        Fix::SetDamagedDatabaseAside,
        Fix::TryAgainLater,
        Fix::LookUpItems,
        Fix::LookUpRuns,
        Fix::LookUpLessons,
        Fix::AcceptLesson { id: 7 },
        Fix::SyncPullRequests,
        Fix::ApproveFeedback { feedback_id: 7 },
        Fix::ApproveCommentVersion { comment: text() },
        Fix::ReplaceOwnerEdit { comment: text() },
        Fix::RunAsCodeRun,
        Fix::ReplaceLessonsFileEdits,
        Fix::CorrectTheAgentFirst,
        Fix::ConfirmLocalBackend { repo: text() },
        Fix::UseASandbox,
        Fix::ShowRun { run: 7 },
    ];
    // An error as the page gets it, with and without its step.
    let refused: handoff::error_code::CodedError =
        handoff::store::StoreError::RepoNotFound("octocat/hello-world".to_owned()).into();
    assert_eq!(
        refused.fix,
        Some(Fix::ConnectRepository {
            repo: "octocat/hello-world".to_owned()
        })
    );
    for error in [
        refused,
        handoff::error_code::CodedError::new(handoff::error_code::ErrorCode::Cancelled, "x"),
    ] {
        assert_described(
            &serde_json::to_value(&error).unwrap(),
            &inline_type::<CodedErrorShape>(),
            "CodedError",
        );
    }
    for fix in &fixes {
        match fix {
            Fix::SignIn
            | Fix::GetWriteAccess { .. }
            | Fix::TurnOnIssues { .. }
            | Fix::StartKeyring
            | Fix::StartDocker
            | Fix::BuildImage { .. }
            | Fix::LoadImage { .. }
            | Fix::BuildEnvironment { .. }
            | Fix::AddKey { .. }
            | Fix::AddE2bKey
            | Fix::ReplaceE2bKey
            | Fix::UseHttpsForE2b
            | Fix::UseHttpsForProvider { .. }
            | Fix::ChooseAnotherAgent { .. }
            | Fix::FreeDisk { .. }
            | Fix::InstallEgressGate
            | Fix::GrantTokenPermission { .. }
            | Fix::MakeAgentFork { .. }
            | Fix::ConnectRepository { .. }
            | Fix::RaiseQuota { .. }
            | Fix::RaiseMonthlyBudget { .. }
            | Fix::RaiseDayBudget
            | Fix::RunStagesOneAtATime { .. }
            | Fix::InstallNewerHandoff
            | Fix::SetDamagedDatabaseAside
            | Fix::TryAgainLater
            | Fix::LookUpItems
            | Fix::LookUpRuns
            | Fix::LookUpLessons
            | Fix::AcceptLesson { .. }
            | Fix::SyncPullRequests
            | Fix::ApproveFeedback { .. }
            | Fix::ApproveCommentVersion { .. }
            | Fix::ReplaceOwnerEdit { .. }
            | Fix::RunAsCodeRun
            | Fix::ReplaceLessonsFileEdits
            | Fix::CorrectTheAgentFirst
            | Fix::ConfirmLocalBackend { .. }
            | Fix::UseASandbox
            | Fix::ShowRun { .. } => {}
        }
        assert_described(
            &serde_json::to_value(fix).unwrap(),
            &inline_type::<FixShape>(),
            "Fix",
        );
    }
}
