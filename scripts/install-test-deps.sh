#!/usr/bin/env bash
# Installs what the test suite needs beyond what running Handoff needs
# (scripts/install-deps.sh): Xvfb, WebKitWebDriver and tauri-driver for the window
# tests, debootstrap for the test image, imagemagick and xdotool for screenshots and
# native dialogs, mold (a faster linker), emoji fonts, a French locale, squashfs-tools
# for the AppImage, pip and venv for the real agents and the workflow checkers,
# cargo-nextest, cargo-deny, axe-core, the real agent programs, and zizmor and check-jsonschema for
# checking the GitHub workflows. Stops with a clear word when no Docker engine answers,
# since many tests need one. Safe to run again: it only installs what is missing.
set -euo pipefail
here="$(dirname "$0")"

packages=(
  xvfb xauth webkit2gtk-driver imagemagick x11-utils xdotool dbus-x11 keyutils
  libsecret-tools debootstrap fonts-noto-color-emoji locales squashfs-tools mold
  python3 python3-pip python3-venv
)

# shellcheck source=debian-packages.sh
. "$here/debian-packages.sh"
install_missing_packages "install-test-deps" "${packages[@]}"

if ! command -v docker >/dev/null 2>&1; then
  echo "install-test-deps: the docker command is missing: the tests run sandboxes on a real" >&2
  echo "install-test-deps: Docker engine (https://docs.docker.com/engine/install/)" >&2
  exit 1
fi
if ! docker info >/dev/null 2>&1; then
  echo "install-test-deps: no Docker engine answers (docker info fails): start it, and let" >&2
  echo "install-test-deps: this user reach its socket" >&2
  exit 1
fi

# A French locale, so that a test can show Handoff reads git's messages in English
# whatever the user's language.
if ! locale -a 2>/dev/null | grep -qi '^fr_FR\.utf-\?8$'; then
  echo "install-test-deps: generating the fr_FR.UTF-8 locale"
  as_root sed -i 's/^# *fr_FR.UTF-8 UTF-8/fr_FR.UTF-8 UTF-8/' /etc/locale.gen
  grep -q '^fr_FR.UTF-8 UTF-8' /etc/locale.gen || echo 'fr_FR.UTF-8 UTF-8' | as_root tee -a /etc/locale.gen >/dev/null
  as_root locale-gen >/dev/null
fi

if ! command -v tauri-driver >/dev/null 2>&1; then
  echo "install-test-deps: installing tauri-driver (cargo install, about 20 s)"
  cargo install tauri-driver --version '^2' --locked --quiet
else
  echo "install-test-deps: tauri-driver already present"
fi

if ! cargo nextest --version >/dev/null 2>&1; then
  echo "install-test-deps: installing cargo-nextest (cargo install, a few minutes)"
  cargo install cargo-nextest --locked --quiet
fi

# cargo-deny, which the test suite runs on the dependency graph (duplicates, licenses,
# where crates come from), from crates.io at a pinned version.
if ! cargo deny --version 2>/dev/null | grep -q '^cargo-deny 0\.20\.2$'; then
  echo "install-test-deps: installing cargo-deny (cargo install, a few minutes)"
  cargo install cargo-deny --version '=0.20.2' --locked --quiet
fi

# axe-core, the accessibility checker the window tests run in the real window. It ships
# inside PyPI's axe-selenium-python wheel (no npm): the wheel is downloaded once and the
# one file taken out of it, checked against its SHA-256.
axe_folder="${HOME}/.cache/handoff/axe-core"
axe_sha256="b511cd9dec01c76f4b2ad1723b66b6db37d4c2eb4ed199076e1829d9ee7b75e3"
if [ ! -f "$axe_folder/axe.min.js" ] || ! echo "$axe_sha256  $axe_folder/axe.min.js" | sha256sum -c --quiet 2>/dev/null; then
  echo "install-test-deps: fetching axe-core from PyPI's axe-selenium-python 3.0.0"
  mkdir -p "$axe_folder"
  download=$(mktemp -d)
  python3 -m pip download --quiet --no-deps --python-version 3.12 --only-binary=:all: \
    --dest "$download" \
    'axe-selenium-python==3.0.0'
  python3 - "$download" "$axe_folder/axe.min.js" <<'PYTHON'
import glob, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/axe_selenium_python-*.whl")[0]
with zipfile.ZipFile(wheel) as archive:
    name = next(n for n in archive.namelist() if n.endswith("node_modules/axe-core/axe.min.js"))
    open(sys.argv[2], "wb").write(archive.read(name))
PYTHON
  rm -rf "$download"
  echo "$axe_sha256  $axe_folder/axe.min.js" | sha256sum -c --quiet
fi

# The real agent programs (Claude Code, Codex) that the real-agent tests run, from PyPI.
bash "$here/install-agents.sh"

# The checkers the tests run on the GitHub workflows (which cannot run here): zizmor for
# their security, check-jsonschema (with GitHub's workflow schema inside it) for their
# shape, in a virtual environment of their own.
checkers="${HOME}/.cache/handoff/workflow-checkers"
if ! "$checkers/bin/zizmor" --version 2>/dev/null | grep -q '^zizmor 1\.32\.0$' \
  || ! "$checkers/bin/check-jsonschema" --version 2>/dev/null | grep -q 'version 0\.39\.0$'; then
  echo "install-test-deps: installing zizmor and check-jsonschema from PyPI"
  python3 -m venv "$checkers"
  "$checkers/bin/pip" install --quiet 'zizmor==1.32.0' 'check-jsonschema==0.39.0'
fi
