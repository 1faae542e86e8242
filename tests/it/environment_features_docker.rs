//! A dev container's features, built for real on this machine's engine: features
//! fetched from an OCI registry (a fake one on this machine, speaking the distribution
//! API as ghcr.io does, with its anonymous tokens and its redirect of blobs to a storage
//! service), from the address of a `.tgz`, and from a folder beside the dev container;
//! the features one depends on fetched and installed before it; each `install.sh` run as
//! root with its options and the agent's user, and its variables set for the agent.
//! A feature that cannot be fetched fails the build by its name, with its log kept, and
//! no agent runs.

use handoff_test_support as support;

use handoff::domain::{RunFailureCode, SandboxBackend, Stage};
use handoff::pipeline::qa_run::QaResult;
use handoff::pipeline::PipelineError;
use handoff::store::EnvironmentBuildState;
use support::docker_images::{unique_word, EnvironmentImagesRemovedOnDrop};
use support::fake_feature_registry::FakeFeatureRegistry;
use support::pipeline_world::{PipelineWorld, REPO, TEST_IMAGE};

/// A feature's `install.sh` that writes a program printing `text` (expanded as the
/// script runs, so with its options), after checking that it runs as root and that
/// `needs` is there; it notes its turn in `/opt/install-order`.
fn install_script(program: &str, text: &str, needs: &str) -> String {
    format!(
        "#!/bin/sh\nset -e\n\
         test \"$(id -u)\" = 0\n\
         test -e {needs}\n\
         printf '#!/bin/sh\\necho \"%s\"\\n' \"{text}\" > /usr/local/bin/{program}\n\
         chmod +x /usr/local/bin/{program}\n\
         touch /opt/{program}-installed\n\
         echo {program} >> /opt/install-order\n"
    )
}

async fn world_with(files: &[(&str, &str)]) -> (PipelineWorld, EnvironmentImagesRemovedOnDrop) {
    let world = PipelineWorld::new(SandboxBackend::Docker).await;
    let installation = world.store.settings().installation_id().await.unwrap();
    world
        .fake
        .push_commit(REPO, "main", "The project's environment", files);
    (world, EnvironmentImagesRemovedOnDrop(installation))
}

