//! A dev container (`devcontainer.json`, JSON with comments) read into what Handoff
//! builds: its base (an image, a Dockerfile, or a service of a Compose file), its
//! environment, and the setup commands that run once at build time in the working copy.
//! What Handoff never does with it is said as a note: `initializeCommand` runs on the
//! machine that starts the container, so it is never run. A dev container that cannot
//! be built is refused here, before anything is built or run, saying what is wrong and
//! where.

use std::collections::BTreeMap;

use serde_json::Value;
use thiserror::Error;

use crate::dev_container_feature::{
    feature_options, feature_source, FeatureRequest, FeatureSource,
};
use crate::jsonc::{parse_jsonc, JsoncError};
use crate::repository_path::beside_file;

/// A dev container, as Handoff builds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DevContainerRecipe {
    /// Where it was found, from the repository's root.
    pub file: String,
    pub base: DevContainerBase,
    pub container_env: BTreeMap<String, String>,
    pub remote_env: BTreeMap<String, String>,
    /// `onCreateCommand`, `updateContentCommand` and `postCreateCommand`, in that order.
    pub setup_commands: Vec<SetupCommand>,
    /// The features it asks for, with their options, by reference (JSON's objects keep
    /// no order: the install order comes from the features themselves and the owner's
    /// `overrideFeatureInstallOrder`).
    pub features: Vec<FeatureRequest>,
    /// `overrideFeatureInstallOrder`: the features installed first, in this order.
    pub feature_install_order: Vec<String>,
    /// What Handoff does not do with it, in words for the owner.
    pub notes: Vec<String>,
}

/// The image a dev container starts from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DevContainerBase {
    Image(String),
    /// Paths from the repository's root.
    Dockerfile {
        dockerfile: String,
        context: String,
        args: BTreeMap<String, String>,
        target: Option<String>,
    },
    /// The service the agent runs in, and the others started beside it for its tests.
    Compose {
        files: Vec<String>,
        service: String,
        run_services: Vec<String>,
    },
}

/// One setup command of a dev container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetupCommand {
    /// The field it came from (`postCreateCommand`).
    pub field: &'static str,
    /// Its name, for one of an object of named commands.
    pub name: Option<String>,
    pub command: CommandForm,
}

/// How a command is written: a line for the shell, or a program and its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandForm {
    Shell(String),
    Program(Vec<String>),
}

/// Why a dev container cannot be built. Nothing runs on a refused one.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DevContainerError {
    #[error("{file} is not JSON with comments: {error}")]
    BrokenJson { file: String, error: JsoncError },
    #[error("{file} holds no object of settings")]
    NotAnObject { file: String },
    #[error("{file} names no image: it has none of \"image\", \"build\" or \"dockerComposeFile\"")]
    UnknownForm { file: String },
    #[error("{file} names its image more than one way ({forms}): keep one")]
    TwoForms { file: String, forms: String },
    #[error("{file} builds from {dockerfile}, which is not on the base branch")]
    MissingDockerfile { file: String, dockerfile: String },
    #[error("{file} names the Compose file {compose_file}, which is not on the base branch")]
    MissingComposeFile { file: String, compose_file: String },
    #[error("{file} names a Compose file but not the \"service\" the agent runs in")]
    ComposeWithoutService { file: String },
    #[error("{file}: \"{field}\" must be {expected}")]
    BadField {
        file: String,
        field: String,
        expected: &'static str,
    },
    #[error("{file} asks for the feature {feature}, which Handoff cannot fetch: {reason}")]
    BadFeature {
        file: String,
        feature: String,
        reason: String,
    },
    #[error("{file} asks for the feature {feature}, but {path}/devcontainer-feature.json is not on the base branch")]
    MissingFeature {
        file: String,
        feature: String,
        path: String,
    },
    #[error("{file}: \"{field}\" names {path}, which is outside the repository")]
    PathOutsideRepository {
        file: String,
        field: String,
        path: String,
    },
}

