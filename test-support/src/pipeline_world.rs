//! A world for pipeline tests: the fake GitHub with a repository whose first commit
//! holds the scripted agent, a store with that repository connected (custom agent
//! preset running the script), and a pipeline on the chosen backend. Plus the journey
//! every backend must pass.

use std::time::Duration;

use handoff::domain::run_event::RunEventKind;
use handoff::domain::{Feedback, FeedbackSource, FeedbackStatus, Repo, RunId, SandboxBackend};
use handoff::github::{GithubClient, GithubEndpoints, RequestPolicy};
use handoff::pipeline::{
    CodeRunOptions, CodeRunReport, CodeRunResult, Pipeline, PipelineError, PipelineSettings,
};
use handoff::sandbox::e2b::E2bSettings;
use handoff::sandbox::ResourceLimits;
use handoff::secrets::{Secret, SecretStore};
use handoff::store::{NewFeedback, RepoSettingsChange};
use handoff::Store;

use crate::docker_images::GatesRemovedOnDrop;
use crate::fake_github::{FakeGithub, OWNER};

pub const REPO: &str = "octocat/hello-world";
pub use crate::scripted_repository::{SCRIPTED_AGENT, TEST_IMAGE};

pub struct PipelineWorld {
    pub fake: FakeGithub,
    pub store: Store,
    pub pipeline: Pipeline,
    pub repo: Repo,
    pub data: tempfile::TempDir,
    /// The installation's id, which names its Docker containers and gates.
    pub installation: String,
    _gates: GatesRemovedOnDrop,
}

/// One installation of Handoff: a data folder with its store, the repository connected
/// (custom agent running the scripted agent), and a pipeline signed in as the owner.
pub struct Installation {
    pub store: Store,
    pub pipeline: Pipeline,
    pub repo: Repo,
    pub data: tempfile::TempDir,
    pub installation: String,
    gates: GatesRemovedOnDrop,
}

/// Connects a new installation to `fake`.
pub async fn install(
    fake: &FakeGithub,
    backend: SandboxBackend,
    settings: PipelineSettings,
) -> Installation {
    let data = tempfile::tempdir().expect("a data folder");
    let store = Store::open_in(data.path()).await.expect("store");
    let repo = crate::scripted_repository::connect_scripted(&store, REPO, backend).await;
    let github = github_client_at(&fake.api_base(), fake.owner_token());
    let pipeline = Pipeline {
        store: store.clone(),
        github,
        secrets: SecretStore::os(),
        data_dir: data.path().to_owned(),
        settings,
    };
    let installation = store
        .settings()
        .installation_id()
        .await
        .expect("installation id");
    Installation {
        store,
        pipeline,
        repo,
        data,
        gates: GatesRemovedOnDrop(installation.clone()),
        installation,
    }
}

/// A GitHub client for the tests' pipelines, signed in with `token`, talking to
/// `api_base` (the fake, or a link to it): two attempts, short waits.
pub fn github_client_at(api_base: &str, token: &str) -> GithubClient {
    GithubClient::new(
        GithubEndpoints::new(api_base).unwrap(),
        Secret::new(token),
        RequestPolicy {
            attempts: 2,
            first_retry_delay: Duration::from_millis(20),
            max_rate_limit_wait: Duration::from_secs(5),
            timeout: Duration::from_secs(10),
        },
    )
    .unwrap()
}

pub fn quick_settings() -> PipelineSettings {
    PipelineSettings {
        heartbeat_interval: Duration::from_millis(200),
        limits: ResourceLimits {
            memory_bytes: 512 * 1024 * 1024,
            cpus: 1.0,
            max_processes: 256,
            ..ResourceLimits::default()
        },
        e2b: E2bSettings::default(),
        ..PipelineSettings::default()
    }
}

impl PipelineWorld {
    pub async fn new(backend: SandboxBackend) -> PipelineWorld {
        PipelineWorld::with_settings(backend, quick_settings()).await
    }

