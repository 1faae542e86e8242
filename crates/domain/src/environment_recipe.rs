//! What a repository says its agent's environment is made of, found on its base branch,
//! first match wins: a dev container (`.devcontainer/devcontainer.json`, then
//! `.devcontainer.json`; read in [`crate::dev_container`]), then Handoff's own setup
//! script (`.handoff/setup.sh`, run on top of the agent image), else the agent image
//! alone.

use crate::dev_container::{read_dev_container, DevContainerError, DevContainerRecipe};

/// Where a dev container is looked for, in order.
pub const DEV_CONTAINER_FILES: [&str; 2] =
    [".devcontainer/devcontainer.json", ".devcontainer.json"];

/// Handoff's own setup script, run on top of the agent image.
pub const SETUP_SCRIPT: &str = ".handoff/setup.sh";

/// What the agent's environment is made of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvironmentRecipe {
    DevContainer(Box<DevContainerRecipe>),
    /// `.handoff/setup.sh` on top of the agent image.
    SetupScript,
    /// Nothing found: the agent image alone.
    AgentImageOnly,
}

/// The repository's environment, from its base branch: `read(path)` gives a file's text
/// (a path from the repository's root), or `None` when there is no such file.
pub fn find_environment(
    read: impl Fn(&str) -> Option<String>,
) -> Result<EnvironmentRecipe, DevContainerError> {
    for file in DEV_CONTAINER_FILES {
        if let Some(text) = read(file) {
            return read_dev_container(file, &text, &read)
                .map(|recipe| EnvironmentRecipe::DevContainer(Box::new(recipe)));
        }
    }
    if read(SETUP_SCRIPT).is_some() {
        return Ok(EnvironmentRecipe::SetupScript);
    }
    Ok(EnvironmentRecipe::AgentImageOnly)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dev_container::DevContainerBase;
    use std::collections::BTreeMap;

    /// A base branch holding `files`.
    fn branch(files: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let files: BTreeMap<String, String> = files
            .iter()
            .map(|(path, text)| ((*path).to_owned(), (*text).to_owned()))
            .collect();
        move |path| files.get(path).cloned()
    }

    #[test]
    fn a_dev_container_comes_first_then_the_setup_script_then_the_agent_image_alone() {
        let both = branch(&[
            (".devcontainer.json", r#"{ "image": "debian:12" }"#),
            (SETUP_SCRIPT, "apt-get install -y jq"),
        ]);
        let EnvironmentRecipe::DevContainer(found) = find_environment(both).unwrap() else {
            panic!("the dev container wins");
        };
        assert_eq!(found.file, ".devcontainer.json");
        assert_eq!(found.base, DevContainerBase::Image("debian:12".to_owned()));
        let folder_first = branch(&[
            (".devcontainer/devcontainer.json", r#"{ "image": "a" }"#),
            (".devcontainer.json", r#"{ "image": "b" }"#),
        ]);
        let EnvironmentRecipe::DevContainer(found) = find_environment(folder_first).unwrap() else {
            panic!("a dev container");
        };
        assert_eq!(found.base, DevContainerBase::Image("a".to_owned()));
        assert_eq!(
            find_environment(branch(&[(SETUP_SCRIPT, "true")])).unwrap(),
            EnvironmentRecipe::SetupScript
        );
        assert_eq!(
            find_environment(branch(&[("README.md", "hi")])).unwrap(),
            EnvironmentRecipe::AgentImageOnly
        );
    }
}
