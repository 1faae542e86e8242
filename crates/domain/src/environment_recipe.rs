//! What a repository says its agent's environment is made of, found on its base branch,
//! first match wins: a dev container (`.devcontainer/devcontainer.json`, then
//! `.devcontainer.json`; read in [`crate::dev_container`]), then Handoff's own setup
//! script (`.handoff/setup.sh`, run on top of the agent image), else the agent image
//! alone.

use std::collections::{BTreeMap, BTreeSet};

use crate::dev_container::{read_dev_container, DevContainerError, DevContainerRecipe};
use crate::test_services::{read_services, ServicesError, TestServices, SERVICES_FILE};

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

/// The files of the base branch a recipe is found in: every path, and the text of those
/// a recipe is read from ([`BaseBranchFiles::READ`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BaseBranchFiles {
    paths: BTreeSet<String>,
    texts: BTreeMap<String, String>,
}

impl BaseBranchFiles {
    /// The files whose text a recipe is read from; the others are only looked for.
    pub const READ: [&'static str; 4] = [
        DEV_CONTAINER_FILES[0],
        DEV_CONTAINER_FILES[1],
        SETUP_SCRIPT,
        SERVICES_FILE,
    ];

    /// `paths` (every file, from the repository's root) and `texts` (of those of
    /// [`BaseBranchFiles::READ`] that are there).
    pub fn new(paths: impl IntoIterator<Item = String>, texts: BTreeMap<String, String>) -> Self {
        BaseBranchFiles {
            paths: paths.into_iter().collect(),
            texts,
        }
    }

    pub fn has(&self, path: &str) -> bool {
        self.paths.contains(path)
    }

    pub fn text(&self, path: &str) -> Option<&str> {
        self.texts.get(path).map(String::as_str)
    }

    /// Every path, sorted.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.paths.iter().map(String::as_str)
    }
}

/// The services the repository's tests need (`.handoff/services.yml`), none when it
/// names none.
pub fn find_services(files: &BaseBranchFiles) -> Result<TestServices, ServicesError> {
    match files.text(SERVICES_FILE) {
        Some(text) => read_services(SERVICES_FILE, text, |path| files.has(path)),
        None => Ok(TestServices::default()),
    }
}

/// The repository's environment, from the files of its base branch.
pub fn find_environment(files: &BaseBranchFiles) -> Result<EnvironmentRecipe, DevContainerError> {
    for file in DEV_CONTAINER_FILES {
        if let Some(text) = files.text(file) {
            return read_dev_container(file, text, &|path| files.has(path))
                .map(|recipe| EnvironmentRecipe::DevContainer(Box::new(recipe)));
        }
    }
    if files.has(SETUP_SCRIPT) {
        return Ok(EnvironmentRecipe::SetupScript);
    }
    Ok(EnvironmentRecipe::AgentImageOnly)
}

/// A base branch holding `files` (path, text), for tests.
#[cfg(test)]
pub(crate) fn branch_of(files: &[(&str, &str)]) -> BaseBranchFiles {
    BaseBranchFiles::new(
        files.iter().map(|(path, _)| (*path).to_owned()),
        files
            .iter()
            .map(|(path, text)| ((*path).to_owned(), (*text).to_owned()))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dev_container::DevContainerBase;

    #[test]
    fn a_dev_container_comes_first_then_the_setup_script_then_the_agent_image_alone() {
        let both = branch_of(&[
            (".devcontainer.json", r#"{ "image": "debian:12" }"#),
            (SETUP_SCRIPT, "apt-get install -y jq"),
        ]);
        let EnvironmentRecipe::DevContainer(found) = find_environment(&both).unwrap() else {
            panic!("the dev container wins");
        };
        assert_eq!(found.file, ".devcontainer.json");
        assert_eq!(found.base, DevContainerBase::Image("debian:12".to_owned()));
        let folder_first = branch_of(&[
            (".devcontainer/devcontainer.json", r#"{ "image": "a" }"#),
            (".devcontainer.json", r#"{ "image": "b" }"#),
        ]);
        let EnvironmentRecipe::DevContainer(found) = find_environment(&folder_first).unwrap()
        else {
            panic!("a dev container");
        };
        assert_eq!(found.base, DevContainerBase::Image("a".to_owned()));
        assert_eq!(
            find_environment(&branch_of(&[(SETUP_SCRIPT, "true")])).unwrap(),
            EnvironmentRecipe::SetupScript
        );
        assert_eq!(
            find_environment(&branch_of(&[("README.md", "hi")])).unwrap(),
            EnvironmentRecipe::AgentImageOnly
        );
    }
}