    pub async fn with_settings(
        backend: SandboxBackend,
        settings: PipelineSettings,
    ) -> PipelineWorld {
        let fake = FakeGithub::start().await;
        fake.create_repo_with_files(REPO, "main", &[(".handoff/agent.sh", SCRIPTED_AGENT)]);
        let installation = install(&fake, backend, settings).await;
        PipelineWorld {
            fake,
            store: installation.store,
            pipeline: installation.pipeline,
            repo: installation.repo,
            data: installation.data,
            installation: installation.installation,
            _gates: installation.gates,
        }
    }

    /// Another installation of Handoff on the same fake GitHub (a new data folder, the
    /// repository connected the same way): what a reinstall or a second machine sees.
    pub async fn another_installation(&self) -> Installation {
        let installation = install(
            &self.fake,
            self.repo.sandbox_backend,
            self.pipeline.settings.clone(),
        )
        .await;
        installation
            .store
            .repositories()
            .change_repo_settings(
                installation.repo.id,
                &RepoSettingsChange {
                    custom_instructions: Some(
                        self.store
                            .repositories()
                            .repo(self.repo.id)
                            .await
                            .unwrap()
                            .custom_instructions,
                    ),
                    ..RepoSettingsChange::default()
                },
            )
            .await
            .unwrap();
        installation
    }

    /// A new feedback item on the world's repository.
    pub async fn feedback(&self, title: &str, body: &str) -> Feedback {
        self.feedback_in(&self.repo, title, body).await
    }

    /// Starts and drives a code run to its end.
    pub async fn run(&self, feedback: &Feedback, instructions: Option<&str>) -> CodeRunReport {
        let begun = self
            .pipeline
            .code_runs()
            .begin_code_run(
                feedback.id,
                CodeRunOptions {
                    instructions: instructions.map(str::to_owned),
                    ..CodeRunOptions::default()
                },
            )
            .await
            .unwrap_or_else(|error| panic!("the run did not start: {error}"));
        begun.drive().await.expect("the run is recorded")
    }

    /// Starts a code run on `feedback` and drives it in a task of its own, for the tests
    /// that act while it runs (cancel it, crash it, look at its sandbox).
    pub async fn start_in_background(
        &self,
        feedback: &Feedback,
    ) -> (
        RunId,
        tokio::task::JoinHandle<Result<CodeRunReport, PipelineError>>,
    ) {
        self.start_in_background_with(feedback, None).await
    }

    /// [`Self::start_in_background`], with the owner's `instructions`.
    pub async fn start_in_background_with(
        &self,
        feedback: &Feedback,
        instructions: Option<&str>,
    ) -> (
        RunId,
        tokio::task::JoinHandle<Result<CodeRunReport, PipelineError>>,
    ) {
        let begun = self
            .pipeline
            .code_runs()
            .begin_code_run(
                feedback.id,
                CodeRunOptions {
                    instructions: instructions.map(str::to_owned),
                    ..CodeRunOptions::default()
                },
            )
            .await
            .unwrap_or_else(|error| panic!("the run did not start: {error}"));
        (begun.run_id(), tokio::spawn(begun.drive()))
    }

    pub async fn log_text(&self, report: &CodeRunReport) -> String {
        self.log_of(report.run.id).await
    }

    /// The latest build of the repository's environment, which there must be.
    pub async fn latest_environment_build(&self) -> handoff::store::EnvironmentBuildRecord {
        self.store
            .environment_builds()
            .latest_environment_build(self.repo.id)
            .await
            .unwrap()
            .expect("an environment build")
    }

    /// The stored log of run `run_id`, as one text.
    pub async fn log_of(&self, run_id: RunId) -> String {
        self.store
            .runs()
            .run_log(run_id, 0)
            .await
            .unwrap()
            .into_iter()
            .map(|chunk| chunk.text)
            .collect()
    }

    /// Waits until the agent of run `run_id` has started.
    pub async fn wait_until_the_agent_runs(&self, run_id: RunId) {
        crate::eventually::eventually_true(
            &format!("the agent of run {run_id:?} starts"),
            || async { self.log_of(run_id).await.contains("scripted agent:") },
        )
        .await;
    }

    pub async fn status(&self, feedback: &Feedback) -> FeedbackStatus {
        self.store
            .feedback()
            .feedback(feedback.id)
            .await
            .unwrap()
            .status
    }
}

pub fn pr_number(report: &CodeRunReport) -> u64 {
    match &report.result {
        CodeRunResult::Succeeded { pr_number, .. } => *pr_number,
        other => panic!("the run did not succeed: {other:?}"),
    }
}

