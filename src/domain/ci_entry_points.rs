//! Which changed files are CI entry points: files that decide what runs in CI (or on a
//! developer's machine) with the repository's secrets, so that a change to one is code
//! that runs, not code that is read. A push Handoff makes for the agent that touches one
//! is flagged wherever the run shows, and for an item a visitor opened it waits for the
//! owner's approval.

/// Why a path is a CI entry point, or `None` when it is not one.
pub fn ci_entry_point(path: &str) -> Option<&'static str> {
    let path = path.trim_start_matches("./");
    let lower = path.to_ascii_lowercase();
    let file = lower.rsplit('/').next().unwrap_or(&lower);
    let in_folder =
        |folder: &str| lower.starts_with(folder) || lower.contains(&format!("/{folder}"));
    if lower.starts_with(".github/") {
        return Some(if lower.starts_with(".github/workflows/") {
            "a GitHub Actions workflow"
        } else if lower.starts_with(".github/actions/") {
            "a GitHub Actions action"
        } else {
            "GitHub configuration"
        });
    }
    if in_folder(".circleci/")
        || in_folder(".buildkite/")
        || in_folder(".gitlab/")
        || in_folder(".husky/")
        || in_folder(".devcontainer/")
        || in_folder(".githooks/")
    {
        return Some("CI or hook configuration");
    }
    match file {
        ".gitlab-ci.yml"
        | "jenkinsfile"
        | "azure-pipelines.yml"
        | ".travis.yml"
        | "appveyor.yml"
        | "bitbucket-pipelines.yml"
        | "cloudbuild.yaml"
        | "cloudbuild.yml"
        | ".drone.yml"
        | "buildspec.yml"
        | ".pre-commit-config.yaml"
        | "lefthook.yml" => Some("CI or hook configuration"),
        "makefile"
        | "gnumakefile"
        | "justfile"
        | "taskfile.yml"
        | "taskfile.yaml"
        | "rakefile"
        | "build.gradle"
        | "build.gradle.kts"
        | "settings.gradle"
        | "settings.gradle.kts"
        | "gradlew"
        | "pom.xml"
        | "build.xml"
        | "meson.build"
        | "cmakelists.txt"
        | "build.rs"
        | "build.sbt"
        | "dockerfile"
        | "containerfile" => Some("a build script"),
        "package.json" | "pyproject.toml" | "setup.py" | "setup.cfg" | "cargo.toml" | "gemfile"
        | "composer.json" | "deno.json" | "deno.jsonc" | "mix.exs" | "go.mod" => {
            Some("a package manifest (its scripts and build steps run in CI)")
        }
        "tox.ini" | "noxfile.py" | "conftest.py" | "pytest.ini" | ".mocharc.json"
        | ".mocharc.js" | "karma.conf.js" | "phpunit.xml" | "phpunit.xml.dist" => {
            Some("test configuration")
        }
        _ if file.ends_with(".mk")
            || file.starts_with("docker-compose")
            || file.starts_with("compose.y")
            || file.starts_with("jest.config.")
            || file.starts_with("vitest.config.")
            || file.starts_with("playwright.config.")
            || file.starts_with("cypress.config.")
            || file.starts_with("webpack.config.")
            || file.starts_with("vite.config.")
            || file.starts_with("babel.config.")
            || file.starts_with("rollup.config.") =>
        {
            Some("build or test configuration")
        }
        _ => None,
    }
}

/// The changed paths that are CI entry points, each with why, in the order given.
pub fn ci_entry_points(paths: &[String]) -> Vec<(String, &'static str)> {
    paths
        .iter()
        .filter_map(|path| ci_entry_point(path).map(|why| (path.clone(), why)))
        .collect()
}

/// One line naming them, for a note, a PR body or a log.
pub fn describe_ci_entry_points(found: &[(String, &'static str)]) -> String {
    found
        .iter()
        .map(|(path, why)| format!("{path} ({why})"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workflows_build_scripts_manifests_and_test_configuration_are_entry_points() {
        for path in [
            ".github/workflows/ci.yml",
            ".github/actions/setup/action.yml",
            ".github/dependabot.yml",
            ".gitlab-ci.yml",
            "Jenkinsfile",
            ".circleci/config.yml",
            "Makefile",
            "tools/release.mk",
            "package.json",
            "web/package.json",
            "pyproject.toml",
            "Cargo.toml",
            "crates/x/build.rs",
            "conftest.py",
            "tests/conftest.py",
            "jest.config.ts",
            "docker-compose.yml",
            ".pre-commit-config.yaml",
            ".husky/pre-commit",
            "Dockerfile",
        ] {
            assert!(ci_entry_point(path).is_some(), "{path}");
        }
    }

    #[test]
    fn ordinary_sources_and_docs_are_not() {
        for path in [
            "src/button.css",
            "src/main.rs",
            "README.md",
            "docs/github/workflows.md",
            "src/package_json.rs",
            "tests/test_button.py",
        ] {
            assert_eq!(ci_entry_point(path), None, "{path}");
        }
        let found = ci_entry_points(&["src/a.rs".into(), ".github/workflows/ci.yml".into()]);
        assert_eq!(
            describe_ci_entry_points(&found),
            ".github/workflows/ci.yml (a GitHub Actions workflow)"
        );
    }
}
