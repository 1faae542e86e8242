//! The agent's API key with the Docker backend, as an owner runs it: the key is in the
//! keyring, the agent in a container (an image built from Handoff's recipe for claude,
//! with a stand-in as the agent) reaches its provider through the key forwarder in the
//! repository's egress gate, and the key itself never enters the container, on the
//! allow-list network and on the open one. The provider is a stand-in on this machine;
//! nothing leaves it.

use handoff_test_support as support;

use support::cli_process::{ok_text, Cli};
use support::docker_images::{
    unique_image, write_stand_in, EngineImagesHold, ImageRemovedOnDrop, LOCAL_BASE,
};
use support::fake_github::FakeGithub;
use support::fake_provider::{self, FakeProvider};
use support::model_server::ModelServer;
use support::pipeline_world::{REPO, SCRIPTED_AGENT};
use support::secret_service::SecretService;

const KEY: &str = "sk-ant-docker-test-0123456789abcdef";

/// The scripted repository on Docker, run in an image built from Handoff's recipe for
/// claude with a stand-in as the agent; the image goes when the result is dropped.
async fn with_claude_image_on_docker(
    fake: &FakeGithub,
    cli: &Cli<'_>,
    name: &str,
) -> ImageRemovedOnDrop {
    fake.create_repo_with_files(REPO, "main", &[(".handoff/agent.sh", SCRIPTED_AGENT)]);
    cli.connect_scripted_repo(fake, "docker", &[]).await;
    let image = unique_image(name);
    let removed = ImageRemovedOnDrop(image.clone());
    ok_text(
        &cli.run(&["config", "set", "docker.default_image", &image])
            .await,
    );
    let scratch = tempfile::tempdir().unwrap();
    let stand_in = write_stand_in(scratch.path());
    let _building = EngineImagesHold::building();
    ok_text(
        &cli.run(&[
            "agent-image",
            "build",
            "--preset",
            "claude",
            "--base",
            LOCAL_BASE,
            "--agent-from",
            stand_in.to_str().unwrap(),
        ])
        .await,
    );
    removed
}

#[tokio::test(flavor = "multi_thread")]
async fn the_agent_in_docker_reaches_its_provider_while_the_key_stays_outside() {
    let fake = FakeGithub::start().await;
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    let _image = with_claude_image_on_docker(&fake, &cli, "agent-key").await;
    let provider = FakeProvider::start().await;
    cli.use_anthropic_stand_in(KEY, &provider.api_base()).await;
    ok_text(&cli.run(&["repo", "set", REPO, "--agent", "claude"]).await);

    for (round, mode) in ["allowlist", "open"].into_iter().enumerate() {
        ok_text(&cli.run(&["repo", "set", REPO, "--network", mode]).await);
        let feedback = cli
            .add_feedback(&format!(
                "Key on {mode}\n@@scan\n@@provider\n@@write key-{mode}.txt done"
            ))
            .await;

        let shown = ok_text(&cli.run(&["run", &feedback]).await);

        assert!(shown.contains("== scan done"), "{mode}: {shown}");
        assert!(
            shown.contains("ANTHROPIC_API_KEY=handoff-placeholder-"),
            "{mode}: the key's variable holds a placeholder: {shown}"
        );
        assert!(
            !shown.contains("[redacted]") && !shown.contains(KEY),
            "{mode}: the key was in the container's environment, files or command lines: {shown}"
        );
        assert!(
            shown.contains("ANTHROPIC_BASE_URL=http://handoff-gate:3129"),
            "{mode}: the base address names the key forwarder in the repository's egress gate: {shown}"
        );
        assert!(
            shown.contains(" 200 OK") && shown.contains(fake_provider::ANSWER),
            "{mode}: the agent reached its provider: {shown}"
        );
        let received = provider.received();
        assert_eq!(received.len(), round + 1, "{mode}: {received:?}");
        assert_eq!(received[round].path, "/v1/messages");
        assert_eq!(
            received[round].x_api_key.as_deref(),
            Some(KEY),
            "{mode}: the provider got the key"
        );
        assert!(shown.contains("PR #"), "{mode}: the run went on: {shown}");
    }
    cli.remove_egress_gates().await;
}

