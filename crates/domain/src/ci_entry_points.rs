//! Which changed files are CI entry points: files that decide what runs in CI (or on a
//! developer's machine) with the repository's secrets — workflows, build scripts,
//! manifests, what configures or replaces the tools CI runs (Cargo's runner, a build
//! tool's wrapper, the package manager's own program, submodules, the toolchain), and
//! the tests CI runs — so that a change to one is code that runs, not code that is
//! read. A push Handoff makes for the agent that touches one
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
    // What configures or replaces the tools CI runs: a wrapper script that fetches and
    // runs a build tool, a runner or compiler wrapper, the package manager's own program.
    if in_folder(".cargo/") && (file == "config" || file == "config.toml") {
        return Some("Cargo's configuration (a runner, a rustc wrapper, build environment)");
    }
    if in_folder("gradle/wrapper/") || in_folder(".mvn/") {
        return Some("a build tool's wrapper (it fetches and runs the build tool)");
    }
    if in_folder(".yarn/releases/") || in_folder(".yarn/plugins/") || in_folder(".bundle/") {
        return Some("the package manager's own program or plugins");
    }
    if is_test_source(&lower, file) {
        return Some("a test source (CI runs it)");
    }
    entry_point_by_file_name(file)
}

/// Files known by their exact name (in lower case), and what each is.
const NAMED_FILES: &[(&[&str], &str)] = &[
    (
        &[
            ".gitlab-ci.yml",
            "jenkinsfile",
            "azure-pipelines.yml",
            ".travis.yml",
            "appveyor.yml",
            "bitbucket-pipelines.yml",
            "cloudbuild.yaml",
            "cloudbuild.yml",
            ".drone.yml",
            "buildspec.yml",
            ".pre-commit-config.yaml",
            "lefthook.yml",
        ],
        "CI or hook configuration",
    ),
    (
        &[".gitmodules"],
        "submodules (CI checks out and may build what they name)",
    ),
    (
        &[
            ".npmrc",
            ".yarnrc",
            ".yarnrc.yml",
            ".pnpmfile.cjs",
            "pnpm-workspace.yaml",
            "bunfig.toml",
            "pip.conf",
            "uv.toml",
            "poetry.toml",
        ],
        "package manager configuration (scripts, registries, its own program)",
    ),
    (
        &[
            "rust-toolchain",
            "rust-toolchain.toml",
            ".tool-versions",
            "mise.toml",
            ".mise.toml",
            ".envrc",
            "flake.nix",
            "shell.nix",
            "default.nix",
        ],
        "toolchain or environment setup (what CI installs and runs)",
    ),
    (
        &[
            "gradlew",
            "gradlew.bat",
            "mvnw",
            "mvnw.cmd",
            "gradle.properties",
            "init.gradle",
        ],
        "a build tool's wrapper (it fetches and runs the build tool)",
    ),
    (
        &["sitecustomize.py", "usercustomize.py"],
        "code Python runs at every start",
    ),
    (
        &[
            "makefile",
            "gnumakefile",
            "justfile",
            "taskfile.yml",
            "taskfile.yaml",
            "rakefile",
            "build.gradle",
            "build.gradle.kts",
            "settings.gradle",
            "settings.gradle.kts",
            "pom.xml",
            "build.xml",
            "meson.build",
            "cmakelists.txt",
            "build.rs",
            "build.sbt",
            "dockerfile",
            "containerfile",
        ],
        "a build script",
    ),
    (
        &[
            "package.json",
            "pyproject.toml",
            "setup.py",
            "setup.cfg",
            "cargo.toml",
            "gemfile",
            "composer.json",
            "deno.json",
            "deno.jsonc",
            "mix.exs",
            "go.mod",
        ],
        "a package manifest (its scripts and build steps run in CI)",
    ),
    (
        &[
            "tox.ini",
            "noxfile.py",
            "conftest.py",
            "pytest.ini",
            ".mocharc.json",
            ".mocharc.js",
            "karma.conf.js",
            "phpunit.xml",
            "phpunit.xml.dist",
        ],
        "test configuration",
    ),
];

