//! Environment images: a repository's own base (an image its dev container names, or its
//! Dockerfile built with its context) with Handoff's agent layer and the dev
//! container's features (fetched when the image is built) on top, and the
//! repository's setup commands run at build time in a copy of its base branch, built
//! through the Docker engine.
//!
//! Each image is labelled with its repository and its key (a hash of what it is made
//! of, worked out by the caller), so a ready image is found by its name and the older
//! images of the same repository are pruned once a new one is built. The build gets no
//! secret: no build argument or file of it comes from the keyring. Its steps run on
//! the network the caller gives ([`crate::build_network`]): the repository's runs' own.
//!
//! A failed build names its step: a step of the owner's Dockerfile (`step 3/5 of
//! .devcontainer/Dockerfile: RUN apt-get install …`), Handoff's agent layer, or a setup
//! command by its field (`postCreateCommand "npm ci"`).

use std::collections::{BTreeMap, HashMap};

use bollard::query_parameters::{
    BuildImageOptionsBuilder, BuilderVersion, ListImagesOptionsBuilder, RemoveImageOptionsBuilder,
};
use bollard::Docker;
use futures::StreamExt as _;
use sha2::{Digest as _, Sha256};

use crate::agent_image::{
    recipe_hash, AGENT_USER, AIDER_REQUIREMENTS, INSTALL_SCRIPT, PRESET_LABEL, RECIPE_LABEL,
    WHEEL_PROGRAM_SCRIPT,
};
use crate::build_network::BuildNetwork;
use crate::dev_container_features::{
    append_feature_files, feature_installs, fetch_features, FeaturesToFetch, FetchedFeature,
};
use crate::docker_labels::{AGENT_USER_LABEL, INSTALLATION_LABEL};
use crate::environment_layer::{dockerfile_line, layer_instructions, LayerInputs, RuntimeUser};
use crate::tar_transfer::append_file;
use handoff_domain::agent_presets::CUSTOM_IMAGE_PRESET;

const LAYER_SCRIPT: &str = include_str!("../../../agent-images/environment-layer.sh");

/// The label naming the repository (`owner/name`) an environment image is for.
pub const ENVIRONMENT_REPO_LABEL: &str = "dev.handoff.environment-repo";
/// The label holding the key an environment image was built for.
pub const ENVIRONMENT_KEY_LABEL: &str = "dev.handoff.environment-key";
/// Where the setup commands ran inside the image: the base branch's working copy,
/// with what they made in it.
pub const PREPARED_COPY: &str = "/opt/handoff/prepared";
/// The name the owner's Dockerfile is given in its build context, beside the context's
/// own files (a Dockerfile outside the context is still found).
const OWNERS_DOCKERFILE: &str = ".handoff-owners.Dockerfile";

/// The hash of the agent layer's recipe: part of every environment's key, so that a
/// new Handoff with a new layer builds the environments again.
pub fn layer_hash() -> String {
    let mut hasher = Sha256::new();
    for part in [
        LAYER_SCRIPT,
        INSTALL_SCRIPT,
        WHEEL_PROGRAM_SCRIPT,
        AIDER_REQUIREMENTS,
        LAYER_TEMPLATE_VERSION,
    ] {
        hasher.update(part.as_bytes());
        hasher.update([0]);
    }
    hasher
        .finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// Changed whenever [`layer_dockerfile`] writes a different image.
const LAYER_TEMPLATE_VERSION: &str = "environment layer 2: lists what the setup made";

/// The image name of `repository`'s environment with key `key`: Docker's rules for a
/// name (lower case letters, digits and single separators), the key's first 16 digits
/// as its tag.
pub fn environment_image_name(repository: &str, key: &str) -> String {
    let mut name = String::from("handoff-env-");
    let mut last_was_separator = true;
    for character in repository.chars() {
        if character.is_ascii_alphanumeric() {
            name.push(character.to_ascii_lowercase());
            last_was_separator = false;
        } else if !last_was_separator {
            name.push('-');
            last_was_separator = true;
        }
    }
    let name = name.trim_end_matches('-');
    let tag: String = key.chars().take(16).collect();
    format!("{name}:{tag}")
}

/// What an environment starts from.
#[derive(Debug, Clone)]
pub enum EnvironmentBase {
    /// An image by name (pulled by the engine when it is not there).
    Image(String),
    /// The owner's Dockerfile, built with its context.
    Dockerfile {
        /// The context's files, as a tar archive.
        context: Vec<u8>,
        /// Where the Dockerfile is in the repository, for messages.
        path: String,
        text: String,
        args: BTreeMap<String, String>,
        target: Option<String>,
    },
}

/// One setup command, run at build time in the base branch's working copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetupStep {
    /// What the owner calls it: the field and the command (`postCreateCommand "npm ci"`).
    pub name: String,
    /// The command, as a line for `/bin/sh -c`.
    pub shell_line: String,
}

