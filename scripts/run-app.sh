#!/usr/bin/env bash
# Installs what running Handoff needs and is missing, builds every program a run needs
# (the desktop app, the `handoff` command line, and `handoff-egress`, the egress gate
# that Docker runs go through), and starts the desktop app. On a machine with no display
# it shows the dashboard in the terminal instead and says how to go on from there.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh

if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
  cargo build --release --locked --quiet --package handoff-cli --package handoff-egress
  handoff=target/release/handoff
  cat <<TEXT
No display here, so the desktop window cannot open. The same core runs as a command
line ($handoff), against the same data folder as the app:

  $handoff auth login
  $handoff repo add owner/name
  $handoff feedback add --repo owner/name "What should change"
  $handoff doctor
  $handoff --help

The dashboard, as the app would show it:
TEXT
  exec "$handoff" feedback list
fi

cargo build --release --locked --quiet --package handoff-desktop --package handoff-cli \
  --package handoff-egress
exec target/release/handoff-desktop
