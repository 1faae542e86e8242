//! The pipeline on the `docker` backend: the real Docker engine of this machine and the
//! test image built locally by scripts/build-test-image.sh (no registry). The same
//! journey as every backend, plus what only containers have: limits, and removal in
//! every outcome.

use handoff_test_support as support;

use std::time::Duration;

use bollard::Docker;
use handoff::domain::{RunStatus, SandboxBackend};
use handoff::pipeline::{CodeRunOptions, CodeRunResult, PipelineError};
use handoff::sandbox::docker::DockerSandbox;
use handoff::store::{RepoSettingsChange, RunFilter};
use support::eventually::eventually;
use support::pipeline_world::{
    first_run_iterate_and_manual_commit_journey, pr_number, token_never_enters_the_sandbox,
    PipelineWorld, TEST_IMAGE,
};

async fn world() -> PipelineWorld {
    PipelineWorld::new(SandboxBackend::Docker).await
}

async fn containers_of(world: &PipelineWorld, run: handoff::domain::RunId) -> Vec<String> {
    let installation = world.store.settings().installation_id().await.unwrap();
    DockerSandbox::connect(TEST_IMAGE, &installation)
        .unwrap()
        .containers_of(Some(run))
        .await
        .unwrap()
}

async fn networks_of(world: &PipelineWorld, run: handoff::domain::RunId) -> Vec<String> {
    let installation = world.store.settings().installation_id().await.unwrap();
    DockerSandbox::connect(TEST_IMAGE, &installation)
        .unwrap()
        .networks_of(Some(run))
        .await
        .unwrap()
}

#[tokio::test]
async fn the_journey_first_run_iterate_manual_commit() {
    first_run_iterate_and_manual_commit_journey(&world().await).await;
}

#[tokio::test]
async fn the_token_never_enters_the_container() {
    token_never_enters_the_sandbox(&world().await).await;
}

#[tokio::test]
async fn the_container_has_limits_and_is_removed_after_success_and_failure() {
    let world = world().await;
    let feedback = world
        .feedback("Limits", "@@contained\n@@sleep 2\n@@write l.txt ok")
        .await;
    let (run_id, driving) = world.start_in_background(&feedback).await;
    let container = eventually("the run's container is made", || async {
        world.store.runs().run(run_id).await.unwrap().sandbox_id
    })
    .await;
    let inspected = Docker::connect_with_defaults()
        .unwrap()
        .inspect_container(&container, None)
        .await
        .unwrap();
    let host = inspected.host_config.unwrap();
    assert_eq!(host.memory, Some(512 * 1024 * 1024));
    assert_eq!(host.nano_cpus, Some(1_000_000_000));
    assert_eq!(host.pids_limit, Some(256));
    assert_eq!(
        host.memory_swap,
        Some(512 * 1024 * 1024),
        "no swap beyond the memory limit"
    );
    assert_eq!(host.cap_drop, Some(vec!["ALL".to_owned()]));
    assert_eq!(host.readonly_rootfs, Some(true));
    assert!(host.tmpfs.unwrap_or_default().contains_key("/tmp"));
    let installation = world.store.settings().installation_id().await.unwrap();
    assert_eq!(
        host.network_mode,
        Some(format!(
            "handoff-{installation}-gate-{}-net",
            world.repo.id.0
        )),
        "the repository's internal network, behind its egress gate, is the default"
    );
    let config = inspected.config.unwrap();
    assert_eq!(
        config.labels.unwrap()["dev.handoff.run"],
        run_id.to_string()
    );
    // The test image names no agent user: the job runs as nobody.
    assert_eq!(config.user.as_deref(), Some("65534:65534"));

    let report = driving.await.unwrap().unwrap();
    pr_number(&report);
    // Seen from inside: no root, no capabilities, a read-only root, scratch in /tmp.
    let log = world.log_text(&report).await;
    for expected in [
        "contained: uid 65534",
        "contained: root read-only",
        "contained: tmp writable",
        "contained: CapEff: 0000000000000000",
        "contained: home /tmp/home",
    ] {
        assert!(log.contains(expected), "no {expected:?} in the log:\n{log}");
    }
    assert!(
        containers_of(&world, run_id).await.is_empty(),
        "removed after success"
    );
    assert!(
        networks_of(&world, run_id).await.is_empty(),
        "its network too"
    );

    let failing = world.feedback("Fails", "@@write f.txt x\n@@fail").await;
    let report = world.run(&failing, None).await;
    assert!(matches!(report.result, CodeRunResult::Failed { .. }));
    assert!(
        containers_of(&world, report.run.id).await.is_empty(),
        "removed after failure"
    );
}

