//! The run queue with the real Docker engine: ten items asked for at once across two
//! repositories, with two slots, never have more than two sandboxes up at a time. The
//! count comes from the engine's own container events, not from Handoff's records.

use handoff_test_support as support;

use std::collections::HashMap;

use bollard::query_parameters::EventsOptionsBuilder;
use bollard::Docker;
use futures::StreamExt as _;
use handoff::domain::{FeedbackId, SandboxBackend};
use handoff::pipeline::CodeRunOptions;
use handoff::store::SettingKey;
use support::eventually::eventually_true;
use support::pipeline_world::{pr_number, PipelineWorld, REPO};

/// When each run's sandbox was up, from the engine's `start` and `die` events of the
/// installation's run containers: run label → (first start, last die), in nanoseconds.
/// The events are followed live from `since` (seconds since the epoch) until the returned
/// handle is stopped: the engine keeps only its last few hundred events for asking later.
struct SandboxEvents {
    lifetimes: std::sync::Arc<std::sync::Mutex<HashMap<String, (i64, i64)>>>,
    following: tokio::task::JoinHandle<()>,
}

impl SandboxEvents {
    fn follow(installation: &str, since: i64) -> SandboxEvents {
        let lifetimes = std::sync::Arc::new(std::sync::Mutex::new(HashMap::new()));
        let installation_label = format!("dev.handoff.installation={installation}");
        let following = tokio::spawn({
            let lifetimes = lifetimes.clone();
            async move {
                let docker = Docker::connect_with_defaults().expect("the Docker engine");
                let filters = HashMap::from([
                    ("type", vec!["container"]),
                    ("event", vec!["start", "die"]),
                    (
                        "label",
                        vec![installation_label.as_str(), "dev.handoff.run"],
                    ),
                ]);
                let options = EventsOptionsBuilder::new()
                    .since(&since.to_string())
                    .filters(&filters)
                    .build();
                let mut events = docker.events(Some(options));
                while let Some(event) = events.next().await {
                    let event = event.expect("an event from the engine");
                    let attributes = event
                        .actor
                        .and_then(|actor| actor.attributes)
                        .unwrap_or_default();
                    let Some(run) = attributes.get("dev.handoff.run").cloned() else {
                        continue;
                    };
                    let at = event.time_nano.expect("events carry their time");
                    let mut lifetimes = lifetimes.lock().expect("lifetimes");
                    let lifetime = lifetimes.entry(run).or_insert((i64::MAX, i64::MIN));
                    match event.action.as_deref() {
                        Some("start") => lifetime.0 = lifetime.0.min(at),
                        Some("die") => lifetime.1 = lifetime.1.max(at),
                        _ => {}
                    }
                }
            }
        });
        SandboxEvents {
            lifetimes,
            following,
        }
    }

    /// Stops following once the engine has told of `sandboxes` sandboxes that started
    /// and died (its events come a little after the containers' ends).
    async fn stop(self, sandboxes: usize) -> HashMap<String, (i64, i64)> {
        eventually_true("the engine tells every sandbox's start and end", || async {
            let lifetimes = self.lifetimes.lock().expect("lifetimes");
            lifetimes.len() >= sandboxes
                && lifetimes
                    .values()
                    .all(|(start, end)| *start != i64::MAX && *end != i64::MIN)
        })
        .await;
        self.following.abort();
        let lifetimes = self.lifetimes.lock().expect("lifetimes").clone();
        lifetimes
    }
}

/// The most sandboxes up at one moment.
fn most_at_once(lifetimes: &HashMap<String, (i64, i64)>) -> usize {
    let mut moments: Vec<(i64, i32)> = Vec::new();
    for (start, end) in lifetimes.values() {
        moments.push((*start, 1));
        moments.push((*end, -1));
    }
    // At equal times a sandbox going down counts before one coming up.
    moments.sort();
    let mut up = 0_i32;
    let mut most = 0_i32;
    for (_, change) in moments {
        up += change;
        most = most.max(up);
    }
    usize::try_from(most).unwrap_or_default()
}

#[tokio::test]
async fn ten_items_with_two_slots_never_run_more_than_two_sandboxes_and_all_finish() {
    let world = PipelineWorld::new(SandboxBackend::Docker).await;
    let other = world.connect_another_repo("octocat/other").await;
    world
        .store
        .settings()
        .set_setting(SettingKey::QueueSlots, "2")
        .await
        .unwrap();
    // Six items on the first repository, asked for first, then four on the second.
    let mut items: Vec<FeedbackId> = Vec::new();
    for index in 0..6 {
        let body = format!("@@sleep 2\n@@write first-{index}.txt done");
        let item = world.feedback(&format!("First {index}"), &body).await;
        items.push(item.id);
    }
    for index in 0..4 {
        let body = format!("@@sleep 2\n@@write other-{index}.txt done");
        let item = world
            .feedback_in(&other, &format!("Other {index}"), &body)
            .await;
        items.push(item.id);
    }
    let since = chrono::Utc::now().timestamp() - 1;
    let events = SandboxEvents::follow(&world.installation, since);

    let begun = world
        .pipeline
        .code_runs()
        .begin_code_runs(&items, &CodeRunOptions::default())
        .await;
    let mut driving = Vec::new();
    for (item, begun) in begun {
        let begun = begun.unwrap_or_else(|error| panic!("item {item} was refused: {error}"));
        driving.push((begun.run_id(), tokio::spawn(begun.drive())));
    }
    let mut run_ids = Vec::new();
    for (run_id, driven) in driving {
        let report = driven.await.unwrap().expect("the run is recorded");
        let log = world.log_of(run_id).await;
        pr_number(&report);
        assert!(log.contains("scripted agent:"), "{log}");
        run_ids.push(run_id);
    }

    assert_eq!(world.fake.pulls(REPO).len(), 6, "one PR per item");
    assert_eq!(world.fake.pulls("octocat/other").len(), 4);
    let lifetimes = events.stop(10).await;
    assert_eq!(
        lifetimes.len(),
        10,
        "each run had its sandbox, seen by the engine: {lifetimes:?}"
    );
    assert!(
        lifetimes
            .values()
            .all(|(start, end)| *start != i64::MAX && *end != i64::MIN),
        "each sandbox started and stopped: {lifetimes:?}"
    );
    assert_eq!(
        most_at_once(&lifetimes),
        2,
        "two slots: two sandboxes at once, never more"
    );

    // Fair across repositories: the second repository's first item did not wait for the
    // first repository's six; it started among the first three.
    let mut started: Vec<(i64, String)> = lifetimes
        .iter()
        .map(|(run, (start, _))| (*start, run.clone()))
        .collect();
    started.sort();
    let second_repository_runs: Vec<String> =
        run_ids[6..].iter().map(|id| id.to_string()).collect();
    let first_of_second = started
        .iter()
        .position(|(_, run)| second_repository_runs.contains(run))
        .expect("the second repository's runs started");
    assert!(
        first_of_second <= 2,
        "the second repository waited behind the first: order {started:?}"
    );
    // And the log of a run that waited says its place.
    let last = world.log_of(run_ids[5]).await;
    assert!(last.contains("waiting in the run queue: place"), "{last}");
    assert!(last.contains("a slot is free: the run starts"), "{last}");
}
