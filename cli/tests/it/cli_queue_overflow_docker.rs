//! The run queue's overflow to E2B, for real: with Docker's two slots taken by two
//! Docker runs, a repository that allows it sends its third run to E2B (the fake E2B),
//! where it opens its PR; each run, and the item's runs, say where it went.

use handoff_test_support as support;

use support::cli_process::{ok_text, text, Cli};
use support::fake_e2b::FakeE2b;
use support::fake_github::FakeGithub;
use support::pipeline_world::{REPO, SCRIPTED_AGENT, TEST_IMAGE};
use support::secret_service::SecretService;

const E2B_KEY: &str = "e2b_key_for_overflow_77";

fn json_of(output: &std::process::Output) -> serde_json::Value {
    serde_json::from_str(&ok_text(output)).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn with_dockers_slots_taken_the_third_run_goes_to_e2b_and_opens_its_pr() {
    let fake = FakeGithub::start().await;
    let e2b = FakeE2b::start(E2B_KEY).await;
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    fake.create_repo_with_files(REPO, "main", &[(".handoff/agent.sh", SCRIPTED_AGENT)]);
    // E2B's address first: its key is kept for the address in use.
    ok_text(
        &cli.run(&["config", "set", "e2b.api_base", &e2b.api_base()])
            .await,
    );
    ok_text(
        &cli.run(&["config", "set", "e2b.envd_url", &e2b.envd_url_template()])
            .await,
    );
    ok_text(
        &cli.run_with_input(&["secrets", "set", "e2b"], E2B_KEY)
            .await,
    );
    cli.connect_scripted_repo(&fake, "docker", &["--docker-image", TEST_IMAGE])
        .await;
    ok_text(
        &cli.run(&["repo", "set", REPO, "--overflow-to-e2b", "true"])
            .await,
    );
    ok_text(&cli.run(&["config", "set", "queue.slots", "3"]).await);
    ok_text(&cli.run(&["config", "set", "queue.slots.docker", "2"]).await);
    // The two Docker runs are still at work when the third asks for its turn.
    let items = [
        cli.add_feedback("First\n@@sleep 6\n@@write first.txt docker")
            .await,
        cli.add_feedback("Second\n@@sleep 6\n@@write second.txt docker")
            .await,
        cli.add_feedback("Third\n@@write third.txt e2b").await,
    ];

    let added = cli.run(&["queue", "add", "--all-new", REPO]).await;

    assert!(added.status.success(), "{}", text(&added));
    assert_eq!(fake.pulls(REPO).len(), 3, "each run opened its PR");
    let mut went = Vec::new();
    for item in &items {
        let shown = json_of(&cli.run(&["feedback", "show", item, "--json"]).await);
        let run = &shown["runs"][0];
        assert_eq!(run["status"], "succeeded", "{shown}");
        went.push(run["backend"].as_str().unwrap().to_owned());
        let said = text(&cli.run(&["feedback", "show", item]).await);
        assert!(
            said.contains(&format!("on {}", went.last().unwrap())),
            "the item's runs say where each went: {said}"
        );
    }
    assert_eq!(went, ["docker", "docker", "e2b"]);
    let third = json_of(&cli.run(&["feedback", "show", &items[2], "--json"]).await);
    let run = third["runs"][0]["id"].to_string();
    let shown = text(&cli.run(&["runs", "show", &run]).await);
    assert!(
        shown.contains(
            "docker's slots were full, so this run went to e2b (the repository allows it)"
        ),
        "{shown}"
    );
    let log = ok_text(&cli.run(&["runs", "logs", &run]).await);
    assert!(log.contains("so this run went to e2b"), "{log}");
    assert!(e2b.live_sandboxes().is_empty(), "E2B's sandbox was ended");
    assert_eq!(e2b.sandboxes().len(), 1, "one run went to E2B");
}
