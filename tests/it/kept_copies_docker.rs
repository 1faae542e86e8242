//! Each feedback item's working copy kept between its runs on the real Docker engine: a
//! volume of the item's own, mounted only into that item's containers, brought to the
//! branch's tip by the next run, and removed when the item is merged; and the fresh
//! container made ahead for the item's next run, which an iterate starts in.

use handoff_test_support as support;

use handoff::domain::{PullRequestState, SandboxBackend};
use handoff::pipeline::kept_copy::DropReason;
use handoff::pipeline::CodeRunResult;
use handoff::sandbox::docker::DockerSandbox;
use support::pipeline_world::{PipelineWorld, REPO, TEST_IMAGE};

#[tokio::test]
async fn each_item_keeps_its_copy_in_a_volume_of_its_own() {
    let world = PipelineWorld::new(SandboxBackend::Docker).await;
    world.fake.push_commit(
        REPO,
        "main",
        "Ignore build output",
        &[(".gitignore", "build/\n")],
    );
    let installation = world.store.settings().installation_id().await.unwrap();
    let docker = DockerSandbox::connect(TEST_IMAGE, &installation).unwrap();
    let volumes = || async {
        let mut items = docker.kept_copies().await.unwrap();
        items.sort();
        items
    };
    let first = world
        .feedback(
            "First",
            "@@write a.txt a\n@@write build/cache-of-first.txt warm",
        )
        .await;
    let second = world.feedback("Second", "@@files\n@@write b.txt b").await;

    let report = world.run(&first, None).await;
    let log = world.log_text(&report).await;
    assert!(
        matches!(report.result, CodeRunResult::Succeeded { .. }),
        "{log}"
    );
    assert!(log.contains("made in the sandbox from a bundle"), "{log}");
    assert_eq!(volumes().await, [first.id]);

    // Another item's run sees nothing of the first item's copy.
    let report = world.run(&second, None).await;
    let log = world.log_text(&report).await;
    assert!(
        matches!(report.result, CodeRunResult::Succeeded { .. }),
        "{log}"
    );
    assert!(log.contains("file: .gitignore"), "{log}");
    assert!(!log.contains("cache-of-first"), "{log}");
    assert_eq!(volumes().await, [first.id, second.id]);

    // The first item's iterate: its own copy, with the owner's commit brought in and
    // its ignored build output still there.
    world.fake.push_commit(
        REPO,
        &first.head_branch,
        "Owner's note",
        &[("NOTES.md", "by hand\n")],
    );
    let report = world.run(&first, Some("@@files\n@@write c.txt c")).await;
    let log = world.log_text(&report).await;
    assert!(
        matches!(report.result, CodeRunResult::Succeeded { .. }),
        "{log}"
    );
    assert!(
        log.contains("the item's kept copy, sent only the commits it lacks"),
        "{log}"
    );
    assert!(log.contains("file: build/cache-of-first.txt"), "{log}");
    assert!(log.contains("file: NOTES.md"), "{log}");
    assert!(!log.contains("file: b.txt"), "{log}");
    assert_eq!(
        world
            .fake
            .commits_ahead(REPO, &first.head_branch, "main")
            .len(),
        3
    );

    // Merged: the first item's volume goes, the second's stays.
    let dropped = merge_and_prune(&world, first.id).await;
    assert_eq!(dropped, [(first.id, DropReason::Merged)]);
    assert_eq!(volumes().await, [second.id]);
    merge_and_prune(&world, second.id).await;
    assert_eq!(volumes().await, []);
}

/// Marks `item` merged and prunes the kept copies; returns those dropped.
async fn merge_and_prune(
    world: &PipelineWorld,
    item: handoff::domain::FeedbackId,
) -> Vec<(handoff::domain::FeedbackId, DropReason)> {
    world
        .store
        .feedback()
        .apply_pull_request_state(item, PullRequestState::Merged)
        .await
        .unwrap();
    world
        .pipeline
        .kept_copies()
        .prune_kept_copies()
        .await
        .unwrap()
}

/// The container made ahead for `item`'s next run: its id, when there is one running.
fn ready_container_of(docker: &DockerSandbox, item: handoff::domain::FeedbackId) -> Option<String> {
    let inspected = std::process::Command::new("docker")
        .args([
            "inspect",
            "--format",
            "{{.Id}} {{.State.Running}} {{index .Config.Labels \"dev.handoff.ready-for\"}}",
            &docker.ready_container_name(item),
        ])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&inspected.stdout).trim().to_owned();
    let words: Vec<&str> = said.split(' ').collect();
    match words.as_slice() {
        [id, "true", labelled] if *labelled == item.0.to_string() => Some((*id).to_owned()),
        _ => None,
    }
}

