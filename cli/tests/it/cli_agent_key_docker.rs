//! The agent's API key with the Docker backend, as an owner runs it: the key is in the
//! keyring, the agent in a container (an image built from Handoff's recipe for claude,
//! with a stand-in as the agent) reaches its provider through the key forwarder in the
//! repository's egress gate, and the key itself never enters the container, on the
//! allow-list network and on the open one. The provider is a stand-in on this machine;
//! nothing leaves it.

use handoff_test_support as support;

use support::cli_process::{ok_text, Cli};
use support::docker_images::{unique_image, write_stand_in, ImageRemovedOnDrop, LOCAL_BASE};
use support::fake_github::FakeGithub;
use support::fake_provider::{self, FakeProvider};
use support::pipeline_world::{REPO, SCRIPTED_AGENT};
use support::secret_service::SecretService;

const KEY: &str = "sk-ant-docker-test-0123456789abcdef";

#[tokio::test(flavor = "multi_thread")]
async fn the_agent_in_docker_reaches_its_provider_while_the_key_stays_outside() {
    let fake = FakeGithub::start().await;
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    fake.create_repo_with_files(REPO, "main", &[(".handoff/agent.sh", SCRIPTED_AGENT)]);
    cli.connect_scripted_repo(&fake, "docker", &[]).await;
    let image = unique_image("agent-key");
    let _removed = ImageRemovedOnDrop(image.clone());
    ok_text(
        &cli.run(&["config", "set", "docker.default_image", &image])
            .await,
    );
    let scratch = tempfile::tempdir().unwrap();
    let stand_in = write_stand_in(scratch.path());
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
