//! Environments on the `docker` backend, built for real on this machine's engine: a
//! repository's dev container (a Dockerfile that installs a tool from Debian's packages,
//! a setup command, a variable) becomes the image its runs use, with Handoff's agent
//! layer on top; it is built once per key, and again only when a file it is keyed on
//! changes on the base branch; its steps reach only the repository's allow-list; a
//! recipe that cannot be built fails the run before any agent starts, saying what and
//! where, with the build's log kept; a dev container in a Compose service gives the
//! agent that service's image, and the file's other services start beside it.

use handoff_test_support as support;

use handoff::domain::{RunFailureCode, RunStatus, SandboxBackend, Stage};
use handoff::pipeline::environment_build::ReadyEnvironment;
use handoff::pipeline::qa_run::QaResult;
use handoff::pipeline::PipelineError;
use handoff::store::{EnvironmentBuildState, RepoSettingsChange};
use support::debian_mirror::debian_mirror_allowed_hosts;
use support::docker_images::{unique_word, EnvironmentImagesRemovedOnDrop};
use support::pipeline_world::{PipelineWorld, REPO, TEST_IMAGE};

/// A dev container built from its Dockerfile, with a variable and a setup command;
/// `word` gives it a key no earlier test run had.
fn dev_container(word: &str) -> String {
    format!(
        r#"// The project's dev container ({word}).
{{
  "build": {{ "dockerfile": "Dockerfile" }},
  "containerEnv": {{ "GREETING": "hello" }},
  /* Run once, at build time, in the working copy. */
  "postCreateCommand": "jq --version > .tool-version",
}}
"#
    )
}

/// The tool the project's tests need, which the agent image lacks, from Debian's
/// mirror (on the repository's allow-list); and what a step that reaches for a host
/// off the list (PyPI, which this machine reaches) was told.
const DOCKERFILE: &str = "FROM handoff-test-agent:bookworm\n\
     RUN apt-get update && apt-get install -y --no-install-recommends jq \
     && rm -rf /var/lib/apt/lists/*\n\
     RUN (git ls-remote https://pypi.org/simple/ 2>&1 || true) > /opt/off-the-list.txt\n";

/// One of the project's tests: it reads JSON with jq, and fails (the button is 20px).
const HEIGHT_TEST: &str = "#!/bin/sh\necho '{\"height\": 20}' | jq -e '.height == 48'\n";

async fn world_with(files: &[(&str, &str)]) -> (PipelineWorld, EnvironmentImagesRemovedOnDrop) {
    let world = PipelineWorld::new(SandboxBackend::Docker).await;
    // The build's network is the repository's allow-list: Debian's mirror is on it.
    world
        .store
        .repositories()
        .change_repo_settings(
            world.repo.id,
            &RepoSettingsChange {
                allowed_hosts: Some(
                    debian_mirror_allowed_hosts()
                        .iter()
                        .map(|entry| entry.parse().unwrap())
                        .collect(),
                ),
                ..RepoSettingsChange::default()
            },
        )
        .await
        .unwrap();
    let installation = world.store.settings().installation_id().await.unwrap();
    world
        .fake
        .push_commit(REPO, "main", "The project's environment", files);
    (world, EnvironmentImagesRemovedOnDrop(installation))
}

/// Builds the world's environment unless it is ready; each line of a build goes to
/// `lines`.
async fn build(world: &PipelineWorld, lines: &mut Vec<String>) -> ReadyEnvironment {
    let mut progress = |line: &str| lines.push(line.to_owned());
    world
        .pipeline
        .environments()
        .build_environment(&REPO.parse().unwrap(), false, &mut progress)
        .await
        .unwrap()
        .expect("an environment")
}

fn detail(report: &handoff::pipeline::qa_run::QaReport) -> String {
    match &report.stages[0].result {
        QaResult::Succeeded { detail } => detail.clone(),
        other => panic!("the stage did not succeed: {other:?}"),
    }
}

