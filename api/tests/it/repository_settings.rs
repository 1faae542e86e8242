//! Connecting a repository and changing its settings, as the window's form and
//! `handoff repo add|set` both do it: one reading of what is typed, one rule for the
//! local backend's confirmation, and nothing saved when a field is refused.

use handoff_test_support as support;

use handoff::error_code::ErrorCode;
use handoff_api::repositories::{
    connect_repository, connect_repository_with, connected_repositories, repo_settings,
    save_repo_settings, set_stage_prompt, stage_prompt_text, RepoSettingsInput,
};
use handoff_api::AppCore;
use support::temp_store;

const REPO: &str = "octocat/hello-world";

async fn core_with_a_repository() -> (tempfile::TempDir, AppCore) {
    let (dir, store) = temp_store().await;
    let core = AppCore::new(store, dir.path());
    connect_repository(&core, REPO).await.expect("connected");
    (dir, core)
}

#[tokio::test]
async fn an_empty_feedback_label_is_refused_and_nothing_is_saved() {
    let (_dir, core) = core_with_a_repository().await;
    let refused = save_repo_settings(
        &core,
        REPO,
        &RepoSettingsInput {
            default_branch: Some("develop".to_owned()),
            feedback_label: Some(" ".to_owned()),
            ..Default::default()
        },
        false,
    )
    .await
    .expect_err("an empty label is refused");
    assert_eq!(refused.code, ErrorCode::InvalidInput);
    assert!(
        refused.message.contains("feedback label is empty"),
        "{}",
        refused.message
    );
    let view = repo_settings(&core, REPO).await.unwrap();
    assert_eq!(view.repo.feedback_label, "feedback");
    assert_eq!(
        view.repo.default_branch, "main",
        "the base branch was not saved either"
    );
}

#[tokio::test]
async fn run_slots_are_at_least_one_and_none_means_none_of_its_own() {
    let (_dir, core) = core_with_a_repository().await;
    let slots = |typed: &str| RepoSettingsInput {
        run_slots: Some(typed.to_owned()),
        ..Default::default()
    };
    let view = save_repo_settings(&core, REPO, &slots("2"), false)
        .await
        .unwrap();
    assert_eq!(view.repo.run_slots, Some(2));
    let refused = save_repo_settings(&core, REPO, &slots("0"), false)
        .await
        .expect_err("0 slots is refused");
    assert_eq!(refused.code, ErrorCode::InvalidInput);
    assert_eq!(
        repo_settings(&core, REPO).await.unwrap().repo.run_slots,
        Some(2)
    );
    let view = save_repo_settings(&core, REPO, &slots("none"), false)
        .await
        .unwrap();
    assert_eq!(view.repo.run_slots, None);
}

#[tokio::test]
async fn the_run_timeout_is_set_in_minutes() {
    let (_dir, core) = core_with_a_repository().await;
    let view = save_repo_settings(
        &core,
        REPO,
        &RepoSettingsInput {
            run_timeout_minutes: Some("45".to_owned()),
            ..Default::default()
        },
        false,
    )
    .await
    .unwrap();
    assert_eq!(view.repo.run_timeout_seconds, 45 * 60);
    let refused = save_repo_settings(
        &core,
        REPO,
        &RepoSettingsInput {
            run_timeout_minutes: Some("0".to_owned()),
            ..Default::default()
        },
        false,
    )
    .await
    .expect_err("no time at all is refused");
    assert_eq!(refused.code, ErrorCode::InvalidInput);
    assert_eq!(
        repo_settings(&core, REPO)
            .await
            .unwrap()
            .repo
            .run_timeout_seconds,
        45 * 60
    );
}

#[tokio::test]
async fn the_local_backend_and_what_it_runs_need_the_owners_confirmation() {
    let (_dir, core) = core_with_a_repository().await;
    let local = RepoSettingsInput {
        sandbox_backend: Some("local".to_owned()),
        ..Default::default()
    };
    let refused = save_repo_settings(&core, REPO, &local, false)
        .await
        .expect_err("not confirmed");
    assert_eq!(refused.code, ErrorCode::NeedsConfirmation);
    assert!(
        refused.message.contains("no isolation"),
        "{}",
        refused.message
    );
    let view = repo_settings(&core, REPO).await.unwrap();
    assert_eq!(view.repo.sandbox_backend.to_string(), "docker");

    let view = save_repo_settings(&core, REPO, &local, true).await.unwrap();
    assert_eq!(view.repo.sandbox_backend.to_string(), "local");

    // While it runs as the owner, what it runs is confirmed too.
    let another_agent = RepoSettingsInput {
        agent_preset: Some("claude".to_owned()),
        ..Default::default()
    };
    let refused = save_repo_settings(&core, REPO, &another_agent, false)
        .await
        .expect_err("a new agent on the local backend is confirmed");
    assert_eq!(refused.code, ErrorCode::NeedsConfirmation);
    assert_eq!(
        repo_settings(&core, REPO).await.unwrap().repo.agent_preset,
        "opencode"
    );
    let view = save_repo_settings(&core, REPO, &another_agent, true)
        .await
        .unwrap();
    assert_eq!(view.repo.agent_preset, "claude");
}

