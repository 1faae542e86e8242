#!/usr/bin/env bash
# Builds Handoff's installable package, a .deb, with Tauri's bundler (tauri-cli from
# crates.io; no npm). Installs what is missing first. The package lands in
# target/release/bundle/deb/ (or under $CARGO_TARGET_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh

if ! cargo tauri --version 2>/dev/null | grep -q '^tauri-cli 2\.'; then
  echo "package: installing tauri-cli 2 (cargo install, about 7 min the first time)"
  cargo install tauri-cli --version '^2' --locked --quiet
fi

echo "package: building the release app and its .deb (several minutes)"
(cd src-tauri && cargo tauri build --bundles deb)

target="${CARGO_TARGET_DIR:-target}"
deb=$(ls -t "$target"/release/bundle/deb/*.deb | head -n 1)
echo "package: $deb"