#[tokio::test]
async fn the_test_stage_runs_the_projects_tests_with_the_tool_its_dockerfile_installs() {
    let word = unique_word();
    let (world, _images) = world_with(&[
        (".devcontainer/devcontainer.json", &dev_container(&word)),
        (".devcontainer/Dockerfile", DOCKERFILE),
        ("tests/height.sh", HEIGHT_TEST),
        (".gitignore", ".tool-version\n"),
    ])
    .await;
    let number = world.qa_pull_request().await;
    world
        .set_instructions(
            "@@plan:output 1. Check the button's height.\n\
             @@test:check Tool present|jq --version\n\
             @@test:check Setup ran|cat /opt/handoff/prepared/.tool-version\n\
             @@test:check Setup carried in|grep -q jq .tool-version && test -z \"$(git status --porcelain)\"\n\
             @@test:check Variable set|test \"$GREETING\" = hello\n\
             @@test:check Build network|grep -q 403 /opt/off-the-list.txt\n\
             @@test:check Button height|sh tests/height.sh\n",
        )
        .await;

    // The first run builds the environment, and says so in its log.
    let plan = world.qa(number, Stage::Plan, false).await;
    detail(&plan);
    let plan_log = world.log_of(plan.run.id).await;
    assert!(plan_log.contains("built for this run"), "{plan_log}");
    assert!(
        plan_log.contains("environment: Step"),
        "the build's steps are in the run's log: {plan_log}"
    );
    let build_log = std::fs::read_to_string(handoff::pipeline::environment_build::build_log_path(
        world.data.path(),
        world.latest_environment_build().await.id,
    ))
    .unwrap();
    assert!(
        build_log.contains("the build's network: the repository's allow-list (deb.debian.org"),
        "{build_log}"
    );

    // The test stage runs the project's tests for real in it: the tool is there, the
    // setup command ran, the variable is set, and the failing test becomes an issue.
    let test = world.qa(number, Stage::Test, false).await;
    let said = detail(&test);
    assert!(
        said.starts_with("6 scenarios: 5 passed, 1 failed; issues #"),
        "{said}\n{}",
        world.log_of(test.run.id).await
    );
    let issues = world.fake.issues(REPO);
    assert_eq!(issues.len(), 1, "{issues:?}");
    assert!(issues[0].1.contains("Button height"), "{issues:?}");

    // The repository's egress gate, which outlives runs, stays on the agent image.
    let gates = std::process::Command::new("docker")
        .args([
            "ps",
            "--filter",
            &format!("label=dev.handoff.installation={}", world.installation),
            "--filter",
            "label=dev.handoff.gate",
            "--format",
            "{{.Image}}",
        ])
        .output()
        .unwrap();
    let gate_images = String::from_utf8_lossy(&gates.stdout).trim().to_owned();
    assert_eq!(
        gate_images, TEST_IMAGE,
        "the gate runs from the agent image"
    );

    // The second run built nothing: one build for the key.
    let test_log = world.log_of(test.run.id).await;
    assert!(test_log.contains("ready, nothing built"), "{test_log}");
    let latest = world.latest_environment_build().await;
    assert_eq!(latest.state, EnvironmentBuildState::Ready);
    assert_eq!(latest.run_id, Some(plan.run.id));
    assert_eq!(
        world
            .store
            .environment_builds()
            .environment_builds_for_key(world.repo.id, &latest.key)
            .await
            .unwrap(),
        1
    );
}

#[tokio::test]
async fn a_changed_lockfile_rebuilds_the_environment_once_and_a_source_change_does_not() {
    let word = unique_word();
    let recipe = format!("{{ \"image\": \"handoff-test-agent:bookworm\", \"remoteEnv\": {{ \"WORD\": \"{word}\" }} }}");
    let (world, _images) = world_with(&[
        (".devcontainer.json", &recipe),
        ("Cargo.lock", "# version 1\n"),
    ])
    .await;
    let mut lines = Vec::new();
    let first = build(&world, &mut lines).await;
    assert!(first.built_now);
    assert!(first.image.starts_with("handoff-env-"), "{}", first.image);
    assert!(
        !build(&world, &mut lines).await.built_now,
        "nothing to build the second time"
    );

    world.fake.push_commit(
        REPO,
        "main",
        "A source change",
        &[("src/lib.rs", "fn main() {}\n")],
    );
    assert!(
        !build(&world, &mut lines).await.built_now,
        "a source file is not keyed on"
    );

    world.fake.push_commit(
        REPO,
        "main",
        "New dependencies",
        &[("Cargo.lock", "# version 2\n")],
    );
    let second = build(&world, &mut lines).await;
    assert!(second.built_now, "a changed lockfile builds again");
    assert_ne!(second.image, first.image);
    assert!(!build(&world, &mut lines).await.built_now, "once");
    let engine = bollard::Docker::connect_with_defaults().unwrap();
    assert!(
        engine.inspect_image(&first.image).await.is_err(),
        "the older image is pruned"
    );
    assert!(engine.inspect_image(&second.image).await.is_ok());
    assert!(
        lines
            .iter()
            .any(|line| line.contains("removed the older environment image")),
        "{lines:?}"
    );
}

