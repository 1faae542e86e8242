//! A repository connected to run the scripted agent (the custom preset running
//! `.handoff/agent.sh`, the test image, a two-minute limit, no quota), for every world
//! that runs it; and a second such repository on a world's fake GitHub, for the tests
//! that need two (the run queue's fairness, runs across repositories).

use handoff::domain::{Feedback, FeedbackSource, NewRepo, Repo, SandboxBackend};
use handoff::store::{NewFeedback, RepoSettingsChange};
use handoff::Store;

use crate::pipeline_world::{PipelineWorld, SCRIPTED_AGENT, TEST_IMAGE};

/// Connects repository `name` (already on the fake, with the scripted agent in it) to
/// `store`, to run the scripted agent on `backend`.
pub async fn connect_scripted(store: &Store, name: &str, backend: SandboxBackend) -> Repo {
    let added = store
        .add_repo(&NewRepo {
            sandbox_backend: backend,
            agent_preset: "custom".to_owned(),
            monthly_run_quota: None,
            ..NewRepo::with_defaults(name.parse().expect("a repository name"))
        })
        .await
        .expect("the repository is connected");
    store
        .change_repo_settings(
            added.id,
            &RepoSettingsChange {
                agent_command: Some(Some("sh .handoff/agent.sh".to_owned())),
                docker_image: Some(Some(TEST_IMAGE.to_owned())),
                run_timeout_seconds: Some(120),
                ..RepoSettingsChange::default()
            },
        )
        .await
        .expect("the repository's settings")
}

impl PipelineWorld {
    /// Makes repository `name` on the fake and connects it the same way as the first.
    pub async fn connect_another_repo(&self, name: &str) -> Repo {
        self.fake
            .create_repo_with_files(name, "main", &[(".handoff/agent.sh", SCRIPTED_AGENT)]);
        connect_scripted(&self.store, name, self.repo.sandbox_backend).await
    }

    /// A new feedback item on repository `repo` (any connected one).
    pub async fn feedback_in(&self, repo: &Repo, title: &str, body: &str) -> Feedback {
        self.store
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