#[tokio::test]
async fn features_from_a_registry_a_tarball_and_the_repository_are_built_into_the_agents_image() {
    let registry = FakeFeatureRegistry::start().await;
    let host = registry.host();
    let common = registry.publish(
        "features/common",
        "1",
        &[
            (
                "devcontainer-feature.json",
                r#"{ "id": "common", "version": "1.4.0", "name": "Common" }"#,
                0o644,
            ),
            (
                "install.sh",
                &install_script("common", "common", "/bin/sh"),
                0o755,
            ),
        ],
    );
    let hello_json = format!(
        r#"{{
            "id": "hello", "version": "1.0.0", "name": "Hello",
            "options": {{ "greeting": {{ "type": "string", "default": "hey" }} }},
            "containerEnv": {{ "HELLO_HOME": "/opt/hello" }},
            // Needed first, and fetched though the dev container does not ask for it.
            "dependsOn": {{ "{host}/features/common:1": {{}} }},
        }}"#
    );
    let hello = registry.publish(
        "features/hello",
        "1",
        &[
            ("devcontainer-feature.json", &hello_json, 0o644),
            // Its options and the agent's user, as the specification hands them over.
            (
                "install.sh",
                &install_script(
                    "hello",
                    "$GREETING from $_REMOTE_USER",
                    "/opt/common-installed",
                ),
                0o755,
            ),
        ],
    );
    let tarball = registry.offer_tarball(
        "devcontainer-feature-packed.tgz",
        &[
            (
                "devcontainer-feature.json",
                r#"{ "id": "packed", "version": "0.1.0" }"#,
                0o644,
            ),
            (
                "install.sh",
                &install_script("packed", "packed", "/bin/sh"),
                0o755,
            ),
        ],
    );
    let word = unique_word();
    let dev_container = format!(
        r#"{{
  // The project's dev container ({word}).
  "image": "{TEST_IMAGE}",
  "features": {{
    "{hello}": {{ "greeting": "hi" }},
    "{tarball}": {{}},
    "./tools": {{}},
  }},
  "overrideFeatureInstallOrder": ["./tools"],
}}"#
    );
    let tools_json = r#"{ "id": "tools", "version": "2.0.0" }"#;
    let tools_install = install_script("tools", "tools", "/bin/sh");
    let (world, _images) = world_with(&[
        (".devcontainer/devcontainer.json", &dev_container),
        (".devcontainer/tools/devcontainer-feature.json", tools_json),
        (".devcontainer/tools/install.sh", &tools_install),
    ])
    .await;
    let number = world.qa_pull_request().await;
    world
        .set_instructions(
            "@@plan:output 1. Use the tools.\n\
             @@test:check Registry feature with its option|test \"$(hello)\" = 'hi from agent'\n\
             @@test:check Its variable|test \"$HELLO_HOME\" = /opt/hello\n\
             @@test:check What it depends on|test \"$(common)\" = common\n\
             @@test:check Tarball feature|test \"$(packed)\" = packed\n\
             @@test:check Local feature|test \"$(tools)\" = tools\n\
             @@test:check The owner's order, then what each needs first|test \"$(tr '\\n' ' ' < /opt/install-order)\" = 'tools packed common hello '\n",
        )
        .await;
    let plan = world.qa(number, Stage::Plan, false).await;
    let plan_log = world.log_of(plan.run.id).await;
    assert!(
        matches!(plan.stages[0].result, QaResult::Succeeded { .. }),
        "{:?}\n{plan_log}",
        plan.stages[0].result
    );
    for line in [
        format!("fetching the feature {hello}"),
        format!("fetching the feature {common}"),
        "the feature ./tools is tools 2.0.0".to_owned(),
        "4 feature(s)".to_owned(),
    ] {
        assert!(
            plan_log.contains(&line),
            "{line} is not in the log:\n{plan_log}"
        );
    }
    let test = world.qa(number, Stage::Test, false).await;
    let QaResult::Succeeded { detail } = &test.stages[0].result else {
        panic!(
            "{:?}\n{}",
            test.stages[0].result,
            world.log_of(test.run.id).await
        );
    };
    assert!(
        detail.starts_with("6 scenarios: 6 passed"),
        "{detail}\n{}",
        world.log_of(test.run.id).await
    );

    // Anonymous pulls as ghcr.io serves them: refused, a token asked for, then the
    // blob fetched from the storage it redirects to, without the registry's token.
    let requests = registry.requests();
    let first = &requests[0];
    assert_eq!(
        (first.status, first.had_authorization),
        (401, false),
        "{requests:?}"
    );
    assert!(requests
        .iter()
        .any(|request| request.path == "/token" && request.status == 200));
    let stored: Vec<_> = requests
        .iter()
        .filter(|request| request.path.starts_with("/blobs/"))
        .collect();
    assert_eq!(
        stored.len(),
        2,
        "one blob for each registry feature: {requests:?}"
    );
    assert!(stored
        .iter()
        .all(|request| request.status == 200 && !request.had_authorization));
}

#[tokio::test]
async fn a_feature_that_cannot_be_fetched_fails_the_build_by_name_and_no_agent_runs() {
    let registry = FakeFeatureRegistry::start().await;
    let missing = format!("{}/features/missing:1", registry.host());
    let word = unique_word();
    let (world, _images) = world_with(&[(
        ".devcontainer/devcontainer.json",
        &format!(
            r#"{{ "image": "{TEST_IMAGE}", "features": {{ "{missing}": {{}} }}, "name": "{word}" }}"#
        ),
    )])
    .await;
    let feedback = world.feedback("Anything", "@@write a.txt a").await;
    let (run_id, driving) = world.start_in_background(&feedback).await;
    let failed = driving.await.unwrap().expect_err("the build fails");
    let PipelineError::EnvironmentBuild {
        step, detail, log, ..
    } = &failed
    else {
        panic!("not a failed build: {failed}");
    };
    assert_eq!(step, &format!("the feature {missing}"));
    assert_eq!(
        detail,
        &format!("{} has no features/missing:1", registry.host())
    );
    let kept = std::fs::read_to_string(log).unwrap();
    assert!(
        kept.contains(&format!("fetching the feature {missing}")),
        "{kept}"
    );
    let run = world.store.runs().run(run_id).await.unwrap();
    assert_eq!(run.failure_code, Some(RunFailureCode::Environment));
    assert!(
        run.sandbox_id.is_none(),
        "no run starts without its features"
    );
    assert!(!world.log_of(run_id).await.contains("scripted agent:"));
    let latest = world.latest_environment_build().await;
    assert_eq!(latest.state, EnvironmentBuildState::Failed);
    assert_eq!(latest.failed_step.as_deref(), Some(step.as_str()));
}
