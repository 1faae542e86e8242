#!/usr/bin/env bash
# The whole test suite, as CI runs it: installs what is missing (Debian packages,
# tauri-driver, tauri-cli), checks formatting and lints, builds the .deb, then runs every
# test, including the end-to-end tests that open the real app window under Xvfb and the
# one that installs the .deb into a clean Debian container.
set -euo pipefail
cd "$(dirname "$0")/.."

started=$(date +%s)
bash scripts/install-deps.sh
bash scripts/build-test-image.sh

# Containers (and their networks) a crashed test run may have left behind carry
# Handoff's run label; the items' kept copies of the tests' data folders are volumes.
remove_leftover_containers() {
  docker ps -aq --filter label=dev.handoff.run | xargs -r docker rm -f >/dev/null 2>&1 || true
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

echo "== cargo fmt --check"
cargo fmt --all -- --check

echo "== cargo clippy (all targets, warnings are errors)"
cargo clippy --workspace --all-targets --locked -- -D warnings

echo "== the .deb (its install is tested in a clean Debian container)"
bash scripts/package.sh

echo "== cargo nextest run (every test of the workspace)"
cargo nextest run --workspace --locked --no-fail-fast

echo "== all green in $(( $(date +%s) - started )) s"