/// Reads the dev container `file` (its text is `text`); `exists` says whether a file it
/// names is on the base branch.
pub fn read_dev_container(
    file: &str,
    text: &str,
    exists: &impl Fn(&str) -> bool,
) -> Result<DevContainerRecipe, DevContainerError> {
    let value = parse_jsonc(text).map_err(|error| DevContainerError::BrokenJson {
        file: file.to_owned(),
        error,
    })?;
    let settings = value
        .as_object()
        .ok_or_else(|| DevContainerError::NotAnObject {
            file: file.to_owned(),
        })?;
    let fields = Fields { file, settings };
    let base = fields.base(exists)?;
    let mut setup_commands = Vec::new();
    for field in [
        "onCreateCommand",
        "updateContentCommand",
        "postCreateCommand",
    ] {
        setup_commands.extend(fields.commands(field)?);
    }
    Ok(DevContainerRecipe {
        file: file.to_owned(),
        base,
        container_env: fields.text_map("containerEnv")?,
        remote_env: fields.text_map("remoteEnv")?,
        setup_commands,
        features: fields.features(exists)?,
        feature_install_order: fields.texts("overrideFeatureInstallOrder")?,
        notes: fields.notes(),
    })
}

/// The settings of one dev container file, read field by field.
struct Fields<'a> {
    file: &'a str,
    settings: &'a serde_json::Map<String, Value>,
}

