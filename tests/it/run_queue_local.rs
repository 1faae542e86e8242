//! The run queue on the local backend: every run waits for a slot kept in SQLite, the
//! slots hold across processes that share the database, queued runs outlive the
//! process that queued them, and a queued run can be cancelled (nothing ran, so its
//! quota comes back).

use handoff_test_support as support;

use std::time::Duration;

use handoff::domain::{Feedback, Run, RunStatus, SandboxBackend};
use handoff::pipeline::reconcile::{silent_since, RunsLeftBehind};
use handoff::pipeline::{CodeRunOptions, CodeRunResult, Pipeline};
use handoff::store::{parse_slot_count, SettingKey};
use handoff::Store;
use support::eventually::eventually_true;
use support::pipeline_world::{pr_number, PipelineWorld};
use support::store_tampering::make_run_silent_for;

async fn world_with_slots(slots: &str) -> PipelineWorld {
    let world = PipelineWorld::new(SandboxBackend::Local).await;
    world
        .store
        .settings()
        .set_setting(SettingKey::QueueSlots, slots)
        .await
        .unwrap();
    world
}

/// Panics when two of `runs` were running at the same moment.
fn assert_one_at_a_time(runs: &[Run]) {
    let mut spans: Vec<_> = runs
        .iter()
        .map(|run| {
            (
                run.started_at.expect("the run started"),
                run.finished_at.expect("the run finished"),
            )
        })
        .collect();
    spans.sort();
    for pair in spans.windows(2) {
        assert!(
            pair[0].1 <= pair[1].0,
            "two runs overlapped with one slot: {spans:?}"
        );
    }
}

async fn items(world: &PipelineWorld, count: usize, body: &str) -> Vec<Feedback> {
    let mut items = Vec::new();
    for index in 0..count {
        items.push(
            world
                .feedback(
                    &format!("Item {index}"),
                    &format!("{body}\n@@write item-{index}.txt ok"),
                )
                .await,
        );
    }
    items
}

#[tokio::test]
async fn a_begun_run_is_queued_until_its_turn_comes() {
    let world = world_with_slots("1").await;
    let [first, second] = <[Feedback; 2]>::try_from(items(&world, 2, "@@sleep 1").await).unwrap();

    let (first_run, first_driving) = world.start_in_background(&first).await;
    world.wait_until_the_agent_runs(first_run).await;
    let (second_run, second_driving) = world.start_in_background(&second).await;
    eventually_true("the second run says its place", || async {
        world
            .log_of(second_run)
            .await
            .contains("waiting in the run queue: place 1")
    })
    .await;
    assert_eq!(
        world.store.runs().run(second_run).await.unwrap().status,
        RunStatus::Queued
    );
    let queue = world.pipeline.run_queue().queue().await.unwrap();
    let places: Vec<_> = queue
        .iter()
        .map(|entry| (entry.run.id, entry.place))
        .collect();
    assert_eq!(places, [(first_run, None), (second_run, Some(1))]);
    assert_eq!(queue[1].title.as_deref(), Some("Item 1"));

    let first_report = first_driving.await.unwrap().unwrap();
    let second_report = second_driving.await.unwrap().unwrap();
    pr_number(&first_report);
    pr_number(&second_report);
    assert_one_at_a_time(&[first_report.run, second_report.run]);
    assert!(world.pipeline.run_queue().queue().await.unwrap().is_empty());
}

