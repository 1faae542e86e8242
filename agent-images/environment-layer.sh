#!/bin/sh
# Handoff's agent layer on a repository's own base image (its dev container's image or
# Dockerfile): checks that the base can carry the agent, then installs what every agent
# image holds (install-agent.sh: git, the user `agent`, the preset's command line).
# Run as root by the environment's generated Dockerfile, with PRESET and STAND_IN set.
set -eu
say() { echo "environment-layer: $*"; }

# Claude Code's and the Codex CLI's programs are built for glibc (manylinux wheels).
case "${PRESET:-base}" in
  claude | codex)
    if [ "${STAND_IN:-0}" != 1 ] && ls /lib/ld-musl-* >/dev/null 2>&1; then
      say "this base image uses musl libc (Alpine?): the $PRESET program needs glibc; start the dev container from a Debian- or Ubuntu-based image" >&2
      exit 1
    fi ;;
esac
if ! command -v apt-get >/dev/null 2>&1 && ! command -v git >/dev/null 2>&1; then
  say "this base image has neither git nor apt-get to install it: add git to the image" >&2
  exit 1
fi
PRESET="${PRESET:-base}" STAND_IN="${STAND_IN:-0}" sh /opt/handoff/install-agent.sh
