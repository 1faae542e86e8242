//! Each feedback item's working copy is kept between its code runs on the local backend:
//! an iterate brings it to the branch's tip (the owner's commits included), forces back
//! tracked files and removes untracked ones while ignored build output stays; a copy
//! that cannot be brought to the tip is made anew within the same run; a merged item's
//! copy goes, and an installation may keep none.

use handoff_test_support as support;

use std::path::PathBuf;
use std::time::Duration;

use handoff::domain::{Feedback, FeedbackStatus, PullRequestState, SandboxBackend};
use handoff::pipeline::kept_copy::DropReason;
use handoff::pipeline::CodeRunResult;
use support::pipeline_world::{quick_settings, PipelineWorld, REPO};

/// A world whose repository ignores `build/`.
async fn world_ignoring_build() -> PipelineWorld {
    world_with(quick_settings()).await
}

async fn world_with(settings: handoff::pipeline::PipelineSettings) -> PipelineWorld {
    let world = PipelineWorld::with_settings(SandboxBackend::Local, settings).await;
    world.fake.push_commit(
        REPO,
        "main",
        "Ignore build output",
        &[(".gitignore", "build/\n")],
    );
    world
}

fn kept_repo(world: &PipelineWorld, feedback: &Feedback) -> PathBuf {
    world
        .data
        .path()
        .join(format!("kept-copies/item-{}/repo", feedback.id.0))
}

fn assert_succeeded(report: &handoff::pipeline::CodeRunReport, log: &str) {
    assert!(
        matches!(report.result, CodeRunResult::Succeeded { .. }),
        "{:?}\n{log}",
        report.result
    );
}

#[tokio::test]
async fn an_iterate_brings_the_kept_copy_to_the_tip_and_keeps_only_ignored_leftovers() {
    let world = world_ignoring_build().await;
    let feedback = world
        .feedback(
            "Signup button",
            "@@write src/button.css .signup { height: 20px; }\n@@write build/cache.txt warm",
        )
        .await;
    let first = world.run(&feedback, None).await;
    let log = world.log_text(&first).await;
    assert_succeeded(&first, &log);
    assert!(log.contains("made here"), "{log}");
    let kept = kept_repo(&world, &feedback);
    assert!(kept.join("build/cache.txt").is_file(), "the copy is kept");

    // Meanwhile: the owner pushes a commit by hand, and the copy gets an untracked file
    // and a changed tracked file (what a cancelled run leaves behind).
    world.fake.push_commit(
        REPO,
        &feedback.head_branch,
        "Owner's note",
        &[("NOTES.md", "by hand\n")],
    );
    std::fs::write(kept.join("stray.txt"), "left behind\n").unwrap();
    std::fs::write(kept.join("src/button.css"), "tampered\n").unwrap();

    let second = world
        .run(&feedback, Some("@@files\n@@write src/form.css .form {}"))
        .await;
    let log = world.log_text(&second).await;
    assert_succeeded(&second, &log);
    assert!(
        log.contains("the item's kept copy, sent only the commits it lacks"),
        "{log}"
    );
    assert!(
        log.contains("handoff: the kept working copy is at"),
        "{log}"
    );
    assert!(log.contains("file: NOTES.md"), "the owner's commit: {log}");
    assert!(
        log.contains("file: build/cache.txt"),
        "ignored output stays: {log}"
    );
    assert!(
        !log.contains("file: stray.txt"),
        "untracked files go: {log}"
    );
    let branch = &feedback.head_branch;
    assert_eq!(
        world
            .fake
            .file_on_branch(REPO, branch, "src/button.css")
            .as_deref(),
        Some(".signup { height: 20px; }\n"),
        "a tracked file is forced back to the tip"
    );
    assert_eq!(world.fake.file_on_branch(REPO, branch, "stray.txt"), None);
    assert_eq!(
        world
            .fake
            .file_on_branch(REPO, branch, "src/form.css")
            .as_deref(),
        Some(".form {}\n")
    );

    // Nothing new on GitHub: the copy holds the tip already, and nothing is sent.
    let third = world
        .run(&feedback, Some("@@write src/third.css .third {}"))
        .await;
    let log = world.log_text(&third).await;
    assert_succeeded(&third, &log);
    assert!(
        log.contains("the item's kept copy, which holds it already"),
        "{log}"
    );
    assert_eq!(world.fake.commits_ahead(REPO, branch, "main").len(), 4);
}

