//! The fault matrix of a code run: each GitHub step it takes (fetching, pushing, opening
//! the PR, writing the Follow-ups comment) fails in each way GitHub fails (a 5xx that
//! lasts, an answer lost after the write was done, a rate limit, a 422), one cell at a
//! time, against the fake GitHub with real git and the scripted agent.
//!
//! Every cell must keep the same promises: the run ends (succeeded, or failed with a
//! reason), the owner's follow-up is not lost, there is never a second PR or a second
//! Follow-ups comment, and once GitHub is well again the next run works and its comment
//! holds every follow-up. The table of what each cell did is written to
//! `target/fault-matrix/code-run.md` (copied into `docs/reliability.md`).

use handoff_test_support as support;

use std::time::Duration;

use handoff::domain::{RunFailureCode, RunStatus, SandboxBackend, Stage};
use handoff::pipeline::qa_run::QaResult;
use handoff::pipeline::CodeRunResult;
use handoff::store::RunFilter;
use support::eventually::eventually_true;
use support::fake_github::{Fault, FaultRule};
use support::network_link::NetworkLink;
use support::pipeline_world::{github_client_at, PipelineWorld, REPO};

/// A GitHub step of a code run, and how to aim a fault at it.
struct Step {
    name: &'static str,
    path: &'static str,
    method: Option<&'static str>,
    /// Git over HTTP (no rate limit or 422 of the REST kind there).
    git: bool,
}

const STEPS: &[Step] = &[
    Step {
        name: "fetch the repository",
        path: "git-upload-pack",
        method: None,
        git: true,
    },
    Step {
        name: "push the commits",
        path: "/git-receive-pack",
        method: Some("POST"),
        git: true,
    },
    Step {
        name: "open the PR",
        path: "/pulls",
        method: Some("POST"),
        git: false,
    },
    Step {
        name: "write the Follow-ups comment",
        path: "/comments",
        method: Some("POST"),
        git: false,
    },
];

/// A way GitHub fails.
struct Failure {
    name: &'static str,
    fault: fn(bool) -> Option<Fault>,
    /// How many requests it lasts for.
    times: usize,
}

const FAILURES: &[Failure] = &[
    Failure {
        name: "5xx that lasts",
        fault: |_| Some(Fault::Status(502)),
        times: 20,
    },
    Failure {
        name: "answer lost after the work was done",
        fault: |_| Some(Fault::AnswerLost(502)),
        times: 1,
    },
    Failure {
        name: "rate limit (reset in an hour)",
        fault: |git| {
            (!git).then_some(Fault::RateLimited {
                reset_in: Duration::from_secs(3600),
            })
        },
        times: 20,
    },
    Failure {
        name: "rate limit (reset in 1 s)",
        fault: |git| {
            (!git).then_some(Fault::RateLimited {
                reset_in: Duration::from_secs(1),
            })
        },
        times: 1,
    },
    Failure {
        name: "422",
        fault: |git| (!git).then_some(Fault::Status(422)),
        times: 1,
    },
];

const FOLLOW_UPS_MARKER: &str = "<!-- f2c-followups -->";

/// The number of the feedback PR and the Follow-ups comments on it.
fn pulls_and_follow_up_comments(world: &PipelineWorld) -> (usize, Vec<String>) {
    let pulls = world.fake.pulls(REPO);
    let comments = pulls
        .first()
        .map(|(number, _, _)| {
            world
                .fake
                .comments(REPO, *number)
                .into_iter()
                .map(|(_, _, body)| body)
                .filter(|body| body.contains(FOLLOW_UPS_MARKER))
                .collect()
        })
        .unwrap_or_default();
    (pulls.len(), comments)
}

