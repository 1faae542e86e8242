//! The dependency graph, as `deny.toml` says it may be: `cargo deny check bans licenses
//! sources`, offline, finds no second version of a crate it does not list (with why),
//! no license outside the allowed ones and no crate from anywhere but crates.io; that it
//! refuses a duplicate it was not told of is shown with the list cut by one. What only
//! the tests need never reaches a program: ts-rs, which writes the page's contract, is
//! linked into neither the command line nor the desktop app. Both front ends reach the
//! core through the application layer alone: neither depends on a core crate, so the
//! compiler refuses any use of the core beyond the types `handoff_api::core_types`
//! names. And the egress gate's program, which runs beside the agent, carries no
//! database and no GitHub client.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn cargo() -> Command {
    let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    command.current_dir(workspace());
    command
}

fn cargo_deny(config: &Path) -> Output {
    let output = cargo()
        .args(["deny", "--offline", "--config"])
        .arg(config)
        .args(["check", "bans", "licenses", "sources"])
        .output()
        .expect("cargo runs");
    let errors = String::from_utf8_lossy(&output.stderr);
    assert!(
        !errors.contains("no such command"),
        "cargo-deny is missing: run scripts/install-test-deps.sh"
    );
    output
}

#[test]
fn the_graph_holds_no_duplicate_license_or_source_it_does_not_allow() {
    let output = cargo_deny(&workspace().join("deny.toml"));
    let errors = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{:?}: {errors}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout)
    );
}

#[test]
fn a_duplicate_the_list_does_not_name_is_refused() {
    let config = std::fs::read_to_string(workspace().join("deny.toml")).unwrap();
    let allowed = "  { crate = \"base64@0.22.1\"";
    assert!(config.contains(allowed), "the list names base64 0.22");
    let cut: String = config
        .lines()
        .filter(|line| !line.starts_with(allowed))
        .map(|line| format!("{line}\n"))
        .collect();
    let folder = tempfile::tempdir().unwrap();
    let cut_config = folder.path().join("deny.toml");
    std::fs::write(&cut_config, cut).unwrap();

    let output = cargo_deny(&cut_config);

    let errors = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{errors}");
    assert!(
        errors.contains("found 2 duplicate entries for crate 'base64'"),
        "{errors}"
    );
}

/// The crates `package` links into its programs (no tests, no build scripts); with
/// `depth`, only those at most that many steps away (1: its own dependencies).
fn linked_crates_to(package: &str, depth: Option<u32>) -> Vec<String> {
    let depth = depth.map(|depth| depth.to_string());
    let output = cargo()
        .arg("tree")
        .args(depth.iter().flat_map(|depth| ["--depth", depth.as_str()]))
        .args([
            "--offline",
            "--locked",
            "-e",
            "normal",
            "--prefix",
            "none",
            "--format",
            "{p}",
            "-p",
            package,
        ])
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

/// The crates `package` links into its programs (no tests, no build scripts).
fn linked_crates(package: &str) -> Vec<String> {
    linked_crates_to(package, None)
}

#[test]
fn both_front_ends_depend_on_the_application_layer_and_on_no_core_crate() {
    let core_crates = [
        "handoff",
        "handoff-domain",
        "handoff-store",
        "handoff-github",
        "handoff-sandbox",
        "handoff-egress",
    ];
    for front_end in ["handoff-cli", "handoff-desktop"] {
        let direct: Vec<String> = linked_crates_to(front_end, Some(1))
            .into_iter()
            .filter(|name| name != front_end)
            .collect();
        assert!(
            direct.iter().any(|name| name == "handoff-api"),
            "{front_end}: {direct:?}"
        );
        for core_crate in core_crates {
            assert!(
                !direct.iter().any(|name| name == core_crate),
                "{front_end} depends on {core_crate} itself: it reaches the core through \
                 handoff-api (its use cases, and the types core_types names) only"
            );
        }
    }
}

#[test]
fn no_program_links_what_only_the_tests_need() {
    for package in ["handoff-cli", "handoff-desktop"] {
        let linked = linked_crates(package);
        assert!(
            linked.iter().any(|name| name == "handoff-api"),
            "{linked:?}"
        );
        for test_only in ["ts-rs", "handoff-test-support"] {
            assert!(
                !linked.iter().any(|name| name == test_only),
                "{package} links {test_only}"
            );
        }
    }
}

#[test]
fn the_egress_gate_links_no_database_and_no_github_client() {
    let linked = linked_crates("handoff-egress");
    assert!(
        linked.iter().any(|name| name == "handoff-domain"),
        "{linked:?}"
    );
    for kept_out in ["sqlx", "octocrab", "keyring", "bollard", "handoff"] {
        assert!(
            !linked.iter().any(|name| name == kept_out),
            "the gate links {kept_out}"
        );
    }
}
