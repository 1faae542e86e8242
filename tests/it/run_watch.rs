//! Runs the window drives in the background are watched: a run whose driving task
//! panics (a fault in Handoff) is ended as failed at once, with the panic's message and
//! its sandbox removed, instead of staying "running" until the next start.

use handoff_test_support as support;

use std::time::Duration;

use handoff::domain::run_event::RunEventKind;
use handoff::domain::{FeedbackStatus, RunFailureCode, RunStatus, SandboxBackend};
use handoff::pipeline::spawned_run::spawn_watched_run;
use handoff::pipeline::CodeRunOptions;
use support::eventually::eventually_true;
use support::pipeline_world::PipelineWorld;

#[tokio::test(flavor = "multi_thread")]
async fn a_run_whose_driving_panics_is_ended_at_once_with_its_sandbox_removed() {
    let world = PipelineWorld::new(SandboxBackend::Local).await;
    let feedback = world
        .feedback("Panics", "@@sleep 60\n@@write late.txt x")
        .await;
    let begun = world
        .pipeline
        .code_runs()
        .begin_code_run(feedback.id, CodeRunOptions::default())
        .await
        .unwrap();
    let run_id = begun.run_id();
    let store = world.store.clone();
    // The real run goes until its sandbox (the agent's process) is up; then the task
    // driving it panics, dropping the run half way.
    let driving = async move {
        tokio::select! {
            report = begun.drive() => report,
            () = eventually_true("the run's sandbox is up", || async {
                store.runs().run(run_id).await.unwrap().sandbox_id.is_some()
            }) => panic!("the step table has no row 7"),
        }
    };
    let watch = spawn_watched_run(world.pipeline.clone(), run_id, "a code run", driving);
    tokio::time::timeout(Duration::from_secs(60), watch)
        .await
        .expect("the watch ends the run without waiting for a restart")
        .unwrap();

    let run = world.store.runs().run(run_id).await.unwrap();
    assert_eq!(run.status, RunStatus::Failed);
    assert_eq!(run.failure_code, Some(RunFailureCode::DrivingPanicked));
    let message = run.failure_message.clone().unwrap_or_default();
    assert!(
        message.contains("the step table has no row 7")
            && message.contains("its sandbox was removed"),
        "{message}"
    );
    assert_eq!(world.status(&feedback).await, FeedbackStatus::Failed);
    let events = world.store.runs().run_events(run_id).await.unwrap();
    assert!(
        events
            .iter()
            .any(|event| event.kind == RunEventKind::RunFailed),
        "{events:?}"
    );
    let pid: u32 = run
        .sandbox_id
        .unwrap()
        .trim_start_matches("pid:")
        .split(':')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    eventually_true(
        &format!("the agent's process {pid} ends with its run"),
        || async { !std::path::Path::new(&format!("/proc/{pid}")).exists() },
    )
    .await;
    // Nothing is stuck: the item takes a new run at once.
    world
        .pipeline
        .code_runs()
        .begin_code_run(feedback.id, CodeRunOptions::default())
        .await
        .expect("a new run starts");
}