/// Checks what a run under a fault left: it ended (succeeded, or failed with a reason),
/// the owner's follow-up is kept, and there is at most one PR and one Follow-ups
/// comment. Returns the outcome as the table says it, with what the run noted.
async fn first_run_outcome(
    world: &PipelineWorld,
    feedback: &handoff::domain::Feedback,
    report: &handoff::pipeline::CodeRunReport,
    cell_name: &str,
) -> String {
    assert!(
        matches!(report.run.status, RunStatus::Succeeded | RunStatus::Failed),
        "{cell_name}: the run did not end: {:?}",
        report.run.status
    );
    let outcome = match &report.result {
        CodeRunResult::Succeeded { .. } => "succeeded".to_owned(),
        CodeRunResult::Failed { code, message } => {
            assert!(
                !message.trim().is_empty(),
                "{cell_name}: failed without a reason"
            );
            format!("failed: `{code}`")
        }
        other => panic!("{cell_name}: {other:?}"),
    };
    let notes = world.store.runs().run(report.run.id).await.unwrap().notes;
    let follow_ups = world
        .store
        .feedback()
        .follow_ups(feedback.id)
        .await
        .unwrap();
    assert!(
        follow_ups
            .iter()
            .any(|follow_up| follow_up.body.contains("first follow-up")),
        "{cell_name}: the follow-up was lost"
    );
    let (pulls, comments) = pulls_and_follow_up_comments(world);
    assert!(pulls <= 1, "{cell_name}: {pulls} PRs");
    assert!(
        comments.len() <= 1,
        "{cell_name}: {} Follow-ups comments",
        comments.len()
    );
    if notes.is_empty() {
        outcome
    } else {
        // What the note says happened, without the error's details (times, addresses).
        let said: Vec<&str> = notes
            .iter()
            .map(|note| note.split(':').next().unwrap_or(note))
            .collect();
        format!("{outcome}, noted: {}", said.join("; "))
    }
}

/// With GitHub well again, the next run works, and there is one PR and one Follow-ups
/// comment holding both follow-ups. Returns the PRs and comments counted.
async fn next_run_works(
    world: &PipelineWorld,
    feedback: &handoff::domain::Feedback,
    cell_name: &str,
) -> (usize, usize) {
    let next = world
        .run(feedback, Some("second follow-up\n@@write c.txt c"))
        .await;
    assert!(
        matches!(next.result, CodeRunResult::Succeeded { .. }),
        "{cell_name}: the next run failed: {:?}",
        next.result
    );
    let (pulls, comments) = pulls_and_follow_up_comments(world);
    assert_eq!(pulls, 1, "{cell_name}: PRs after the next run");
    assert_eq!(
        comments.len(),
        1,
        "{cell_name}: Follow-ups comments after the next run"
    );
    assert!(
        comments[0].contains("first follow-up") && comments[0].contains("second follow-up"),
        "{cell_name}: the comment lost a follow-up: {}",
        comments[0]
    );
    (pulls, comments.len())
}

/// Runs one cell and returns its row of the table.
async fn cell(step: &Step, failure: &Failure, fault: Fault) -> String {
    let world = PipelineWorld::new(SandboxBackend::Local).await;
    let feedback = world.feedback("Faulty", "@@write a.txt a").await;
    let mut rule = FaultRule::new(step.path, fault).times(failure.times);
    if let Some(method) = step.method {
        rule = rule.method(method);
    }
    world.fake.inject(rule);
    let cell_name = format!("{} / {}", step.name, failure.name);

    // The run under the fault carries the owner's instructions, so there is a follow-up
    // to keep and a Follow-ups comment to write.
    let report = world
        .run(&feedback, Some("first follow-up\n@@write b.txt b"))
        .await;
    let outcome = first_run_outcome(&world, &feedback, &report, &cell_name).await;

    // GitHub is well again: the next run works and nothing is doubled or lost.
    world.fake.clear_faults();
    let (pulls, comments) = next_run_works(&world, &feedback, &cell_name).await;
    format!(
        "| {} | {} | {outcome} | {pulls} | {comments} | succeeded |",
        step.name, failure.name,
    )
}