impl Fields<'_> {
    fn bad(&self, field: &str, expected: &'static str) -> DevContainerError {
        DevContainerError::BadField {
            file: self.file.to_owned(),
            field: field.to_owned(),
            expected,
        }
    }

    /// `features`: each reference with its options; a local one must be there.
    fn features(
        &self,
        exists: &impl Fn(&str) -> bool,
    ) -> Result<Vec<FeatureRequest>, DevContainerError> {
        let mut features = Vec::new();
        for (reference, value) in self.object("features")?.into_iter().flatten() {
            let bad = |reason: String| DevContainerError::BadFeature {
                file: self.file.to_owned(),
                feature: reference.clone(),
                reason,
            };
            let source = feature_source(reference, self.file).map_err(bad)?;
            let options = feature_options(value).ok_or_else(|| {
                bad("its options must be an object of texts, numbers and true or false, or a text naming its version".to_owned())
            })?;
            if let FeatureSource::Local(path) = &source {
                if !exists(&format!("{path}/devcontainer-feature.json")) {
                    return Err(DevContainerError::MissingFeature {
                        file: self.file.to_owned(),
                        feature: reference.clone(),
                        path: path.clone(),
                    });
                }
            }
            features.push(FeatureRequest {
                reference: reference.clone(),
                source,
                options,
            });
        }
        Ok(features)
    }

    /// A list of strings; empty when it is not there.
    fn texts(&self, field: &str) -> Result<Vec<String>, DevContainerError> {
        match self.settings.get(field) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| item.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| self.bad(field, "a list of strings")),
            Some(_) => Err(self.bad(field, "a list of strings")),
        }
    }

    fn text(&self, field: &str) -> Result<Option<String>, DevContainerError> {
        match self.settings.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.clone())),
            Some(_) => Err(self.bad(field, "a string")),
        }
    }

    fn object(
        &self,
        field: &str,
    ) -> Result<Option<&serde_json::Map<String, Value>>, DevContainerError> {
        match self.settings.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Object(object)) => Ok(Some(object)),
            Some(_) => Err(self.bad(field, "an object")),
        }
    }

    /// An object of strings (`containerEnv`, `build.args`).
    fn text_map(&self, field: &str) -> Result<BTreeMap<String, String>, DevContainerError> {
        text_map_of(self.object(field)?, || {
            self.bad(field, "an object of strings")
        })
    }

    /// Which of the three ways to name the image it uses: exactly one.
    fn base(&self, exists: &impl Fn(&str) -> bool) -> Result<DevContainerBase, DevContainerError> {
        let forms: Vec<&str> = ["image", "build", "dockerComposeFile"]
            .into_iter()
            .filter(|form| {
                self.settings
                    .get(*form)
                    .is_some_and(|value| !value.is_null())
            })
            .collect();
        match forms.as_slice() {
            [] => Err(DevContainerError::UnknownForm {
                file: self.file.to_owned(),
            }),
            ["image"] => self
                .text("image")?
                .filter(|image| !image.trim().is_empty())
                .map(DevContainerBase::Image)
                .ok_or_else(|| self.bad("image", "the name of an image")),
            ["build"] => self.dockerfile_base(exists),
            ["dockerComposeFile"] => self.compose_base(exists),
            _ => Err(DevContainerError::TwoForms {
                file: self.file.to_owned(),
                forms: forms.join(", "),
            }),
        }
    }

    fn dockerfile_base(
        &self,
        exists: &impl Fn(&str) -> bool,
    ) -> Result<DevContainerBase, DevContainerError> {
        let build = self
            .object("build")?
            .ok_or_else(|| self.bad("build", "an object"))?;
        let build_fields = Fields {
            file: self.file,
            settings: build,
        };
        let dockerfile = build_fields
            .text("dockerfile")?
            .ok_or_else(|| self.bad("build.dockerfile", "the Dockerfile's path"))?;
        let dockerfile = self.beside("build.dockerfile", &dockerfile)?;
        if !exists(&dockerfile) {
            return Err(DevContainerError::MissingDockerfile {
                file: self.file.to_owned(),
                dockerfile,
            });
        }
        let context = build_fields
            .text("context")?
            .unwrap_or_else(|| ".".to_owned());
        Ok(DevContainerBase::Dockerfile {
            dockerfile,
            context: self.beside("build.context", &context)?,
            args: text_map_of(build_fields.object("args")?, || {
                self.bad("build.args", "an object of strings")
            })?,
            target: build_fields.text("target")?,
        })
    }

    fn compose_base(
        &self,
        exists: &impl Fn(&str) -> bool,
    ) -> Result<DevContainerBase, DevContainerError> {
        let named = match self.settings.get("dockerComposeFile") {
            Some(Value::String(one)) => vec![one.clone()],
            Some(Value::Array(many)) => many
                .iter()
                .map(|file| file.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| self.bad("dockerComposeFile", "a path or a list of paths"))?,
            _ => return Err(self.bad("dockerComposeFile", "a path or a list of paths")),
        };
        let mut files = Vec::new();
        for compose_file in named {
            let path = self.beside("dockerComposeFile", &compose_file)?;
            if !exists(&path) {
                return Err(DevContainerError::MissingComposeFile {
                    file: self.file.to_owned(),
                    compose_file: path,
                });
            }
            files.push(path);
        }
        let service =
            self.text("service")?
                .ok_or_else(|| DevContainerError::ComposeWithoutService {
                    file: self.file.to_owned(),
                })?;
        let run_services = match self.settings.get("runServices") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(names)) => names
                .iter()
                .map(|name| name.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| self.bad("runServices", "a list of service names"))?,
            Some(_) => return Err(self.bad("runServices", "a list of service names")),
        };
        Ok(DevContainerBase::Compose {
            files,
            service,
            run_services,
        })
    }

    /// The commands of a lifecycle field: a line, a program and its arguments, or an
    /// object of named ones (each a line or a program).
    fn commands(&self, field: &'static str) -> Result<Vec<SetupCommand>, DevContainerError> {
        let expected =
            "a command line, a list of a program and its arguments, or an object of named commands";
        let one = |value: &Value| -> Option<CommandForm> {
            match value {
                Value::String(line) => Some(CommandForm::Shell(line.clone())),
                Value::Array(words) => words
                    .iter()
                    .map(|word| word.as_str().map(str::to_owned))
                    .collect::<Option<Vec<_>>>()
                    .filter(|words| !words.is_empty())
                    .map(CommandForm::Program),
                _ => None,
            }
        };
        match self.settings.get(field) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Object(named)) => named
                .iter()
                .map(|(name, value)| {
                    one(value)
                        .map(|command| SetupCommand {
                            field,
                            name: Some(name.clone()),
                            command,
                        })
                        .ok_or_else(|| self.bad(field, expected))
                })
                .collect(),
            Some(value) => one(value)
                .map(|command| {
                    vec![SetupCommand {
                        field,
                        name: None,
                        command,
                    }]
                })
                .ok_or_else(|| self.bad(field, expected)),
        }
    }

    /// What Handoff leaves out of this dev container, said to the owner.
    fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if self.settings.contains_key("initializeCommand") {
            notes.push(
                "initializeCommand runs on the machine that starts the container: Handoff never runs it".to_owned(),
            );
        }
        for field in ["postStartCommand", "postAttachCommand"] {
            if self.settings.contains_key(field) {
                notes.push(format!(
                    "{field} is for an editor attaching to the container: Handoff does not run it"
                ));
            }
        }
        notes
    }

    /// `path`, written relative to the folder the dev container file is in, as a path
    /// from the repository's root; refused when it leaves the repository.
    fn beside(&self, field: &str, path: &str) -> Result<String, DevContainerError> {
        beside_file(self.file, path).ok_or_else(|| DevContainerError::PathOutsideRepository {
            file: self.file.to_owned(),
            field: field.to_owned(),
            path: path.to_owned(),
        })
    }
}

