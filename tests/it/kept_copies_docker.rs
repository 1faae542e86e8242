//! Each feedback item's working copy kept between its runs on the real Docker engine: a
//! volume of the item's own, mounted only into that item's containers, brought to the
//! branch's tip by the next run, and removed when the item is merged.

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
    world
        .store
        .feedback()
        .apply_pull_request_state(first.id, PullRequestState::Merged)
        .await
        .unwrap();
    let dropped = world
        .pipeline
        .kept_copies()
        .prune_kept_copies()
        .await
        .unwrap();
    assert_eq!(dropped, [(first.id, DropReason::Merged)]);
    assert_eq!(volumes().await, [second.id]);
    world
        .store
        .feedback()
        .apply_pull_request_state(second.id, PullRequestState::Merged)
        .await
        .unwrap();
    world
        .pipeline
        .kept_copies()
        .prune_kept_copies()
        .await
        .unwrap();
    assert_eq!(volumes().await, []);
}
