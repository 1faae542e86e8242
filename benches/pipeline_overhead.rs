//! What a run costs besides the agent's own work, on a generated repository of 20,000
//! files and 2,000 commits served by the fake GitHub over real git HTTP:
//!
//! (a) getting a working copy: Handoff's warm cache (an incremental fetch, then a local
//!     clone) against a fresh shallow clone from GitHub, as the original workflow did;
//!     and a cold cache (the first run of a repository);
//! (b) an iterate on the local backend: from "run" to the agent's first instruction,
//!     and the whole overhead beyond the agent's own time, with the feedback item's
//!     working copy kept from its last run (the default) and with a fresh copy each run;
//! (c) the same on Docker (the kept copy is the item's volume);
//! (d) Docker again with a dev container on the base branch: the first run builds its
//! environment, the iterates start in the ready image.
//!
//! Before each iterate someone pushes a commit that changes five files to the branch,
//! so the kept copy has something to catch up with, as an iterate after a review would.
//!
//! Run: `cargo bench --bench pipeline_overhead` (needs the test image:
//! scripts/build-test-image.sh). Figures: benches/results/pipeline_overhead.md.
//!
//! To look into one row: `PIPELINE_BENCH_ROWS` names the iterate rows to run (a comma
//! list of `local-kept`, `local-fresh`, `docker-kept`, `docker-kept-no-network`,
//! `docker-fresh`, `docker-environment`; all by default), and `RUST_LOG` (say
//! `handoff=debug`) prints Handoff's own log, timed, on the standard error.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use handoff::domain::{FeedbackSource, NewRepo, SandboxBackend};
use handoff::github::{GithubClient, GithubEndpoints, RequestPolicy};
use handoff::pipeline::host_git::HostGit;
use handoff::pipeline::{CodeRunOptions, CodeRunResult, Pipeline, PipelineSettings};
use handoff::pipeline_settings::DEFAULT_KEPT_COPY_RETENTION;
use handoff::secrets::{Secret, SecretStore};
use handoff::store::{NewFeedback, RepoSettingsChange};
use handoff::Store;
use handoff_test_support::fake_github::FakeGithub;

const REPO: &str = "octocat/big-repo";
const FILES: usize = 20_000;
const COMMITS: usize = 2_000;
const ROUNDS: usize = 5;
const IMAGE: &str = "handoff-test-agent:bookworm";

/// An agent that notes when it starts and ends (nanoseconds since the epoch) and
/// changes one file.
const TIMING_AGENT: &str = "date +%s%N > \"$HANDOFF_OUTPUT_DIR/agent-start\"; \
    echo \"run $HANDOFF_RUN_ID\" >> CHANGES.md; \
    date +%s%N > \"$HANDOFF_OUTPUT_DIR/agent-end\"; \
    cp \"$HANDOFF_OUTPUT_DIR/agent-start\" \"$HANDOFF_OUTPUT_DIR/agent-end\" \"$HANDOFF_OUTPUT_DIR/../\" 2>/dev/null; true";

