//! The README's run command on a fresh machine: a clean Debian container (the Debian
//! image the tests build from Debian's packages, with git and nothing else) that has
//! only Rust (this machine's toolchain, mounted in) and the Docker engine's socket runs
//! `bash scripts/run-app.sh` with no display. That installs what is missing and builds
//! every program a run needs; then, in the same container, `handoff` signs in to the fake
//! GitHub, connects a repository on the Docker backend (allow-list network), and a run
//! opens its PR through the egress gate the command built.
//!
//! The container, its installed packages and its data folder are new each time. What a
//! person's machine keeps between two tries is kept between runs of the test, under
//! `~/.cache/handoff/`: the checkout (`fresh-machine-checkout`, brought to this commit
//! as `git pull` would, so only changed files are new to the build), its target folder
//! (`fresh-machine-target`, built incrementally, so a change to the core rebuilds what
//! changed) and the Debian package files apt downloaded
//! (`fresh-machine-debs`; each run still installs every package). Only the first run
//! downloads and builds everything. The crates come from this machine's cache, mounted
//! in, without the network.

use std::path::{Path, PathBuf};
use std::process::Command;

use handoff_test_support as support;

use support::fake_github::FakeGithub;
use support::kept_between_runs::{debian_package_files_mount, kept_folder};
use support::pipeline_world::{REPO, SCRIPTED_AGENT, TEST_IMAGE};
use support::secret_service::SecretService;

/// What runs in the container: the README's command, then a first PR.
const IN_THE_CONTAINER: &str = r#"
set -eu
if [ -d /handoff/.git ]; then
  git -C /handoff fetch -q /source HEAD
  git -C /handoff reset -q --hard FETCH_HEAD
  git -C /handoff clean -q -f -d -x -e /target
else
  git clone -q /source /handoff
fi
ln -sfn /fresh-machine-target /handoff/target
cd /handoff
bash scripts/run-app.sh > /out/run-app.log 2>&1 || { tail -n 60 /out/run-app.log; exit 1; }
handoff=/handoff/target/release/handoff
test -x /handoff/target/release/handoff-egress
printf '%s' "$OWNER_TOKEN" | "$handoff" auth login --with-token --api-base "$API_BASE"
"$handoff" repo add "$REPO" --backend docker --agent custom \
  --agent-command 'sh .handoff/agent.sh' --no-quota --docker-image "$IMAGE"
"$handoff" doctor > /out/doctor.txt 2>&1 || true
feedback=$("$handoff" feedback add --repo "$REPO" --json "$BODY" \
  | sed -n 's/^  "id": \([0-9][0-9]*\),$/\1/p' | head -n 1)
"$handoff" run "$feedback" > /out/run.txt 2>&1 || { cat /out/run.txt; exit 1; }
cat /out/run.txt
"#;

fn home() -> PathBuf {
    PathBuf::from(std::env::var_os("HOME").expect("a home folder"))
}

/// Where rustup and cargo keep this machine's toolchain.
fn toolchain_folders() -> (PathBuf, PathBuf) {
    let rustup = std::env::var_os("RUSTUP_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| home().join(".rustup"));
    let cargo = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| home().join(".cargo"));
    (rustup, cargo)
}

fn mount(from: &Path, to: &str, mode: &str) -> String {
    format!("{}:{to}:{mode}", from.display())
}

#[test]
fn the_readme_run_command_on_a_clean_debian_builds_what_a_docker_run_needs_and_opens_a_pr() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let fake = runtime.block_on(FakeGithub::start());
    fake.create_repo_with_files(REPO, "main", &[(".handoff/agent.sh", SCRIPTED_AGENT)]);
    let keyring = SecretService::start();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = tempfile::tempdir().unwrap();
    let target = kept_folder("fresh-machine-target");
    let checkout = kept_folder("fresh-machine-checkout");
    let (rustup, cargo) = toolchain_folders();
    // The keyring's session bus is a socket in a folder of its own: the container gets
    // that folder, as a desktop session gives its programs the bus.
    let bus = keyring.bus_address();
    let bus_folder = bus
        .strip_prefix("unix:path=")
        .and_then(|rest| rest.split(',').next())
        .and_then(|socket| Path::new(socket).parent())
        .expect("the bus is a socket")
        .to_path_buf();

    let ran = Command::new("docker")
        .args(["run", "--rm", "--network", "host"])
        .args(["-v", &mount(&source, "/source", "ro")])
        .args(["-v", &mount(&checkout, "/handoff", "rw")])
        .args(["-v", &mount(&target, "/fresh-machine-target", "rw")])
        .args(["-v", &debian_package_files_mount("fresh-machine-debs")])
        .args(["-v", &mount(&rustup, "/root/.rustup", "ro")])
        .args(["-v", &mount(&cargo.join("bin"), "/root/.cargo/bin", "ro")])
        .args([
            "-v",
            &mount(&cargo.join("registry"), "/root/.cargo/registry", "rw"),
        ])
        .args(["-v", "/var/run/docker.sock:/var/run/docker.sock"])
        .args([
            "-v",
            &mount(&bus_folder, &bus_folder.to_string_lossy(), "rw"),
        ])
        .args(["-v", &mount(out.path(), "/out", "rw")])
        .args([
            "-e",
            "PATH=/root/.cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        ])
        .args(["-e", "CARGO_NET_OFFLINE=true"])
        // The kept build is incremental, as a machine that builds again after each pull
        // would want: a change to the core rebuilds what changed, not every crate above
        // it from nothing (several minutes in release).
        .args(["-e", "CARGO_PROFILE_RELEASE_INCREMENTAL=true"])
        .args(["-e", &format!("DBUS_SESSION_BUS_ADDRESS={bus}")])
        .args(["-e", &format!("OWNER_TOKEN={}", fake.owner_token())])
        .args(["-e", &format!("API_BASE={}", fake.api_base())])
        .args(["-e", &format!("REPO={REPO}")])
        .args(["-e", &format!("IMAGE={TEST_IMAGE}")])
        .args([
            "-e",
            "BODY=Greet the readers\n@@write docs/hello.md Hello from a fresh machine",
        ])
        .arg(TEST_IMAGE)
        .args(["bash", "-c", IN_THE_CONTAINER])
        .output()
        .expect("docker runs");

    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&ran.stdout),
        String::from_utf8_lossy(&ran.stderr)
    );
    let installed = std::fs::read_to_string(out.path().join("run-app.log")).unwrap_or_default();
    let doctor = std::fs::read_to_string(out.path().join("doctor.txt")).unwrap_or_default();
    assert!(ran.status.success(), "{printed}\n{installed}\n{doctor}");
    assert!(
        installed.contains("install-deps: installing") && installed.contains("No display here"),
        "{installed}"
    );
    assert!(doctor.contains("ok    Egress gate: "), "{doctor}");
    assert!(printed.contains("PR #1 opened"), "{printed}");
    let pulls = fake.pulls(REPO);
    assert_eq!(pulls.len(), 1, "{pulls:?}");
    assert_eq!(
        fake.file_on_branch(REPO, &pulls[0].1, "docs/hello.md")
            .as_deref(),
        Some("Hello from a fresh machine\n")
    );
}
