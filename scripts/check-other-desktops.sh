#!/usr/bin/env bash
# Checks, from Linux, that every crate of the workspace, its tests and its benchmarks
# compile for Windows (x86_64-pc-windows-gnu) and macOS (aarch64-apple-darwin), with
# clippy's lints as errors, and runs the unit tests of every crate compiled for Windows
# under Wine (what ci.yml's Windows job runs, its `portable` profile). This finds what
# the compiler and Wine can find (a Unix-only call left unguarded, a path written with
# the host's separator, a test that needs a Unix program), not what only a real macOS or
# Windows can show. `.github/workflows/ci.yml` builds and tests on real runners.
#
# Installs what is missing: the two Rust targets, zig (from PyPI, in a venv of its own)
# with cargo-zigbuild to compile and link the C the crates carry, MinGW's compiler and
# resource compiler for the Windows icon and manifest, and Wine. Apple's SDK is not to
# be had here, so for macOS nothing is linked and Objective-C sources
# (mac-notification-sys's) are compiled as an empty file: their Rust side is still
# checked. Wine 8 lacks the DLL Rust's standard library takes random bytes from, so a
# stand-in for it (scripts/wine/) is built into the Wine prefix. Takes about 15
# minutes the first time, two after that.
#
#   bash scripts/check-other-desktops.sh [windows|macos]...
set -euo pipefail
here="$(dirname "$0")"
cd "$here/.."

desktops=("$@")
[ ${#desktops[@]} -gt 0 ] || desktops=(windows macos)

# shellcheck source=debian-packages.sh
. "$here/debian-packages.sh"
install_missing_packages "check-other-desktops" gcc-mingw-w64-x86-64 binutils-mingw-w64-x86-64 python3-venv wine64

cache="$HOME/.cache/handoff"
zig_env="$cache/zig-0.13.0"
if ! "$zig_env/bin/python3" -m ziglang version 2>/dev/null | grep -q '^0\.13\.0$'; then
  echo "check-other-desktops: installing zig 0.13.0 from PyPI"
  python3 -m venv "$zig_env"
  "$zig_env/bin/pip" install --quiet 'ziglang==0.13.0'
fi
if ! cargo-zigbuild --version 2>/dev/null | grep -q ' 0\.24\.1$'; then
  echo "check-other-desktops: installing cargo-zigbuild 0.24.1"
  cargo install --quiet --locked cargo-zigbuild --version 0.24.1
fi
# cargo-zigbuild runs zig as `python3 -m ziglang` from the first python3 on PATH.
export PATH="$zig_env/bin:$PATH"

# cc's compiler probe leaves its output in the folder it runs in.
trap 'rm -f .intentionally-empty-file.o' EXIT

export CARGO_TARGET_DIR="${HANDOFF_CROSS_TARGET:-$cache/cross-target}"
stubs="$CARGO_TARGET_DIR/objc-stub"
mkdir -p "$stubs"
: >"$stubs/empty.c"

run_unit_tests_under_wine() {
  local target="$1" prefix="$CARGO_TARGET_DIR/wine-prefix" built="$CARGO_TARGET_DIR/windows-unit-tests.json"
  export WINEPREFIX="$prefix" WINEDEBUG=-all
  if [ ! -f "$prefix/drive_c/windows/system32/bcryptprimitives.dll" ]; then
    echo "check-other-desktops: making a Wine prefix"
    /usr/lib/wine/wine64 wineboot --init >/dev/null 2>&1 || true
    x86_64-w64-mingw32-gcc -shared -O2 -o "$prefix/drive_c/windows/system32/bcryptprimitives.dll" \
      "$here/wine/bcryptprimitives.c" "$here/wine/bcryptprimitives.def" -ladvapi32
  fi
  cargo-zigbuild test --no-run --locked --workspace --lib --bins --target "$target" \
    --message-format json >"$built"
  local folder="$CARGO_TARGET_DIR/$target/debug/deps"
  # The window's program loads WebView2's loader at start, though its tests open no window.
  cp "$(find "$CARGO_TARGET_DIR/$target/debug/build" -path '*webview2-com-sys*/out/x64/WebView2Loader.dll' | head -n 1)" "$folder/"
  local failed=0
  while read -r program; do
    echo "check-other-desktops: $(basename "$program") under Wine"
    /usr/lib/wine/wine64 "$program" --test-threads 2 || failed=1
  done < <(python3 -c 'import json, sys
for line in open(sys.argv[1]):
    message = json.loads(line)
    if message.get("reason") == "compiler-artifact" and message.get("executable") and message["profile"]["test"]:
        print(message["executable"])' "$built")
  if [ "$failed" -ne 0 ]; then
    echo "check-other-desktops: unit tests failed on Windows (under Wine)" >&2
    exit 1
  fi
}

for desktop in "${desktops[@]}"; do
  case "$desktop" in
    windows) target=x86_64-pc-windows-gnu ;;
    macos) target=aarch64-apple-darwin ;;
    *)
      echo "check-other-desktops: no desktop called $desktop (windows, macos)" >&2
      exit 2
      ;;
  esac
  rustup target add "$target" >/dev/null
  compiler=()
  if [ "$desktop" = macos ]; then
    # cc looks for CC_<target> with dashes first, so this wins over zigbuild's own.
    cat >"$stubs/cc-$target.sh" <<EOF
#!/usr/bin/env bash
args=()
for argument in "\$@"; do
  case "\$argument" in
    *.m) args+=("$stubs/empty.c") ;;
    *) args+=("\$argument") ;;
  esac
done
exec cargo-zigbuild zig cc -- -g -fno-sanitize=all -target aarch64-macos-none "\${args[@]}"
EOF
    chmod +x "$stubs/cc-$target.sh"
    compiler=("CC_$target=$stubs/cc-$target.sh")
  fi
  echo "check-other-desktops: $desktop ($target)"
  env "${compiler[@]}" cargo-zigbuild clippy --workspace --all-targets --locked \
    --target "$target" -- -D warnings
  if [ "$desktop" = windows ]; then
    run_unit_tests_under_wine "$target"
  fi
done
echo "check-other-desktops: ${desktops[*]}: no finding"
