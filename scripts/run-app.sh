#!/usr/bin/env bash
# Installs what is missing, builds Handoff and starts the desktop app. On a machine
# with no display it builds the `handoff` command line instead, shows the dashboard in
# the terminal and says how to go on from there.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh

if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
  cargo build --release --quiet --package handoff-cli --bin handoff
  handoff=target/release/handoff
  cat <<TEXT
No display here, so the desktop window cannot open. The same core runs as a command
line ($handoff), against the same data folder as the app:

  $handoff repo add owner/name
  $handoff feedback add --repo owner/name "What should change"
  $handoff feedback list
  $handoff --help

The dashboard, as the app would show it:
TEXT
  exec "$handoff" feedback list
fi

cargo build --release --quiet --package handoff-desktop --package handoff-cli
exec target/release/handoff-desktop