/// An environment to build.
#[derive(Debug, Clone)]
pub struct EnvironmentBuild {
    /// `owner/name`.
    pub repository: String,
    /// The installation that builds it: the one that prunes it.
    pub installation: String,
    pub key: String,
    pub base: EnvironmentBase,
    /// The agent image preset whose program the layer installs (`base`: git only).
    pub preset: String,
    /// A program installed as the preset's command instead of its package (machines
    /// with no package registry, and tests).
    pub stand_in: Option<Vec<u8>>,
    /// Variables every process of the image gets (`containerEnv`, `remoteEnv`).
    pub variables: BTreeMap<String, String>,
    pub setup_steps: Vec<SetupStep>,
    /// The dev container's features, fetched when the image is built.
    pub features: FeaturesToFetch,
    /// The base branch's files at the commit the key was made at, as a tar archive.
    pub working_copy: Vec<u8>,
}

impl EnvironmentBuild {
    pub fn image_name(&self) -> String {
        environment_image_name(&self.repository, &self.key)
    }

    /// The setup commands as the layer takes them: what each is called, and its line.
    pub fn setup_step_lines(&self) -> Vec<(String, String)> {
        self.setup_steps
            .iter()
            .map(|step| (step.name.clone(), step.shell_line.clone()))
            .collect()
    }
}

/// The image name of `repository`'s test service `service` for key `key`.
pub fn service_image_name(repository: &str, service: &str, key: &str) -> String {
    let environment = environment_image_name(repository, key);
    environment
        .replacen("handoff-env-", "handoff-svc-", 1)
        .replacen(':', &format!("-{service}:"), 1)
}

/// A test service to build from the repository's Dockerfile.
#[derive(Debug, Clone)]
pub struct ServiceBuild {
    pub repository: String,
    pub installation: String,
    pub key: String,
    pub service: String,
    /// The context's files, as a tar archive.
    pub context: Vec<u8>,
    /// Where the Dockerfile is in the repository, for messages.
    pub path: String,
    pub text: String,
}

impl ServiceBuild {
    pub fn image_name(&self) -> String {
        service_image_name(&self.repository, &self.service, &self.key)
    }
}

/// A built environment image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuiltEnvironment {
    pub image: String,
    pub bytes: u64,
}

/// Why an environment was not built.
#[derive(Debug, thiserror::Error)]
pub enum EnvironmentBuildError {
    #[error("the Docker engine cannot be reached: {0}")]
    Engine(String),
    #[error("{step} failed: {detail}")]
    Step { step: String, detail: String },
    #[error("cannot pack the build's files: {0}")]
    Pack(String),
    #[error("E2B could not build the template: {0}")]
    Service(String),
}

/// The environment image `image` when it is on `docker` with key `key`: its size.
pub async fn ready_environment(
    docker: &Docker,
    image: &str,
    key: &str,
) -> Result<Option<BuiltEnvironment>, EnvironmentBuildError> {
    match docker.inspect_image(image).await {
        Ok(inspected) => {
            let labels = inspected
                .config
                .and_then(|config| config.labels)
                .unwrap_or_default();
            let bytes = inspected.size.unwrap_or_default();
            Ok(
                (labels.get(ENVIRONMENT_KEY_LABEL).map(String::as_str) == Some(key)).then(|| {
                    BuiltEnvironment {
                        image: image.to_owned(),
                        bytes: u64::try_from(bytes).unwrap_or_default(),
                    }
                }),
            )
        }
        Err(bollard::errors::Error::DockerResponseServerError {
            status_code: 404, ..
        }) => Ok(None),
        Err(error) => Err(EnvironmentBuildError::Engine(error.to_string())),
    }
}

/// The labels every image of an environment carries: its repository, its key and the
/// installation that prunes it.
fn environment_labels<'a>(
    repository: &str,
    key: &str,
    installation: &str,
) -> HashMap<&'a str, String> {
    HashMap::from([
        (ENVIRONMENT_REPO_LABEL, repository.to_owned()),
        (ENVIRONMENT_KEY_LABEL, key.to_owned()),
        (INSTALLATION_LABEL, installation.to_owned()),
    ])
}

