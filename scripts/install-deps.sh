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
