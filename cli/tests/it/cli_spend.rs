//! Spend from the command line: every model call metered at the run's key forwarder,
//! priced from the table, recorded step by step; budgets that stop a run and refuse the
//! next; `handoff spend` and `handoff runs steps`. The scripted agent calls the stand-in
//! model through the forwarder the way an agent does (`@@calls`).

use handoff_test_support as support;

use support::cli_process::{ok_text, scripted_agent_as_claude, text, Cli};
use support::fake_github::FakeGithub;
use support::model_server::{ModelServer, ModelTurn};
use support::pipeline_world::{REPO, SCRIPTED_AGENT};
use support::secret_service::SecretService;

const KEY: &str = "sk-ant-spend-test-0123456789abcdef";

/// One call's price at the stand-in's 1,200 tokens in and 80 out, for Claude Sonnet 4.5
/// ($3 and $15 per million).
const SONNET_CALL_USD: f64 = 1200.0 * 3.0 / 1e6 + 80.0 * 15.0 / 1e6;

struct World {
    fake: FakeGithub,
    keyring: SecretService,
    dir: tempfile::TempDir,
    bin: tempfile::TempDir,
    model: ModelServer,
}

impl World {
    /// The repository on the local backend with the claude preset, whose `claude` is
    /// the scripted agent, and Anthropic's API at the stand-in model.
    async fn start(script: Vec<ModelTurn>) -> World {
        let world = World {
            fake: FakeGithub::start().await,
            keyring: SecretService::start(),
            dir: tempfile::tempdir().unwrap(),
            bin: tempfile::tempdir().unwrap(),
            model: ModelServer::start(script).await,
        };
        world
            .fake
            .create_repo_with_files(REPO, "main", &[(".handoff/agent.sh", SCRIPTED_AGENT)]);
        let cli = world.cli();
        cli.connect_scripted_repo(&world.fake, "local", &[]).await;
        // A local repository's agent changes only with the owner's confirmation.
        ok_text(
            &cli.run(&[
                "repo",
                "set",
                REPO,
                "--agent",
                "claude",
                "--confirm-no-isolation",
            ])
            .await,
        );
        cli.use_anthropic_stand_in(KEY, &world.model.api_base())
            .await;
        world
    }

    fn cli(&self) -> Cli<'_> {
        Cli {
            data_dir: self.dir.path(),
            keyring: &self.keyring,
        }
    }

    /// `handoff ARGUMENTS` with the scripted `claude` on the path.
    async fn handoff(&self, arguments: &[&str]) -> std::process::Output {
        let path = scripted_agent_as_claude(self.bin.path());
        self.cli()
            .run_with(arguments, None, &[("PATH", &path)])
            .await
    }

    async fn json(&self, arguments: &[&str]) -> serde_json::Value {
        serde_json::from_str(&ok_text(&self.handoff(arguments).await)).unwrap()
    }
}

fn close_to(found: &serde_json::Value, expected: f64) -> bool {
    found
        .as_f64()
        .is_some_and(|found| (found - expected).abs() < 1e-9)
}

