//! An environment as an E2B template build: the same recipe a Docker run's image is
//! built from (the dev container's image, or its Dockerfile read as steps, or the
//! repository's template under `.handoff/setup.sh`), with Handoff's agent layer on top,
//! as E2B's template build API takes it (`TemplateBuildStartV2`: where to start, and
//! `RUN`, `COPY`, `ENV`, `WORKDIR` and `USER` steps). Each copy step's files go up as a
//! tar archive named by its hash, so E2B keeps the ones it already has.
//!
//! A template is named by its repository and its key, as the Docker image is, so a
//! ready template is found by its name and the repository's older ones by their prefix.

use sha2::{Digest as _, Sha256};

use super::dockerfile_steps::{dockerfile_steps, shell_quoted};
use crate::dev_container_features::{feature_installs, FetchedFeature};
use crate::environment_image::{
    environment_image_name, layer_files, EnvironmentBase, EnvironmentBuild, EnvironmentBuildError,
};
use crate::environment_layer::{
    layer_instructions, LayerInputs, LayerInstruction, NamedInstruction, RuntimeUser,
};
use handoff_domain::agent_presets::CUSTOM_IMAGE_PRESET;

/// A template build, ready to send.
#[derive(Debug, Clone)]
pub struct TemplateRecipe {
    /// The template's name (E2B's rules: lower case letters, digits and dashes).
    pub name: String,
    /// The body of the build's start (`TemplateBuildStartV2`).
    pub start: serde_json::Value,
    /// What each step is called in a failure, by its index in `start.steps`.
    pub step_names: Vec<String>,
    /// What the template starts from, for a failure of E2B's `base` step.
    pub base: String,
    /// Each copy step's files: its hash, and the tar archive.
    pub uploads: Vec<(String, Vec<u8>)>,
    /// What of the recipe E2B does not use, in words.
    pub notes: Vec<String>,
}

/// The name of `repository`'s template with key `key`: its Docker image's name, with
/// the tag after a dash.
pub fn template_name(repository: &str, key: &str) -> String {
    environment_image_name(repository, key).replace(':', "-")
}

/// The prefix every template of `repository` has, whatever its key.
pub fn template_prefix(repository: &str) -> String {
    let name = environment_image_name(repository, "");
    format!("{}-", name.trim_end_matches(':'))
}

/// Whether the template `name` is one of `repository`'s: its prefix and then a key's 16
/// digits, nothing more (so `octo/app` never claims `octo/app-two`'s).
pub fn is_template_of(name: &str, repository: &str) -> bool {
    name.strip_prefix(&template_prefix(repository))
        .is_some_and(|key| key.len() == 16 && key.chars().all(|c| c.is_ascii_hexdigit()))
}

/// `build` as a template build. `from_template` is the template a setup script runs on
/// (the repository's own, or E2B's base), for an environment that does not name an
/// image of its own.
pub fn template_recipe(
    build: &EnvironmentBuild,
    features: &[FetchedFeature],
    from_template: Option<&str>,
) -> Result<TemplateRecipe, EnvironmentBuildError> {
    let mut start = serde_json::json!({ "force": false });
    let mut steps: Vec<(NamedInstruction, Option<Vec<u8>>)> = Vec::new();
    let mut notes = Vec::new();
    let base = template_base(build, from_template, &mut start, &mut steps, &mut notes)?;
    let setup_steps = build.setup_step_lines();
    let feature_installs = feature_installs(features);
    let layer = layer_instructions(&LayerInputs {
        preset: &build.preset,
        stand_in: build.stand_in.is_some() && build.preset != CUSTOM_IMAGE_PRESET,
        variables: &build.variables,
        setup_steps: &setup_steps,
        features: &feature_installs,
        runtime_user: RuntimeUser::E2B,
    });
    let layer_context = layer_files(build, features)?;
    for step in layer {
        let files = copied_files(&step, &layer_context)?;
        steps.push((step, files));
    }
    let mut uploads = Vec::new();
    let mut step_names = Vec::new();
    let mut step_bodies = Vec::new();
    for (step, files) in steps {
        let mut body = step_body(&step.instruction);
        if let Some(files) = files {
            let hash = files_hash(&body, &files);
            body["filesHash"] = hash.as_str().into();
            if !uploads.iter().any(|(known, _)| *known == hash) {
                uploads.push((hash, files));
            }
        }
        step_bodies.push(body);
        step_names.push(step.name);
    }
    start["steps"] = serde_json::Value::Array(step_bodies);
    Ok(TemplateRecipe {
        name: template_name(&build.repository, &build.key),
        start,
        step_names,
        base,
        uploads,
        notes,
    })
}

