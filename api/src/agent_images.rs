//! The agent images on the local Docker engine: building one (or every one the connected
//! repositories use) with its output passed on line by line, and how each stands
//! (missing, current, out of date, or a same-named image Handoff did not build).

use std::path::PathBuf;

use serde::Serialize;

use super::{invalid_input, AppCore};
pub use handoff::agent_image::image_presets;
use handoff::agent_image::{build_image, image_state, local_engine, ImageBuild};
use handoff::agent_image::{AgentImageError, ImageState};
use handoff::domain::agent_presets::{AgentChoice, CUSTOM_IMAGE_PRESET};
use handoff::domain::SandboxBackend;
use handoff::error_code::{CodedError, ErrorCode};
use handoff::pipeline::PipelineSettings;
use handoff::store::SettingKey;

/// What to build; each part left out comes from the settings.
#[derive(Debug, Clone, Default)]
pub struct AgentImageRequest {
    /// One preset's image; none: those of every connected Docker repository that uses
    /// Handoff's image (or the custom-command one when none does).
    pub preset: Option<String>,
    /// The base image (the `agent_image.base` setting, else Debian's).
    pub base: Option<String>,
    /// A program to put in the image in place of the agent's (the
    /// `agent_image.stand_in` setting).
    pub agent_from: Option<PathBuf>,
    /// The image's name (the preset's configured name).
    pub tag: Option<String>,
}

/// One preset's image and how it stands on the engine.
#[derive(Debug, Clone, Serialize)]
pub struct AgentImage {
    pub preset: &'static str,
    pub image: String,
    pub state: ImageState,
}

/// Builds the images `request` names, one after the other, passing the builds' output
/// to `progress` line by line; the tags built, with their presets.
pub async fn build_agent_images(
    core: &AppCore,
    request: &AgentImageRequest,
    progress: &mut (dyn FnMut(&str) + Send),
) -> Result<Vec<(String, String)>, CodedError> {
    let settings = PipelineSettings::configured(&core.store).await?;
    let presets = match &request.preset {
        Some(preset) => vec![preset.clone()],
        None => presets_in_use(core).await?,
    };
    let base = match &request.base {
        Some(base) => Some(base.clone()),
        None => {
            core.store
                .settings()
                .setting(SettingKey::AgentImageBase)
                .await?
        }
    };
    let agent_from = match &request.agent_from {
        Some(path) => Some(path.clone()),
        None => core
            .store
            .settings()
            .setting(SettingKey::AgentImageStandIn)
            .await?
            .map(PathBuf::from),
    };
    let stand_in =
        match &agent_from {
            Some(path) => Some(std::fs::read(path).map_err(|error| {
                invalid_input(format!("cannot read {}: {error}", path.display()))
            })?),
            None => None,
        };
    let docker = local_engine().map_err(engine_unavailable)?;
    let mut built = Vec::new();
    for preset in presets {
        let mut build =
            ImageBuild::of(&preset).map_err(|error| invalid_input(error.to_string()))?;
        build.tag = request
            .tag
            .clone()
            .unwrap_or_else(|| settings.docker_image_for(&preset));
        if let Some(base) = &base {
            build.base = base.clone();
        }
        build.stand_in = stand_in.clone();
        build_image(&docker, &build, progress)
            .await
            .map_err(|error| CodedError::new(ErrorCode::SandboxFailed, error.to_string()))?;
        built.push((build.tag, preset));
    }
    Ok(built)
}

/// Every preset's image and how it stands on the local engine.
pub async fn agent_images(core: &AppCore) -> Result<Vec<AgentImage>, CodedError> {
    let settings = PipelineSettings::configured(&core.store).await?;
    let docker = local_engine().map_err(engine_unavailable)?;
    let mut images = Vec::new();
    for preset in image_presets() {
        let image = settings.docker_image_for(preset);
        let state = image_state(&docker, &image)
            .await
            .map_err(|error| CodedError::new(ErrorCode::SandboxFailed, error.to_string()))?;
        images.push(AgentImage {
            preset,
            image,
            state,
        });
    }
    Ok(images)
}

/// The presets whose images the connected Docker repositories run (those that name no
/// image of their own); the custom-command one when none does.
async fn presets_in_use(core: &AppCore) -> Result<Vec<String>, CodedError> {
    let mut presets = Vec::new();
    for repo in core.store.repositories().repos().await? {
        let names_its_own_image = repo
            .docker_image
            .as_ref()
            .is_some_and(|image| !image.trim().is_empty());
        if repo.sandbox_backend != SandboxBackend::Docker || names_its_own_image {
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
        presets.push(CUSTOM_IMAGE_PRESET.to_owned());
    }
    Ok(presets)
}

fn engine_unavailable(error: AgentImageError) -> CodedError {
    CodedError::new(ErrorCode::SandboxUnavailable, error.to_string())
}
