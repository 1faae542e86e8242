//! `handoff agent-image build|list`: the Docker images agents run in, built through the
//! engine from the recipe Handoff carries, with the build's output printed as it comes.

use clap::Subcommand;

use super::command_error::CliError;
use super::output::print_json;
use crate::shared_arguments::JsonFlag;
use handoff_api::agent_images::{agent_images, build_agent_images, AgentImageRequest};
use handoff_api::core_types::ImageState;
use handoff_api::AppCore;
use std::path::PathBuf;

pub async fn run(core: &AppCore, command: AgentImageCommand) -> Result<(), CliError> {
    match command {
        AgentImageCommand::Build {
            preset,
            base,
            agent_from,
            tag,
        } => {
            let request = AgentImageRequest {
                preset,
                base,
                agent_from,
                tag,
            };
            let built = build_agent_images(core, &request, &mut |line| eprintln!("{line}")).await?;
            for (tag, preset) in built {
                println!("built {tag} ({preset})");
            }
            Ok(())
        }
        AgentImageCommand::List(output) => {
            let listed = agent_images(core).await?;
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
