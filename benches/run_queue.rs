//! Twenty feedback items through the Docker backend, all asked for at once, with the
//! run queue's installation slots at one (one at a time, as before the queue) and at
//! two (this machine's default): the wall time from asking to the last PR, the most
//! sandboxes up at once (from the runs' records), and the mean wait in the queue.
//!
//! Each item's agent is the scripted agent waiting five seconds (an agent's thinking,
//! which takes no CPU of this machine) and writing one file; everything around it
//! (working copy, container, egress gate, commit, push, PR) is Handoff's real work.
//!
//! Run: `cargo bench --bench run_queue` (needs the test image:
//! scripts/build-test-image.sh). Figures: benches/results/run_queue.md.

use std::time::{Duration, Instant};

use handoff::domain::{FeedbackId, Run, SandboxBackend};
use handoff::pipeline::CodeRunOptions;
use handoff::store::{RunFilter, SettingKey};
use handoff_test_support::pipeline_world::{PipelineWorld, REPO};

const ITEMS: usize = 20;
const AGENT_SECONDS: u32 = 5;

struct Measured {
    slots: u32,
    wall: Duration,
    most_at_once: usize,
    mean_wait: Duration,
    succeeded: usize,
}

/// The most runs that were running at one moment, from their start and end times.
fn most_at_once(runs: &[Run]) -> usize {
    let mut moments = Vec::new();
    for run in runs {
        if let (Some(start), Some(end)) = (run.started_at, run.finished_at) {
            moments.push((end, -1));
            moments.push((start, 1));
        }
    }
    moments.sort();
    let (mut up, mut most) = (0_i32, 0_i32);
    for (_, change) in moments {
        up += change;
        most = most.max(up);
    }
    usize::try_from(most).unwrap_or_default()
}

async fn measure(slots: u32) -> Measured {
    let world = PipelineWorld::new(SandboxBackend::Docker).await;
    world
        .store
        .settings()
        .set_setting(SettingKey::QueueSlots, &slots.to_string())
        .await
        .expect("the slots are set");
    let mut items: Vec<FeedbackId> = Vec::new();
    for index in 0..ITEMS {
        let body = format!("@@sleep {AGENT_SECONDS}\n@@write item-{index}.txt done");
        items.push(world.feedback(&format!("Item {index}"), &body).await.id);
    }

    let asked = Instant::now();
    let mut driving = Vec::new();
    for (item, begun) in world
        .pipeline
        .code_runs()
        .begin_code_runs(&items, &CodeRunOptions::default())
        .await
    {
        let begun = begun.unwrap_or_else(|error| panic!("item {item} was refused: {error}"));
        driving.push(tokio::spawn(begun.drive()));
    }
    for driven in driving {
        driven
            .await
            .expect("the run's task")
            .expect("the run is recorded");
    }
    let wall = asked.elapsed();

    let runs = world
        .store
        .runs()
        .runs(&RunFilter::default())
        .await
        .expect("runs");
    for run in runs.iter().filter(|run| run.failure_message.is_some()) {
        eprintln!(
            "with {slots} slot(s), run {} did not succeed: {}\n{}",
            run.id,
            run.failure_message.as_deref().unwrap_or_default(),
            world.log_of(run.id).await
        );
    }
    let waits: Vec<Duration> = runs
        .iter()
        .filter_map(|run| (run.started_at? - run.created_at).to_std().ok())
        .collect();
    let mean_wait = waits.iter().sum::<Duration>() / u32::try_from(waits.len().max(1)).unwrap_or(1);
    Measured {
        slots,
        wall,
        most_at_once: most_at_once(&runs),
        mean_wait,
        succeeded: world.fake.pulls(REPO).len(),
    }
}

#[tokio::main]
async fn main() {
    // Each measure is a new installation: both pay for starting their egress gate once.
    let mut rows = Vec::new();
    for slots in [1, 2] {
        rows.push(measure(slots).await);
    }
    println!("{ITEMS} items through Docker, each agent {AGENT_SECONDS} s, asked for at once:");
    println!("| installation slots | wall time, asking to the last PR | per item | most sandboxes at once | mean wait in the queue | PRs opened |");
    println!("|---|---|---|---|---|---|");
    let one_at_a_time = rows[0].wall.as_secs_f64();
    for row in &rows {
        println!(
            "| {} | {:.1} s ({:.2}× one at a time) | {:.1} s | {} | {:.1} s | {} of {ITEMS} |",
            row.slots,
            row.wall.as_secs_f64(),
            row.wall.as_secs_f64() / one_at_a_time,
            row.wall.as_secs_f64() / ITEMS as f64,
            row.most_at_once,
            row.mean_wait.as_secs_f64(),
            row.succeeded,
        );
    }
}