/// An object of strings, or the error `bad` makes.
fn text_map_of(
    object: Option<&serde_json::Map<String, Value>>,
    bad: impl Fn() -> DevContainerError,
) -> Result<BTreeMap<String, String>, DevContainerError> {
    object
        .into_iter()
        .flatten()
        .map(|(key, value)| {
            value
                .as_str()
                .map(|text| (key.clone(), text.to_owned()))
                .ok_or_else(&bad)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::environment_recipe::{branch_of, find_environment, EnvironmentRecipe};

    #[test]
    fn a_dockerfile_dev_container_is_read_with_its_paths_from_the_repository_root() {
        let text = r#"{
            // Built from the project's own Dockerfile, with the repository as its context.
            "build": {
                "dockerfile": "Dockerfile",
                "context": "..",
                "args": { "NODE_VERSION": "20" },
                "target": "dev",
            },
            "containerEnv": { "CI": "true" },
            "remoteEnv": { "PATH": "${containerEnv:PATH}:/opt/bin" },
            "features": { "ghcr.io/devcontainers/features/node:1": {} },
            "initializeCommand": "docker login",
            "onCreateCommand": "npm ci",
            "updateContentCommand": ["npm", "run", "build"],
            "postCreateCommand": { "db": "createdb app", "hooks": ["git", "config", "core.hooksPath", ".hooks"] },
            "postStartCommand": "npm run watch",
        }"#;
        let files = branch_of(&[
            (".devcontainer/devcontainer.json", text),
            (".devcontainer/Dockerfile", "FROM debian:12"),
        ]);
        let EnvironmentRecipe::DevContainer(recipe) = find_environment(&files).unwrap() else {
            panic!("a dev container");
        };
        assert_eq!(
            recipe.base,
            DevContainerBase::Dockerfile {
                dockerfile: ".devcontainer/Dockerfile".to_owned(),
                context: ".".to_owned(),
                args: BTreeMap::from([("NODE_VERSION".to_owned(), "20".to_owned())]),
                target: Some("dev".to_owned()),
            }
        );
        assert_eq!(recipe.container_env["CI"], "true");
        assert_eq!(recipe.remote_env["PATH"], "${containerEnv:PATH}:/opt/bin");
        let features: Vec<&str> = recipe
            .features
            .iter()
            .map(|feature| feature.reference.as_str())
            .collect();
        assert_eq!(features, ["ghcr.io/devcontainers/features/node:1"]);
        let commands: Vec<(&str, Option<&str>, &CommandForm)> = recipe
            .setup_commands
            .iter()
            .map(|command| (command.field, command.name.as_deref(), &command.command))
            .collect();
        assert_eq!(
            commands,
            [
                (
                    "onCreateCommand",
                    None,
                    &CommandForm::Shell("npm ci".to_owned())
                ),
                (
                    "updateContentCommand",
                    None,
                    &CommandForm::Program(vec!["npm".into(), "run".into(), "build".into()])
                ),
                (
                    "postCreateCommand",
                    Some("db"),
                    &CommandForm::Shell("createdb app".to_owned())
                ),
                (
                    "postCreateCommand",
                    Some("hooks"),
                    &CommandForm::Program(vec![
                        "git".into(),
                        "config".into(),
                        "core.hooksPath".into(),
                        ".hooks".into()
                    ])
                ),
            ]
        );
        assert_eq!(recipe.notes.len(), 2, "{:?}", recipe.notes);
        assert!(
            recipe.notes[0].contains("initializeCommand")
                && recipe.notes[0].contains("never runs it")
        );
        assert!(recipe.notes[1].contains("postStartCommand"));
    }

    #[test]
    fn a_compose_dev_container_names_its_service_and_the_ones_beside_it() {
        let text = r#"{
            "dockerComposeFile": ["compose.yml", "compose.test.yml"],
            "service": "app",
            "runServices": ["app", "db"],
        }"#;
        let files = branch_of(&[
            (".devcontainer/devcontainer.json", text),
            (".devcontainer/compose.yml", "services: {}"),
            (".devcontainer/compose.test.yml", "services: {}"),
        ]);
        let EnvironmentRecipe::DevContainer(recipe) = find_environment(&files).unwrap() else {
            panic!("a dev container");
        };
        assert_eq!(
            recipe.base,
            DevContainerBase::Compose {
                files: vec![
                    ".devcontainer/compose.yml".into(),
                    ".devcontainer/compose.test.yml".into()
                ],
                service: "app".into(),
                run_services: vec!["app".into(), "db".into()],
            }
        );
    }

    #[test]
    fn a_dev_container_that_cannot_be_built_is_refused_saying_what_and_where() {
        let refused = |text: &str| {
            find_environment(&branch_of(&[(".devcontainer/devcontainer.json", text)])).unwrap_err()
        };
        let broken = refused("{\n  \"image\": \"debian:12\"\n  \"features\": {}\n}");
        assert!(
            matches!(&broken, DevContainerError::BrokenJson { error, .. } if error.line == 3),
            "{broken}"
        );
        assert!(
            broken
                .to_string()
                .starts_with(".devcontainer/devcontainer.json is not JSON"),
            "{broken}"
        );
        assert!(matches!(
            refused("[1, 2]"),
            DevContainerError::NotAnObject { .. }
        ));
        let unknown = refused(r#"{ "name": "no image here", "forwardPorts": [3000] }"#);
        assert!(
            matches!(unknown, DevContainerError::UnknownForm { .. }),
            "{unknown}"
        );
        let two = refused(r#"{ "image": "debian:12", "build": { "dockerfile": "Dockerfile" } }"#);
        assert_eq!(
            two.to_string(),
            ".devcontainer/devcontainer.json names its image more than one way (image, build): keep one"
        );
        let missing = refused(r#"{ "build": { "dockerfile": "Dockerfile" } }"#);
        assert_eq!(
            missing,
            DevContainerError::MissingDockerfile {
                file: ".devcontainer/devcontainer.json".into(),
                dockerfile: ".devcontainer/Dockerfile".into(),
            }
        );
        let no_service = refused(r#"{ "dockerComposeFile": [] }"#);
        assert!(
            matches!(no_service, DevContainerError::ComposeWithoutService { .. }),
            "{no_service}"
        );
        let no_compose = refused(r#"{ "dockerComposeFile": "compose.yml", "service": "app" }"#);
        assert!(
            matches!(no_compose, DevContainerError::MissingComposeFile { .. }),
            "{no_compose}"
        );
        let outside = refused(r#"{ "build": { "dockerfile": "../../Dockerfile" } }"#);
        assert!(
            matches!(outside, DevContainerError::PathOutsideRepository { .. }),
            "{outside}"
        );
        let bad_command = refused(r#"{ "image": "a", "postCreateCommand": 42 }"#);
        assert!(
            matches!(&bad_command, DevContainerError::BadField { field, .. } if field == "postCreateCommand"),
            "{bad_command}"
        );
        let empty_image = refused(r#"{ "image": " " }"#);
        assert!(
            matches!(&empty_image, DevContainerError::BadField { field, .. } if field == "image"),
            "{empty_image}"
        );
        let bad_env = refused(r#"{ "image": "a", "containerEnv": { "PORT": 3000 } }"#);
        assert!(
            matches!(&bad_env, DevContainerError::BadField { field, .. } if field == "containerEnv"),
            "{bad_env}"
        );
        let old_feature = refused(r#"{ "image": "a", "features": { "node": "lts" } }"#);
        assert!(
            matches!(&old_feature, DevContainerError::BadFeature { feature, .. } if feature == "node"),
            "{old_feature}"
        );
        let bad_options = refused(r#"{ "image": "a", "features": { "ghcr.io/o/f/x:1": [1] } }"#);
        assert!(
            matches!(&bad_options, DevContainerError::BadFeature { .. }),
            "{bad_options}"
        );
        let missing_local = refused(r#"{ "image": "a", "features": { "./tools": {} } }"#);
        assert_eq!(
            missing_local.to_string(),
            ".devcontainer/devcontainer.json asks for the feature ./tools, but .devcontainer/tools/devcontainer-feature.json is not on the base branch"
        );
    }

    #[test]
    fn features_keep_their_options_and_the_owners_install_order() {
        let text = r#"{
            "image": "debian:12",
            "features": {
                "ghcr.io/devcontainers/features/node:1": { "version": "20", "pnpm": true },
                "./tools": "2",
            },
            "overrideFeatureInstallOrder": ["./tools"],
        }"#;
        let files = branch_of(&[
            (".devcontainer/devcontainer.json", text),
            (".devcontainer/tools/devcontainer-feature.json", "{}"),
        ]);
        let EnvironmentRecipe::DevContainer(recipe) = find_environment(&files).unwrap() else {
            panic!("a dev container");
        };
        assert_eq!(recipe.features.len(), 2);
        assert_eq!(
            recipe.features[0].source,
            FeatureSource::Local(".devcontainer/tools".into())
        );
        assert_eq!(recipe.features[0].options["version"], "2");
        assert_eq!(recipe.features[1].options["pnpm"], "true");
        assert_eq!(recipe.feature_install_order, ["./tools"]);
    }
}