#[tokio::test]
async fn a_recipe_that_cannot_be_built_fails_the_run_before_any_agent_starts() {
    // A Dockerfile named that is not there: refused before anything is built.
    let (world, _images) = world_with(&[(
        ".devcontainer/devcontainer.json",
        "{ \"build\": { \"dockerfile\": \"Missing.Dockerfile\" } }",
    )])
    .await;
    let feedback = world.feedback("Anything", "@@write a.txt a").await;
    let (run_id, driving) = world.start_in_background(&feedback).await;
    let refused = driving
        .await
        .unwrap()
        .expect_err("the run cannot start its agent");
    assert!(
        matches!(refused, PipelineError::EnvironmentRecipe { .. }),
        "{refused}"
    );
    let run = world.store.runs().run(run_id).await.unwrap();
    assert_eq!(run.status, RunStatus::Failed);
    assert_eq!(run.failure_code, Some(RunFailureCode::Environment));
    let message = run.failure_message.unwrap_or_default();
    assert!(message.contains("Missing.Dockerfile"), "{message}");
    assert!(run.sandbox_id.is_none(), "no container was made");
    assert!(!world.log_of(run_id).await.contains("scripted agent:"));

    // A setup command that fails: the build names it and keeps its log.
    let word = unique_word();
    world.fake.push_commit(
        REPO,
        "main",
        "A setup that fails",
        &[(
            ".devcontainer/devcontainer.json",
            &format!(
                "{{ \"image\": \"handoff-test-agent:bookworm\", \
                 \"postCreateCommand\": {{ \"deps\": \"echo fetching {word}; exit 7\" }} }}"
            ),
        )],
    );
    let feedback = world.feedback("Anything else", "@@write b.txt b").await;
    let (run_id, driving) = world.start_in_background(&feedback).await;
    let failed = driving.await.unwrap().expect_err("the build fails");
    let PipelineError::EnvironmentBuild { step, log, .. } = &failed else {
        panic!("not a failed build: {failed}");
    };
    assert!(step.starts_with("postCreateCommand \"deps\""), "{step}");
    let kept = std::fs::read_to_string(log).unwrap();
    assert!(kept.contains(&format!("fetching {word}")), "{kept}");
    let run = world.store.runs().run(run_id).await.unwrap();
    assert_eq!(run.failure_code, Some(RunFailureCode::Environment));
    assert!(
        run.sandbox_id.is_none(),
        "no run starts on a half-built image"
    );
    let latest = world.latest_environment_build().await;
    assert_eq!(latest.state, EnvironmentBuildState::Failed);
    assert_eq!(latest.failed_step.as_deref(), Some(step.as_str()));
}

/// A small server for the tests, built from the test base image: it tries once to reach
/// Debian's mirror (which a container on an ordinary network reaches here), keeps what
/// happened and the variable it was given in a repository, and serves that over git's
/// own protocol.
const SERVE: &str = r#"#!/bin/sh
mkdir -p /srv/probe && cd /srv/probe && git init -q
said=$(git ls-remote http://deb.debian.org/debian 2>&1)
case "$said" in
  *"resolve host"*|*"Failed to connect"*|*"unreachable"*|*"timed out"*) echo "no way out: $said" ;;
  *) echo "reached out: $said" ;;
esac > result.txt
echo "$GREETING" > greeting.txt
git add . && git -c user.name=service -c user.email=service@example.com commit -qm probe
exec git daemon --reuseaddr --export-all --base-path=/srv --listen=0.0.0.0 --port=9418 /srv
"#;