/// A run in Docker is metered by the key forwarder in its repository's egress gate: the
/// gate reserves each call through the link it holds the run's key on, refuses the
/// calls once the budget is spent, and reports what the run spent call by call as each
/// answer ends.
#[tokio::test(flavor = "multi_thread")]
async fn the_egress_gate_meters_a_run_in_docker_and_stops_it_at_its_budget() {
    let fake = FakeGithub::start().await;
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    let _image = with_claude_image_on_docker(&fake, &cli, "agent-budget").await;
    let model = ModelServer::start(Vec::new()).await;
    cli.use_anthropic_stand_in(KEY, &model.api_base()).await;
    ok_text(&cli.run(&["repo", "set", REPO, "--agent", "claude"]).await);
    ok_text(&cli.run(&["config", "set", "budget.run_usd", "0.01"]).await);
    let feedback = cli
        .add_feedback("Spend in Docker\n@@write a.txt half done\n@@calls 5 claude-sonnet-4-5")
        .await;

    let run = cli.run(&["run", &feedback]).await;

    assert!(!run.status.success());
    // $0.0048 a call: the third takes the run past $0.01, and the gate refuses the
    // fourth before it leaves.
    assert_eq!(model.model_calls().len(), 3);
    assert!(model
        .model_calls()
        .iter()
        .all(|call| call.x_api_key.as_deref() == Some(KEY)));
    let shown: serde_json::Value =
        serde_json::from_str(&ok_text(&cli.run(&["runs", "show", "1", "--json"]).await)).unwrap();
    assert_eq!(shown["run"]["failure_code"], "budget_reached", "{shown}");
    assert_eq!(shown["run"]["spend_source"], "metered");
    assert_eq!(shown["run"]["tokens_in"], 3600);
    assert_eq!(shown["run"]["tokens_out"], 240);
    let steps: serde_json::Value =
        serde_json::from_str(&ok_text(&cli.run(&["runs", "steps", "1", "--json"]).await)).unwrap();
    assert_eq!(steps.as_array().unwrap().len(), 3, "{steps}");
    let logs = ok_text(&cli.run(&["runs", "logs", "1"]).await);
    assert!(logs.contains("model call 4: 400"), "{logs}");
    assert!(fake.pulls(REPO).is_empty());
    cli.remove_egress_gates().await;
}

/// A gate that stops while a run is under way leaves the run what it was charged up to
/// then; the run, whose calls can no longer be metered, is stopped and says why.
#[tokio::test(flavor = "multi_thread")]
async fn a_run_whose_gate_stops_is_stopped_saying_so_and_keeps_its_spend() {
    let fake = FakeGithub::start().await;
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    let _image = with_claude_image_on_docker(&fake, &cli, "agent-gate-stops").await;
    let model = ModelServer::start(Vec::new()).await;
    cli.use_anthropic_stand_in(KEY, &model.api_base()).await;
    ok_text(&cli.run(&["repo", "set", REPO, "--agent", "claude"]).await);
    let feedback = cli
        .add_feedback("Gate stops\n@@calls 1 claude-sonnet-4-5\n@@sleep 600")
        .await;
    let running = cli.command(&["run", &feedback, "--quiet"]).spawn().unwrap();
    model.wait_for_model_calls(1).await;

    cli.kill_egress_gates().await;
    let ended = running.wait_with_output().await.unwrap();

    assert!(!ended.status.success());
    let shown: serde_json::Value =
        serde_json::from_str(&ok_text(&cli.run(&["runs", "show", "1", "--json"]).await)).unwrap();
    assert_eq!(shown["run"]["failure_code"], "sandbox", "{shown}");
    let message = shown["run"]["failure_message"].as_str().unwrap();
    assert!(
        message.contains("the egress gate stopped while the run was under way"),
        "{message}"
    );
    // The call made before the gate stopped is charged: as metered, or, when its
    // answer never settled, all it reserved.
    assert!(
        shown["run"]["llm_cost_usd"]
            .as_f64()
            .is_some_and(|cost| cost > 0.0),
        "{shown}"
    );
    assert!(fake.pulls(REPO).is_empty());
    cli.remove_egress_gates().await;
}
