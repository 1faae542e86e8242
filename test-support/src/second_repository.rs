//! A second repository for the tests that need two (the run queue's fairness, bulk
//! runs across repositories): made on the world's fake GitHub with the scripted agent in
//! its first commit, and connected to the world's store the same way as the first.

use handoff::domain::{Feedback, FeedbackSource, NewRepo, Repo};
use handoff::store::{NewFeedback, RepoSettingsChange};

use crate::pipeline_world::{PipelineWorld, SCRIPTED_AGENT, TEST_IMAGE};

impl PipelineWorld {
    /// Makes repository `name` on the fake and connects it (same backend, the custom
    /// agent running the scripted agent, no quota).
    pub async fn connect_another_repo(&self, name: &str) -> Repo {
        self.fake
            .create_repo_with_files(name, "main", &[(".handoff/agent.sh", SCRIPTED_AGENT)]);
        let added = self
            .store
            .add_repo(&NewRepo {
                sandbox_backend: self.repo.sandbox_backend,
                agent_preset: "custom".to_owned(),
                monthly_run_quota: None,
                ..NewRepo::with_defaults(name.parse().expect("a repository name"))
            })
            .await
            .expect("the second repository is connected");
        self.store
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
            .expect("the second repository's settings")
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