#[tokio::test]
async fn a_restart_with_runs_queued_starts_them_when_the_queue_next_runs() {
    let world = world_with_slots("1").await;
    let items = items(&world, 3, "@@sleep 1").await;
    let ids: Vec<_> = items.iter().map(|item| item.id).collect();
    // The process that queued them stops before driving any.
    let mut run_ids = Vec::new();
    for (_, begun) in world
        .pipeline
        .code_runs()
        .begin_code_runs(&ids, &CodeRunOptions::default())
        .await
    {
        run_ids.push(begun.unwrap().run_id());
    }
    for run_id in &run_ids {
        assert_eq!(
            world.store.runs().run(*run_id).await.unwrap().status,
            RunStatus::Queued
        );
    }
    // Nothing adopts runs whose process may still be alive.
    assert!(world
        .pipeline
        .run_queue()
        .adopt_queued_runs(silent_since(&world.store))
        .await
        .unwrap()
        .is_empty());
    for run_id in &run_ids {
        make_run_silent_for(&world.store, *run_id, 5).await;
    }

    // The next process to run the queue (here: a new store on the same data folder).
    let restarted = Pipeline {
        store: Store::open_in(world.data.path()).await.unwrap(),
        ..world.pipeline.clone()
    };
    let adopted = restarted
        .run_queue()
        .adopt_queued_runs(silent_since(&world.store))
        .await
        .unwrap();
    let mut adopted_ids: Vec<_> = adopted.iter().map(|run| run.run_id()).collect();
    adopted_ids.sort_by_key(|id| id.0);
    assert_eq!(adopted_ids, run_ids);
    assert!(
        restarted
            .run_queue()
            .adopt_queued_runs(silent_since(&world.store))
            .await
            .unwrap()
            .is_empty(),
        "a run is adopted once"
    );
    let driving: Vec<_> = adopted
        .into_iter()
        .map(|run| tokio::spawn(run.drive()))
        .collect();
    for driven in driving {
        driven.await.unwrap().expect("the adopted run is recorded");
    }

    let mut runs = Vec::new();
    for run_id in &run_ids {
        let run = world.store.runs().run(*run_id).await.unwrap();
        assert_eq!(
            run.status,
            RunStatus::Succeeded,
            "{}",
            world.log_of(*run_id).await
        );
        runs.push(run);
    }
    assert_one_at_a_time(&runs);
    assert_eq!(world.fake.pulls(support::pipeline_world::REPO).len(), 3);
}

#[tokio::test]
async fn queued_runs_of_a_process_that_is_gone_are_taken_over_at_once() {
    let world = world_with_slots("1").await;
    let items = items(&world, 2, "@@write done.txt ok").await;
    let ids: Vec<_> = items.iter().map(|item| item.id).collect();
    // Another process, with its store on the same data folder, queues both runs.
    let other = Pipeline {
        store: Store::open_in(world.data.path()).await.unwrap(),
        ..world.pipeline.clone()
    };
    let mut run_ids = Vec::new();
    for (_, begun) in other
        .code_runs()
        .begin_code_runs(&ids, &CodeRunOptions::default())
        .await
    {
        run_ids.push(begun.unwrap().run_id());
    }
    // While it lives, its runs are its own, and who holds them is known.
    assert!(world
        .pipeline
        .run_queue()
        .adopt_queued_runs(silent_since(&world.store))
        .await
        .unwrap()
        .is_empty());
    let left = RunsLeftBehind::find(&world.store, silent_since(&world.store))
        .await
        .unwrap();
    let waiting: Vec<_> = left
        .waiting_on_others
        .iter()
        .map(|run| run.run_id)
        .collect();
    assert_eq!(waiting, run_ids);
    assert!(left.waiting_on_others.iter().all(|run| run.seen_alive));
    assert_eq!(
        left.waiting_on_others[0]
            .driver
            .as_ref()
            .map(|driver| driver.pid),
        Some(std::process::id())
    );

    // It goes (its store closed, its lock given back): no silence to wait out.
    drop(other);
    let adopted = world
        .pipeline
        .run_queue()
        .adopt_queued_runs(silent_since(&world.store))
        .await
        .unwrap();
    let adopted_ids: Vec<_> = adopted.iter().map(|run| run.run_id()).collect();
    assert_eq!(adopted_ids, run_ids);
    for run in adopted {
        run.drive().await.expect("the run is recorded");
    }
    for run_id in &run_ids {
        assert_eq!(
            world.store.runs().run(*run_id).await.unwrap().status,
            RunStatus::Succeeded,
            "{}",
            world.log_of(*run_id).await
        );
    }
}

