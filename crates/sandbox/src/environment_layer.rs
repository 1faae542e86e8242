//! Handoff's agent layer as a list of instructions, the one recipe both ways of building
//! an environment read: written out as a Dockerfile for this machine's Docker engine
//! ([`crate::environment_image`]), or turned into the steps of an E2B template build
//! ([`crate::e2b::template_recipe`]).
//!
//! The layer, on any base: as root, Handoff's scripts in `/opt/handoff/`, the check that
//! the base can carry the agent and the agent installed, the dev container's features
//! (each one's `install.sh`, as root), the dev container's variables,
//! a copy of the base branch in `/opt/handoff/prepared` where the setup commands run
//! (what they make at its top listed for the job script), then the user runs start as,
//! in its home.

use std::collections::BTreeMap;

use crate::environment_image::PREPARED_COPY;

/// One instruction of an image recipe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LayerInstruction {
    User(String),
    /// The files under `from` (a path in the build's context) copied to `to`, owned by
    /// `owner` when one is given.
    Copy {
        from: String,
        to: String,
        owner: Option<String>,
    },
    /// A line for the image's shell.
    Run(String),
    /// A setup command of the owner's, run by `/bin/sh -c` whatever the image's shell.
    RunCommand(String),
    Env(Vec<(String, String)>),
    Workdir(String),
}

/// One instruction and what it is called in a failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedInstruction {
    pub instruction: LayerInstruction,
    pub name: String,
}

/// The user runs start as, and its home: `agent` in Docker's images, E2B's own `user`
/// in its templates (E2B starts every process as that user).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuntimeUser {
    pub name: &'static str,
    pub home: &'static str,
}

impl RuntimeUser {
    pub const DOCKER: RuntimeUser = RuntimeUser {
        name: "agent",
        home: "/home/agent",
    };
    pub const E2B: RuntimeUser = RuntimeUser {
        name: "user",
        home: "/home/user",
    };
}

/// A dev container's feature as the layer installs it: its files at `folder` in the
/// build's context (with `handoff-feature.env`, its options), what its failure is
/// called, and the variables it sets once installed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeatureInstall {
    pub folder: String,
    pub name: String,
    pub container_env: Vec<(String, String)>,
}

/// Where the features' files are copied to in the image.
pub const FEATURES_FOLDER: &str = "/opt/handoff/features";

/// What the layer is made for.
#[derive(Debug, Clone, Copy)]
pub struct LayerInputs<'a> {
    /// The preset whose program the layer installs (`base`: git only).
    pub preset: &'a str,
    /// Whether a stand-in program is installed as the preset's command.
    pub stand_in: bool,
    /// Variables every process of the image gets.
    pub variables: &'a BTreeMap<String, String>,
    /// The setup commands: what the owner calls each, and its line.
    pub setup_steps: &'a [(String, String)],
    /// The dev container's features, in their install order.
    pub features: &'a [FeatureInstall],
    pub runtime_user: RuntimeUser,
}

