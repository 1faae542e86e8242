#!/usr/bin/env bash
# Builds Handoff's installable packages with Debian's own tools (no tauri-cli, no npm,
# nothing downloaded but one pinned crate from crates.io):
# - a .deb with the app (handoff-desktop), the command line (handoff) and the egress gate
#   (handoff-egress), its desktop entry and its icons;
# - an AppImage of the same three programs (squashfs-tools makes the image; the AppImage
#   runtime is the one the `appimage` crate ships, checked against its SHA-256).
#
#   bash scripts/package.sh                 release binaries, built first
#   bash scripts/package.sh --from-build D  the binaries already in D (the test build's)
#
# The packages land in ${CARGO_TARGET_DIR:-target}/packages/.
set -euo pipefail
cd "$(dirname "$0")/.."

target="${CARGO_TARGET_DIR:-target}"
binaries=""
if [ "${1:-}" = "--from-build" ]; then
  binaries="${2:?--from-build needs the folder of the built programs}"
else
  bash scripts/install-deps.sh
  if [ -z "${HANDOFF_UPDATE_PUBLIC_KEY:-}" ]; then
    echo "package: HANDOFF_UPDATE_PUBLIC_KEY is not set, so this package trusts updates signed" >&2
    echo "package: with the development key in test-support/keys/ (fine to try it, never for a" >&2
    echo "package: release: give the release key's public half, base64 of its .pub file)" >&2
  fi
  echo "package: building the release programs"
  cargo build --release --locked --workspace --bins
  binaries="$target/release"
fi
for program in handoff-desktop handoff handoff-egress; do
  [ -x "$binaries/$program" ] || { echo "package: $binaries/$program is not built" >&2; exit 1; }
done

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