/// Builds `build` on `docker`: the owner's Dockerfile first when there is one, then the
/// agent layer and the setup commands. Each line of the engine's output goes to
/// `progress` as it comes.
pub async fn build_environment_image(
    docker: &Docker,
    build: &EnvironmentBuild,
    network: &BuildNetwork,
    progress: &mut (dyn FnMut(&str) + Send),
) -> Result<BuiltEnvironment, EnvironmentBuildError> {
    let image = build.image_name();
    let labels = environment_labels(&build.repository, &build.key, &build.installation);
    let features = fetch_features(&build.features, progress).await?;
    let base = match &build.base {
        EnvironmentBase::Image(name) => name.clone(),
        EnvironmentBase::Dockerfile { .. } => {
            build_owners_base(docker, build, &image, &labels, network, progress).await?
        }
    };
    // A base that is Handoff's own agent image of this preset and recipe (a Dockerfile
    // that starts from it keeps its labels) carries the agent already.
    let preset = if carries_the_agent(docker, &base, &build.preset).await {
        progress(&format!(
            "{base} carries the {} agent already",
            build.preset
        ));
        CUSTOM_IMAGE_PRESET
    } else {
        build.preset.as_str()
    };
    let (dockerfile, names) = layer_dockerfile(build, &features, preset, &base);
    let context = layer_context(build, &features, &dockerfile)?;
    let mut layer_labels = labels.clone();
    layer_labels.insert(PRESET_LABEL, build.preset.clone());
    layer_labels.insert(
        AGENT_USER_LABEL,
        format!("{}:{}", AGENT_USER.0, AGENT_USER.1),
    );
    let options = classic_build("Dockerfile", &image, &layer_labels).build();
    progress(&format!(
        "adding Handoff's agent layer ({}), {} feature(s) and {} setup command(s) on {base}",
        build.preset,
        features.len(),
        build.setup_steps.len()
    ));
    let name_of_step = |step: &BuildStep| {
        names
            .get(step.number.saturating_sub(1))
            .cloned()
            .unwrap_or_else(|| format!("step {}/{} ({})", step.number, step.of, step.text))
    };
    engine_build(
        docker,
        network.applied_to(options),
        context,
        &name_of_step,
        progress,
    )
    .await?;
    ready_environment(docker, &image, &build.key)
        .await?
        .ok_or_else(|| EnvironmentBuildError::Step {
            step: "the finished image".to_owned(),
            detail: format!("the engine does not report {image} with its key after the build"),
        })
}

/// The options every build here shares: the classic builder (whose steps are named in
/// its output), `dockerfile` in the context, the image `tag` with `labels`, and no
/// intermediate container left behind.
fn classic_build(
    dockerfile: &str,
    tag: &str,
    labels: &HashMap<&str, String>,
) -> BuildImageOptionsBuilder {
    BuildImageOptionsBuilder::default()
        .dockerfile(dockerfile)
        .t(tag)
        .rm(true)
        .forcerm(true)
        .labels(labels)
        .version(BuilderVersion::BuilderV1)
}

/// The owner's Dockerfile built with its context, under a name of its own so that the
/// engine's cache of its steps outlives a rebuild of the layer; returns that name.
async fn build_owners_base(
    docker: &Docker,
    build: &EnvironmentBuild,
    image: &str,
    labels: &HashMap<&str, String>,
    network: &BuildNetwork,
    progress: &mut (dyn FnMut(&str) + Send),
) -> Result<String, EnvironmentBuildError> {
    let EnvironmentBase::Dockerfile {
        context,
        path,
        text,
        args,
        target,
    } = &build.base
    else {
        return Ok(image.to_owned());
    };
    let base_image = image.replacen(':', "-base:", 1);
    let context = owners_context(context, text)?;
    let args: HashMap<&str, &str> = args
        .iter()
        .map(|(name, value)| (name.as_str(), value.as_str()))
        .collect();
    let mut options = classic_build(OWNERS_DOCKERFILE, &base_image, labels).buildargs(&args);
    if let Some(target) = target {
        options = options.target(target);
    }
    progress(&format!("building the base image from {path}"));
    let name_of_step =
        |step: &BuildStep| format!("step {}/{} of {path} ({})", step.number, step.of, step.text);
    engine_build(
        docker,
        network.applied_to(options.build()),
        context,
        &name_of_step,
        progress,
    )
    .await?;
    Ok(base_image)
}