#[tokio::test]
async fn a_test_service_is_reached_by_name_cannot_reach_out_and_goes_with_the_run() {
    let word = unique_word();
    let (world, _images) = world_with(&[
        (
            ".handoff/services.yml",
            "services:\n  web:\n    build: services/web\n    environment:\n      GREETING: hello\n    ports: [\"9418:9418\"]\n",
        ),
        (
            ".handoff/services/web/Dockerfile",
            &format!("FROM {TEST_IMAGE}\n# {word}\nCOPY serve.sh /serve.sh\nCMD [\"sh\", \"/serve.sh\"]\n"),
        ),
        (".handoff/services/web/serve.sh", SERVE),
    ])
    .await;
    let number = world.qa_pull_request().await;
    world
        .set_instructions(
            "@@plan:output 1. Reach the service.\n\
             @@test:check Reached by name|for i in $(seq 1 40); do git ls-remote git://web/probe >/dev/null 2>&1 && exit 0; sleep 0.5; done; exit 1\n\
             @@test:check No way out|git clone -q git://web/probe /tmp/probe && grep -q 'no way out' /tmp/probe/result.txt\n\
             @@test:check Its settings|grep -q hello /tmp/probe/greeting.txt\n",
        )
        .await;
    detail(&world.qa(number, Stage::Plan, false).await);
    let test = world.qa(number, Stage::Test, false).await;
    let said = detail(&test);
    assert!(
        said.starts_with("3 scenarios: 3 passed, 0 failed"),
        "{said}\n{}",
        world.log_of(test.run.id).await
    );
    let log = world.log_of(test.run.id).await;
    assert!(log.contains("services web"), "{log}");

    // The service and its network went with the run.
    let installation = world.store.settings().installation_id().await.unwrap();
    let sandbox =
        handoff::sandbox::docker::DockerSandbox::connect(TEST_IMAGE, &installation).unwrap();
    assert!(sandbox
        .containers_of(Some(test.run.id))
        .await
        .unwrap()
        .is_empty());
    assert!(sandbox
        .networks_of(Some(test.run.id))
        .await
        .unwrap()
        .is_empty());
}

#[tokio::test]
async fn a_dev_container_in_a_compose_service_gives_the_agent_its_image_and_the_rest_beside_it() {
    let word = unique_word();
    let (world, _images) = world_with(&[
        (
            ".devcontainer/devcontainer.json",
            r#"{ "dockerComposeFile": ["compose.yml"], "service": "app", "runServices": ["web"] }"#,
        ),
        (
            ".devcontainer/compose.yml",
            "services:\n  app:\n    build:\n      context: .\n      args:\n        FLAVOUR: compose\n    environment:\n      DATABASE_URL: git://web/probe\n    command: sleep infinity\n  web:\n    build: web\n    environment:\n      GREETING: hello\n  unused:\n    image: postgres:16\n",
        ),
        (
            ".devcontainer/Dockerfile",
            &format!("FROM {TEST_IMAGE}\n# {word}\nARG FLAVOUR\nENV FLAVOUR=$FLAVOUR\n"),
        ),
        (
            ".devcontainer/web/Dockerfile",
            &format!("FROM {TEST_IMAGE}\n# {word}\nCOPY serve.sh /serve.sh\nCMD [\"sh\", \"/serve.sh\"]\n"),
        ),
        (".devcontainer/web/serve.sh", SERVE),
    ])
    .await;
    let found = world
        .pipeline
        .environments()
        .environment_of(&REPO.parse().unwrap())
        .await
        .unwrap();
    let started: Vec<&str> = found
        .services
        .services
        .iter()
        .map(|service| service.name.as_str())
        .collect();
    assert_eq!(started, ["web"], "runServices names which start");
    assert!(found
        .inputs
        .contains(&".devcontainer/compose.yml".to_owned()));
    let number = world.qa_pull_request().await;
    world
        .set_instructions(
            "@@plan:output 1. Reach the service the dev container names.\n\
             @@test:check Built from its service|test \"$FLAVOUR\" = compose\n\
             @@test:check Reached by name|for i in $(seq 1 40); do git ls-remote \"$DATABASE_URL\" >/dev/null 2>&1 && exit 0; sleep 0.5; done; exit 1\n\
             @@test:check Its settings|git clone -q \"$DATABASE_URL\" /tmp/probe && grep -q hello /tmp/probe/greeting.txt && grep -q 'no way out' /tmp/probe/result.txt\n",
        )
        .await;
    detail(&world.qa(number, Stage::Plan, false).await);
    let test = world.qa(number, Stage::Test, false).await;
    let said = detail(&test);
    assert!(
        said.starts_with("3 scenarios: 3 passed, 0 failed"),
        "{said}\n{}",
        world.log_of(test.run.id).await
    );
}