#[tokio::test]
async fn cancelling_a_queued_run_ends_it_and_gives_its_quota_back() {
    let world = world_with_slots("1").await;
    world.set_quota(10).await;
    let [first, second] = <[Feedback; 2]>::try_from(items(&world, 2, "@@sleep 3").await).unwrap();
    let (first_run, first_driving) = world.start_in_background(&first).await;
    world.wait_until_the_agent_runs(first_run).await;
    let (second_run, second_driving) = world.start_in_background(&second).await;
    let used_with_both = world
        .store
        .spend()
        .quota_status(world.repo.id, chrono::Utc::now())
        .await
        .unwrap()
        .used;
    assert_eq!(used_with_both, 2);

    world
        .pipeline
        .run_queue()
        .cancel_run(second_run)
        .await
        .unwrap();
    let second_report = tokio::time::timeout(Duration::from_secs(10), second_driving)
        .await
        .expect("a queued run ends as soon as it is cancelled")
        .unwrap()
        .unwrap();

    assert_eq!(second_report.result, CodeRunResult::Cancelled);
    assert_eq!(second_report.run.status, RunStatus::Cancelled);
    assert!(
        second_report.run.sandbox_id.is_none(),
        "no sandbox was made"
    );
    assert!(second_report.events.is_empty());
    let used = world
        .store
        .spend()
        .quota_status(world.repo.id, chrono::Utc::now())
        .await
        .unwrap()
        .used;
    assert_eq!(used, 1, "the cancelled run's quota came back");
    pr_number(&first_driving.await.unwrap().unwrap());
    assert_eq!(world.fake.pulls(support::pipeline_world::REPO).len(), 1);
    // The item takes a new run at once.
    let again = world.run(&second, None).await;
    pr_number(&again);
}

#[tokio::test]
async fn cancelling_a_queued_run_whose_process_stopped_ends_it_at_once() {
    let world = world_with_slots("1").await;
    let [item] = <[Feedback; 1]>::try_from(items(&world, 1, "@@sleep 1").await).unwrap();
    let begun = world
        .pipeline
        .code_runs()
        .begin_code_run(item.id, CodeRunOptions::default())
        .await
        .unwrap();
    let run_id = begun.run_id();
    drop(begun);
    make_run_silent_for(&world.store, run_id, 5).await;

    let cancelled = world.pipeline.run_queue().cancel_run(run_id).await.unwrap();

    assert_eq!(cancelled.status, RunStatus::Cancelled);
    assert!(world
        .pipeline
        .run_queue()
        .adopt_queued_runs(silent_since(&world.store))
        .await
        .unwrap()
        .is_empty());
    assert!(world.pipeline.run_queue().queue().await.unwrap().is_empty());
}

#[tokio::test]
async fn the_slots_hold_across_two_processes_sharing_the_database() {
    let world = world_with_slots("1").await;
    let [first, second] = <[Feedback; 2]>::try_from(items(&world, 2, "@@sleep 2").await).unwrap();
    let other_process = Pipeline {
        store: Store::open_in(world.data.path()).await.unwrap(),
        ..world.pipeline.clone()
    };

    let (first_run, first_driving) = world.start_in_background(&first).await;
    let second_begun = other_process
        .code_runs()
        .begin_code_run(second.id, CodeRunOptions::default())
        .await
        .unwrap();
    let second_run = second_begun.run_id();
    let second_driving = tokio::spawn(second_begun.drive());

    let first_report = first_driving.await.unwrap().unwrap();
    let second_report = second_driving.await.unwrap().unwrap();
    pr_number(&first_report);
    pr_number(&second_report);
    assert_one_at_a_time(&[first_report.run, second_report.run]);
    let waited = [
        world.log_of(first_run).await,
        world.log_of(second_run).await,
    ];
    assert_eq!(
        waited
            .iter()
            .filter(|log| log.contains("waiting in the run queue"))
            .count(),
        1,
        "one of them waited for the other"
    );
}

#[test]
fn slot_counts_are_whole_numbers_of_at_least_one() {
    assert_eq!(parse_slot_count("3", false), Ok(Some(3)));
    assert_eq!(parse_slot_count(" none ", true), Ok(None));
    for refused in ["0", "-1", "two", "", "1.5"] {
        let refusal = parse_slot_count(refused, false).unwrap_err();
        assert!(refusal.contains("at least 1"), "{refusal}");
    }
    assert!(parse_slot_count("none", false).is_err());
}
