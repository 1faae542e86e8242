//! What a repository's environment image is keyed on, so that it is built again only
//! when what it is made of changes on the base branch: the recipe's own files (the dev
//! container's folder, its Dockerfile and Compose files, or the setup script), the
//! lockfiles of the usual package managers anywhere in the tree, the files the owner
//! names, and Handoff's agent layer on top. A change elsewhere in the repository does
//! not rebuild it; the owner's Rebuild does.

use sha2::{Digest, Sha256};

use crate::dev_container::DevContainerBase;
use crate::environment_recipe::{BaseBranchFiles, EnvironmentRecipe, SETUP_SCRIPT};
use crate::test_services::{ServiceSource, TestServices, SERVICES_FILE};

/// Lockfiles by name, wherever they are in the tree (`requirements*.txt` too).
pub const LOCKFILE_NAMES: [&str; 12] = [
    "Cargo.lock",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "pnpm-lock.yaml",
    "yarn.lock",
    "bun.lock",
    "poetry.lock",
    "uv.lock",
    "Pipfile.lock",
    "go.sum",
    "Gemfile.lock",
    "composer.lock",
];

/// Folders whose lockfiles are someone else's (vendored or installed packages).
const NOT_THE_PROJECTS: [&str; 4] = ["node_modules", "vendor", ".git", "target"];

/// The most files an owner names for the key.
pub const MOST_KEY_FILES: usize = 20;

/// The files the owner names for the key, as typed (one a line, or comma-separated):
/// paths from the repository's root, none climbing out; duplicates dropped.
pub fn parse_key_files(text: &str) -> Result<Vec<String>, String> {
    let mut files: Vec<String> = Vec::new();
    for typed in text
        .split(['\n', ','])
        .map(str::trim)
        .filter(|path| !path.is_empty())
    {
        let path = crate::repository_path::beside_file("", typed.trim_start_matches("./"))
            .filter(|path| path != ".")
            .ok_or_else(|| format!("{typed:?} is not a file's path from the repository's root"))?;
        if !files.contains(&path) {
            files.push(path);
        }
    }
    if files.len() > MOST_KEY_FILES {
        return Err(format!("at most {MOST_KEY_FILES} files"));
    }
    Ok(files)
}

/// Whether `path` (from the repository's root) is a lockfile the key counts.
pub fn is_lockfile(path: &str) -> bool {
    let mut parts = path.split('/').collect::<Vec<_>>();
    let Some(name) = parts.pop() else {
        return false;
    };
    if parts.iter().any(|part| NOT_THE_PROJECTS.contains(part)) {
        return false;
    }
    LOCKFILE_NAMES.contains(&name) || (name.starts_with("requirements") && name.ends_with(".txt"))
}

/// The files the test services are keyed on: the services file and the Dockerfiles of
/// the services built from one; none when there are no services.
pub fn service_inputs(services: &TestServices) -> Vec<String> {
    if services.services.is_empty() {
        return Vec::new();
    }
    std::iter::once(SERVICES_FILE.to_owned())
        .chain(
            services
                .services
                .iter()
                .filter_map(|service| match &service.source {
                    ServiceSource::Build { dockerfile, .. } => Some(dockerfile.clone()),
                    ServiceSource::Image(_) => None,
                }),
        )
        .collect()
}

/// The paths of the base branch's `files` the image of `recipe` is keyed on, sorted;
/// with `owner_named`, the files the owner adds. Empty for the agent image alone, which
/// is not built per repository.
pub fn key_inputs(
    recipe: &EnvironmentRecipe,
    files: &BaseBranchFiles,
    owner_named: &[String],
) -> Vec<String> {
    let own_files: Vec<String> = match recipe {
        EnvironmentRecipe::AgentImageOnly => return Vec::new(),
        EnvironmentRecipe::SetupScript => vec![SETUP_SCRIPT.to_owned()],
        EnvironmentRecipe::DevContainer(dev_container) => {
            let folder = dev_container
                .file
                .rsplit_once('/')
                .map(|(folder, _)| format!("{folder}/"));
            let mut files: Vec<String> = match &folder {
                // `.devcontainer/`: everything in it.
                Some(folder) => files
                    .paths()
                    .filter(|path| path.starts_with(folder.as_str()))
                    .map(str::to_owned)
                    .collect(),
                None => vec![dev_container.file.clone()],
            };
            match &dev_container.base {
                DevContainerBase::Image(_) => {}
                DevContainerBase::Dockerfile { dockerfile, .. } => files.push(dockerfile.clone()),
                DevContainerBase::Compose { files: compose, .. } => {
                    files.extend(compose.iter().cloned())
                }
            }
            files
        }
    };
    let mut inputs: Vec<String> = own_files
        .into_iter()
        .chain(
            files
                .paths()
                .filter(|path| is_lockfile(path))
                .map(str::to_owned),
        )
        .chain(owner_named.iter().filter(|path| files.has(path)).cloned())
        .collect();
    inputs.sort();
    inputs.dedup();
    inputs
}

