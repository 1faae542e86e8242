#!/usr/bin/env bash
# Builds Handoff's installable packages with Debian's own tools (no tauri-cli, no npm,
# nothing downloaded but one pinned crate from crates.io):
# - a .deb with the app (handoff-desktop), the command line (handoff) and the egress gate
#   (handoff-egress), its desktop entry, its icons and the daemon's systemd user unit;
# - an AppImage of the same three programs (squashfs-tools makes the image; the AppImage
#   runtime is the one the `appimage` crate ships, checked against its SHA-256).
#
#   HANDOFF_UPDATE_PUBLIC_KEY=... bash scripts/package.sh
#                                  release binaries, built first, trusting that key
#   bash scripts/package.sh --from-build D
#                                  the binaries already in D
#   --development-key              allow a package that trusts the development key
#
# A package installs updates signed with the key built into it, and the .deb installs
# them as root. So a package is built only with the release key's public half in
# HANDOFF_UPDATE_PUBLIC_KEY (base64 of its minisign .pub file), unless told
# --development-key: the development key's secret half is in this repository
# (test-support/keys/), for the tests. Programs that trust the development key (the
# test build's) are found by that key in them.
#
# The packages land in ${CARGO_TARGET_DIR:-target}/packages/.
set -euo pipefail
cd "$(dirname "$0")/.."

target="${CARGO_TARGET_DIR:-target}"
binaries=""
development_key_allowed=false
while [ $# -gt 0 ]; do
  case "$1" in
    --from-build) binaries="${2:?--from-build needs the folder of the built programs}"; shift 2 ;;
    --development-key) development_key_allowed=true; shift ;;
    *) echo "package: unknown argument $1 (--from-build D, --development-key)" >&2; exit 2 ;;
  esac
done
development_key=$(sed -n 's/^HANDOFF_UPDATE_PUBLIC_KEY = "\(.*\)"$/\1/p' .cargo/config.toml)
[ -n "$development_key" ] || { echo "package: the development key is not in .cargo/config.toml" >&2; exit 1; }
refuse_development_key() {
  echo "package: refused: $1 trusts updates signed with the development key, whose secret" >&2
  echo "package: half is public in test-support/keys/: anyone could sign an update that this" >&2
  echo "package: package installs (the .deb as root). Give the release key's public half in" >&2
  echo "package: HANDOFF_UPDATE_PUBLIC_KEY (base64 of its minisign .pub file), or say" >&2
  echo "package: --development-key for a package that is only for trying out and tests." >&2
  exit 2
}
if [ -z "$binaries" ]; then
  if [ -z "${HANDOFF_UPDATE_PUBLIC_KEY:-}" ] || [ "${HANDOFF_UPDATE_PUBLIC_KEY}" = "$development_key" ]; then
    [ "$development_key_allowed" = true ] || refuse_development_key "a build without HANDOFF_UPDATE_PUBLIC_KEY"
  fi
  bash scripts/install-deps.sh
  echo "package: building the release programs"
  cargo build --release --locked --workspace --bins
  binaries="$target/release"
fi
for program in handoff-desktop handoff handoff-egress; do
  [ -x "$binaries/$program" ] || { echo "package: $binaries/$program is not built" >&2; exit 1; }
done
if grep -qF "$development_key" "$binaries/handoff-desktop"; then
  [ "$development_key_allowed" = true ] || refuse_development_key "$binaries/handoff-desktop"
  echo "package: these packages trust the DEVELOPMENT update key (test-support/keys/): for tests and trying out only, never a release"
else
  echo "package: these packages trust the update key built into $binaries/handoff-desktop (not the development one)"
fi

