//! The real Claude Code, Codex CLI and aider on the Docker backend: each in an image built
//! through the engine from Handoff's recipe, which takes the program from its PyPI
//! wheel; the container on the allow-list network, its provider reached only through
//! the key forwarder in the repository's egress gate (see
//! [`super::real_agent_journeys`]).

use handoff_test_support::real_agents::RealAgent;

use super::real_agent_journeys::{
    aider_code_run_and_update, code_run_and_update, qa_stages, Backend,
};

#[tokio::test(flavor = "multi_thread")]
async fn claude_code_opens_a_pr_and_updates_it() {
    code_run_and_update(RealAgent::Claude, Backend::Docker).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn codex_opens_a_pr_and_updates_it() {
    code_run_and_update(RealAgent::Codex, Backend::Docker).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn claude_code_runs_review_plan_test_and_fix_on_a_pr() {
    qa_stages(RealAgent::Claude, Backend::Docker).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn aider_opens_a_pr_and_updates_it() {
    aider_code_run_and_update(Backend::Docker).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_forks_claude_code_hook_does_not_run_in_the_review() {
    super::real_agent_journeys::a_forks_claude_hook_never_runs(Backend::Docker).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn claude_code_pays_with_the_owners_plan_through_the_egress_gate() {
    super::real_claude_plan::a_run_paid_with_the_plan(Backend::Docker).await;
}