#[tokio::test]
async fn one_items_kept_copy_is_not_another_items() {
    let world = world_ignoring_build().await;
    let first = world
        .feedback(
            "First",
            "@@write a.txt a\n@@write build/secret-of-first.txt 1",
        )
        .await;
    let second = world.feedback("Second", "@@files\n@@write b.txt b").await;
    let report = world.run(&first, None).await;
    assert_succeeded(&report, &world.log_text(&report).await);
    let report = world.run(&second, None).await;
    let log = world.log_text(&report).await;
    assert_succeeded(&report, &log);
    assert!(!log.contains("secret-of-first"), "{log}");
    assert_ne!(kept_repo(&world, &first), kept_repo(&world, &second));
}

#[tokio::test]
async fn a_kept_copy_that_cannot_be_brought_to_the_tip_is_made_anew_in_the_same_run() {
    let world = world_ignoring_build().await;
    let feedback = world
        .feedback("Signup", "@@write src/button.css .signup {}")
        .await;
    let first = world.run(&feedback, None).await;
    assert_succeeded(&first, &world.log_text(&first).await);
    // The copy's history is damaged: its objects are gone.
    let kept = kept_repo(&world, &feedback);
    std::fs::remove_dir_all(kept.join(".git/objects")).unwrap();
    std::fs::create_dir_all(kept.join(".git/objects")).unwrap();
    iterate_after_the_owners_note_starts_from_a_fresh_copy(&world, &feedback).await;
    assert!(kept.join(".git/HEAD").is_file(), "the new copy is kept");
}

#[tokio::test]
async fn a_merged_items_kept_copy_is_dropped() {
    let world = world_ignoring_build().await;
    let merged = world.feedback("Merged", "@@write a.txt a").await;
    let open = world.feedback("Open", "@@write b.txt b").await;
    for item in [&merged, &open] {
        let report = world.run(item, None).await;
        assert_succeeded(&report, &world.log_text(&report).await);
    }
    world
        .store
        .feedback()
        .apply_pull_request_state(merged.id, PullRequestState::Merged)
        .await
        .unwrap();
    assert_eq!(world.status(&merged).await, FeedbackStatus::Merged);

    let dropped = world
        .pipeline
        .kept_copies()
        .prune_kept_copies()
        .await
        .unwrap();
    assert_eq!(dropped, [(merged.id, DropReason::Merged)]);
    assert!(!kept_repo(&world, &merged).exists());
    assert!(kept_repo(&world, &open).join(".git").is_dir());
}

#[tokio::test]
async fn copies_unused_past_the_retention_go_and_none_are_kept_when_it_is_zero() {
    let mut settings = quick_settings();
    settings.kept_copy_retention = Some(Duration::from_secs(3600));
    let world = world_with(settings).await;
    let feedback = world.feedback("Idle", "@@write a.txt a").await;
    let report = world.run(&feedback, None).await;
    assert_succeeded(&report, &world.log_text(&report).await);
    assert!(kept_repo(&world, &feedback).is_dir());
    // Two hours pass: the copy was last used longer ago than the retention (its record
    // says when).
    let record = kept_repo(&world, &feedback).with_file_name("copy.json");
    std::fs::File::options()
        .write(true)
        .open(&record)
        .unwrap()
        .set_modified(std::time::SystemTime::now() - Duration::from_secs(2 * 3600))
        .unwrap();
    let dropped = world
        .pipeline
        .kept_copies()
        .prune_kept_copies()
        .await
        .unwrap();
    assert_eq!(dropped, [(feedback.id, DropReason::Unused)]);

    let mut settings = quick_settings();
    settings.kept_copy_retention = None;
    let world = world_with(settings).await;
    let feedback = world.feedback("Fresh", "@@write a.txt a").await;
    for instructions in [None, Some("@@write b.txt b")] {
        let report = world.run(&feedback, instructions).await;
        let log = world.log_text(&report).await;
        assert_succeeded(&report, &log);
        assert!(log.contains("made here"), "{log}");
        assert!(!log.contains("kept copy"), "{log}");
    }
    assert!(!kept_repo(&world, &feedback).exists());
}