/// The key of an environment image: a hash of Handoff's agent layer (`layer`, which
/// names the preset's program and its version) and of each input's path and content
/// (or git's id of it, which changes exactly when the content does).
/// The same inputs in any order give the same key.
pub fn environment_key(layer: &str, inputs: &[(String, Vec<u8>)]) -> String {
    let mut sorted: Vec<&(String, Vec<u8>)> = inputs.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let mut hash = Sha256::new();
    // Each part with its length first, so that no two lists of inputs read the same.
    for part in std::iter::once(layer.as_bytes()).chain(
        sorted
            .iter()
            .flat_map(|(path, content)| [path.as_bytes(), content.as_slice()]),
    ) {
        hash.update((part.len() as u64).to_le_bytes());
        hash.update(part);
    }
    hash.finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::environment_recipe::{branch_of, find_environment};

    fn tree(paths: &[&str]) -> Vec<String> {
        paths.iter().map(|path| (*path).to_owned()).collect()
    }

    #[test]
    fn the_usual_lockfiles_count_wherever_they_are_but_not_vendored_ones() {
        for path in [
            "Cargo.lock",
            "web/package-lock.json",
            "api/uv.lock",
            "requirements-dev.txt",
            "go.sum",
        ] {
            assert!(is_lockfile(path), "{path}");
        }
        for path in [
            "node_modules/x/package-lock.json",
            "vendor/a/go.sum",
            "Cargo.toml",
            "docs/requirements.md",
        ] {
            assert!(!is_lockfile(path), "{path}");
        }
    }

    #[test]
    fn a_dev_containers_key_reads_its_folder_its_dockerfile_and_the_lockfiles() {
        let branch = branch_of(&[
            (
                ".devcontainer/devcontainer.json",
                r#"{ "build": { "dockerfile": "../docker/dev.Dockerfile", "context": ".." } }"#,
            ),
            (".devcontainer/setup/db.sql", ""),
            ("docker/dev.Dockerfile", "FROM debian:12"),
            ("src/main.rs", ""),
            ("Cargo.lock", ""),
            ("web/pnpm-lock.yaml", ""),
            ("tools.txt", ""),
        ]);
        let recipe = find_environment(&branch).unwrap();
        assert_eq!(
            key_inputs(
                &recipe,
                &branch,
                &["tools.txt".to_owned(), "gone.txt".to_owned()]
            ),
            tree(&[
                ".devcontainer/devcontainer.json",
                ".devcontainer/setup/db.sql",
                "Cargo.lock",
                "docker/dev.Dockerfile",
                "tools.txt",
                "web/pnpm-lock.yaml",
            ])
        );
        assert_eq!(
            key_inputs(
                &EnvironmentRecipe::SetupScript,
                &branch_of(&[(SETUP_SCRIPT, ""), ("src/a.py", ""), ("uv.lock", "")]),
                &[]
            ),
            tree(&[SETUP_SCRIPT, "uv.lock"])
        );
        assert!(key_inputs(&EnvironmentRecipe::AgentImageOnly, &branch, &[]).is_empty());
    }

    #[test]
    fn the_key_changes_with_a_lockfile_or_the_agent_layer_and_not_with_the_order() {
        let inputs = |lock: &str| {
            vec![
                (
                    ".handoff/setup.sh".to_owned(),
                    b"apt-get install -y jq".to_vec(),
                ),
                ("Cargo.lock".to_owned(), lock.as_bytes().to_vec()),
            ]
        };
        let key = environment_key("claude 2.0.1", &inputs("a = 1"));
        assert_eq!(key.len(), 64);
        let mut reversed = inputs("a = 1");
        reversed.reverse();
        assert_eq!(environment_key("claude 2.0.1", &reversed), key);
        assert_ne!(environment_key("claude 2.0.1", &inputs("a = 2")), key);
        assert_ne!(environment_key("claude 2.0.2", &inputs("a = 1")), key);
        // A path and its content cannot be shifted into each other.
        assert_ne!(
            environment_key("x", &[("ab".to_owned(), b"c".to_vec())]),
            environment_key("x", &[("a".to_owned(), b"bc".to_vec())])
        );
    }
}