/// The layer's instructions, in order, each with its name for a failure.
pub fn layer_instructions(inputs: &LayerInputs<'_>) -> Vec<NamedInstruction> {
    let layer = LAYER;
    let mut lines = vec![
        named(LayerInstruction::User("root".to_owned()), layer),
        named(
            LayerInstruction::Copy {
                from: "handoff/".to_owned(),
                to: "/opt/handoff/".to_owned(),
                owner: None,
            },
            layer,
        ),
        named(
            LayerInstruction::Run(format!(
                "PRESET={} STAND_IN={} sh /opt/handoff/environment-layer.sh",
                inputs.preset,
                u8::from(inputs.stand_in)
            )),
            layer,
        ),
    ];
    lines.extend(feature_instructions(inputs.features, inputs.runtime_user));
    if !inputs.variables.is_empty() {
        lines.push(named(
            LayerInstruction::Env(
                inputs
                    .variables
                    .iter()
                    .map(|(name, value)| (name.clone(), value.clone()))
                    .collect(),
            ),
            "the dev container's variables",
        ));
    }
    lines.push(named(
        LayerInstruction::Copy {
            from: "working-copy/".to_owned(),
            to: format!("{PREPARED_COPY}/"),
            owner: None,
        },
        "copying the base branch in",
    ));
    lines.push(named(
        LayerInstruction::Workdir(PREPARED_COPY.to_owned()),
        layer,
    ));
    // What the setup commands make at the copy's top (node_modules, .venv) is listed,
    // for the job script to carry into each run's working copy.
    lines.push(named(
        LayerInstruction::Run(format!("ls -A {PREPARED_COPY} > {PREPARED_COPY}.before")),
        layer,
    ));
    for (name, line) in inputs.setup_steps {
        lines.push(named(LayerInstruction::RunCommand(line.clone()), name));
    }
    lines.extend(layer_end(inputs.runtime_user));
    lines
}

/// The features installed as the dev container specification says: as root, each in
/// its folder, its options as variables and the user runs start as named to it, after
/// Handoff's part (so that user is there), each one's variables set after it.
fn feature_instructions(features: &[FeatureInstall], user: RuntimeUser) -> Vec<NamedInstruction> {
    if features.is_empty() {
        return Vec::new();
    }
    let mut lines = vec![named(
        LayerInstruction::Copy {
            from: "features/".to_owned(),
            to: format!("{FEATURES_FOLDER}/"),
            owner: None,
        },
        "copying the dev container's features in",
    )];
    let user_variables = format!(
        "_REMOTE_USER={0} _REMOTE_USER_HOME={1} _CONTAINER_USER={0} _CONTAINER_USER_HOME={1}",
        user.name, user.home
    );
    for feature in features {
        let folder = feature.folder.trim_start_matches("features/");
        lines.push(named(
            LayerInstruction::Run(format!(
                "cd {FEATURES_FOLDER}/{folder} && chmod +x install.sh && set -a && . ./handoff-feature.env && set +a && {user_variables} ./install.sh"
            )),
            &feature.name,
        ));
        if !feature.container_env.is_empty() {
            lines.push(named(
                LayerInstruction::Env(feature.container_env.clone()),
                &feature.name,
            ));
        }
    }
    lines
}

/// What every failure of Handoff's own steps is called.
const LAYER: &str = "Handoff's agent layer";

fn named(instruction: LayerInstruction, name: &str) -> NamedInstruction {
    NamedInstruction {
        instruction,
        name: name.to_owned(),
    }
}

/// The layer's end: what the setup commands made listed, the copy handed to `user`,
/// and `user` in its home.
fn layer_end(user: RuntimeUser) -> Vec<NamedInstruction> {
    vec![
        named(
            LayerInstruction::Run(format!(
                "ls -A {PREPARED_COPY} | grep -vxF -f {PREPARED_COPY}.before > {PREPARED_COPY}.products; rm {PREPARED_COPY}.before"
            )),
            LAYER,
        ),
        named(
            LayerInstruction::Run(format!("chown -R {0}:{0} {PREPARED_COPY}", user.name)),
            LAYER,
        ),
        named(LayerInstruction::User(user.name.to_owned()), LAYER),
        named(LayerInstruction::Workdir(user.home.to_owned()), LAYER),
        named(
            LayerInstruction::Env(vec![("HOME".to_owned(), user.home.to_owned())]),
            LAYER,
        ),
    ]
}