/// Builds a test service's image from the repository's Dockerfile, labelled like the
/// environment's so that it is found ready by its key and pruned with it.
pub async fn build_service_image(
    docker: &Docker,
    build: &ServiceBuild,
    network: &BuildNetwork,
    progress: &mut (dyn FnMut(&str) + Send),
) -> Result<BuiltEnvironment, EnvironmentBuildError> {
    let image = build.image_name();
    let labels = environment_labels(&build.repository, &build.key, &build.installation);
    let options = classic_build(OWNERS_DOCKERFILE, &image, &labels).build();
    progress(&format!(
        "building the service {} from {}",
        build.service, build.path
    ));
    let (service, path) = (&build.service, &build.path);
    let name_of_step = |step: &BuildStep| {
        format!(
            "step {}/{} of the service {service}'s {path} ({})",
            step.number, step.of, step.text
        )
    };
    let context = owners_context(&build.context, &build.text)?;
    engine_build(
        docker,
        network.applied_to(options),
        context,
        &name_of_step,
        progress,
    )
    .await?;
    ready_environment(docker, &image, &build.key)
        .await?
        .ok_or_else(|| EnvironmentBuildError::Step {
            step: format!("the service {service}'s image"),
            detail: format!("the engine does not report {image} with its key after the build"),
        })
}

/// Whether `image` on `docker` is Handoff's agent image of `preset` from this build's
/// recipe (its labels say so).
async fn carries_the_agent(docker: &Docker, image: &str, preset: &str) -> bool {
    let Ok(inspected) = docker.inspect_image(image).await else {
        return false;
    };
    let labels = inspected
        .config
        .and_then(|config| config.labels)
        .unwrap_or_default();
    labels.get(PRESET_LABEL).map(String::as_str) == Some(preset)
        && labels
            .get(RECIPE_LABEL)
            .is_some_and(|hash| *hash == recipe_hash())
}

/// The generated Dockerfile of the layer, and what each of its steps is called in a
/// failure (step N is the N-th instruction).
fn layer_dockerfile(
    build: &EnvironmentBuild,
    features: &[FetchedFeature],
    preset: &str,
    base: &str,
) -> (String, Vec<String>) {
    let setup_steps = build.setup_step_lines();
    let feature_installs = feature_installs(features);
    let instructions = layer_instructions(&LayerInputs {
        preset,
        stand_in: build.stand_in.is_some() && preset != CUSTOM_IMAGE_PRESET,
        variables: &build.variables,
        setup_steps: &setup_steps,
        features: &feature_installs,
        runtime_user: RuntimeUser::DOCKER,
    });
    let mut text = format!("FROM {base}\n");
    let mut names = vec![format!("the base image {base}")];
    for line in instructions {
        text.push_str(&dockerfile_line(&line.instruction));
        text.push('\n');
        names.push(line.name);
    }
    (text, names)
}

/// The layer's build context: its Dockerfile and [`layer_files`].
fn layer_context(
    build: &EnvironmentBuild,
    features: &[FetchedFeature],
    dockerfile: &str,
) -> Result<Vec<u8>, EnvironmentBuildError> {
    let mut archive = tar::Builder::new(Vec::new());
    append_file(&mut archive, "Dockerfile", dockerfile.as_bytes(), 0o644)
        .map_err(|error| EnvironmentBuildError::Pack(error.to_string()))?;
    append_layer_files(&mut archive, build, features)?;
    archive
        .into_inner()
        .map_err(|error| EnvironmentBuildError::Pack(error.to_string()))
}

/// What the layer copies in, as a tar archive: Handoff's scripts and the stand-in
/// under `handoff/`, the features under `features/`, the base branch's files under
/// `working-copy/`.
pub fn layer_files(
    build: &EnvironmentBuild,
    features: &[FetchedFeature],
) -> Result<Vec<u8>, EnvironmentBuildError> {
    let mut archive = tar::Builder::new(Vec::new());
    append_layer_files(&mut archive, build, features)?;
    archive
        .into_inner()
        .map_err(|error| EnvironmentBuildError::Pack(error.to_string()))
}

