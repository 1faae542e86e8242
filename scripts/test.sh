#!/usr/bin/env bash
# The whole test suite, as CI runs it: installs what is missing (what running Handoff
# needs, then what only the tests need: Debian packages, tauri-driver, cargo-nextest,
# the real agents, the workflow checkers, the test image), checks formatting, builds everything once with every
# lint as an error (clippy's driver compiles the workspace's own crates), packages that
# build (.deb and AppImage), then runs every test, including the end-to-end tests that
# open the real app window under Xvfb and the one that installs the package into a clean
# Debian container. Prints how long each phase took.
#
# The build lives outside the clone, in $HANDOFF_CI_TARGET (by default
# ~/.cache/handoff/ci-target), so that a machine that built the project before builds
# only what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

started=$(date +%s)
phase_started=$started
timings=()
phase() {
  local now
  now=$(date +%s)
  if [ -n "${phase_name:-}" ]; then
    timings+=("$(printf '%6d s  %s' $((now - phase_started)) "$phase_name")")
  fi
  phase_name="$1"
  phase_started=$now
  echo "== $1"
}

phase "install what is missing (Debian packages, tauri-driver, cargo-nextest, the test image)"
bash scripts/install-deps.sh
bash scripts/install-test-deps.sh
bash scripts/build-test-image.sh
# Every crate the lock file names, for every platform: the dependency-graph test reads
# them offline (cargo deny), and a build for Linux fetches only Linux's.
cargo fetch --locked --quiet

export CARGO_TARGET_DIR="${HANDOFF_CI_TARGET:-$HOME/.cache/handoff/ci-target}"
mkdir -p "$CARGO_TARGET_DIR"
# mold links the test programs in a fraction of the time of the default linker.
if command -v mold >/dev/null 2>&1; then
  export RUSTFLAGS="${RUSTFLAGS:-} -C link-arg=-fuse-ld=mold"
fi
# Every lint, warnings as errors, on the workspace's own crates while they are built
# (what `cargo clippy` does, in the same build as the tests instead of a second one).
clippy_driver=$(rustup which clippy-driver 2>/dev/null || command -v clippy-driver)
export RUSTC_WORKSPACE_WRAPPER="$clippy_driver"
export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"

# Containers (and their networks) a crashed test run may have left behind carry
# Handoff's run label; the items' kept copies of the tests' data folders are volumes.
remove_leftover_containers() {
  docker ps -aq --filter label=dev.handoff.run | xargs -r docker rm -f >/dev/null 2>&1 || true
  # Containers made ahead for an item's next run carry no run's label; they hold the
  # items' kept copies, so they go before those.
  docker ps -aq --filter label=dev.handoff.ready-for | xargs -r docker rm -f -v >/dev/null 2>&1 || true
  docker network ls -q --filter label=dev.handoff.run | xargs -r docker network rm >/dev/null 2>&1 || true
  # Repositories' egress gates outlive runs; the tests' go with them.
  docker ps -aq --filter label=dev.handoff.gate | xargs -r docker rm -f -v >/dev/null 2>&1 || true
  docker network ls -q --filter label=dev.handoff.gate | xargs -r docker network rm >/dev/null 2>&1 || true
  docker volume ls -q --filter label=dev.handoff.kept-copy | xargs -r docker volume rm -f >/dev/null 2>&1 || true
  docker images --format '{{.Repository}}:{{.Tag}}' | grep '^handoff-test-built-' \
    | xargs -r docker image rm -f >/dev/null 2>&1 || true
}
remove_leftover_containers
trap remove_leftover_containers EXIT

phase "cargo fmt --check"
cargo fmt --all -- --check

phase "build every test and program, with clippy's lints as errors"
cargo nextest run --workspace --locked --no-run --timings
python3 scripts/build-timings.py "$CARGO_TARGET_DIR"
# The programs too: the tests build only their own package's, and the egress gate's
# program (its own package, with no tests that start it) is started by the core's tests
# and packaged beside the others.
phase "build the programs and the benchmarks, with clippy's lints as errors"
cargo build --workspace --locked --bins --benches --profile dev

phase "package the test build (.deb and AppImage)"
# The test build trusts the development update key (its secret half is what the update
# tests sign with), so its packages are for the tests only: package.sh is told so.
bash scripts/package.sh --development-key --from-build "$CARGO_TARGET_DIR/debug"

phase "cargo nextest run (every test of the workspace)"
cargo nextest run --workspace --locked --no-fail-fast

phase "done"
echo "== how long each phase took"
printf '%s\n' "${timings[@]}"
echo "== all green in $(( $(date +%s) - started )) s"
