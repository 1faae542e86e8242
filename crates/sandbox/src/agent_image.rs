//! The agent images: the recipe in `agent-images/` (embedded in the binary, so that an
//! installed Handoff builds it with no checkout at hand), its hash, building it through
//! the Docker engine with the build's progress passed on as it comes, and telling
//! whether an image on the engine is current.
//!
//! A built image carries two labels: the preset it holds and the hash of the recipe it
//! was built from. When Handoff's recipe changes (a new pinned version), the hash no
//! longer matches and the image is out of date.

use std::collections::HashMap;

use bollard::query_parameters::{BuildImageOptionsBuilder, BuilderVersion};
use bollard::Docker;
use futures::StreamExt as _;
use serde::Serialize;
use sha2::{Digest as _, Sha256};

use crate::docker_labels::AGENT_USER_LABEL;
use crate::tar_transfer::append_file;
use handoff_domain::agent_presets::{
    default_image, default_image_base, preset_named, CUSTOM_IMAGE_PRESET,
};

const DOCKERFILE: &str = include_str!("../../../agent-images/Dockerfile");
/// The scripts that install an agent, which environment images run too.
pub(crate) const INSTALL_SCRIPT: &str = include_str!("../../../agent-images/install-agent.sh");
pub(crate) const WHEEL_PROGRAM_SCRIPT: &str =
    include_str!("../../../agent-images/wheel-program.sh");
pub(crate) const AIDER_REQUIREMENTS: &str =
    include_str!("../../../agent-images/aider-requirements.txt");

/// The label holding the hash of the recipe an image was built from.
pub const RECIPE_LABEL: &str = "dev.handoff.agent-recipe";
/// The label holding the preset an image was built for.
pub const PRESET_LABEL: &str = "dev.handoff.agent-preset";
/// The user the recipe makes (`agent-images/install-agent.sh`).
pub const AGENT_USER: (u64, u64) = (10001, 10001);

/// The hash of this build's recipe (the Dockerfile and the install script, which pins
/// the agents' versions).
pub fn recipe_hash() -> String {
    let mut hasher = Sha256::new();
    hasher.update(DOCKERFILE.as_bytes());
    hasher.update([0]);
    hasher.update(INSTALL_SCRIPT.as_bytes());
    hasher.update(WHEEL_PROGRAM_SCRIPT.as_bytes());
    hasher.update(AIDER_REQUIREMENTS.as_bytes());
    hasher
        .finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// The recipes there are: one per preset, and `base` for custom commands.
pub fn image_presets() -> Vec<&'static str> {
    handoff_domain::agent_presets::PRESETS
        .iter()
        .map(|preset| preset.name)
        .chain([CUSTOM_IMAGE_PRESET])
        .collect()
}

/// What to build.
#[derive(Debug, Clone)]
pub struct ImageBuild {
    /// A preset's name, or `base`.
    pub preset: String,
    /// The image's name and tag.
    pub tag: String,
    /// The image to start from.
    pub base: String,
    /// A program to install as the agent's command instead of its package (for machines
    /// with no package registry, and for tests).
    pub stand_in: Option<Vec<u8>>,
}

impl ImageBuild {
    /// The default build of `preset`: its default image name and base.
    pub fn of(preset: &str) -> Result<Self, AgentImageError> {
        if preset != CUSTOM_IMAGE_PRESET && preset_named(preset).is_none() {
            return Err(AgentImageError::UnknownPreset(preset.to_owned()));
        }
        Ok(ImageBuild {
            preset: preset.to_owned(),
            tag: default_image(preset),
            base: default_image_base(preset).to_owned(),
            stand_in: None,
        })
    }
}

/// Whether an image is there and current.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ImageState {
    /// Not on the engine.
    Missing,
    /// Built by Handoff from this build's recipe.
    Current,
    /// Built by Handoff from an older recipe.
    OutOfDate,
    /// There, but not built by Handoff (a custom image: its agent is the owner's to keep).
    NotHandoffs,
}

/// What went wrong with an agent image.
#[derive(Debug, thiserror::Error)]
pub enum AgentImageError {
    #[error("there is no image recipe for {0:?}: opencode, claude, aider, codex or base")]
    UnknownPreset(String),
    #[error("the Docker engine cannot be reached: {0}")]
    Engine(String),
    #[error("building {tag} failed: {detail}")]
    Build { tag: String, detail: String },
    #[error("cannot pack the recipe: {0}")]
    Pack(String),
}

/// This machine's Docker engine (found as the `docker` command finds it), which builds
/// and holds agent images.
pub fn local_engine() -> Result<Docker, AgentImageError> {
    crate::docker_engine::connect_to_engine()
        .map(|(docker, _)| docker)
        .map_err(|error| AgentImageError::Engine(error.to_string()))
}