/// How the names of build and test tools' configuration files begin.
const CONFIGURATION_PREFIXES: &[&str] = &[
    "docker-compose",
    "compose.y",
    "jest.config.",
    "vitest.config.",
    "playwright.config.",
    "cypress.config.",
    "webpack.config.",
    "vite.config.",
    "babel.config.",
    ".babelrc",
    "rollup.config.",
    "eslint.config.",
    ".eslintrc.",
    "prettier.config.",
    "postcss.config.",
    "tailwind.config.",
    "svelte.config.",
    "next.config.",
    "nuxt.config.",
    "astro.config.",
];

/// What a file that CI runs or reads is, known by its name (`file`, in lower case)
/// wherever it is.
fn entry_point_by_file_name(file: &str) -> Option<&'static str> {
    if let Some((_, what)) = NAMED_FILES.iter().find(|(names, _)| names.contains(&file)) {
        return Some(what);
    }
    if file.ends_with(".pth") {
        return Some("code Python runs at every start");
    }
    if file.ends_with(".mk")
        || CONFIGURATION_PREFIXES
            .iter()
            .any(|prefix| file.starts_with(prefix))
    {
        return Some("build or test configuration");
    }
    None
}

/// Whether `path` (lower case; its file name `file`) is a test source by the usual
/// conventions of the ecosystems Handoff names: a test folder, or a file named as a
/// test. CI runs them, with the repository's secrets where it has them.
fn is_test_source(path: &str, file: &str) -> bool {
    let in_test_folder = path.split('/').rev().skip(1).any(|folder| {
        matches!(
            folder,
            "test" | "tests" | "spec" | "specs" | "__tests__" | "e2e"
        )
    });
    let code = [
        ".rs", ".py", ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".go", ".rb", ".java", ".kt",
        ".php", ".sh", ".ex", ".exs", ".cs", ".swift", ".c", ".cc", ".cpp",
    ]
    .iter()
    .any(|extension| file.ends_with(extension));
    let named_as_test = file.starts_with("test_")
        || file.ends_with("_test.go")
        || file.ends_with("_test.py")
        || file.ends_with("_test.rb")
        || file.ends_with("_spec.rb")
        || file.contains(".test.")
        || file.contains(".spec.");
    code && (in_test_folder || named_as_test)
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
    fn what_configures_or_replaces_the_tools_ci_runs_is_an_entry_point() {
        for (path, why) in [
            (".cargo/config.toml", "Cargo"),
            (".cargo/config", "Cargo"),
            ("crates/x/.cargo/config.toml", "Cargo"),
            (".npmrc", "package manager"),
            (".yarnrc.yml", "package manager"),
            (".yarn/releases/yarn-4.1.0.cjs", "package manager"),
            ("pnpm-workspace.yaml", "package manager"),
            (".bundle/config", "package manager"),
            ("gradle/wrapper/gradle-wrapper.properties", "wrapper"),
            ("gradle/wrapper/gradle-wrapper.jar", "wrapper"),
            ("gradlew", "wrapper"),
            ("gradlew.bat", "wrapper"),
            (".mvn/wrapper/maven-wrapper.properties", "wrapper"),
            (".mvn/extensions.xml", "wrapper"),
            ("mvnw", "wrapper"),
            (".gitmodules", "submodules"),
            ("rust-toolchain.toml", "toolchain"),
            (".envrc", "toolchain"),
            ("flake.nix", "toolchain"),
            ("src/sitecustomize.py", "Python"),
            ("lib/evil.pth", "Python"),
            ("eslint.config.mjs", "build or test configuration"),
            (".babelrc.js", "build or test configuration"),
        ] {
            let found = ci_entry_point(path).unwrap_or_else(|| panic!("{path} is not flagged"));
            assert!(found.contains(why), "{path}: {found}");
        }
    }

    #[test]
    fn test_sources_ci_runs_are_entry_points() {
        for path in [
            "tests/test_button.py",
            "tests/it/main.rs",
            "src/button_test.go",
            "web/src/__tests__/button.tsx",
            "web/button.test.ts",
            "spec/models/user_spec.rb",
            "src/test/java/AppTest.java",
            "e2e/login.spec.js",
        ] {
            assert_eq!(
                ci_entry_point(path),
                Some("a test source (CI runs it)"),
                "{path}"
            );
        }
        for path in [
            "tests/fixtures/data.json",
            "docs/testing.md",
            "src/contest.rs",
        ] {
            assert_eq!(ci_entry_point(path), None, "{path}");
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
            "src/attestation.rs",
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