/// The journey each backend must pass: the first run opens the PR; an iterate adds a
/// commit to the same PR and updates the Follow-ups comment; a commit the owner pushed
/// by hand is kept; no token reaches the sandbox.
pub async fn first_run_iterate_and_manual_commit_journey(world: &PipelineWorld) {
    let feedback = world
        .feedback(
            "Signup button too small",
            "On phones the button is tiny.\n@@write src/button.css .signup { height: 20px; }\n@@usage 0.25",
        )
        .await;

    // First run: a new branch, a new PR.
    let first = world.run(&feedback, None).await;
    let log = world.log_text(&first).await;
    let number = pr_number(&first);
    assert_eq!(
        world.status(&feedback).await,
        FeedbackStatus::WaitingForReview,
        "{log}"
    );
    let pulls = world.fake.pulls(REPO);
    assert_eq!(pulls.len(), 1);
    assert_eq!(
        pulls[0],
        (number, feedback.head_branch.clone(), "open".to_owned())
    );
    assert_eq!(
        world
            .fake
            .file_on_branch(REPO, &feedback.head_branch, "src/button.css")
            .as_deref(),
        Some(".signup { height: 20px; }\n")
    );
    assert!(
        log.contains("scripted agent:"),
        "the agent's output is in the log:\n{log}"
    );
    assert_eq!(first.events.len(), 1);
    assert_eq!(first.events[0].kind, RunEventKind::PullRequestOpened);
    assert_eq!(first.run.llm_cost_usd, Some(0.25));
    assert!(first.run.finished_at.is_some());

    // The owner pushes a commit by hand.
    let manual = world.fake.push_commit(
        REPO,
        &feedback.head_branch,
        "Owner's note",
        &[("NOTES.md", "by hand\n")],
    );

    // Iterate: same branch, same PR, one more commit, the thread on the PR.
    let second = world
        .run(
            &feedback,
            Some("Make it 44px.\n@@write src/button.css .signup { height: 44px; }"),
        )
        .await;
    assert_eq!(
        pr_number(&second),
        number,
        "{}",
        world.log_text(&second).await
    );
    assert_eq!(world.fake.pulls(REPO).len(), 1, "no second PR");
    assert_eq!(
        world
            .fake
            .file_on_branch(REPO, &feedback.head_branch, "src/button.css")
            .as_deref(),
        Some(".signup { height: 44px; }\n")
    );
    assert_eq!(
        world
            .fake
            .file_on_branch(REPO, &feedback.head_branch, "NOTES.md")
            .as_deref(),
        Some("by hand\n"),
        "the owner's commit is kept"
    );
    let commits = world
        .fake
        .commits_ahead(REPO, &feedback.head_branch, "main");
    assert_eq!(commits.len(), 3, "{commits:?}");
    assert_eq!(commits[1], "Owner's note");
    assert!(
        commits[2].starts_with("Signup button too small"),
        "{commits:?}"
    );
    let branch_log = world
        .fake
        .commits_ahead(REPO, &feedback.head_branch, &manual);
    assert_eq!(
        branch_log.len(),
        1,
        "the iterate built on the owner's commit"
    );
    let thread = world
        .fake
        .comments(REPO, number)
        .into_iter()
        .find(|(_, _, body)| body.starts_with("<!-- f2c-followups -->"))
        .expect("the Follow-ups comment");
    assert!(thread.2.contains("Make it 44px."), "{}", thread.2);
    assert_eq!(second.events.len(), 1);
    assert_eq!(second.events[0].kind, RunEventKind::PullRequestUpdated);
    assert_eq!(
        world.status(&feedback).await,
        FeedbackStatus::WaitingForReview
    );

    // Another iterate updates the same Follow-ups comment rather than adding one.
    let third = world
        .run(
            &feedback,
            Some("And a border.\n@@write src/border.css .signup { border: 1px solid; }"),
        )
        .await;
    assert_eq!(pr_number(&third), number);
    let managed: Vec<_> = world
        .fake
        .comments(REPO, number)
        .into_iter()
        .filter(|(_, _, body)| body.starts_with("<!-- f2c-followups -->"))
        .collect();
    assert_eq!(managed.len(), 1);
    assert!(managed[0].2.contains("Make it 44px.") && managed[0].2.contains("And a border."));
    let opened = world
        .store
        .runs()
        .feedback_events(feedback.id)
        .await
        .unwrap()
        .into_iter()
        .filter(|event| event.kind == RunEventKind::PullRequestOpened)
        .count();
    assert_eq!(opened, 1, "never \"PR opened\" twice");
}

