#!/bin/sh
# Installs what a Handoff agent image holds: git, the user `agent` (uid 10001), and the
# preset's command line at a pinned version. Run by the Dockerfile beside it as root.
#
# Claude Code and the Codex CLI come from PyPI, where their wheels carry the programs
# (the binary bundled in claude-agent-sdk; openai-codex-cli-bin), each pinned by version
# and SHA-256 (see wheel-program.sh); aider is a PyPI package, installed with every
# package it needs pinned by hash (aider-requirements.txt); opencode comes from npm.
# The pinned versions, and the documentation each preset's command follows, are listed
# in src/domain/agent_presets.rs; change both together (a test checks they agree).
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

# install_wheel_program REQUIREMENT SHA256 FOLDER PROGRAM: the program (and what sits
# beside it in the wheel) under /opt/handoff/agent, on the PATH as the preset's command.
install_wheel_program() {
  if ! command -v python3 >/dev/null 2>&1 || ! python3 -m pip --version >/dev/null 2>&1; then
    install_debian_packages python3 python3-pip
  fi
  . /opt/handoff/wheel-program.sh
  take_program_from_wheel "$1" "$2" "$3" /opt/handoff/agent
  ln -sf "/opt/handoff/agent/$4" "/usr/local/bin/$command_name"
}

# for_this_machine X86_64_HASH AARCH64_HASH: the wheel's hash for the machine the image
# is built on; an image for another machine has no agent wheel pinned, and says so.
for_this_machine() {
  case "$(uname -m)" in
    x86_64 | amd64) echo "$1" ;;
    aarch64 | arm64) echo "$2" ;;
    *) say "no agent wheel is pinned for $(uname -m) (only x86_64 and aarch64)" >&2; exit 1 ;;
  esac
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
    # Each wheel is pinned by its hash for each machine an engine may run images on
    # (PyPI's manylinux_2_17 wheels for x86_64 and aarch64).
    claude)
      install_wheel_program claude-agent-sdk==0.2.189 \
        "$(for_this_machine \
          b26a6a30a4e2cb025a6f5c95e1ce4469b38fcc51015c392f627bea7c948d67ad \
          7e89e56f968a2f2b09e1a86cb66a937f004fc33948faad66425df847b07c5769)" \
        claude_agent_sdk/_bundled/ claude ;;
    codex)
      install_wheel_program openai-codex-cli-bin==0.163.0 \
        "$(for_this_machine \
          76db41fb07fdf9ddacbe892b48d21dfde270031ec0f5666b5e558114355f006d \
          bb2b0d117eeb02608738cf2bcdf51f6a036343d0028272e11a94e72b0d23b141)" \
        codex_cli_bin/ bin/codex ;;
    aider)
      # aider-chat==0.86.1 and every package it needs, each pinned with its hash, in a
      # virtual environment of its own (Debian's python3 takes no packages system-wide).
      if ! python3 -m venv --help >/dev/null 2>&1 || ! python3 -c 'import ensurepip' 2>/dev/null; then
        install_debian_packages python3 python3-venv
      fi
      python3 -m venv /opt/handoff/aider
      /opt/handoff/aider/bin/python -m pip install --quiet --no-cache-dir --require-hashes \
        --no-deps -r /opt/handoff/aider-requirements.txt
      ln -sf /opt/handoff/aider/bin/aider /usr/local/bin/aider
      # The models' facts aider would fetch at every start, from litellm's own copy.
      cp /opt/handoff/aider/lib/python3*/site-packages/litellm/model_prices_and_context_window_backup.json \
        /opt/handoff/aider-model-metadata.json ;;
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