#[tokio::test(flavor = "multi_thread")]
async fn every_model_call_is_metered_priced_and_kept_as_a_step() {
    let world = World::start(vec![
        // A model that somehow learned the key: its words are stored scrubbed.
        ModelTurn::WriteFile {
            path: "notes.txt".into(),
            contents: format!("the key is {KEY}"),
        },
        ModelTurn::Text("Done.".into()),
    ])
    .await;
    let feedback = world
        .cli()
        .add_feedback("Count\n@@calls 2 claude-sonnet-4-5 hello\n@@write a.txt done")
        .await;

    let run = world.handoff(&["run", &feedback]).await;

    let shown = ok_text(&run);
    let calls = world.model.model_calls();
    assert_eq!(calls.len(), 2, "{shown}");
    assert!(calls
        .iter()
        .all(|call| call.x_api_key.as_deref() == Some(KEY)));
    let run = world.json(&["runs", "show", "1", "--json"]).await;
    assert_eq!(run["run"]["spend_source"], "metered", "{run}");
    assert_eq!(run["run"]["tokens_in"], 2400, "{run}");
    assert_eq!(run["run"]["tokens_out"], 160, "{run}");
    assert!(
        close_to(&run["run"]["llm_cost_usd"], 2.0 * SONNET_CALL_USD),
        "{run}"
    );
    let steps = world.json(&["runs", "steps", "1", "--json"]).await;
    let steps = steps.as_array().unwrap();
    assert_eq!(steps.len(), 2);
    assert_eq!(steps[0]["model"], "claude-sonnet-4-5");
    assert_eq!(steps[0]["usage"]["input"], 1200);
    assert_eq!(steps[0]["usage"]["output"], 80);
    assert!(close_to(&steps[0]["cost_usd"], SONNET_CALL_USD));
    assert_eq!(steps[0]["tool_calls"][0]["name"], "Write");
    let input = steps[0]["tool_calls"][0]["input"].as_str().unwrap();
    assert!(
        input.contains("notes.txt") && input.contains("[redacted]"),
        "{input}"
    );
    assert_eq!(steps[1]["text"], "Done.");
    let table = ok_text(&world.handoff(&["runs", "steps", "1"]).await);
    assert!(
        table.contains("claude-sonnet-4-5") && table.contains("Write("),
        "{table}"
    );
    assert!(!table.contains(KEY) && !table.contains("handoff-placeholder-"));
    let shown = ok_text(&world.handoff(&["runs", "show", "1"]).await);
    assert!(
        shown.contains("spend:    $0.0096 · 2.4k tokens in, 160 out (metered)"),
        "{shown}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_without_a_price_shows_its_tokens_and_price_unknown_never_zero() {
    let world = World::start(Vec::new()).await;
    let feedback = world
        .cli()
        .add_feedback(
            "Count\n@@calls 1 our-own-model\n@@run1:write a.txt done\n@@run2:write b.txt again\n@@run3:write c.txt thrice",
        )
        .await;

    ok_text(&world.handoff(&["run", &feedback]).await);

    let run = world.json(&["runs", "show", "1", "--json"]).await;
    assert!(run["run"]["llm_cost_usd"].is_null(), "{run}");
    assert_eq!(run["run"]["unpriced_tokens"], 1280, "{run}");
    let shown = ok_text(&world.handoff(&["runs", "show", "1"]).await);
    assert!(
        shown.contains("price unknown · 1.2k tokens in, 80 out"),
        "{shown}"
    );
    // Priced by the owner, the next run has a cost.
    ok_text(
        &world
            .handoff(&["config", "set", "spend.prices", "our-own-model 1 2"])
            .await,
    );
    let refused = world
        .handoff(&["config", "set", "spend.prices", "our-own-model cheap"])
        .await;
    assert!(!refused.status.success());
    assert!(
        text(&refused).contains("our-own-model cheap"),
        "{}",
        text(&refused)
    );
    ok_text(&world.handoff(&["iterate", &feedback, "-m", "again"]).await);
    let run = world.json(&["runs", "show", "2", "--json"]).await;
    assert!(
        close_to(&run["run"]["llm_cost_usd"], 1200.0 / 1e6 + 80.0 * 2.0 / 1e6),
        "{run}"
    );
    // Prices kept in a file beside the database count too, under the setting's.
    ok_text(&world.handoff(&["config", "unset", "spend.prices"]).await);
    std::fs::write(
        world.dir.path().join("prices.txt"),
        "# our own models\nour-own-model 2 4\n",
    )
    .unwrap();
    ok_text(
        &world
            .handoff(&["iterate", &feedback, "-m", "once more"])
            .await,
    );
    let run = world.json(&["runs", "show", "3", "--json"]).await;
    assert!(
        close_to(
            &run["run"]["llm_cost_usd"],
            1200.0 * 2.0 / 1e6 + 80.0 * 4.0 / 1e6
        ),
        "{run}"
    );
    std::fs::write(world.dir.path().join("prices.txt"), "our-own-model dear\n").unwrap();
    let refused = world
        .handoff(&["iterate", &feedback, "-m", "refused"])
        .await;
    assert!(!refused.status.success());
    assert!(text(&refused).contains("prices.txt"), "{}", text(&refused));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_whose_budget_is_spent_stops_and_pushes_nothing() {
    let world = World::start(Vec::new()).await;
    ok_text(
        &world
            .handoff(&["config", "set", "budget.run_usd", "0.01"])
            .await,
    );
    let feedback = world
        .cli()
        .add_feedback(
            "Spend\n@@run1:write a.txt half done\n@@calls 5 claude-sonnet-4-5\n@@run2:write b.txt the rest",
        )
        .await;

    let run = world.handoff(&["run", &feedback]).await;

    assert!(!run.status.success(), "{}", text(&run));
    // Two calls cost $0.0096, under $0.01; the third is let through and takes the run
    // past it (by at most its own worst case); the fourth is refused before it leaves,
    // in Anthropic's own error shape, and the agent stops.
    assert_eq!(world.model.model_calls().len(), 3);
    let shown = world.json(&["runs", "show", "1", "--json"]).await;
    assert_eq!(shown["run"]["failure_code"], "budget_reached", "{shown}");
    assert!(close_to(
        &shown["run"]["llm_cost_usd"],
        3.0 * SONNET_CALL_USD
    ));
    assert_eq!(shown["run"]["tokens_in"], 3600);
    let logs = ok_text(&world.handoff(&["runs", "logs", "1"]).await);
    assert!(logs.contains("model call 4: 400"), "{logs}");
    assert!(
        logs.contains("this run's budget ($0.01) is spent"),
        "{logs}"
    );
    assert!(
        logs.contains("invalid_request_error") && logs.contains("budget"),
        "{logs}"
    );
    assert!(logs.contains("budget of this run: $0.01"), "{logs}");
    assert!(world.fake.pulls(REPO).is_empty(), "nothing was pushed");
    let branch = shown["run"]["head_branch"].as_str().unwrap();
    assert_eq!(world.fake.file_on_branch(REPO, branch, "a.txt"), None);
    let item = world.json(&["feedback", "show", &feedback, "--json"]).await;
    assert_eq!(item["feedback"]["status"], "FAILED", "{item}");

    assert!(logs.contains("the agent's work so far"), "{logs}");

    // With the budget raised, a retry goes on from where the stopped run left off: its
    // commit and the retry's both reach the PR.
    ok_text(
        &world
            .handoff(&["config", "set", "budget.run_usd", "1"])
            .await,
    );
    let retry = ok_text(&world.handoff(&["run", &feedback]).await);
    assert!(
        retry.contains("goes on from where run 1 stopped when its budget was spent"),
        "{retry}"
    );
    assert_eq!(world.fake.pulls(REPO).len(), 1);
    assert_eq!(
        world.fake.file_on_branch(REPO, branch, "a.txt").as_deref(),
        Some("half done\n")
    );
    assert_eq!(
        world.fake.file_on_branch(REPO, branch, "b.txt").as_deref(),
        Some("the rest\n")
    );
    let retried = world.json(&["runs", "show", "2", "--json"]).await;
    assert_eq!(retried["run"]["status"], "succeeded", "{retried}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_spent_month_refuses_the_next_run_before_any_sandbox_and_says_where_to_change_it() {
    let world = World::start(Vec::new()).await;
    ok_text(
        &world
            .handoff(&["repo", "set", REPO, "--monthly-budget", "0.009"])
            .await,
    );
    let first = world
        .cli()
        .add_feedback("First\n@@calls 2 claude-sonnet-4-5\n@@write a.txt one")
        .await;
    ok_text(&world.handoff(&["run", &first]).await);
    // $0.0096 of $0.009: the month told the owner once, in the run's notes.
    let run = world.json(&["runs", "show", "1", "--json"]).await;
    let notes = run["run"]["notes"].to_string();
    assert!(
        notes.contains("has spent $0.0096 of its $0.0090 monthly budget (107%)"),
        "{run}"
    );
    let second = world
        .cli()
        .add_feedback("Second\n@@calls 1 claude-sonnet-4-5\n@@write b.txt two")
        .await;
    let calls_before = world.model.model_calls().len();

    let refused = world.handoff(&["run", &second]).await;

    assert_eq!(refused.status.code(), Some(1));
    let said = text(&refused);
    assert!(
        said.contains("has spent $0.0096 of its $0.0090 budget this month"),
        "{said}"
    );
    assert!(said.contains("--monthly-budget"), "{said}");
    assert_eq!(world.model.model_calls().len(), calls_before);
    let runs = world.json(&["runs", "list", "--json"]).await;
    assert_eq!(runs.as_array().unwrap().len(), 1, "no run was recorded");

    let month = world.json(&["spend", "--repo", REPO, "--json"]).await;
    assert!(
        close_to(&month["cost_usd"], 2.0 * SONNET_CALL_USD),
        "{month}"
    );
    assert!(close_to(&month["budget_usd"], 0.009));
    assert_eq!(month["top_items"][0]["feedback_id"].to_string(), first);
    assert_eq!(month["by_model"][0]["name"], "claude-sonnet-4-5");
    let today = chrono::Utc::now().format("%Y-%m-%d").to_string();
    let days = month["days"].as_array().unwrap();
    assert!(days.len() >= 28);
    let spent_today = days
        .iter()
        .find(|day| day["day"] == today.as_str())
        .unwrap();
    assert_eq!(spent_today["runs"], 1);

    // Raised, the month admits runs again; the 80% notice is not given twice.
    ok_text(
        &world
            .handoff(&["repo", "set", REPO, "--monthly-budget", "1"])
            .await,
    );
    ok_text(&world.handoff(&["run", &second]).await);
    let run = world.json(&["runs", "show", "2", "--json"]).await;
    assert!(
        !run["run"]["notes"].to_string().contains("monthly budget"),
        "{run}"
    );
    let shown = ok_text(&world.handoff(&["spend"]).await);
    assert!(
        shown.contains("all repositories") && shown.contains("top items"),
        "{shown}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cancelled_run_keeps_what_it_spent() {
    let world = World::start(Vec::new()).await;
    let feedback = world
        .cli()
        .add_feedback("Spend, then wait\n@@calls 2 claude-sonnet-4-5\n@@sleep 600")
        .await;
    let path = scripted_agent_as_claude(world.bin.path());
    let running = world
        .cli()
        .command(&["run", &feedback, "--quiet"])
        .env("PATH", &path)
        .spawn()
        .unwrap();
    // The agent has made its two calls, and waits.
    world.model.wait_for_model_calls(2).await;

    ok_text(&world.handoff(&["runs", "cancel", "1"]).await);
    let ended = running.wait_with_output().await.unwrap();

    assert!(text(&ended).contains("was cancelled"), "{}", text(&ended));
    let shown = world.json(&["runs", "show", "1", "--json"]).await;
    assert_eq!(shown["run"]["status"], "cancelled", "{shown}");
    assert_eq!(shown["run"]["spend_source"], "metered", "{shown}");
    assert!(
        close_to(&shown["run"]["llm_cost_usd"], 2.0 * SONNET_CALL_USD),
        "{shown}"
    );
    let steps = world.json(&["runs", "steps", "1", "--json"]).await;
    assert_eq!(steps.as_array().unwrap().len(), 2, "{steps}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_claude_plans_token_is_for_claude_code_only() {
    const PLAN_TOKEN: &str = "sk-ant-oat01-cli-spend-test-plan-token-0123456789";
    let world = World::start(vec![ModelTurn::Text("Done.".to_owned())]).await;
    let cli = world.cli();
    // A plan token is not taken as an API key: only Claude Code may carry it.
    let refused = cli
        .run_with_input(&["secrets", "set", "anthropic"], PLAN_TOKEN)
        .await;
    assert!(!refused.status.success());
    assert!(
        text(&refused).contains("this is a Claude plan token, not an API key"),
        "{}",
        text(&refused)
    );
    let kept = ok_text(
        &cli.run_with_input(&["secrets", "set", "claude-plan"], PLAN_TOKEN)
            .await,
    );
    assert!(
        kept.contains("claude-plan is kept in the OS keyring, for 127.0.0.1:"),
        "{kept}"
    );
    let listed = ok_text(&cli.run(&["secrets", "list"]).await);
    assert!(listed.contains("claude-plan stored"), "{listed}");
    ok_text(&cli.run(&["secrets", "delete", "anthropic"]).await);
    ok_text(
        &cli.run(&[
            "repo",
            "set",
            REPO,
            "--agent",
            "opencode",
            "--confirm-no-isolation",
        ])
        .await,
    );

    let feedback = cli.add_feedback("Greet the readers").await;

    let doctor = text(&cli.run(&["doctor"]).await);
    let refused = world.handoff(&["run", &feedback]).await;

    assert!(
        doctor.contains(&format!(
            "FAIL  {REPO}'s agent (opencode): no anthropic API key is stored (the Claude \
             plan's token is kept, but the plan's terms let only the claude agent use it)"
        )),
        "{doctor}"
    );
    assert!(!refused.status.success());
    assert!(
        text(&refused).contains("only the claude agent use it"),
        "{}",
        text(&refused)
    );
    assert!(
        world.model.received().is_empty(),
        "nothing reached the model"
    );
    // With Claude Code, the token is what pays.
    // A local repository's agent changes only with the owner's confirmation.
    ok_text(
        &cli.run(&[
            "repo",
            "set",
            REPO,
            "--agent",
            "claude",
            "--confirm-no-isolation",
        ])
        .await,
    );
    let doctor = text(&cli.run(&["doctor"]).await);
    assert!(
        doctor.contains(&format!(
            "ok    {REPO}'s agent (claude): pays with the Claude plan's token"
        )),
        "{doctor}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_timed_out_run_keeps_what_it_spent() {
    let world = World::start(Vec::new()).await;
    // A time limit the run outlasts: it makes its two calls, then waits.
    let store = handoff::Store::open_in(world.dir.path()).await.unwrap();
    let repo = store
        .repositories()
        .repo_by_name(&REPO.parse().unwrap())
        .await
        .unwrap();
    store
        .repositories()
        .change_repo_settings(
            repo.id,
            &handoff::store::RepoSettingsChange {
                run_timeout_seconds: Some(8),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    store.close().await;
    let feedback = world
        .cli()
        .add_feedback("Spend, then wait\n@@calls 2 claude-sonnet-4-5\n@@sleep 600")
        .await;

    let ended = world.handoff(&["run", &feedback, "--quiet"]).await;

    assert!(!ended.status.success());
    let shown = world.json(&["runs", "show", "1", "--json"]).await;
    assert_eq!(shown["run"]["failure_code"], "timed_out", "{shown}");
    assert_eq!(shown["run"]["spend_source"], "metered", "{shown}");
    assert!(
        close_to(&shown["run"]["llm_cost_usd"], 2.0 * SONNET_CALL_USD),
        "{shown}"
    );
    let steps = world.json(&["runs", "steps", "1", "--json"]).await;
    assert_eq!(steps.as_array().unwrap().len(), 2, "{steps}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_runs_spend_is_what_its_ledger_holds() {
    let world = World::start(Vec::new()).await;
    let feedback = world
        .cli()
        .add_feedback("Spend, then wait\n@@calls 2 claude-sonnet-4-5\n@@sleep 600")
        .await;
    let path = scripted_agent_as_claude(world.bin.path());
    let mut running = world
        .cli()
        .command(&["run", &feedback, "--quiet"])
        .env("PATH", &path)
        .spawn()
        .unwrap();
    world.model.wait_for_model_calls(2).await;

    // SIGKILL: the process that drove the run says nothing more; what the run spent is
    // in the ledger, written as each call was reserved and settled.
    std::process::Command::new("kill")
        .args(["-KILL", &running.id().unwrap().to_string()])
        .status()
        .unwrap();
    running.wait().await.unwrap();
    // What the ledger holds of the run: both calls, each at what it was charged, or at
    // all it reserved where the kill came before its answer was settled.
    let store = handoff::Store::open_in(world.dir.path()).await.unwrap();
    let ledger = store
        .spend()
        .run_ledger(handoff::domain::RunId(1))
        .await
        .unwrap();
    store.close().await;
    assert_eq!(ledger.calls, 2, "{ledger:?}");
    assert!(ledger.charged_usd > 0.0, "{ledger:?}");

    // The next Handoff ends the run its driver left behind.
    ok_text(&world.handoff(&["queue", "run"]).await);

    let shown = world.json(&["runs", "show", "1", "--json"]).await;
    assert_eq!(shown["run"]["status"], "failed", "{shown}");
    assert_eq!(shown["run"]["spend_source"], "metered", "{shown}");
    let cost = shown["run"]["llm_cost_usd"].as_f64().unwrap_or_default();
    assert!(
        close_to(&shown["run"]["llm_cost_usd"], ledger.charged_usd),
        "{shown}"
    );
    // The month's figures count it as the run's row does.
    let month = world.json(&["spend", "--repo", REPO, "--json"]).await;
    assert!(close_to(&month["cost_usd"], cost), "{month}");
}