/// Runs a code run whose network goes in the middle: while `step` talks to GitHub (the
/// request is held back a moment and the link is cut under it), or, with no step, while
/// the agent works. The network stays away until the run has ended.
async fn network_lost_cell(step: Option<&Step>) -> String {
    let mut world = PipelineWorld::new(SandboxBackend::Local).await;
    let link = NetworkLink::to(world.fake.address()).await;
    world.pipeline.github = github_client_at(&link.base(), world.fake.owner_token());
    let feedback = world.feedback("Faulty", "@@write a.txt a").await;
    let moment = step.map_or("while the agent works", |step| step.name);
    let cell_name = format!("network lost / {moment}");
    if let Some(step) = step {
        let mut rule = FaultRule::new(step.path, Fault::Slow(Duration::from_secs(2)));
        if let Some(method) = step.method {
            rule = rule.method(method);
        }
        world.fake.inject(rule);
    }

    let (run_id, driving) = world
        .start_in_background_with(
            &feedback,
            Some("first follow-up\n@@sleep 2\n@@write b.txt b"),
        )
        .await;
    match step {
        // The step's request has reached GitHub and waits for its answer.
        Some(_) => {
            eventually_true(&format!("{cell_name}: the step is reached"), || async {
                world.fake.faults_to_come() == 0
            })
            .await;
        }
        None => world.wait_until_the_agent_runs(run_id).await,
    }
    link.cut();
    let report = tokio::time::timeout(Duration::from_secs(120), driving)
        .await
        .unwrap_or_else(|_| panic!("{cell_name}: the run hung without its network"))
        .unwrap()
        .expect("the run is recorded");
    let outcome = first_run_outcome(&world, &feedback, &report, &cell_name).await;

    link.restore();
    world.fake.clear_faults();
    let (pulls, comments) = next_run_works(&world, &feedback, &cell_name).await;
    format!("| {moment} | {outcome} | {pulls} | {comments} | succeeded |")
}

#[tokio::test(flavor = "multi_thread")]
async fn the_network_lost_in_the_middle_of_a_code_run_loses_and_doubles_nothing() {
    let mut rows = vec![
        "| the network goes | the run | PRs after | Follow-ups comments after | next run |"
            .to_owned(),
        "|---|---|---:|---:|---|".to_owned(),
    ];
    for step in STEPS {
        rows.push(network_lost_cell(Some(step)).await);
    }
    rows.push(network_lost_cell(None).await);
    write_table("network-lost.md", &rows);
}

#[tokio::test(flavor = "multi_thread")]
async fn every_github_step_of_a_code_run_fails_without_losing_or_doubling_anything() {
    let mut rows = vec![
        "| step | GitHub fails with | the run | PRs after | Follow-ups comments after | next run |"
            .to_owned(),
        "|---|---|---|---:|---:|---|".to_owned(),
    ];
    for step in STEPS {
        for failure in FAILURES {
            let Some(fault) = (failure.fault)(step.git) else {
                continue;
            };
            rows.push(cell(step, failure, fault).await);
        }
    }
    write_table("code-run.md", &rows);
}

/// Writes a table of cells to `target/fault-matrix/{name}` and prints it.
fn write_table(name: &str, rows: &[String]) {
    let table = rows.join("\n") + "\n";
    let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/fault-matrix");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join(name), &table).unwrap();
    println!("{table}");
}

/// A QA stage and the GitHub step of it a fault is aimed at.
struct QaStep {
    stage: Stage,
    name: &'static str,
    path: &'static str,
    method: Option<&'static str>,
    git: bool,
    /// The hidden first line of the comment the stage writes.
    marker: &'static str,
}

const QA_STEPS: &[QaStep] = &[
    QaStep {
        stage: Stage::Review,
        name: "review: read the PR",
        path: "/pulls/",
        method: Some("GET"),
        git: false,
        marker: "<!-- sandbox-qa-review -->",
    },
    QaStep {
        stage: Stage::Review,
        name: "review: write its comment",
        path: "/comments",
        method: Some("POST"),
        git: false,
        marker: "<!-- sandbox-qa-review -->",
    },
    QaStep {
        stage: Stage::Plan,
        name: "plan: write its comment",
        path: "/comments",
        method: Some("POST"),
        git: false,
        marker: "<!-- sandbox-qa-plan -->",
    },
    QaStep {
        stage: Stage::Test,
        name: "test: file the failure's issue",
        path: "/issues",
        method: Some("POST"),
        git: false,
        marker: "<!-- sandbox-qa-results -->",
    },
    QaStep {
        stage: Stage::Test,
        name: "test: write the results comment",
        path: "/comments",
        method: Some("POST"),
        git: false,
        marker: "<!-- sandbox-qa-results -->",
    },
    QaStep {
        stage: Stage::Fix,
        name: "fix: push to the PR's branch",
        path: "/git-receive-pack",
        method: Some("POST"),
        git: true,
        marker: "<!-- sandbox-qa-results -->",
    },
];

fn comments_with(world: &PipelineWorld, number: u64, marker: &str) -> usize {
    world
        .fake
        .comments(REPO, number)
        .into_iter()
        .filter(|(_, _, body)| body.starts_with(marker))
        .count()
}