/// The token is in no environment variable, file or command line the sandbox sees.
pub async fn token_never_enters_the_sandbox(world: &PipelineWorld) {
    let feedback = world
        .feedback("Scan", "Look around.\n@@scan\n@@write scanned.txt yes")
        .await;
    let report = world.run(&feedback, None).await;
    let log = world.log_text(&report).await;
    pr_number(&report);
    assert!(log.contains("== scan done"), "the scan ran:\n{log}");
    assert!(
        log.contains("HANDOFF_RUN_ID="),
        "the environment was listed"
    );
    assert!(log.contains("handoff/prompt.md"), "the files were listed");
    let token = world.fake.owner_token();
    assert!(!log.contains(token), "the token reached the sandbox");
    let texts = world.store.runs().run_texts(report.run.id).await.unwrap();
    assert!(!texts.prompt.unwrap_or_default().contains(token));
    let _ = OWNER;
}

pub use crate::qa_directives::QA_DIRECTIVES;

impl PipelineWorld {
    /// A PR on the fake (a branch with one commit) and the repository told to follow
    /// the QA directives; returns the PR's number.
    pub async fn qa_pull_request(&self) -> u64 {
        self.fake.create_branch(REPO, "feature/signup", "main");
        self.fake.push_commit(
            REPO,
            "feature/signup",
            "Signup button",
            &[("src/button.css", ".signup { height: 20px; }\n")],
        );
        let number = self
            .fake
            .create_pull(REPO, OWNER, "feature/signup", "Signup button");
        self.store
            .repositories()
            .change_repo_settings(
                self.repo.id,
                &RepoSettingsChange {
                    custom_instructions: Some(QA_DIRECTIVES.to_owned()),
                    ..RepoSettingsChange::default()
                },
            )
            .await
            .unwrap();
        number
    }

    /// Sets the repository's custom instructions (the scripted agent's directives).
    pub async fn set_instructions(&self, instructions: &str) {
        self.store
            .repositories()
            .change_repo_settings(
                self.repo.id,
                &RepoSettingsChange {
                    custom_instructions: Some(instructions.to_owned()),
                    ..RepoSettingsChange::default()
                },
            )
            .await
            .unwrap();
    }

    /// Sets the repository's monthly run quota.
    pub async fn set_quota(&self, quota: u32) {
        self.store
            .repositories()
            .change_repo_settings(
                self.repo.id,
                &RepoSettingsChange {
                    monthly_run_quota: Some(Some(quota)),
                    ..RepoSettingsChange::default()
                },
            )
            .await
            .unwrap();
    }

    /// Runs a QA stage (or the chain) to its end.
    pub async fn qa(
        &self,
        number: u64,
        stage: handoff::domain::Stage,
        force: bool,
    ) -> handoff::pipeline::qa_run::QaReport {
        let begun = self
            .pipeline
            .qa_runs()
            .begin_qa(
                &REPO.parse().unwrap(),
                number,
                stage,
                handoff::pipeline::qa_run::QaOptions {
                    force,
                    ..Default::default()
                },
            )
            .await
            .unwrap_or_else(|error| panic!("the {stage} run did not start: {error}"));
        begun.drive().await.expect("the QA run is recorded")
    }

    /// Asks for a QA stage (or the chain) to begin, without running it.
    pub async fn begin_qa(
        &self,
        number: u64,
        stage: handoff::domain::Stage,
    ) -> Result<handoff::pipeline::qa_run::BegunQa, PipelineError> {
        self.pipeline
            .qa_runs()
            .begin_qa(
                &REPO.parse().unwrap(),
                number,
                stage,
                handoff::pipeline::qa_run::QaOptions::default(),
            )
            .await
    }