/// Where the template starts (set in `start`), with the owner's Dockerfile's steps
/// added to `steps` and what E2B does not use of it to `notes`; returns it in words.
fn template_base(
    build: &EnvironmentBuild,
    from_template: Option<&str>,
    start: &mut serde_json::Value,
    steps: &mut Vec<(NamedInstruction, Option<Vec<u8>>)>,
    notes: &mut Vec<String>,
) -> Result<String, EnvironmentBuildError> {
    Ok(match (&build.base, from_template) {
        (_, Some(template)) => {
            start["fromTemplate"] = template.into();
            format!("the E2B template {template}")
        }
        (EnvironmentBase::Image(image), None) => {
            start["fromImage"] = image.as_str().into();
            format!("the base image {image}")
        }
        (
            EnvironmentBase::Dockerfile {
                context,
                path,
                text,
                args,
                target,
            },
            None,
        ) => {
            let owners =
                dockerfile_steps(path, text, args, target.as_deref()).map_err(|refused| {
                    EnvironmentBuildError::Step {
                        step: refused.step,
                        detail: refused.reason,
                    }
                })?;
            start["fromImage"] = owners.from_image.as_str().into();
            notes.extend(owners.notes);
            for step in owners.steps {
                let files = copied_files(&step, context)?;
                steps.push((step, files));
            }
            format!("the base image {} ({path})", owners.from_image)
        }
    })
}

/// A step as E2B's `TemplateStep`: its type and its arguments (a copy's are its
/// source, its destination, its owner and its mode).
fn step_body(instruction: &LayerInstruction) -> serde_json::Value {
    let (kind, args): (&str, Vec<String>) = match instruction {
        LayerInstruction::User(user) => ("USER", vec![user.clone()]),
        LayerInstruction::Copy { from, to, owner } => (
            "COPY",
            vec![
                from.clone(),
                to.clone(),
                owner.clone().unwrap_or_default(),
                String::new(),
            ],
        ),
        LayerInstruction::Run(line) => ("RUN", vec![line.clone()]),
        LayerInstruction::RunCommand(line) => {
            ("RUN", vec![format!("/bin/sh -c {}", shell_quoted(line))])
        }
        LayerInstruction::Env(pairs) => (
            "ENV",
            pairs
                .iter()
                .flat_map(|(name, value)| [name.clone(), value.clone()])
                .collect(),
        ),
        LayerInstruction::Workdir(path) => ("WORKDIR", vec![path.clone()]),
    };
    serde_json::json!({ "type": kind, "args": args, "force": false })
}