/// What the engine did to container `id` since `since` (seconds since the epoch), by
/// its events' names (`archive-path` is a copy out of it, `extract-to-dir` one into it).
fn engine_actions_since(id: &str, since: f64) -> Vec<String> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let events = std::process::Command::new("docker")
        .args([
            "events",
            "--since",
            &format!("{since:.3}"),
            "--until",
            &format!("{now:.3}"),
            "--filter",
            &format!("container={id}"),
            "--format",
            "{{.Action}}",
        ])
        .output()
        .unwrap();
    String::from_utf8_lossy(&events.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Whether the container `id` is still on the engine.
fn exists(id: &str) -> bool {
    std::process::Command::new("docker")
        .args(["inspect", id])
        .output()
        .unwrap()
        .status
        .success()
}

#[tokio::test]
async fn an_iterate_starts_in_a_fresh_container_made_ahead_for_it() {
    let world = PipelineWorld::new(SandboxBackend::Docker).await;
    let installation = world.store.settings().installation_id().await.unwrap();
    let docker = DockerSandbox::connect(TEST_IMAGE, &installation).unwrap();
    let item = world.feedback("Ahead", "@@write a.txt a").await;
    let first = world.run(&item, None).await;
    assert!(
        matches!(first.result, CodeRunResult::Succeeded { .. }),
        "{}",
        world.log_text(&first).await
    );
    let sandbox_of = |report: &handoff::pipeline::CodeRunReport| {
        let runs = world.store.runs();
        let id = report.run.id;
        async move { runs.run(id).await.unwrap().sandbox_id.unwrap() }
    };
    let first_container = sandbox_of(&first).await;
    assert!(
        !exists(&first_container),
        "a run's container goes at its end"
    );
    let ready = support::eventually::eventually("a container made ahead for the item", || async {
        ready_container_of(&docker, item.id)
    })
    .await;
    assert_ne!(ready, first_container);

    // The iterate starts in it (a container no run used before), with its own
    // variables.
    let before_iterate = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
        - 1.0;
    let second = world.run(&item, Some("@@write b.txt b\n@@scan")).await;
    let log = world.log_text(&second).await;
    assert!(
        matches!(second.result, CodeRunResult::Succeeded { .. }),
        "{log}"
    );
    assert_eq!(
        sandbox_of(&second).await,
        ready,
        "the iterate ran in the ready container"
    );
    assert!(
        log.contains("HANDOFF_WORKSPACE=/sandbox/workspace"),
        "{log}"
    );
    // The run's own variables, which the container made ahead did not have.
    assert!(log.contains("HTTPS_PROXY=http://"), "{log}");
    assert!(!exists(&ready), "the used container goes at the run's end");
    // Its files went in, and out/ came back, through the container's own streams: once
    // the run attached to it, the engine made no archive copy in or out of it (the one
    // copy in before, if seen, is its workspace folder given to the agent's user when
    // it was made).
    let actions = engine_actions_since(&ready, before_iterate);
    let run_part: Vec<&String> = actions
        .iter()
        .skip_while(|action| *action != "attach")
        .collect();
    assert!(
        run_part.iter().any(|action| *action == "die"),
        "the engine's events of the run are read: {actions:?}"
    );
    assert!(
        !run_part
            .iter()
            .any(|action| *action == "archive-path" || *action == "extract-to-dir"),
        "{actions:?}"
    );
    let next = support::eventually::eventually("the next container made ahead", || async {
        ready_container_of(&docker, item.id)
    })
    .await;
    assert_ne!(next, ready);

    // It goes with the item's kept copy.
    merge_and_prune(&world, item.id).await;
    assert!(
        !exists(&next),
        "the container made ahead goes with the kept copy"
    );
    assert_eq!(docker.kept_copies().await.unwrap(), []);
}

#[tokio::test]
async fn a_damaged_kept_copy_in_its_volume_is_made_anew_in_the_same_run() {
    let world = PipelineWorld::new(SandboxBackend::Docker).await;
    let installation = world.store.settings().installation_id().await.unwrap();
    let docker = DockerSandbox::connect(TEST_IMAGE, &installation).unwrap();
    let feedback = world
        .feedback("Signup", "@@write src/button.css .signup {}")
        .await;
    let first = world.run(&feedback, None).await;
    let log = world.log_text(&first).await;
    assert!(
        matches!(first.result, CodeRunResult::Succeeded { .. }),
        "{log}"
    );
    // The copy's history is damaged: its objects are gone.
    let volume = docker.kept_copy_volume(feedback.id);
    let damaged = std::process::Command::new("docker")
        .args(["run", "--rm", "--user", "0", "--network", "none", "-v"])
        .arg(format!("{volume}:/kept"))
        .args([
            TEST_IMAGE,
            "sh",
            "-c",
            "rm -rf /kept/.git/objects && mkdir /kept/.git/objects",
        ])
        .status()
        .unwrap();
    assert!(damaged.success());

    crate::kept_copies::iterate_after_the_owners_note_starts_from_a_fresh_copy(&world, &feedback)
        .await;
}