#[tokio::test]
async fn the_container_is_removed_after_a_timeout_and_a_cancel() {
    let world = world().await;
    let slow = world
        .feedback("Slow", "@@sleep 60\n@@write s.txt late")
        .await;
    let begun = world
        .pipeline
        .code_runs()
        .begin_code_run(
            slow.id,
            CodeRunOptions {
                timeout: Some(Duration::from_secs(2)),
                ..CodeRunOptions::default()
            },
        )
        .await
        .unwrap();
    let report = begun.drive().await.unwrap();
    assert!(
        matches!(&report.result, CodeRunResult::Failed { code, .. } if code.as_str() == "timed_out"),
        "{:?}",
        report.result
    );
    assert!(
        containers_of(&world, report.run.id).await.is_empty(),
        "removed after the timeout"
    );

    let (run_id, driving) = world.start_in_background(&slow).await;
    world.wait_until_the_agent_runs(run_id).await;
    world.store.runs().request_cancel(run_id).await.unwrap();
    let report = tokio::time::timeout(Duration::from_secs(30), driving)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(report.run.status, RunStatus::Cancelled);
    assert!(
        containers_of(&world, run_id).await.is_empty(),
        "removed after the cancel"
    );
}

#[tokio::test]
async fn a_container_left_by_a_crash_is_found_by_its_label_and_removed() {
    let world = world().await;
    let feedback = world
        .feedback("Crash", "@@sleep 60\n@@write c.txt late")
        .await;
    let (run_id, driving) = world.start_in_background(&feedback).await;
    world.wait_until_the_agent_runs(run_id).await;
    driving.abort();
    let _ = driving.await;
    assert_eq!(
        containers_of(&world, run_id).await.len(),
        1,
        "the crash left the container (the repository's egress gate is not the run's)"
    );

    let reconciled = world
        .pipeline
        .left_behind()
        .reconcile_abandoned_runs(chrono::Utc::now() + chrono::Duration::seconds(1))
        .await
        .unwrap();

    assert_eq!(reconciled.len(), 1);
    assert!(
        containers_of(&world, run_id).await.is_empty(),
        "reconcile removed it"
    );
    assert_eq!(
        world.store.runs().run(run_id).await.unwrap().status,
        RunStatus::Failed
    );
}

#[tokio::test]
async fn a_missing_image_is_refused_before_the_run_is_recorded() {
    let world = world().await;
    world
        .store
        .repositories()
        .change_repo_settings(
            world.repo.id,
            &RepoSettingsChange {
                docker_image: Some(Some("handoff-no-such-image:1".to_owned())),
                ..RepoSettingsChange::default()
            },
        )
        .await
        .unwrap();
    let feedback = world.feedback("No image", "@@write x.txt y").await;

    let refused = world
        .pipeline
        .code_runs()
        .begin_code_run(feedback.id, CodeRunOptions::default())
        .await
        .unwrap_err();

    // The run is refused with the line Check setup shows for the image.
    match &refused {
        PipelineError::SetupIncomplete(line) => {
            assert_eq!(line.id, "image:handoff-no-such-image:1");
            assert_eq!(line.detail, "not on this Docker engine");
        }
        other => panic!("expected the image's setup line, got {other:?}"),
    }
    assert!(
        refused
            .to_string()
            .contains("Image handoff-no-such-image:1: not on this Docker engine"),
        "{refused}"
    );
    assert!(world
        .store
        .runs()
        .runs(&RunFilter::default())
        .await
        .unwrap()
        .is_empty());
}

#[tokio::test]
async fn a_run_is_refused_before_it_is_recorded_when_the_egress_gate_cannot_run() {
    // This test runs in a process of its own (nextest), so the variable is this
    // process's to set before the gate's program is first looked for.
    std::env::set_var(
        handoff::sandbox::docker_gate::GATE_PROGRAM_VARIABLE,
        "/nonexistent/handoff-egress",
    );
    let world = world().await;
    let feedback = world.feedback("No gate", "@@write x.txt y").await;

    let refused = world
        .pipeline
        .code_runs()
        .begin_code_run(feedback.id, CodeRunOptions::default())
        .await
        .unwrap_err();

    match &refused {
        PipelineError::SetupIncomplete(line) => {
            assert_eq!(line.id, "egress-gate");
            assert!(
                line.detail.contains("/nonexistent/handoff-egress"),
                "{}",
                line.detail
            );
        }
        other => panic!("expected the egress gate's setup line, got {other:?}"),
    }
    assert!(world
        .store
        .runs()
        .runs(&RunFilter::default())
        .await
        .unwrap()
        .is_empty());
    let setup = handoff::setup_check::SetupCheck {
        store: &world.store,
        secrets: &world.pipeline.secrets,
        data_dir: world.data.path(),
        settings: &world.pipeline.settings,
    }
    .run()
    .await
    .unwrap();
    let gate = setup
        .lines
        .iter()
        .find(|line| line.id == "egress-gate")
        .expect("Check setup has a line for the egress gate");
    assert_eq!(gate.status, handoff::setup_check::CheckStatus::Failure);
    assert_eq!(gate.fix, Some(handoff::setup_check::Fix::InstallEgressGate));
}