/// The files a copy step takes from `context` (a tar archive), as a tar archive of
/// their own; `None` for any other step.
fn copied_files(
    step: &NamedInstruction,
    context: &[u8],
) -> Result<Option<Vec<u8>>, EnvironmentBuildError> {
    let LayerInstruction::Copy { from, .. } = &step.instruction else {
        return Ok(None);
    };
    let pack = |error: std::io::Error| EnvironmentBuildError::Pack(error.to_string());
    let wanted = from.trim_start_matches("./").trim_end_matches('/');
    let mut archive = tar::Builder::new(Vec::new());
    let mut found = false;
    let mut entries = tar::Archive::new(context);
    for entry in entries.entries().map_err(pack)? {
        let mut entry = entry.map_err(pack)?;
        if entry.header().entry_type() == tar::EntryType::XGlobalHeader {
            continue;
        }
        let path = entry.path().map_err(pack)?.to_string_lossy().into_owned();
        let trimmed = path.trim_start_matches("./").trim_end_matches('/');
        let inside = wanted.is_empty()
            || wanted == "."
            || trimmed == wanted
            || trimmed.starts_with(&format!("{wanted}/"));
        if inside {
            found = true;
            let mut header = entry.header().clone();
            archive
                .append_data(&mut header, &path, &mut entry)
                .map_err(pack)?;
        }
    }
    if !found {
        return Err(EnvironmentBuildError::Step {
            step: step.name.clone(),
            detail: format!("{from} is not in the build's context"),
        });
    }
    archive.into_inner().map(Some).map_err(pack)
}