#[tokio::test]
async fn connecting_with_settings_reads_them_all_before_connecting() {
    let (dir, store) = temp_store().await;
    let core = AppCore::new(store, dir.path());
    let refused = connect_repository_with(
        &core,
        REPO,
        &RepoSettingsInput {
            feedback_label: Some("bugs".to_owned()),
            allowed_hosts: Some("169.254.169.254".to_owned()),
            ..Default::default()
        },
        false,
    )
    .await
    .expect_err("the metadata address is never allowed");
    assert_eq!(refused.code, ErrorCode::InvalidInput);
    assert!(
        connected_repositories(&core).await.unwrap().is_empty(),
        "nothing connected"
    );

    let local = RepoSettingsInput {
        sandbox_backend: Some("local".to_owned()),
        ..Default::default()
    };
    let refused = connect_repository_with(&core, REPO, &local, false)
        .await
        .expect_err("local is confirmed");
    assert_eq!(refused.code, ErrorCode::NeedsConfirmation);
    assert!(
        connected_repositories(&core).await.unwrap().is_empty(),
        "nothing connected"
    );

    let connected = connect_repository_with(
        &core,
        REPO,
        &RepoSettingsInput {
            feedback_label: Some("bugs".to_owned()),
            run_timeout_minutes: Some("10".to_owned()),
            ..local
        },
        true,
    )
    .await
    .unwrap();
    assert_eq!(connected.repo.feedback_label, "bugs");
    assert_eq!(connected.repo.run_timeout_seconds, 600);
    assert_eq!(connected.repo.sandbox_backend.to_string(), "local");
    assert_eq!(connected.fork_made, None, "not signed in: no fork is made");
}

#[tokio::test]
async fn a_local_repositorys_stage_prompt_changes_only_when_confirmed() {
    let (_dir, core) = core_with_a_repository().await;
    let name = REPO.parse().unwrap();
    let built_in = stage_prompt_text(&core, &name, "review").await.unwrap();
    assert_eq!(built_in.own, None);
    assert!(
        !built_in.read_by_runs.is_empty(),
        "runs read the built-in prompt"
    );

    // On a sandboxed repository a prompt changes without a question.
    set_stage_prompt(
        &core,
        REPO,
        "review",
        Some("Review {{pr_number}} kindly."),
        false,
    )
    .await
    .unwrap();
    let own = stage_prompt_text(&core, &name, "review").await.unwrap();
    assert_eq!(own.own.as_deref(), Some("Review {{pr_number}} kindly."));
    assert_eq!(own.read_by_runs, "Review {{pr_number}} kindly.");

    // On a local one, what its agent is told changes only when the owner confirmed it,
    // whichever front end asks.
    let local = RepoSettingsInput {
        sandbox_backend: Some("local".to_owned()),
        ..Default::default()
    };
    save_repo_settings(&core, REPO, &local, true).await.unwrap();
    let refused = set_stage_prompt(&core, REPO, "review", None, false)
        .await
        .expect_err("an unconfirmed reset is refused");
    assert_eq!(refused.code, ErrorCode::NeedsConfirmation);
    assert_eq!(
        stage_prompt_text(&core, &name, "review")
            .await
            .unwrap()
            .own
            .as_deref(),
        Some("Review {{pr_number}} kindly."),
        "nothing changed"
    );
    set_stage_prompt(&core, REPO, "review", None, true)
        .await
        .unwrap();
    assert_eq!(
        stage_prompt_text(&core, &name, "review").await.unwrap(),
        built_in
    );

    let no_such_stage = stage_prompt_text(&core, &name, "code")
        .await
        .expect_err("the code stage has no prompt template");
    assert_eq!(no_such_stage.code, ErrorCode::InvalidInput);
}