fn append_layer_files(
    archive: &mut tar::Builder<Vec<u8>>,
    build: &EnvironmentBuild,
    features: &[FetchedFeature],
) -> Result<(), EnvironmentBuildError> {
    let add = |archive: &mut tar::Builder<Vec<u8>>, path: &str, bytes: &[u8], mode: u32| {
        append_file(archive, path, bytes, mode)
            .map_err(|error| EnvironmentBuildError::Pack(error.to_string()))
    };
    for (name, text) in [
        ("environment-layer.sh", LAYER_SCRIPT),
        ("install-agent.sh", INSTALL_SCRIPT),
        ("wheel-program.sh", WHEEL_PROGRAM_SCRIPT),
        ("aider-requirements.txt", AIDER_REQUIREMENTS),
    ] {
        add(archive, &format!("handoff/{name}"), text.as_bytes(), 0o755)?;
    }
    match &build.stand_in {
        Some(program) => add(archive, "handoff/stand-in/agent", program, 0o755)?,
        None => add(
            archive,
            "handoff/stand-in/README",
            b"Empty: the agent is installed from its package.\n",
            0o644,
        )?,
    }
    append_feature_files(archive, features)?;
    add_entries(archive, &build.working_copy, "working-copy/")
}

/// The owner's context with their Dockerfile beside its files, under a name of its own.
fn owners_context(context: &[u8], dockerfile: &str) -> Result<Vec<u8>, EnvironmentBuildError> {
    let mut archive = tar::Builder::new(Vec::new());
    add_entries(&mut archive, context, "")?;
    append_file(
        &mut archive,
        OWNERS_DOCKERFILE,
        dockerfile.as_bytes(),
        0o644,
    )
    .map_err(|error| EnvironmentBuildError::Pack(error.to_string()))?;
    archive
        .into_inner()
        .map_err(|error| EnvironmentBuildError::Pack(error.to_string()))
}

/// Every entry of the tar archive `source`, added to `archive` under `prefix` (a
/// folder named `working-copy/` is there even for an empty repository).
fn add_entries(
    archive: &mut tar::Builder<Vec<u8>>,
    source: &[u8],
    prefix: &str,
) -> Result<(), EnvironmentBuildError> {
    let pack = |error: std::io::Error| EnvironmentBuildError::Pack(error.to_string());
    if !prefix.is_empty() {
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(tar::EntryType::Directory);
        header.set_size(0);
        header.set_mode(0o755);
        header.set_mtime(0);
        header.set_cksum();
        archive
            .append_data(&mut header, prefix, std::io::empty())
            .map_err(pack)?;
    }
    let mut entries = tar::Archive::new(source);
    for entry in entries.entries().map_err(pack)? {
        let mut entry = entry.map_err(pack)?;
        let path = entry.path().map_err(pack)?.to_string_lossy().into_owned();
        // git archive's global header names the commit; it is no file.
        if entry.header().entry_type() == tar::EntryType::XGlobalHeader {
            continue;
        }
        let mut header = entry.header().clone();
        archive
            .append_data(&mut header, format!("{prefix}{path}"), &mut entry)
            .map_err(pack)?;
    }
    Ok(())
}

/// A step of a build, as the engine's classic builder announces it (`Step 3/9 : RUN …`).
struct BuildStep {
    number: usize,
    of: usize,
    text: String,
}

fn build_step(line: &str) -> Option<BuildStep> {
    let rest = line.strip_prefix("Step ")?;
    let (counts, text) = rest.split_once(" : ")?;
    let (number, of) = counts.split_once('/')?;
    Some(BuildStep {
        number: number.trim().parse().ok()?,
        of: of.trim().parse().ok()?,
        text: text.trim().chars().take(120).collect(),
    })
}

/// Runs one build on the engine, following its steps, and names the step that failed.
async fn engine_build(
    docker: &Docker,
    options: bollard::query_parameters::BuildImageOptions,
    context: Vec<u8>,
    name_of_step: &(dyn Fn(&BuildStep) -> String + Sync),
    progress: &mut (dyn FnMut(&str) + Send),
) -> Result<(), EnvironmentBuildError> {
    let mut current: Option<BuildStep> = None;
    let failed = |current: &Option<BuildStep>, detail: String| EnvironmentBuildError::Step {
        step: current
            .as_ref()
            .map_or_else(|| "the build".to_owned(), name_of_step),
        detail: plain_detail(&detail),
    };
    let mut stream = docker.build_image(options, None, Some(bollard::body_full(context.into())));
    while let Some(item) = stream.next().await {
        let info = match item {
            Ok(info) => info,
            Err(error) => return Err(failed(&current, error.to_string())),
        };
        if let Some(error) = info.error_detail.and_then(|detail| detail.message) {
            return Err(failed(&current, error));
        }
        for text in [info.stream, info.status].into_iter().flatten() {
            for line in text
                .lines()
                .map(str::trim_end)
                .filter(|line| !line.is_empty())
            {
                progress(line);
                if let Some(step) = build_step(line) {
                    // What the owner calls the step, when it is one of theirs by name.
                    let name = name_of_step(&step);
                    if !name.starts_with("step ") {
                        progress(&format!(" : {name}"));
                    }
                    current = Some(step);
                }
            }
        }
    }
    Ok(())
}