/// `instruction` as a Dockerfile line.
pub fn dockerfile_line(instruction: &LayerInstruction) -> String {
    match instruction {
        LayerInstruction::User(user) => format!("USER {user}"),
        LayerInstruction::Copy { from, to, owner } => match owner {
            Some(owner) => format!("COPY --chown={owner} {from} {to}"),
            None => format!("COPY {from} {to}"),
        },
        LayerInstruction::Run(line) => format!("RUN {line}"),
        LayerInstruction::RunCommand(line) => {
            format!("RUN [\"/bin/sh\", \"-c\", {}]", quoted(line))
        }
        LayerInstruction::Env(pairs) => {
            let pairs: Vec<String> = pairs
                .iter()
                .map(|(name, value)| format!("{name}={}", quoted(value)))
                .collect();
            format!("ENV {}", pairs.join(" "))
        }
        LayerInstruction::Workdir(path) => format!("WORKDIR {path}"),
    }
}

/// `text` as a double-quoted string that a Dockerfile and JSON both read back as it is.
fn quoted(text: &str) -> String {
    serde_json::Value::String(text.to_owned()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs<'a>(
        variables: &'a BTreeMap<String, String>,
        setup_steps: &'a [(String, String)],
        runtime_user: RuntimeUser,
    ) -> LayerInputs<'a> {
        LayerInputs {
            preset: "claude",
            stand_in: false,
            variables,
            setup_steps,
            features: &[],
            runtime_user,
        }
    }

    #[test]
    fn the_layer_ends_as_the_user_runs_start_as() {
        let variables = BTreeMap::from([("NODE_ENV".to_owned(), "test".to_owned())]);
        let steps = [("postCreateCommand".to_owned(), "npm ci".to_owned())];
        for user in [RuntimeUser::DOCKER, RuntimeUser::E2B] {
            let lines = layer_instructions(&inputs(&variables, &steps, user));
            let texts: Vec<String> = lines
                .iter()
                .map(|line| dockerfile_line(&line.instruction))
                .collect();
            assert_eq!(texts[0], "USER root");
            assert!(texts.contains(&"ENV NODE_ENV=\"test\"".to_owned()));
            assert!(texts.contains(&"RUN [\"/bin/sh\", \"-c\", \"npm ci\"]".to_owned()));
            assert_eq!(
                texts[texts.len() - 3..],
                [
                    format!("USER {}", user.name),
                    format!("WORKDIR {}", user.home),
                    format!("ENV HOME=\"{}\"", user.home),
                ]
            );
            let setup = lines
                .iter()
                .find(|line| line.instruction == LayerInstruction::RunCommand("npm ci".into()))
                .expect("the setup command");
            assert_eq!(setup.name, "postCreateCommand");
        }
    }

    #[test]
    fn features_install_as_root_after_handoffs_part_with_the_user_runs_start_as() {
        let variables = BTreeMap::new();
        let features = [FeatureInstall {
            folder: "features/1-node".to_owned(),
            name: "the feature ghcr.io/devcontainers/features/node:1".to_owned(),
            container_env: vec![("NVM_DIR".to_owned(), "/usr/local/share/nvm".to_owned())],
        }];
        let lines = layer_instructions(&LayerInputs {
            features: &features,
            ..inputs(&variables, &[], RuntimeUser::E2B)
        });
        let texts: Vec<String> = lines
            .iter()
            .map(|line| dockerfile_line(&line.instruction))
            .collect();
        let layer_script = texts
            .iter()
            .position(|text| text.contains("environment-layer.sh"))
            .unwrap();
        assert_eq!(
            texts[layer_script + 1],
            "COPY features/ /opt/handoff/features/"
        );
        let install = &texts[layer_script + 2];
        assert!(
            install.starts_with("RUN cd /opt/handoff/features/1-node && "),
            "{install}"
        );
        assert!(install.ends_with("_REMOTE_USER=user _REMOTE_USER_HOME=/home/user _CONTAINER_USER=user _CONTAINER_USER_HOME=/home/user ./install.sh"), "{install}");
        assert_eq!(lines[layer_script + 2].name, features[0].name);
        assert_eq!(
            texts[layer_script + 3],
            "ENV NVM_DIR=\"/usr/local/share/nvm\""
        );
        assert!(texts[..layer_script]
            .iter()
            .all(|text| !text.contains("features")));
    }
}
