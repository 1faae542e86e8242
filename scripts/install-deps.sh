#!/usr/bin/env bash
# Installs what Handoff needs on a Debian/Ubuntu machine and is not there yet:
# Tauri's system libraries, Xvfb, WebKitWebDriver, a D-Bus session and a Secret
# Service (gnome-keyring) for the OS keyring, squashfs-tools for the AppImage, mold (a
# faster linker for the test build), and tauri-driver for the end-to-end tests. Safe
# to run again: it only installs what is missing.
set -euo pipefail

packages=(
  libwebkit2gtk-4.1-dev build-essential curl wget file libxdo-dev libssl-dev
  libayatana-appindicator3-dev librsvg2-dev libgtk-3-dev libsoup-3.0-dev
  libjavascriptcoregtk-4.1-dev pkg-config xvfb xauth webkit2gtk-driver
  imagemagick x11-utils xdotool dbus dbus-x11 keyutils gnome-keyring libsecret-tools
  git debootstrap fonts-noto-color-emoji locales
  squashfs-tools mold
)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${#missing[@]} Debian packages: ${missing[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: Debian packages already present"
fi

# A French locale, so that a test can show Handoff reads git's messages in English
# whatever the user's language.
if ! locale -a 2>/dev/null | grep -qi '^fr_FR\.utf-\?8$'; then
  echo "install-deps: generating the fr_FR.UTF-8 locale"
  as_root sed -i 's/^# *fr_FR.UTF-8 UTF-8/fr_FR.UTF-8 UTF-8/' /etc/locale.gen
  grep -q '^fr_FR.UTF-8 UTF-8' /etc/locale.gen || echo 'fr_FR.UTF-8 UTF-8' | as_root tee -a /etc/locale.gen >/dev/null
  as_root locale-gen >/dev/null
fi

if ! command -v tauri-driver >/dev/null 2>&1; then
  echo "install-deps: installing tauri-driver (cargo install, about 20 s)"
  cargo install tauri-driver --version '^2' --locked --quiet
else
  echo "install-deps: tauri-driver already present"
fi

# axe-core, the accessibility checker the window tests run in the real window. It ships
# inside PyPI's axe-selenium-python wheel (no npm): the wheel is downloaded once and the
# one file taken out of it, checked against its SHA-256.
axe_folder="${HOME}/.cache/handoff/axe-core"
axe_sha256="b511cd9dec01c76f4b2ad1723b66b6db37d4c2eb4ed199076e1829d9ee7b75e3"
if [ ! -f "$axe_folder/axe.min.js" ] || ! echo "$axe_sha256  $axe_folder/axe.min.js" | sha256sum -c --quiet 2>/dev/null; then
  echo "install-deps: fetching axe-core from PyPI's axe-selenium-python 3.0.0"
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
bash "$(dirname "$0")/install-agents.sh"
