//! A repository connected to run the scripted agent (the custom preset running
//! `.handoff/agent.sh`, the test image, a two-minute limit, no quota), for every world
//! that runs it.

use handoff::domain::{NewRepo, Repo, SandboxBackend};
use handoff::store::RepoSettingsChange;
use handoff::Store;

/// The scripted agent every such repository holds as `.handoff/agent.sh`.
pub const SCRIPTED_AGENT: &str = include_str!("scripted_agent.sh");
/// The image the tests build for Docker runs (`scripts/build-test-image.sh`).
pub const TEST_IMAGE: &str = "handoff-test-agent:bookworm";

/// Connects repository `name` (already on the fake, with the scripted agent in it) to
/// `store`, to run the scripted agent on `backend`.
pub async fn connect_scripted(store: &Store, name: &str, backend: SandboxBackend) -> Repo {
    let added = store
        .repositories()
        .add_repo(&NewRepo {
            sandbox_backend: backend,
            agent_preset: "custom".to_owned(),
            monthly_run_quota: None,
            ..NewRepo::with_defaults(name.parse().expect("a repository name"))
        })
        .await
        .expect("the repository is connected");
    store
        .repositories()
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