/// A copy step's files hash: its arguments and its archive.
fn files_hash(body: &serde_json::Value, files: &[u8]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(body["args"].to_string().as_bytes());
    hasher.update([0]);
    hasher.update(files);
    hasher
        .finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::environment_image::SetupStep;
    use crate::tar_transfer::append_file;

    fn archive(files: &[(&str, &str)]) -> Vec<u8> {
        let mut archive = tar::Builder::new(Vec::new());
        for (path, text) in files {
            append_file(&mut archive, path, text.as_bytes(), 0o644).expect("a file");
        }
        archive.into_inner().expect("an archive")
    }

    fn build(base: EnvironmentBase) -> EnvironmentBuild {
        EnvironmentBuild {
            repository: "Octo/App".into(),
            installation: "install-1".into(),
            key: "0123456789abcdef0123".into(),
            base,
            preset: "claude".into(),
            stand_in: None,
            variables: Default::default(),
            setup_steps: vec![SetupStep {
                name: "postCreateCommand \"deps\" (npm ci)".into(),
                shell_line: "npm ci".into(),
            }],
            features: Default::default(),
            working_copy: archive(&[("package.json", "{}")]),
        }
    }

    #[test]
    fn an_image_base_starts_the_template_and_the_layer_follows() {
        let recipe =
            template_recipe(&build(EnvironmentBase::Image("node:22".into())), &[], None).unwrap();
        assert_eq!(recipe.name, "handoff-env-octo-app-0123456789abcdef");
        assert!(recipe.name.starts_with(&template_prefix("Octo/App")));
        assert!(is_template_of(&recipe.name, "Octo/App"));
        assert!(!is_template_of(
            "handoff-env-octo-app-two-0123456789abcdef",
            "Octo/App"
        ));
        assert_eq!(recipe.start["fromImage"], "node:22");
        let steps = recipe.start["steps"].as_array().unwrap();
        assert_eq!(steps.len(), recipe.step_names.len());
        let copies: Vec<&serde_json::Value> =
            steps.iter().filter(|step| step["type"] == "COPY").collect();
        assert_eq!(copies.len(), 2, "Handoff's scripts and the base branch");
        assert_eq!(recipe.uploads.len(), 2);
        for copy in copies {
            let hash = copy["filesHash"].as_str().unwrap();
            assert!(recipe.uploads.iter().any(|(known, _)| known == hash));
        }
        let setup = steps
            .iter()
            .position(|step| step["args"][0] == "/bin/sh -c 'npm ci'")
            .expect("the setup command");
        assert_eq!(
            recipe.step_names[setup],
            "postCreateCommand \"deps\" (npm ci)"
        );
        assert_eq!(
            steps.last().unwrap()["args"],
            serde_json::json!(["HOME", "/home/user"])
        );
    }

    #[test]
    fn features_go_up_with_their_options_and_install_as_root_on_e2b() {
        let feature = FetchedFeature {
            reference: "ghcr.io/devcontainers/features/node:1".into(),
            metadata: handoff_domain::dev_container_feature::FeatureMetadata {
                id: "node".into(),
                container_env: [("NVM_DIR".to_owned(), "/usr/local/share/nvm".to_owned())].into(),
                ..Default::default()
            },
            files: archive(&[
                ("./install.sh", "#!/bin/sh\n"),
                ("./devcontainer-feature.json", "{}"),
            ]),
            variables: vec![("VERSION".into(), "20".into())],
        };
        let recipe = template_recipe(
            &build(EnvironmentBase::Image("node:22".into())),
            std::slice::from_ref(&feature),
            None,
        )
        .unwrap();
        let steps = recipe.start["steps"].as_array().unwrap();
        let install = steps
            .iter()
            .position(|step| {
                step["args"][0]
                    .as_str()
                    .unwrap_or("")
                    .contains("./install.sh")
            })
            .expect("the feature's install");
        assert_eq!(
            recipe.step_names[install],
            "the feature ghcr.io/devcontainers/features/node:1"
        );
        assert!(steps[install]["args"][0]
            .as_str()
            .unwrap()
            .contains("_REMOTE_USER=user "));
        assert_eq!(
            steps[install + 1]["args"],
            serde_json::json!(["NVM_DIR", "/usr/local/share/nvm"])
        );
        let copy = steps
            .iter()
            .find(|step| step["type"] == "COPY" && step["args"][0] == "features/")
            .expect("the features' copy");
        let (_, files) = recipe
            .uploads
            .iter()
            .find(|(hash, _)| copy["filesHash"] == hash.as_str())
            .expect("its files go up");
        let mut paths = Vec::new();
        let mut options = String::new();
        for entry in tar::Archive::new(files.as_slice()).entries().unwrap() {
            let mut entry = entry.unwrap();
            let path = entry.path().unwrap().to_string_lossy().into_owned();
            if path.ends_with("handoff-feature.env") {
                std::io::Read::read_to_string(&mut entry, &mut options).unwrap();
            }
            paths.push(path);
        }
        assert!(
            paths.contains(&"features/1-node/install.sh".to_owned()),
            "{paths:?}"
        );
        assert_eq!(options, "VERSION='20'\n");
    }

    #[test]
    fn a_dockerfile_base_brings_its_steps_and_their_files() {
        let base = EnvironmentBase::Dockerfile {
            context: archive(&[("tools/a.sh", "echo a"), ("other.txt", "x")]),
            path: ".devcontainer/Dockerfile".into(),
            text: "FROM debian:12\nCOPY tools /opt/tools\nRUN sh /opt/tools/a.sh\n".into(),
            args: Default::default(),
            target: None,
        };
        let recipe = template_recipe(&build(base), &[], None).unwrap();
        assert_eq!(recipe.start["fromImage"], "debian:12");
        let first = &recipe.start["steps"][0];
        assert_eq!(first["type"], "COPY");
        let (_, files) = recipe
            .uploads
            .iter()
            .find(|(hash, _)| first["filesHash"] == hash.as_str())
            .expect("the copy's files");
        let mut entries = tar::Archive::new(files.as_slice());
        let paths: Vec<String> = entries
            .entries()
            .unwrap()
            .map(|entry| entry.unwrap().path().unwrap().display().to_string())
            .collect();
        assert_eq!(paths, ["tools/a.sh"]);

        let missing = EnvironmentBase::Dockerfile {
            context: archive(&[("other.txt", "x")]),
            path: "Dockerfile".into(),
            text: "FROM debian:12\nCOPY tools /opt/tools\n".into(),
            args: Default::default(),
            target: None,
        };
        let refused = template_recipe(&build(missing), &[], None).unwrap_err();
        assert!(
            refused
                .to_string()
                .contains("tools is not in the build's context"),
            "{refused}"
        );
    }

    #[test]
    fn a_setup_script_runs_on_the_repositorys_template() {
        let recipe = template_recipe(
            &build(EnvironmentBase::Image("handoff-agent-base:1".into())),
            &[],
            Some("my-template"),
        )
        .unwrap();
        assert_eq!(recipe.start["fromTemplate"], "my-template");
        assert!(recipe.start.get("fromImage").is_none());
    }
}