#[tokio::test]
async fn what_a_run_plants_in_the_kept_copys_git_folder_is_gone_before_the_next_run_reads_it() {
    let world = world_ignoring_build().await;
    // The agent (or whatever steered it) plants a filter that runs on checkout, a hook,
    // and attributes that apply the filter to every file.
    let feedback = world
        .feedback(
            "Planting",
            "@@run1:write src/a.txt a\n\
             @@run1:append .git/config [filter \"planted\"]\n\
             @@run1:append .git/config smudge = echo SMUDGED-BY-PLANTED-FILTER >&2; cat\n\
             @@run1:write .git/info/attributes * filter=planted\n\
             @@run1:write .git/hooks/post-checkout echo HOOK-RAN >&2",
        )
        .await;
    let first = world.run(&feedback, None).await;
    assert_succeeded(&first, &world.log_text(&first).await);
    let kept = kept_repo(&world, &feedback);
    assert!(
        std::fs::read_to_string(kept.join(".git/config"))
            .unwrap()
            .contains("planted"),
        "the first run planted it"
    );
    // A commit by hand, so that the next run checks files out.
    world.fake.push_commit(
        REPO,
        &feedback.head_branch,
        "Owner's change",
        &[("src/a.txt", "changed by hand\n")],
    );

    let second = world.run(&feedback, Some("@@write src/b.txt b")).await;

    let log = world.log_text(&second).await;
    assert_succeeded(&second, &log);
    assert!(!log.contains("SMUDGED-BY-PLANTED-FILTER"), "{log}");
    assert!(!log.contains("HOOK-RAN"), "{log}");
    let config = std::fs::read_to_string(kept.join(".git/config")).unwrap();
    assert!(!config.contains("planted"), "{config}");
    assert!(!kept.join(".git/info/attributes").exists());
    assert_eq!(
        world
            .fake
            .file_on_branch(REPO, &feedback.head_branch, "src/a.txt")
            .as_deref(),
        Some("changed by hand\n")
    );
}

#[tokio::test]
async fn a_copy_its_items_run_is_using_stays_while_other_runs_end_and_prune() {
    // Kept copies are dropped as soon as they sit unused for a moment.
    let mut settings = quick_settings();
    settings.kept_copy_retention = Some(Duration::from_millis(1));
    let world = world_with(settings).await;
    let long = world
        .feedback("Long", "@@sleep 4\n@@write long.txt done")
        .await;
    let short = world.feedback("Short", "@@write short.txt done").await;

    let (long_run, driving) = world.start_in_background(&long).await;
    world.wait_until_the_agent_runs(long_run).await;
    // Another item's run ends meanwhile, and prunes.
    let report = world.run(&short, None).await;
    assert_succeeded(&report, &world.log_text(&report).await);
    assert!(
        kept_repo(&world, &long).is_dir(),
        "the running item's copy was dropped under it"
    );

    let long_report = driving.await.unwrap().unwrap();
    assert_succeeded(&long_report, &world.log_text(&long_report).await);
}

/// The owner pushes a note to `feedback`'s branch, then an iterate of it, whose kept
/// copy was damaged, starts again from a fresh copy in the same run and pushes on top
/// of the note.
pub(crate) async fn iterate_after_the_owners_note_starts_from_a_fresh_copy(
    world: &PipelineWorld,
    feedback: &Feedback,
) {
    world.fake.push_commit(
        REPO,
        &feedback.head_branch,
        "Owner's note",
        &[("NOTES.md", "by hand\n")],
    );

    let second = world
        .run(feedback, Some("@@write src/form.css .form {}"))
        .await;
    let log = world.log_text(&second).await;
    assert_succeeded(&second, &log);
    assert!(
        log.contains("the kept working copy cannot be used"),
        "{log}"
    );
    assert!(
        second
            .run
            .notes
            .iter()
            .any(|note| note.contains("started again from a fresh copy")),
        "{:?}",
        second.run.notes
    );
    let branch = &feedback.head_branch;
    assert_eq!(
        world
            .fake
            .file_on_branch(REPO, branch, "NOTES.md")
            .as_deref(),
        Some("by hand\n")
    );
    assert_eq!(world.fake.commits_ahead(REPO, branch, "main").len(), 3);
}
