//! The GitHub workflows, which cannot run on this machine, checked as GitHub reads them:
//! `check-jsonschema` with GitHub's published workflow schema (shipped inside it) for
//! their shape, and `zizmor` for their security (actions pinned by commit, no credential
//! left in the checkout, no template injection, the least permissions). Any finding
//! fails. Both checkers are installed by `scripts/install-test-deps.sh`; that they catch
//! what they should is shown on a workflow written to fail each.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repository() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A checker's program, from the virtual environment the test installer makes.
fn checker(name: &str) -> PathBuf {
    let folder = std::env::var_os("HANDOFF_WORKFLOW_CHECKERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            dirs::home_dir()
                .expect("a home folder")
                .join(".cache/handoff/workflow-checkers")
        });
    let program = folder.join("bin").join(name);
    assert!(
        program.is_file(),
        "{} is missing: run scripts/install-test-deps.sh",
        program.display()
    );
    program
}

fn workflow_files(folder: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(folder)
        .expect("the workflows' folder")
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "yml"))
        .collect();
    files.sort();
    files
}

/// `check-jsonschema` on `files`: whether they passed, and what it said.
fn schema_check(files: &[PathBuf]) -> (bool, String) {
    ran(Command::new(checker("check-jsonschema"))
        .args(["--builtin-schema", "vendor.github-workflows"])
        .args(files))
}

/// Runs `command`: whether it succeeded, and all it printed.
fn ran(command: &mut Command) -> (bool, String) {
    let output = command.output().expect("the checker runs");
    (
        output.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ),
    )
}

/// `zizmor` (offline: nothing here reaches GitHub) on `folder`: whether it found
/// nothing, and what it said.
fn security_check(folder: &Path) -> (bool, String) {
    ran(Command::new(checker("zizmor"))
        .args(["--offline", "--no-progress"])
        .arg(folder))
}

#[test]
fn the_ci_and_release_workflows_are_what_githubs_schema_describes() {
    let files = workflow_files(&repository().join(".github/workflows"));
    let names: Vec<String> = files
        .iter()
        .map(|path| path.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["ci.yml", "release.yml"]);

    let (passed, said) = schema_check(&files);

    assert!(passed, "{said}");
}

#[test]
fn zizmor_finds_nothing_in_the_workflows() {
    let (passed, said) = security_check(&repository().join(".github/workflows"));

    assert!(passed, "{said}");
    assert!(said.contains("No findings"), "{said}");
}

#[test]
fn the_workflows_build_and_package_on_every_desktop() {
    let read = |name: &str| {
        std::fs::read_to_string(repository().join(".github/workflows").join(name)).unwrap()
    };
    let ci = read("ci.yml");
    let release = read("release.yml");
    for runner in ["ubuntu-", "macos-", "windows-"] {
        assert!(
            ci.contains(&format!("os: {runner}")),
            "ci.yml runs on {runner}"
        );
        assert!(release.contains(runner), "release.yml builds on {runner}");
    }
    assert!(ci.contains("--profile \"$PROFILE\"") && ci.contains("profile: quick"));
    for target in ["x86_64-unknown-linux-musl", "aarch64-unknown-linux-musl"] {
        assert!(release.contains(target), "the gate is built for {target}");
    }
    assert!(release.contains("HANDOFF_UPDATE_PUBLIC_KEY: ${{ vars.HANDOFF_UPDATE_PUBLIC_KEY }}"));
}

/// Tauri's build step refuses a resource file that does not exist, so a resource named
/// by the macOS or Windows configuration would stop every build of the app there until
/// the Linux gates were built first. Only the release build adds them.
#[test]
fn only_a_release_package_carries_the_linux_gates() {
    let config = |name: &str| -> serde_json::Value {
        let path = repository().join("src-tauri").join(name);
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap())
            .unwrap_or_else(|error| panic!("{}: {error}", path.display()))
    };
    for desktop in [
        "tauri.conf.json",
        "tauri.macos.conf.json",
        "tauri.windows.conf.json",
    ] {
        assert!(
            config(desktop)["bundle"].get("resources").is_none(),
            "{desktop} names resources an ordinary build lacks"
        );
    }
    let gates = config("tauri.gates.conf.json");
    let mut carried: Vec<&str> = gates["bundle"]["resources"]
        .as_object()
        .expect("the gates are resources")
        .values()
        .filter_map(serde_json::Value::as_str)
        .collect();
    carried.sort_unstable();
    assert_eq!(
        carried,
        [
            "handoff-egress-linux-aarch64",
            "handoff-egress-linux-x86_64"
        ]
    );
    let release =
        std::fs::read_to_string(repository().join(".github/workflows/release.yml")).unwrap();
    assert!(release.contains("cargo tauri build --config tauri.gates.conf.json"));
}

#[test]
fn the_checkers_catch_a_workflow_written_to_fail_them() {
    let folder = tempfile::tempdir().unwrap();
    let workflows = folder.path().join(".github/workflows");
    std::fs::create_dir_all(&workflows).unwrap();
    // An action by a tag anyone can move, the checkout's token left behind, and an
    // issue's title pasted into a shell command.
    std::fs::write(
        workflows.join("unsafe.yml"),
        "name: Unsafe\non:\n  issues:\n    types: [opened]\njobs:\n  echo:\n    runs-on: ubuntu-24.04\n    steps:\n      - uses: actions/checkout@v4\n      - run: echo \"${{ github.event.issue.title }}\"\n",
    )
    .unwrap();
    // A job with no runner.
    std::fs::write(
        workflows.join("shapeless.yml"),
        "name: Shapeless\non: push\njobs:\n  build:\n    steps:\n      - run: true\n",
    )
    .unwrap();

    let (secure, said_security) = security_check(&workflows);
    let (shaped, said_shape) = schema_check(&workflow_files(&workflows));

    assert!(!secure, "{said_security}");
    for audit in ["unpinned-uses", "artipacked", "template-injection"] {
        assert!(said_security.contains(audit), "{audit} in {said_security}");
    }
    assert!(!shaped, "{said_shape}");
    assert!(said_shape.contains("shapeless.yml"), "{said_shape}");
}
