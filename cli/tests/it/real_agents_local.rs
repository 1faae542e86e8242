//! The real Claude Code, Codex CLI and aider, as the presets run them, on the local
//! backend (see [`super::real_agent_journeys`]).

use handoff_test_support::real_agents::RealAgent;

use super::real_agent_journeys::{
    a_model_error_is_named, aider_code_run_and_update, code_run_and_update, qa_stages, Backend,
};

#[tokio::test(flavor = "multi_thread")]
async fn claude_code_opens_a_pr_and_updates_it() {
    code_run_and_update(RealAgent::Claude, Backend::Local).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn codex_opens_a_pr_and_updates_it() {
    code_run_and_update(RealAgent::Codex, Backend::Local).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn claude_code_runs_review_plan_test_and_fix_on_a_pr() {
    qa_stages(RealAgent::Claude, Backend::Local).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn codex_runs_review_plan_test_and_fix_on_a_pr() {
    qa_stages(RealAgent::Codex, Backend::Local).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn claude_code_names_the_models_error() {
    a_model_error_is_named(RealAgent::Claude, Backend::Local).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn codex_names_the_models_refusal_of_its_key() {
    a_model_error_is_named(RealAgent::Codex, Backend::Local).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn aider_opens_a_pr_and_updates_it() {
    aider_code_run_and_update().await;
}