/// The state of image `tag` on `docker`.
pub async fn image_state(docker: &Docker, tag: &str) -> Result<ImageState, AgentImageError> {
    match docker.inspect_image(tag).await {
        Ok(image) => {
            let labels = image
                .config
                .and_then(|config| config.labels)
                .unwrap_or_default();
            Ok(match labels.get(RECIPE_LABEL) {
                Some(hash) if *hash == recipe_hash() => ImageState::Current,
                Some(_) => ImageState::OutOfDate,
                None => ImageState::NotHandoffs,
            })
        }
        Err(bollard::errors::Error::DockerResponseServerError {
            status_code: 404, ..
        }) => Ok(ImageState::Missing),
        Err(error) => Err(AgentImageError::Engine(error.to_string())),
    }
}

/// The build context: the recipe, and the stand-in when there is one.
fn build_context(build: &ImageBuild) -> Result<Vec<u8>, AgentImageError> {
    let mut archive = tar::Builder::new(Vec::new());
    let mut add = |path: &str, bytes: &[u8], mode: u32| {
        append_file(&mut archive, path, bytes, mode)
            .map_err(|error| AgentImageError::Pack(error.to_string()))
    };
    add("Dockerfile", DOCKERFILE.as_bytes(), 0o644)?;
    add("install-agent.sh", INSTALL_SCRIPT.as_bytes(), 0o755)?;
    add("wheel-program.sh", WHEEL_PROGRAM_SCRIPT.as_bytes(), 0o644)?;
    add(
        "aider-requirements.txt",
        AIDER_REQUIREMENTS.as_bytes(),
        0o644,
    )?;
    match &build.stand_in {
        Some(program) => add("stand-in/agent", program, 0o755)?,
        None => add(
            "stand-in/README",
            b"Empty: the agent is installed from its package.\n",
            0o644,
        )?,
    }
    archive
        .into_inner()
        .map_err(|error| AgentImageError::Pack(error.to_string()))
}

/// Builds `build` on `docker`, passing each line of the build's output to `progress`
/// as it comes.
pub async fn build_image(
    docker: &Docker,
    build: &ImageBuild,
    progress: &mut (dyn FnMut(&str) + Send),
) -> Result<(), AgentImageError> {
    let context = build_context(build)?;
    let build_arguments: HashMap<&str, String> = HashMap::from([
        ("BASE", build.base.clone()),
        ("PRESET", build.preset.clone()),
        (
            "STAND_IN",
            if build.stand_in.is_some() { "1" } else { "0" }.to_owned(),
        ),
    ]);
    let labels: HashMap<&str, String> = HashMap::from([
        (RECIPE_LABEL, recipe_hash()),
        (PRESET_LABEL, build.preset.clone()),
        (
            AGENT_USER_LABEL,
            format!("{}:{}", AGENT_USER.0, AGENT_USER.1),
        ),
    ]);
    let options = BuildImageOptionsBuilder::default()
        .dockerfile("Dockerfile")
        .t(&build.tag)
        .rm(true)
        .forcerm(true)
        .buildargs(&build_arguments)
        .labels(&labels)
        .version(BuilderVersion::BuilderV1)
        .build();
    progress(&format!(
        "building {} ({} from {}; recipe {})",
        build.tag,
        build.preset,
        build.base,
        &recipe_hash()[..12]
    ));
    let mut stream = docker.build_image(options, None, Some(bollard::body_full(context.into())));
    while let Some(item) = stream.next().await {
        let info = item.map_err(|error| AgentImageError::Build {
            tag: build.tag.clone(),
            detail: error.to_string(),
        })?;
        if let Some(error) = info.error_detail.and_then(|detail| detail.message) {
            return Err(AgentImageError::Build {
                tag: build.tag.clone(),
                detail: error,
            });
        }
        for text in [info.stream, info.status].into_iter().flatten() {
            for line in text
                .lines()
                .map(str::trim_end)
                .filter(|line| !line.is_empty())
            {
                progress(line);
            }
        }
    }
    match image_state(docker, &build.tag).await? {
        ImageState::Current => Ok(()),
        other => Err(AgentImageError::Build {
            tag: build.tag.clone(),
            detail: format!("the engine reports the image as {other:?} after the build"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_has_a_recipe_and_custom_commands_get_the_base_one() {
        for preset in image_presets() {
            let build = ImageBuild::of(preset).unwrap();
            assert_eq!(build.tag, format!("handoff-agent:{preset}"));
            assert!(!build.base.is_empty());
        }
        assert!(ImageBuild::of("gpt-engineer").is_err());
        assert_eq!(recipe_hash().len(), 64);
        assert_eq!(recipe_hash(), recipe_hash());
    }

    #[test]
    fn the_context_holds_the_recipe_and_the_stand_in() {
        let mut build = ImageBuild::of("claude").unwrap();
        build.stand_in = Some(b"#!/bin/sh\necho stand-in\n".to_vec());
        let context = build_context(&build).unwrap();
        let mut archive = tar::Archive::new(context.as_slice());
        let names: Vec<String> = archive
            .entries()
            .unwrap()
            .map(|entry| entry.unwrap().path().unwrap().display().to_string())
            .collect();
        assert_eq!(
            names,
            [
                "Dockerfile",
                "install-agent.sh",
                "wheel-program.sh",
                "aider-requirements.txt",
                "stand-in/agent"
            ]
        );
    }
}