/// The engine's words for a failure, with what it means when the base cannot run the
/// layer at all.
fn plain_detail(detail: &str) -> String {
    if detail.contains("/bin/sh")
        && (detail.contains("no such file") || detail.contains("not found"))
    {
        return format!(
            "the base image has no shell (/bin/sh), which Handoff's agent layer and the setup commands need ({detail})"
        );
    }
    detail.trim().to_owned()
}

/// Removes the environment images `installation` built for `repository` other than
/// those with key `keep`; returns the names removed. An image a container still uses
/// stays, and is said in the log.
pub async fn prune_environment_images(
    docker: &Docker,
    installation: &str,
    repository: &str,
    keep: &str,
) -> Result<Vec<String>, EnvironmentBuildError> {
    let filters: HashMap<&str, Vec<String>> = HashMap::from([(
        "label",
        vec![
            format!("{ENVIRONMENT_REPO_LABEL}={repository}"),
            format!("{INSTALLATION_LABEL}={installation}"),
        ],
    )]);
    let images = docker
        .list_images(Some(
            ListImagesOptionsBuilder::default()
                .filters(&filters)
                .build(),
        ))
        .await
        .map_err(|error| EnvironmentBuildError::Engine(error.to_string()))?;
    let mut removed = Vec::new();
    for image in images {
        if image.labels.get(ENVIRONMENT_KEY_LABEL).map(String::as_str) == Some(keep) {
            continue;
        }
        for name in image
            .repo_tags
            .iter()
            .filter(|name| name.as_str() != "<none>:<none>")
        {
            let options = RemoveImageOptionsBuilder::default().force(false).build();
            match docker.remove_image(name, Some(options), None).await {
                Ok(_) => removed.push(name.clone()),
                Err(error) => {
                    tracing::info!(image = %name, %error, "an older environment image stays: the engine would not remove it");
                }
            }
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_image_name_keeps_to_dockers_rules() {
        assert_eq!(
            environment_image_name("Octo-Org/My..App_2", "0123456789abcdef0123"),
            "handoff-env-octo-org-my-app-2:0123456789abcdef"
        );
        assert_eq!(
            service_image_name("octo/app", "db", "0123456789abcdef0123"),
            "handoff-svc-octo-app-db:0123456789abcdef"
        );
    }

    #[test]
    fn a_failed_step_is_named_by_what_the_owner_wrote() {
        let build = EnvironmentBuild {
            repository: "octo/app".to_owned(),
            installation: "test".to_owned(),
            key: "k".repeat(64),
            base: EnvironmentBase::Image("debian:bookworm".to_owned()),
            preset: "base".to_owned(),
            stand_in: None,
            variables: BTreeMap::from([("GREETING".to_owned(), "a \"quoted\" word".to_owned())]),
            setup_steps: vec![SetupStep {
                name: "postCreateCommand \"npm ci\"".to_owned(),
                shell_line: "npm ci && echo \"done\"".to_owned(),
            }],
            features: FeaturesToFetch::default(),
            working_copy: Vec::new(),
        };
        let (dockerfile, names) = layer_dockerfile(&build, &[], "base", "debian:bookworm");
        let lines: Vec<&str> = dockerfile.lines().collect();
        assert_eq!(lines.len(), names.len());
        let setup = lines
            .iter()
            .position(|line| line.contains("npm ci"))
            .unwrap();
        assert_eq!(names[setup], "postCreateCommand \"npm ci\"");
        assert_eq!(
            lines[setup],
            r#"RUN ["/bin/sh", "-c", "npm ci && echo \"done\""]"#
        );
        assert!(
            dockerfile.contains(r#"ENV GREETING="a \"quoted\" word""#),
            "{dockerfile}"
        );
        let step = build_step(&format!("Step {}/{} : RUN …", setup + 1, lines.len())).unwrap();
        assert_eq!(names[step.number - 1], names[setup]);
    }
}
