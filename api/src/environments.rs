//! A repository's environment as both front ends show it: what its base branch says the
//! agent's environment is made of (a dev container, Handoff's setup script, or the agent
//! image alone), in words, with the files its image is keyed on and the key. A recipe
//! that cannot be built is refused with what is wrong and where.

use serde::Serialize;

use handoff::domain::dev_container::{CommandForm, DevContainerBase};
use handoff::domain::environment_recipe::{EnvironmentRecipe, SETUP_SCRIPT};
use handoff::domain::RepoName;
use handoff::error_code::CodedError;
use handoff::pipeline::environments::FoundEnvironment;

use crate::AppCore;

/// A repository's environment, as the owner reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EnvironmentRecord {
    pub repo: String,
    pub base_branch: String,
    /// The commit of the base branch it was read at.
    pub commit: String,
    /// `dev_container`, `setup_script` or `agent_image`.
    pub source: String,
    /// The file it was found in; none for the agent image alone.
    pub file: Option<String>,
    /// What the image starts from, in words.
    pub base: String,
    /// The setup commands run once at build time, in order, as `field: command`.
    pub setup_commands: Vec<String>,
    /// The names of the variables it sets in the container.
    pub environment_variables: Vec<String>,
    pub features: Vec<String>,
    /// What Handoff does not do with it.
    pub notes: Vec<String>,
    /// The files its image is keyed on.
    pub keyed_on: Vec<String>,
    pub key: Option<String>,
}

/// `repo`'s environment at the tip of its base branch.
pub async fn environment_of(
    core: &AppCore,
    repo: &RepoName,
) -> Result<EnvironmentRecord, CodedError> {
    let found = core
        .pipeline()
        .await?
        .environments()
        .environment_of(repo)
        .await?;
    Ok(record_of(repo, found))
}

fn record_of(repo: &RepoName, found: FoundEnvironment) -> EnvironmentRecord {
    let mut record = EnvironmentRecord {
        repo: repo.full_name(),
        base_branch: found.base_branch,
        commit: found.commit,
        source: "agent_image".to_owned(),
        file: None,
        base: "Handoff's agent image".to_owned(),
        setup_commands: Vec::new(),
        environment_variables: Vec::new(),
        features: Vec::new(),
        notes: Vec::new(),
        keyed_on: found.inputs,
        key: found.key,
    };
    match found.recipe {
        EnvironmentRecipe::AgentImageOnly => {}
        EnvironmentRecipe::SetupScript => {
            record.source = "setup_script".to_owned();
            record.file = Some(SETUP_SCRIPT.to_owned());
            record.base = format!("Handoff's agent image, then {SETUP_SCRIPT}");
        }
        EnvironmentRecipe::DevContainer(dev_container) => {
            record.source = "dev_container".to_owned();
            record.file = Some(dev_container.file);
            record.base = match dev_container.base {
                DevContainerBase::Image(image) => format!("the image {image}"),
                DevContainerBase::Dockerfile {
                    dockerfile,
                    context,
                    target,
                    ..
                } => format!(
                    "{dockerfile}, built in {context}{}",
                    target
                        .map(|target| format!(" to its stage {target}"))
                        .unwrap_or_default()
                ),
                DevContainerBase::Compose { files, service, .. } => {
                    format!("the service {service} of {}", files.join(", "))
                }
            };
            record.setup_commands = dev_container
                .setup_commands
                .iter()
                .map(|command| {
                    let line = match &command.command {
                        CommandForm::Shell(line) => line.clone(),
                        CommandForm::Program(words) => words.join(" "),
                    };
                    match &command.name {
                        Some(name) => format!("{} ({name}): {line}", command.field),
                        None => format!("{}: {line}", command.field),
                    }
                })
                .collect();
            record.environment_variables = dev_container
                .container_env
                .keys()
                .chain(dev_container.remote_env.keys())
                .cloned()
                .collect();
            record.features = dev_container.features;
            record.notes = dev_container.notes;
        }
    }
    record
}
