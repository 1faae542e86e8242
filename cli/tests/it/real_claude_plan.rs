//! The real Claude Code paying with the owner's Claude plan instead of an API key: the
//! token `claude setup-token` prints, kept in the keyring, forwarded as `Authorization:
//! Bearer` to a stand-in Anthropic that takes only that token (it refuses the API key
//! the owner also keeps), with the agent holding a placeholder; the run counted against
//! the plan's monthly credit. Here on this machine's loopback; through the egress gate
//! in [`super::real_agents_docker`].

use handoff_test_support as support;

use support::cli_process::{ok_text, text, Cli};
use support::fake_github::FakeGithub;
use support::model_server::{ModelServer, ModelTurn};
use support::pipeline_world::REPO;
use support::real_agents::RealAgent;
use support::secret_service::SecretService;

use super::real_agent_journeys::{connect, run_shown, Backend};

const PLAN_TOKEN: &str = "sk-ant-oat01-real-agent-plan-test-0123456789abcdef";

#[tokio::test(flavor = "multi_thread")]
async fn claude_code_pays_with_the_owners_plan_and_draws_on_its_credit() {
    a_run_paid_with_the_plan(Backend::Local).await;
}

/// A run paid with the owner's Claude plan on `backend` (the Docker one in
/// [`super::real_agents_docker`]).
pub async fn a_run_paid_with_the_plan(backend: Backend) {
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
        ModelTurn::RunCommand("env | grep -E '^(ANTHROPIC|CLAUDE_CODE_OAUTH)' | sort".to_owned()),
        ModelTurn::WriteFile {
            path: "docs/greeting.md".to_owned(),
            contents: "Hello from the plan\n".to_owned(),
        },
        ModelTurn::Text("I added docs/greeting.md.".to_owned()),
    ])
    .await;
    // The account pays with its plan: the API key the owner also keeps is refused.
    model.take_plan_token_only(PLAN_TOKEN);
    connect(&fake, &cli, RealAgent::Claude, backend, &model).await;
    let refused = cli
        .run_with_input(
            &["secrets", "set", "claude-plan"],
            "sk-ant-api03-not-a-plan-token",
        )
        .await;
    assert!(!refused.status.success());
    assert!(
        text(&refused).contains("not a plan token"),
        "{}",
        text(&refused)
    );
    ok_text(
        &cli.run_with_input(&["secrets", "set", "claude-plan"], PLAN_TOKEN)
            .await,
    );
    ok_text(
        &cli.run(&["config", "set", "spend.claude_plan", "pro"])
            .await,
    );
    let shown = text(&cli.run(&["doctor"]).await);
    assert!(
        shown.contains("pays with the Claude plan's token"),
        "{shown}"
    );
    let feedback = cli
        .add_feedback("Greet the readers\nAdd a greeting page.")
        .await;
    let path = RealAgent::Claude.path_with_agent(bin.path());

    let run = cli
        .run_with(
            &["run", &feedback],
            None,
            &[("PATH", &path), ("HOME", home.path().to_str().unwrap())],
        )
        .await;

    let shown = ok_text(&run);
    assert!(shown.contains("PR #1 opened"), "{shown}");
    let branch = fake.pulls(REPO)[0].1.clone();
    assert_eq!(
        fake.file_on_branch(REPO, &branch, "docs/greeting.md")
            .as_deref(),
        Some("Hello from the plan\n")
    );
    let received = model.received();
    assert!(!received.is_empty());
    for request in &received {
        assert!(!request.refused_credential, "refused: {request:?}");
        assert_eq!(
            request.authorization.as_deref(),
            Some(format!("Bearer {PLAN_TOKEN}").as_str()),
            "{}",
            request.path
        );
        assert_eq!(request.x_api_key, None, "no API key beside the token");
        assert!(
            request
                .user_agent
                .as_deref()
                .is_some_and(|agent| agent.starts_with("claude-cli/")),
            "{request:?}"
        );
    }
    let calls = model.model_calls();
    assert_eq!(calls.len(), 3, "one model call per turn: {calls:?}");
    // Inside the run, Claude Code held a placeholder as its plan token and no API key.
    // It keeps its own token out of its commands' environment, so the command shows the
    // base address alone; that every call reached the stand-in with the token shows the
    // placeholder was there, since the forwarder adds the token only to requests that
    // carry the run's placeholder.
    let environment_seen = command_output(&calls[1].body);
    assert!(
        environment_seen.contains("ANTHROPIC_BASE_URL=http://"),
        "{environment_seen}"
    );
    assert!(
        !environment_seen.contains("ANTHROPIC_API_KEY"),
        "{environment_seen}"
    );
    assert!(
        !environment_seen.contains(PLAN_TOKEN),
        "the token was in the sandbox"
    );

    let run = run_shown(&cli, "1").await;
    assert_eq!(run["paid_with"], "claude-plan", "{run}");
    assert_eq!(run["spend_source"], "metered", "{run}");
    let cost = run["llm_cost_usd"].as_f64().unwrap_or_default();
    assert!(cost > 0.0, "{run}");
    let spend = ok_text(&cli.run(&["spend"]).await);
    assert!(
        spend.contains(&format!(
            "plan:     Claude Pro drew {} of its $20.00 monthly credit",
            handoff::domain::budgets::dollars(cost)
        )),
        "{spend}"
    );
}

/// The text of the tool results a Messages request carries back to the model.
fn command_output(body: &serde_json::Value) -> String {
    let mut output = String::new();
    for message in body["messages"].as_array().into_iter().flatten() {
        for block in message["content"].as_array().into_iter().flatten() {
            if block["type"] != "tool_result" {
                continue;
            }
            match &block["content"] {
                serde_json::Value::String(text) => output.push_str(text),
                serde_json::Value::Array(parts) => {
                    for part in parts {
                        output.push_str(part["text"].as_str().unwrap_or_default());
                    }
                }
                _ => {}
            }
            output.push('\n');
        }
    }
    output
}