    /// The prompt run `run` gave its agent.
    pub async fn prompt_of(&self, run: &handoff::domain::Run) -> String {
        self.store
            .runs()
            .run_texts(run.id)
            .await
            .unwrap()
            .prompt
            .unwrap_or_default()
    }

    /// The comments on PR `number` that start with `marker`: (id, author, body).
    pub fn marked_comments(&self, number: u64, marker: &str) -> Vec<(u64, String, String)> {
        self.fake
            .comments(REPO, number)
            .into_iter()
            .filter(|(_, _, body)| body.starts_with(marker))
            .collect()
    }

    /// The body of the managed comment with `marker` on PR `number`.
    pub fn managed_body(&self, number: u64, marker: &str) -> Option<(u64, String)> {
        self.fake
            .comments(REPO, number)
            .into_iter()
            .find(|(_, _, body)| body.starts_with(marker))
            .map(|(id, _, body)| (id, body))
    }
}

/// Every QA stage in a row on the world's backend: the three comments and the issue
/// are left in place, and the fix is pushed.
pub async fn full_auto_journey(world: &PipelineWorld) {
    let number = world.qa_pull_request().await;

    let report = world
        .qa(number, handoff::domain::Stage::FullAuto, false)
        .await;

    assert!(report.succeeded(), "{:#?}", report.stages);
    let stages: Vec<_> = report.stages.iter().map(|stage| stage.stage).collect();
    use handoff::domain::Stage;
    assert_eq!(
        stages,
        [Stage::Review, Stage::Plan, Stage::Test, Stage::Fix]
    );
    assert!(world
        .managed_body(number, "<!-- sandbox-qa-review -->")
        .is_some());
    assert!(world
        .managed_body(number, "<!-- sandbox-qa-plan -->")
        .is_some());
    let results = world
        .managed_body(number, "<!-- sandbox-qa-results -->")
        .unwrap()
        .1;
    assert!(
        results.contains("2 scenarios: 1 passed, 1 failed"),
        "{results}"
    );
    assert!(
        results.contains("A fix was pushed by Handoff run"),
        "{results}"
    );
    let issues = world.fake.issues(REPO);
    assert_eq!(issues.len(), 1, "{issues:?}");
    assert!(issues[0].1.contains("Button height"));
    assert_eq!(
        world
            .fake
            .file_on_branch(REPO, "feature/signup", "src/button.css")
            .as_deref(),
        Some(".signup { height: 44px; }\n")
    );
    assert_eq!(report.run.status, handoff::domain::RunStatus::Succeeded);
    let children = world
        .store
        .stage_runs()
        .child_runs(report.run.id)
        .await
        .unwrap();
    assert_eq!(children.len(), 4);
    assert!(children
        .iter()
        .all(|run| run.status == handoff::domain::RunStatus::Succeeded));
}

/// The run of a one-stage QA report that succeeded (panics when it did not).
pub fn succeeded_stage(report: &handoff::pipeline::qa_run::QaReport) -> handoff::domain::Run {
    match &report.stages[0].result {
        handoff::pipeline::qa_run::QaResult::Succeeded { .. } => {
            report.stages[0].run.clone().expect("a run")
        }
        other => panic!("the stage did not succeed: {other:?}"),
    }
}

/// A second repository on a world's fake GitHub, for the tests that need two (the run
/// queue's fairness, runs across repositories), and feedback on either.
impl PipelineWorld {
    /// Makes repository `name` on the fake and connects it the same way as the first.
    pub async fn connect_another_repo(&self, name: &str) -> Repo {
        self.fake
            .create_repo_with_files(name, "main", &[(".handoff/agent.sh", SCRIPTED_AGENT)]);
        crate::scripted_repository::connect_scripted(&self.store, name, self.repo.sandbox_backend)
            .await
    }

    /// A new feedback item on repository `repo` (any connected one).
    pub async fn feedback_in(&self, repo: &Repo, title: &str, body: &str) -> Feedback {
        self.store
            .feedback()
            .add_feedback(&NewFeedback {
                repo: repo.name.clone(),
                title: Some(title.to_owned()),
                body: body.to_owned(),
                source: FeedbackSource::App,
                github_issue: None,
                opened_by_visitor: false,
            })
            .await
            .expect("feedback")
    }
}
