//! `handoff agent-image build|list`: the Docker images agents run in, built through the
//! engine from the recipe Handoff carries, with the build's output printed as it comes.

use clap::Subcommand;
use serde::Serialize;

use super::command_error::CliError;
use super::output::print_json;
use crate::shared_arguments::JsonFlag;
use handoff::agent_image::{build_image, image_presets, image_state, ImageBuild, ImageState};
use handoff::domain::agent_presets::AgentChoice;
use handoff::pipeline::PipelineSettings;
use handoff::store::Store;
use std::path::PathBuf;

#[derive(Debug, Serialize)]
struct ListedImage {
    preset: &'static str,
    image: String,
    state: ImageState,
}

pub async fn run(store: &Store, command: AgentImageCommand) -> Result<(), CliError> {
    let settings = PipelineSettings::configured(store).await?;
    match command {
        AgentImageCommand::Build {
            preset,
            base,
            agent_from,
            tag,
        } => {
            let presets = match preset {
                Some(preset) => vec![preset],
                None => presets_in_use(store).await?,
            };
            let agent_from = match agent_from {
                Some(path) => Some(path),
                None => store
                    .setting(handoff::store::SettingKey::AgentImageStandIn)
                    .await?
                    .map(std::path::PathBuf::from),
            };
            let base = match base {
                Some(base) => Some(base),
                None => {
                    store
                        .setting(handoff::store::SettingKey::AgentImageBase)
                        .await?
                }
            };
            let stand_in = match &agent_from {
                Some(path) => Some(std::fs::read(path).map_err(|error| {
                    CliError::Usage(format!("cannot read {}: {error}", path.display()))
                })?),
                None => None,
            };
            let docker = handoff::agent_image::local_engine()?;
            for preset in presets {
                let mut build =
                    ImageBuild::of(&preset).map_err(|error| CliError::Usage(error.to_string()))?;
                build.tag = tag
                    .clone()
                    .unwrap_or_else(|| settings.docker_image_for(&preset));
                if let Some(base) = &base {
                    build.base = base.clone();
                }
                build.stand_in = stand_in.clone();
                build_image(&docker, &build, &mut |line| eprintln!("{line}"))
                    .await
                    .map_err(|error| CliError::Failure(error.to_string()))?;
                println!("built {} ({preset})", build.tag);
            }
            Ok(())
        }
        AgentImageCommand::List(output) => {
            let docker = handoff::agent_image::local_engine()?;
            let mut listed = Vec::new();
            for preset in image_presets() {
                let image = settings.docker_image_for(preset);
                let state = image_state(&docker, &image)
                    .await
                    .map_err(|error| CliError::Failure(error.to_string()))?;
                listed.push(ListedImage {
                    preset,
                    image,
                    state,
                });
            }
            if output.json {
                return print_json(&listed);
            }
            for image in listed {
                let state = match image.state {
                    ImageState::Missing => "missing",
                    ImageState::Current => "current",
                    ImageState::OutOfDate => "out of date",
                    ImageState::NotHandoffs => "not built by Handoff",
                };
                println!("{:<9} {:<26} {state}", image.preset, image.image);
            }
            Ok(())
        }
    }
}

/// The recipes the connected repositories need (for Docker runs), or `base` when none.
async fn presets_in_use(store: &Store) -> Result<Vec<String>, CliError> {
    let mut presets = Vec::new();
    for repo in store.repos().await? {
        if repo.sandbox_backend != handoff::domain::SandboxBackend::Docker
            || repo
                .docker_image
                .as_ref()
                .is_some_and(|image| !image.trim().is_empty())
        {
            continue;
        }
        if let Ok(agent) = AgentChoice::of(&repo.agent_preset, repo.agent_command.as_deref()) {
            let preset = agent.image_preset().to_owned();
            if !presets.contains(&preset) {
                presets.push(preset);
            }
        }
    }
    if presets.is_empty() {
        presets.push(handoff::domain::agent_presets::CUSTOM_IMAGE_PRESET.to_owned());
    }
    Ok(presets)
}

#[derive(Debug, Subcommand)]
pub enum AgentImageCommand {
    /// Build the image an agent preset runs in through the Docker engine: git, a
    /// non-root user and the agent's command line at a pinned version. The image is
    /// labelled with the recipe's hash, so Check setup (`handoff doctor`) knows when a
    /// newer Handoff brings a newer recipe.
    Build {
        /// The recipe: an agent preset, or base (git only, for custom commands)
        /// [default: the recipes the connected repositories use].
        #[arg(long, value_parser = crate::shared_arguments::image_presets())]
        preset: Option<String>,
        /// The image to start from [default: the preset's: node:22-bookworm-slim for
        /// opencode, python:3.12-slim-bookworm for claude and codex,
        /// debian:bookworm-slim for aider and base]. Claude Code, Codex and aider come
        /// from PyPI; a base without python3 and pip gets them from its apt sources.
        #[arg(long, value_name = "IMAGE")]
        base: Option<String>,
        /// Install this program as the agent's command instead of its package (for a
        /// machine with no package registry; Handoff's tests use it).
        #[arg(long, value_name = "FILE")]
        agent_from: Option<PathBuf>,
        /// The image's name [default: handoff-agent:<preset>].
        #[arg(long, value_name = "NAME:TAG")]
        tag: Option<String>,
    },
    /// Each recipe's image and whether it is on the engine and current.
    List(JsonFlag),
}