/// What a QA run's one stage did, as the table says it.
fn qa_outcome(cell_name: &str, report: &handoff::pipeline::qa_run::QaReport) -> String {
    assert!(
        matches!(report.run.status, RunStatus::Succeeded | RunStatus::Failed),
        "{cell_name}: the run did not end: {:?}",
        report.run.status
    );
    match &report.stages[0].result {
        QaResult::Succeeded { .. } => "succeeded".to_owned(),
        QaResult::Failed { code, message } => {
            assert!(
                !message.trim().is_empty(),
                "{cell_name}: failed without a reason"
            );
            format!("failed: `{code}`")
        }
        other => panic!("{cell_name}: {other:?}"),
    }
}

async fn qa_cell(step: &QaStep, failure: &Failure, fault: Fault) -> String {
    let world = PipelineWorld::new(SandboxBackend::Local).await;
    let number = world.qa_pull_request().await;
    // What the stage reads is in place first, made with GitHub well.
    let before: &[Stage] = match step.stage {
        Stage::Test => &[Stage::Plan],
        Stage::Fix => &[Stage::Plan, Stage::Test],
        _ => &[],
    };
    for stage in before {
        assert!(world.qa(number, *stage, false).await.succeeded());
    }
    let issues_before = world.fake.issues(REPO).len();
    let mut rule = FaultRule::new(step.path, fault).times(failure.times);
    if let Some(method) = step.method {
        rule = rule.method(method);
    }
    world.fake.inject(rule);
    let cell_name = format!("{} / {}", step.name, failure.name);

    let runs_before = world
        .store
        .runs()
        .runs(&RunFilter::default())
        .await
        .unwrap()
        .len();
    let begun = world
        .pipeline
        .qa_runs()
        .begin_qa(
            &REPO.parse().unwrap(),
            number,
            step.stage,
            handoff::pipeline::qa_run::QaOptions::default(),
        )
        .await;
    let outcome = match begun {
        Ok(begun) => {
            let report = begun.drive().await.expect("the QA run is recorded");
            qa_outcome(&cell_name, &report)
        }
        Err(error) => {
            assert_eq!(
                world
                    .store
                    .runs()
                    .runs(&RunFilter::default())
                    .await
                    .unwrap()
                    .len(),
                runs_before,
                "{cell_name}: a refused start recorded a run"
            );
            format!("refused before any run: `{}`", error.code().as_str())
        }
    };
    assert!(
        comments_with(&world, number, step.marker) <= 1,
        "{cell_name}: a second comment"
    );
    // The test stage files one issue for its one failed scenario, never two.
    assert!(
        world.fake.issues(REPO).len() <= issues_before.max(1),
        "{cell_name}: issues {:?}",
        world.fake.issues(REPO)
    );

    world.fake.clear_faults();
    let fixed_already = world
        .fake
        .file_on_branch(REPO, "feature/signup", "src/button.css")
        .is_some_and(|css| css.contains("44px"));
    let next = world.qa(number, step.stage, true).await;
    let next_outcome = qa_outcome(&cell_name, &next);
    let next_ok = next.succeeded()
        || (step.stage == Stage::Fix
            && fixed_already
            && next_outcome == format!("failed: `{}`", RunFailureCode::NoChanges));
    assert!(next_ok, "{cell_name}: the next run: {next_outcome}");
    assert_eq!(
        comments_with(&world, number, step.marker),
        1,
        "{cell_name}: comments after the next run"
    );
    assert!(
        world.fake.issues(REPO).len() <= 1,
        "{cell_name}: issues after the next run {:?}",
        world.fake.issues(REPO)
    );
    let next_said = if next.succeeded() {
        "succeeded".to_owned()
    } else {
        "nothing left to fix (the first push had gone through)".to_owned()
    };
    format!(
        "| {} | {} | {outcome} | {} | {} | {next_said} |",
        step.name,
        failure.name,
        comments_with(&world, number, step.marker),
        world.fake.issues(REPO).len()
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn every_github_step_of_each_qa_stage_fails_without_doubling_anything() {
    let mut rows = vec![
        "| step | GitHub fails with | the stage | its comments after | issues after | next run |"
            .to_owned(),
        "|---|---|---|---:|---:|---|".to_owned(),
    ];
    for step in QA_STEPS {
        for failure in FAILURES {
            let Some(fault) = (failure.fault)(step.git) else {
                continue;
            };
            rows.push(qa_cell(step, failure, fault).await);
        }
    }
    write_table("qa-stages.md", &rows);
}
