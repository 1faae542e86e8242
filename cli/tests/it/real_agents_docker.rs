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

/// The real Claude Code runs the project's tests in the environment its dev container
/// names: a Dockerfile that starts from the agent's image and adds jq from Debian's
/// packages, which the project's test needs and the agent image lacks. The command's
/// output (jq's answer and the test's exit status) reaches the model, and the failing
/// test becomes an issue.
#[tokio::test(flavor = "multi_thread")]
async fn claude_code_runs_the_projects_tests_in_the_environment_its_dev_container_names() {
    use handoff_test_support as support;
    use support::cli_process::{ok_stdout, ok_text, Cli};
    use support::docker_images::{unique_word, EnvironmentImagesRemovedOnDrop};
    use support::fake_github::{FakeGithub, OWNER};
    use support::model_server::{ModelServer, ModelTurn};
    use support::pipeline_world::REPO;
    use support::secret_service::SecretService;

    let fake = FakeGithub::start().await;
    let keyring = SecretService::start();
    let dir = tempfile::tempdir().unwrap();
    let bin = tempfile::tempdir().unwrap();
    let cli = Cli {
        data_dir: dir.path(),
        keyring: &keyring,
    };
    let model = ModelServer::start(vec![
        ModelTurn::WriteOutput {
            file: "output.md".to_owned(),
            contents: "1. Run tests/height.sh: the button is 48px.\n".to_owned(),
        },
        ModelTurn::Text("The plan is written.".to_owned()),
    ])
    .await;
    super::real_agent_journeys::connect(&fake, &cli, RealAgent::Claude, Backend::Docker, &model)
        .await;
    // The environment's build reaches Debian's mirror: it is on the repository's list.
    ok_text(
        &cli.run(&[
            "repo",
            "set",
            REPO,
            "--allowed-hosts",
            &support::debian_mirror::debian_mirror_allowed_hosts().join(","),
        ])
        .await,
    );
    let agent_image = RealAgent::Claude.image_built_by(&cli).await;
    let installation = handoff::Store::open_in(dir.path())
        .await
        .unwrap()
        .settings()
        .installation_id()
        .await
        .unwrap();
    let _images = EnvironmentImagesRemovedOnDrop(installation);
    fake.push_commit(
        REPO,
        "main",
        "The project's environment",
        &[
            (
                ".devcontainer/devcontainer.json",
                "{ \"build\": { \"dockerfile\": \"Dockerfile\" } }",
            ),
            (
                ".devcontainer/Dockerfile",
                &format!(
                    "FROM {agent_image}\nUSER root\n# {}\nRUN apt-get update \
                     && apt-get install -y --no-install-recommends jq \
                     && rm -rf /var/lib/apt/lists/*\n",
                    unique_word()
                ),
            ),
            (
                "tests/height.sh",
                "#!/bin/sh\necho '{\"height\": 20}' | jq -e '.height == 48'\n",
            ),
        ],
    );
    fake.create_branch(REPO, "feature/signup", "main");
    fake.push_commit(
        REPO,
        "feature/signup",
        "Signup",
        &[("src/button.css", ".signup { height: 20px; }\n")],
    );
    let pr = fake
        .create_pull(REPO, OWNER, "feature/signup", "Signup button")
        .to_string();
    let path = RealAgent::Claude.path_with_agent(bin.path());
    let home = tempfile::tempdir().unwrap();
    let home = home.path().to_str().unwrap().to_owned();
    let stage = |name: &'static str| {
        let (cli, path, home, pr) = (&cli, &path, &home, &pr);
        async move {
            ok_text(
                &cli.run_with(
                    &["qa", name, REPO, pr],
                    None,
                    &[("PATH", path), ("HOME", home)],
                )
                .await,
            )
        }
    };
    let planned = stage("plan").await;
    assert!(planned.contains("test plan posted"), "{planned}");

    model.play_next(vec![
        ModelTurn::RunCommand("sh tests/height.sh; echo \"exit $?\"".to_owned()),
        ModelTurn::WriteOutput {
            file: "results.json".to_owned(),
            contents: r#"{"scenarios": [{"name": "Signup button height", "passed": false, "evidence": "tests/height.sh: jq says false"}]}"#.to_owned(),
        },
        ModelTurn::Text("One test failed.".to_owned()),
    ]);
    let calls_before_test = model.model_calls().len();
    let tested = stage("test").await;
    assert!(
        tested.contains("1 scenarios: 0 passed, 1 failed; issues #"),
        "{tested}"
    );
    let command_output = model.model_calls()[calls_before_test + 1].body_text();
    assert!(
        command_output.contains("false") && command_output.contains("exit 1"),
        "the project's test ran with jq and its answer reached the model: {command_output}"
    );
    assert!(!command_output.contains("not found"), "{command_output}");
    let shown = ok_stdout(&cli.run(&["env", "show", REPO]).await);
    assert!(shown.contains("(ready)"), "{shown}");
    let log = ok_stdout(&cli.run(&["env", "logs", REPO]).await);
    assert!(
        log.contains("carries the claude agent already"),
        "a base made from the agent image is not given the agent again: {log}"
    );
}
