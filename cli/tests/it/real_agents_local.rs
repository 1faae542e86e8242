//! The real Claude Code, Codex CLI and aider, as the presets run them, on the local
//! backend (see [`super::real_agent_journeys`]).

use handoff_test_support as support;

use support::cli_process::{ok_text, Cli};
use support::fake_github::FakeGithub;
use support::model_server::{ModelServer, ModelTurn, INPUT_TOKENS_PER_TURN};
use support::pipeline_world::REPO;
use support::real_agents::RealAgent;
use support::secret_service::SecretService;

use super::real_agent_journeys::{
    a_model_error_is_named, aider_code_run_and_update, code_run_and_update, connect,
    lessons_from_the_owners_edit, qa_stages, run_shown, Backend,
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
async fn claude_code_proposes_a_lesson_from_the_owners_edit_and_the_next_run_carries_it() {
    lessons_from_the_owners_edit(RealAgent::Claude, Backend::Local).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn codex_proposes_a_lesson_from_the_owners_edit_and_the_next_run_carries_it() {
    lessons_from_the_owners_edit(RealAgent::Codex, Backend::Local).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn codex_runs_review_plan_test_and_fix_on_a_pr() {
    qa_stages(RealAgent::Codex, Backend::Local).await;
}

/// A request the model refuses outright: Claude Code does not retry it.
#[tokio::test(flavor = "multi_thread")]
async fn claude_code_names_the_models_error() {
    a_model_error_is_named(
        RealAgent::Claude,
        Backend::Local,
        (400, "prompt is too long: 250000 tokens > 200000 maximum"),
        "prompt is too long",
    )
    .await;
}

/// An overloaded model: Claude Code retries ten times, backing off to 32 s between
/// tries (about two and a half minutes), then gives up and says why.
#[tokio::test(flavor = "multi_thread")]
async fn claude_code_gives_up_on_an_overloaded_model_and_says_so() {
    a_model_error_is_named(
        RealAgent::Claude,
        Backend::Local,
        (529, "Overloaded"),
        "overloaded",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn codex_names_the_models_refusal_of_its_key() {
    a_model_error_is_named(
        RealAgent::Codex,
        Backend::Local,
        (401, "invalid x-api-key"),
        "401",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn codex_gives_up_on_an_overloaded_model_and_says_so() {
    a_model_error_is_named(RealAgent::Codex, Backend::Local, (529, "Overloaded"), "529").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn aider_opens_a_pr_and_updates_it() {
    aider_code_run_and_update(Backend::Local).await;
}

/// `handoff run FEEDBACK` with `agent` on the path (from `bin`) and `home` as its home.
async fn run_with_real_agent(
    cli: &Cli<'_>,
    agent: RealAgent,
    bin: &std::path::Path,
    home: &std::path::Path,
    feedback: &str,
) -> std::process::Output {
    let path = agent.path_with_agent(bin);
    cli.run_with(
        &["run", feedback],
        None,
        &[("PATH", &path), ("HOME", home.to_str().unwrap())],
    )
    .await
}

/// A run whose agent spent tokens and changed nothing fails, and still shows what it
/// cost: the agent's account is recorded as soon as it ends.
#[tokio::test(flavor = "multi_thread")]
async fn a_run_that_changes_nothing_still_shows_what_it_cost() {
    let fake = FakeGithub::start().await;
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let bin = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    let model =
        ModelServer::start(vec![ModelTurn::Text("Nothing needs to change.".to_owned())]).await;
    connect(&fake, &cli, RealAgent::Claude, Backend::Local, &model).await;
    let feedback = cli.add_feedback("Greet the readers").await;

    let failed =
        run_with_real_agent(&cli, RealAgent::Claude, bin.path(), home.path(), &feedback).await;

    assert!(!failed.status.success());
    let run = run_shown(&cli, "1").await;
    assert_eq!(run["failure_code"], "no_changes", "{run}");
    assert_eq!(
        run["tokens_in"].as_i64(),
        Some(INPUT_TOKENS_PER_TURN as i64),
        "{run}"
    );
    assert!(
        run["llm_cost_usd"].as_f64().is_some_and(|cost| cost > 0.0),
        "{run}"
    );
    assert!(fake.pulls(REPO).is_empty());
    ok_text(&cli.run(&["runs", "show", "1"]).await);
}

/// A run whose budget is spent after its first model call: each call is reserved at its
/// worst case before it leaves; the first is answered as costing more than the budget
/// ($2 of input at the price the test gives), so the key forwarder refuses every later
/// call in the provider's own error shape, the real agent stops, and the run ends as
/// `budget_reached`, naming it, with nothing pushed and no call past the budget reaching
/// the provider.
async fn a_real_agent_stops_at_its_budget(agent: RealAgent) {
    let fake = FakeGithub::start().await;
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let bin = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    let model = ModelServer::start(vec![
        ModelTurn::WriteFile {
            path: "docs/one.md".to_owned(),
            contents: "One\n".to_owned(),
        },
        ModelTurn::WriteFile {
            path: "docs/two.md".to_owned(),
            contents: "Two\n".to_owned(),
        },
        ModelTurn::Text("Wrote both.".to_owned()),
    ])
    .await;
    connect(&fake, &cli, agent, Backend::Local, &model).await;
    model.report_input_tokens(REPORTED_INPUT_TOKENS);
    // The agents' models priced at $1 a million input tokens and $2 output: the first
    // call goes, is charged $2, and the $1.50 budget is spent.
    ok_text(
        &cli.run(&["config", "set", "spend.prices", &agent_model_prices()])
            .await,
    );
    ok_text(&cli.run(&["config", "set", "budget.run_usd", "1.5"]).await);
    let feedback = cli.add_feedback("Write two pages").await;

    let stopped = run_with_real_agent(&cli, agent, bin.path(), home.path(), &feedback).await;

    assert!(!stopped.status.success());
    assert_eq!(
        model.model_calls().len(),
        1,
        "the second call never reached the model"
    );
    let run = run_shown(&cli, "1").await;
    assert_eq!(run["failure_code"], "budget_reached", "{run}");
    // Every call past the budget was refused at the forwarder (Claude Code tries a few
    // variants of its request before it gives up; Codex asks once), and the run says how
    // many.
    let refused: u64 = run["failure_message"]
        .as_str()
        .and_then(|message| message.split(" and ").nth(1))
        .and_then(|rest| rest.split(' ').next())
        .and_then(|count| count.parse().ok())
        .expect("the refused calls, counted");
    assert!(refused >= 1, "{run}");
    assert_eq!(
        run["tokens_in"].as_i64(),
        Some(REPORTED_INPUT_TOKENS as i64),
        "{run}"
    );
    // The agent's own output names the refusal it got.
    let logs = ok_text(&cli.run(&["runs", "logs", "1"]).await);
    assert!(logs.contains("budget ($1.50) is spent"), "{logs}");
    assert!(fake.pulls(REPO).is_empty());
}

/// What the stand-in says the budget test's calls read: $2 at $1 a million.
const REPORTED_INPUT_TOKENS: u64 = 2_000_000;

/// A price line for each model the real agents ask for ($1 and $2 a million): Claude
/// Code 2.1.332's default and Codex 0.163.0's (which the default table has no price for).
fn agent_model_prices() -> String {
    ["claude-opus-5-5", "gpt-6.1-sol"]
        .iter()
        .map(|model| format!("{model} 1 2"))
        .collect::<Vec<_>>()
        .join("; ")
}

#[tokio::test(flavor = "multi_thread")]
async fn claude_code_stops_at_its_budget() {
    a_real_agent_stops_at_its_budget(RealAgent::Claude).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn codex_stops_at_its_budget() {
    a_real_agent_stops_at_its_budget(RealAgent::Codex).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_forks_claude_code_hook_is_refused_before_it_runs() {
    super::real_agent_journeys::a_forks_claude_hook_never_runs(Backend::Local).await;
}
