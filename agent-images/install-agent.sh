#!/bin/sh
# Installs what a Handoff agent image holds: git, the user `agent` (uid 10001), and the
# preset's command line at a pinned version. Run by the Dockerfile beside it as root.
#
# The pinned versions, and the documentation each preset's command follows, are listed
# in src/pipeline/agent_presets.rs; change both together.
set -eu
preset="${PRESET:?PRESET is opencode, claude, aider, codex or base}"
stand_in="${STAND_IN:-0}"

say() { echo "install-agent: $*"; }

install_debian_packages() {
  if command -v apt-get >/dev/null 2>&1; then
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@"
    rm -rf /var/lib/apt/lists/*
  else
    say "no apt-get in this base image: install $* into it first" >&2
    exit 1
  fi
}

if ! command -v git >/dev/null 2>&1; then
  install_debian_packages git ca-certificates
fi

case "$preset" in
  opencode) command_name=opencode ;;
  claude) command_name=claude ;;
  aider) command_name=aider ;;
  codex) command_name=codex ;;
  base) command_name= ;;
  *) say "unknown preset $preset" >&2; exit 1 ;;
esac

if [ -n "$command_name" ] && [ "$stand_in" = 1 ]; then
  say "installing the stand-in as $command_name"
  install -m 0755 /opt/handoff/stand-in/agent "/usr/local/bin/$command_name"
elif [ -n "$command_name" ]; then
  case "$preset" in
    opencode) npm install -g --no-fund --no-audit opencode-ai@1.18.5 ;;
    claude) npm install -g --no-fund --no-audit @anthropic-ai/claude-code@2.1.114 ;;
    codex) npm install -g --no-fund --no-audit @openai/codex@0.150.1 ;;
    aider) pip install --no-cache-dir aider-chat==0.86.1 ;;
  esac
  npm cache clean --force >/dev/null 2>&1 || true
fi

if ! id agent >/dev/null 2>&1; then
  if command -v useradd >/dev/null 2>&1; then
    useradd --create-home --uid 10001 --user-group --shell /bin/sh agent
  else
    adduser -D -u 10001 -s /bin/sh agent
  fi
fi
say "done: ${command_name:-git only} for the user agent"