version=$(sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' src-tauri/tauri.conf.json | head -n 1)
summary=$(sed -n 's/^ *"shortDescription": *"\([^"]*\)".*/\1/p' src-tauri/tauri.conf.json)
description=$(sed -n 's/^ *"longDescription": *"\([^"]*\)".*/\1/p' src-tauri/tauri.conf.json)
architecture=$(dpkg --print-architecture)
out="$target/packages"
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Tauri's updater tells how the app was installed from a marker in the binary, which
# Tauri's own bundler sets: a .deb's app says DEB, an AppImage's APP.
mark_bundle() {
  perl -0777 -pi -e "s/__TAURI_BUNDLE_TYPE_VAR_UNK/__TAURI_BUNDLE_TYPE_VAR_$2/" "$1"
}

desktop_entry() {
  cat <<EOF
[Desktop Entry]
Categories=Development;
Comment=$summary
Exec=handoff-desktop
StartupWMClass=handoff-desktop
Icon=handoff-desktop
Name=Handoff
Terminal=false
Type=Application
EOF
}

# The .deb.
stage="$work/deb/handoff"
mkdir -p "$stage/DEBIAN" "$stage/usr/share/applications"
for program in handoff-desktop handoff handoff-egress; do
  install -D -m 755 "$binaries/$program" "$stage/usr/bin/$program"
  strip --strip-debug "$stage/usr/bin/$program" 2>/dev/null || true
done
mark_bundle "$stage/usr/bin/handoff-desktop" DEB
for icon in 32x32:32x32 128x128:128x128 256x256@2:128x128@2x 512x512:icon; do
  install -D -m 644 "icons/${icon#*:}.png" \
    "$stage/usr/share/icons/hicolor/${icon%%:*}/apps/handoff-desktop.png"
done
desktop_entry > "$stage/usr/share/applications/Handoff.desktop"
# The daemon's user unit, off until the user turns it on.
install -D -m 644 packaging/handoff.service "$stage/usr/lib/systemd/user/handoff.service"
cat > "$stage/DEBIAN/control" <<EOF
Package: handoff
Version: $version
Architecture: $architecture
Installed-Size: $(du -sk "$stage/usr" | cut -f1)
Maintainer: handoff
Section: devel
Priority: optional
Depends: git, libwebkit2gtk-4.1-0, libgtk-3-0
Recommends: gnome-keyring, docker.io
Description: $summary
 $description
EOF
(cd "$stage" && find usr -type f -exec md5sum {} + > DEBIAN/md5sums)
deb="$out/handoff_${version}_${architecture}.deb"
dpkg-deb -Zgzip -z6 --root-owner-group --build "$stage" "$deb" >/dev/null
echo "package: $deb"

# The AppImage: the runtime from the `appimage` crate (0.4.0), fetched once into cargo's
# registry and checked, then the programs in a squashfs behind it.
runtime_sha256=328e0d745c5c6817048c27bc3e8314871703f8f47ffa81a37cb06cd95a94b323
cargo_home="${CARGO_HOME:-$HOME/.cargo}"
runtime=$(ls "$cargo_home"/registry/src/*/appimage-0.4.0/assets/runtime-x86_64 2>/dev/null | head -n 1 || true)
if [ -z "$runtime" ]; then
  mkdir -p "$work/fetch/src"
  printf '[package]\nname = "fetch-appimage-runtime"\nversion = "0.0.0"\nedition = "2021"\n[dependencies]\nappimage = "=0.4.0"\n' \
    > "$work/fetch/Cargo.toml"
  : > "$work/fetch/src/lib.rs"
  cargo fetch --quiet --manifest-path "$work/fetch/Cargo.toml"
  runtime=$(ls "$cargo_home"/registry/src/*/appimage-0.4.0/assets/runtime-x86_64 | head -n 1)
fi
echo "$runtime_sha256  $runtime" | sha256sum --check --quiet
appdir="$work/Handoff.AppDir"
mkdir -p "$appdir/usr/bin"
for program in handoff-desktop handoff handoff-egress; do
  install -m 755 "$binaries/$program" "$appdir/usr/bin/$program"
  strip --strip-debug "$appdir/usr/bin/$program" 2>/dev/null || true
done
# From the unmarked program: the marker's words are also in the binary as the updater's
# own list, so only the first (the marker itself) may change, and only once.
mark_bundle "$appdir/usr/bin/handoff-desktop" APP
cat > "$appdir/AppRun" <<'EOF'
#!/bin/sh
# The AppImage's entry: the app, or the command line when called as `handoff`.
here="$(dirname "$(readlink -f "$0")")"
export PATH="$here/usr/bin:$PATH"
case "${ARGV0:-}" in
  */handoff|handoff) exec "$here/usr/bin/handoff" "$@" ;;
esac
exec "$here/usr/bin/handoff-desktop" "$@"
EOF
chmod 755 "$appdir/AppRun"
desktop_entry > "$appdir/handoff-desktop.desktop"
cp icons/128x128.png "$appdir/handoff-desktop.png"
ln -s handoff-desktop.png "$appdir/.DirIcon"
appimage="$out/Handoff_${version}_${architecture}.AppImage"
mksquashfs "$appdir" "$work/app.squashfs" -root-owned -noappend -comp gzip -quiet >/dev/null
cat "$runtime" "$work/app.squashfs" > "$appimage"
chmod 755 "$appimage"
echo "package: $appimage"