/// Fills `bare` with FILES files in the first commit and COMMITS commits in all.
fn generate_history(bare: &Path) {
    let mut importer = Command::new("git")
        .arg("-C")
        .arg(bare)
        .args(["fast-import", "--quiet"])
        .stdin(Stdio::piped())
        .spawn()
        .expect("git fast-import");
    let mut input = std::io::BufWriter::new(importer.stdin.take().unwrap());
    let data = |input: &mut std::io::BufWriter<std::process::ChildStdin>, text: &str| {
        write!(input, "data {}\n{}\n", text.len(), text).unwrap();
    };
    for commit in 0..COMMITS {
        writeln!(input, "commit refs/heads/main").unwrap();
        writeln!(
            input,
            "committer Bench <bench@example.invalid> {} +0000",
            1_700_000_000 + commit
        )
        .unwrap();
        // Each commit follows the branch's previous one.
        data(&mut input, &format!("Commit {commit}"));
        let files: Vec<usize> = if commit == 0 {
            (0..FILES).collect()
        } else {
            (0..5)
                .map(|n| (commit * 7919 + n * 104_729) % FILES)
                .collect()
        };
        for file in files {
            writeln!(
                input,
                "M 100644 inline src/module_{:03}/file_{file:05}.txt",
                file / 100
            )
            .unwrap();
            data(
                &mut input,
                &format!(
                    "file {file}, last touched by commit {commit}\n{}\n",
                    "lorem ipsum dolor sit amet ".repeat(6)
                ),
            );
        }
    }
    drop(input);
    assert!(importer.wait().unwrap().success(), "fast-import failed");
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(duration: Duration) -> String {
    format!("{} ms", duration.as_millis())
}

fn nanos_in(path: &Path) -> Option<u128> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

fn now_nanos() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

async fn pipeline_for(
    fake: &FakeGithub,
    backend: SandboxBackend,
    kept_copies: bool,
    network: handoff::domain::NetworkMode,
) -> (Pipeline, tempfile::TempDir) {
    let data = tempfile::tempdir().unwrap();
    let store = Store::open_in(data.path()).await.unwrap();
    let repo = store
        .repositories()
        .add_repo(&NewRepo {
            sandbox_backend: backend,
            agent_preset: "custom".to_owned(),
            monthly_run_quota: None,
            ..NewRepo::with_defaults(REPO.parse().unwrap())
        })
        .await
        .unwrap();
    store
        .repositories()
        .change_repo_settings(
            repo.id,
            &RepoSettingsChange {
                agent_command: Some(Some(TIMING_AGENT.to_owned())),
                docker_image: Some(Some(IMAGE.to_owned())),
                network_mode: Some(network),
                ..RepoSettingsChange::default()
            },
        )
        .await
        .unwrap();
    let github = GithubClient::new(
        GithubEndpoints::new(&fake.api_base()).unwrap(),
        Secret::new(fake.owner_token()),
        RequestPolicy::default(),
    )
    .unwrap();
    let pipeline = Pipeline {
        store,
        github,
        secrets: SecretStore::os(),
        data_dir: data.path().to_owned(),
        settings: PipelineSettings {
            keep_workspaces: true,
            kept_copy_retention: kept_copies.then_some(DEFAULT_KEPT_COPY_RETENTION),
            ..PipelineSettings::default()
        },
    };
    (pipeline, data)
}

/// One code run; returns (overhead before the agent's first instruction, overhead in
/// all beyond the agent's own time).
async fn timed_run(
    pipeline: &Pipeline,
    feedback: handoff::domain::FeedbackId,
    instructions: Option<String>,
) -> (Duration, Duration) {
    let started = now_nanos();
    let clock = Instant::now();
    let begun = pipeline
        .code_runs()
        .begin_code_run(
            feedback,
            CodeRunOptions {
                instructions,
                ..CodeRunOptions::default()
            },
        )
        .await
        .unwrap();
    let run_id = begun.run_id();
    let report = begun.drive().await.unwrap();
    let total = clock.elapsed();
    assert!(
        matches!(report.result, CodeRunResult::Succeeded { .. }),
        "{:?}",
        report.result
    );
    let workspace = pipeline
        .data_dir
        .join("workspaces")
        .join(format!("run-{run_id}"));
    let agent_start = nanos_in(&workspace.join("out/agent-start")).expect("the agent's start time");
    let agent_end = nanos_in(&workspace.join("out/agent-end")).expect("the agent's end time");
    let _ = std::fs::remove_dir_all(&workspace);
    let to_first = Duration::from_nanos((agent_start - started) as u64);
    let agent = Duration::from_nanos((agent_end - agent_start) as u64);
    (to_first, total.saturating_sub(agent))
}

/// What the iterates of one item measured.
struct IterateRounds {
    first_run: Duration,
    to_first: Vec<Duration>,
    overhead: Vec<Duration>,
}

/// A first run of a new item on `backend`, then ROUNDS iterates, each after a commit
/// of five changed files lands on the item's branch.
async fn iterate_rounds(
    fake: &FakeGithub,
    backend: SandboxBackend,
    kept: bool,
    network: handoff::domain::NetworkMode,
) -> IterateRounds {
    let (pipeline, _data) = pipeline_for(fake, backend, kept, network).await;
    let feedback = pipeline
        .store
        .feedback()
        .add_feedback(&NewFeedback {
            repo: REPO.parse().unwrap(),
            title: Some(format!("Bench on {backend}")),
            body: "Benchmark".to_owned(),
            source: FeedbackSource::App,
            github_issue: None,
            opened_by_visitor: false,
        })
        .await
        .unwrap();
    let (first_run, _) = timed_run(&pipeline, feedback.id, None).await;
    let mut rounds = IterateRounds {
        first_run,
        to_first: Vec::new(),
        overhead: Vec::new(),
    };
    for round in 0..ROUNDS {
        let changed: Vec<(String, String)> = (0..5)
            .map(|n| {
                let file = (round * 5 + n) * 37 % FILES;
                (
                    format!("src/module_{:03}/file_{file:05}.txt", file / 100),
                    format!("changed by a reviewer in round {round}\n"),
                )
            })
            .collect();
        let changed: Vec<(&str, &str)> = changed
            .iter()
            .map(|(path, text)| (path.as_str(), text.as_str()))
            .collect();
        fake.push_commit(
            REPO,
            &feedback.head_branch,
            &format!("Review round {round}"),
            &changed,
        );
        let (to_first, overhead) =
            timed_run(&pipeline, feedback.id, Some(format!("round {round}"))).await;
        rounds.to_first.push(to_first);
        rounds.overhead.push(overhead);
    }
    // The item's copy (a Docker volume of 20,000 files) goes with the benchmark.
    let mut dropping = pipeline.clone();
    dropping.settings.kept_copy_retention = None;
    if let Err(error) = dropping.kept_copies().prune_kept_copies().await {
        eprintln!("the bench's kept copies could not be removed: {error}");
    }
    // And the repository's egress gate, which outlives runs.
    if backend == SandboxBackend::Docker {
        let installation = pipeline.store.settings().installation_id().await.unwrap();
        let docker = bollard::Docker::connect_with_defaults().unwrap();
        if let Err(error) =
            handoff::sandbox::docker_gate::remove_gates(&docker, &installation, None).await
        {
            eprintln!("the bench's egress gate could not be removed: {error}");
        }
        // And its environment images, when the repository named one.
        match handoff::sandbox::environment_image::prune_environment_images(
            &docker,
            &installation,
            REPO,
            "",
        )
        .await
        {
            Ok(removed) => eprintln!("removed the bench's environment images: {removed:?}"),
            Err(error) => eprintln!("the bench's environment images could not be removed: {error}"),
        }
    }
    rounds
}

/// Whether the iterate row `row` is one `PIPELINE_BENCH_ROWS` asks for (all are, by
/// default).
fn row_wanted(row: &str) -> bool {
    match std::env::var("PIPELINE_BENCH_ROWS") {
        Ok(rows) if !rows.trim().is_empty() => rows.split(',').any(|wanted| wanted.trim() == row),
        _ => true,
    }
}

fn main() {
    if let Ok(filter) = tracing_subscriber::EnvFilter::try_from_default_env() {
        tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(std::io::stderr)
            .init();
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let fake = FakeGithub::start().await;
        let bare = fake.create_empty_repo(REPO, "main");
        let generation = Instant::now();
        generate_history(&bare);
        eprintln!("generated {FILES} files and {COMMITS} commits in {}", ms(generation.elapsed()));
        let git = HostGit::new(&fake.web_base(), Secret::new(fake.owner_token()));
        let repo_name = REPO.parse().unwrap();

        // The disk itself: how long writing FILES small files takes here.
        let mut disk = Vec::new();
        for _ in 0..ROUNDS {
            let scratch = tempfile::tempdir().unwrap();
            let clock = Instant::now();
            for file in 0..FILES {
                let folder = scratch.path().join(format!("m{:03}", file / 100));
                std::fs::create_dir_all(&folder).unwrap();
                std::fs::write(folder.join(format!("f{file:05}.txt")), [b'x'; 200]).unwrap();
            }
            disk.push(clock.elapsed());
        }

        // (a) Working copies.
        let mut cold = Vec::new();
        let mut warm_fetch = Vec::new();
        let mut warm = Vec::new();
        let mut shallow = Vec::new();
        for _ in 0..ROUNDS {
            let scratch = tempfile::tempdir().unwrap();
            let clock = Instant::now();
            let cache = git.update_cache(&scratch.path().join("cache"), &repo_name, &[]).await.unwrap();
            git.make_working_copy(&cache, &scratch.path().join("cold"), "refs/heads/main", "feedback/f2c-bench").await.unwrap();
            cold.push(clock.elapsed());

            let clock = Instant::now();
            let cache = git.update_cache(&scratch.path().join("cache"), &repo_name, &[]).await.unwrap();
            warm_fetch.push(clock.elapsed());
            git.make_working_copy(&cache, &scratch.path().join("warm"), "refs/heads/main", "feedback/f2c-bench").await.unwrap();
            warm.push(clock.elapsed());

            let clock = Instant::now();
            git.shallow_clone(&repo_name, "main", &scratch.path().join("shallow")).await.unwrap();
            shallow.push(clock.elapsed());
        }

        // (b) and (c): iterates on each backend, with the item's copy kept and without.
        // The default network is the allow-list, through the repository's egress gate;
        // one more Docker row without a network shows what the gate costs.
        use handoff::domain::NetworkMode;
        let mut iterates = Vec::new();
        for (row, backend, kept, network) in [
            ("local-kept", SandboxBackend::Local, true, NetworkMode::Allowlist),
            ("local-fresh", SandboxBackend::Local, false, NetworkMode::Allowlist),
            ("docker-kept", SandboxBackend::Docker, true, NetworkMode::Allowlist),
            ("docker-kept-no-network", SandboxBackend::Docker, true, NetworkMode::None),
            ("docker-fresh", SandboxBackend::Docker, false, NetworkMode::Allowlist),
        ] {
            if !row_wanted(row) {
                continue;
            }
            iterates.push((
                backend,
                kept,
                network,
                iterate_rounds(&fake, backend, kept, network).await,
            ));
        }
        // (d) Docker with a dev container on the base branch: the first run builds its
        // environment (the agent image as its base, Handoff's layer, a setup command),
        // the iterates start in the ready image.
        let with_environment = if row_wanted("docker-environment") {
            fake.push_commit(
                REPO,
                "main",
                "A dev container",
                &[(
                    ".devcontainer.json",
                    &format!("{{ \"image\": \"{IMAGE}\", \"postCreateCommand\": \"git --version\" }}"),
                )],
            );
            Some(iterate_rounds(&fake, SandboxBackend::Docker, true, NetworkMode::Allowlist).await)
        } else {
            None
        };
        println!("## Pipeline overhead (median of {ROUNDS} rounds)\n");
        println!("Repository: {FILES} files, {COMMITS} commits, served by the fake GitHub over git HTTP.\n");
        println!("| what | time |");
        println!("|---|---|");
        println!("| baseline: writing {FILES} files of 200 bytes on this machine's disk | {} |", ms(median(disk)));
        println!("| (a) warm cache: the incremental fetch alone (nothing new on GitHub) | {} |", ms(median(warm_fetch)));
        println!("| (a) working copy, cold cache (first run of a repository: full fetch + local clone) | {} |", ms(median(cold)));
        println!("| (a) working copy, warm cache (incremental fetch + local clone) | {} |", ms(median(warm)));
        println!("| (a) working copy, fresh shallow clone from GitHub (the original workflow) | {} |", ms(median(shallow.clone())));
        let shallow = median(shallow);
        for (backend, kept, network, rounds) in &iterates {
            let how = match (kept, network) {
                (true, NetworkMode::None) => "kept copy, no network (no egress gate)",
                (true, _) => "kept copy",
                (false, _) => "fresh copy each run",
            };
            let label = if *backend == SandboxBackend::Local { "(b)" } else { "(c)" };
            println!("| {label} {backend}, {how}: first run of the item (\"run\" to the agent's first instruction) | {} |", ms(rounds.first_run));
            println!("| {label} {backend}, {how}: iterate, \"run\" to the agent's first instruction | {} |", ms(median(rounds.to_first.clone())));
            let overhead = median(rounds.overhead.clone());
            println!(
                "| {label} {backend}, {how}: **whole iterate beyond the agent's own time** | **{}** ({:.2}× the shallow clone) |",
                ms(overhead),
                overhead.as_secs_f64() / shallow.as_secs_f64()
            );
        }
        let Some(rounds) = with_environment else {
            return;
        };
        println!("| (d) docker, kept copy, a dev container: first run of the item, building its environment (\"run\" to the agent's first instruction) | {} |", ms(rounds.first_run));
        println!("| (d) docker, kept copy, a dev container: iterate in the ready environment, \"run\" to the agent's first instruction | {} |", ms(median(rounds.to_first.clone())));
        let overhead = median(rounds.overhead.clone());
        println!(
            "| (d) docker, kept copy, a dev container: **whole iterate beyond the agent's own time** | **{}** ({:.2}× the shallow clone) |",
            ms(overhead),
            overhead.as_secs_f64() / shallow.as_secs_f64()
        );
    });
}
