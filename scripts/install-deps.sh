#!/usr/bin/env bash
# Installs what building and running Handoff needs on a Debian or Ubuntu machine and is
# not there yet: a C toolchain, Tauri's system libraries (WebKitGTK, GTK, libsoup,
# appindicator, librsvg), git, and a D-Bus session with a Secret Service (gnome-keyring)
# for the OS keyring. Says when Docker, which runs the sandboxes, is missing. Safe to run
# again: it only installs what is missing. What only the tests need is installed by
# scripts/install-test-deps.sh.
set -euo pipefail

packages=(
  build-essential curl wget file pkg-config libssl-dev
  libwebkit2gtk-4.1-dev libjavascriptcoregtk-4.1-dev libsoup-3.0-dev libgtk-3-dev
  libayatana-appindicator3-dev librsvg2-dev libxdo-dev
  git ca-certificates dbus gnome-keyring
)

# shellcheck source=debian-packages.sh
. "$(dirname "$0")/debian-packages.sh"
install_missing_packages "install-deps" "${packages[@]}"

if ! command -v cargo >/dev/null 2>&1; then
  echo "install-deps: Rust is not installed: see https://rustup.rs (Handoff needs Rust 1.94 or newer)" >&2
  exit 1
fi

if ! command -v docker >/dev/null 2>&1 || ! docker info >/dev/null 2>&1; then
  echo "install-deps: no Docker engine answers here. Handoff builds and runs, but runs on the"
  echo "install-deps: Docker backend (the default) need one: install Docker Engine"
  echo "install-deps: (https://docs.docker.com/engine/install/) and let your user reach it."
fi
