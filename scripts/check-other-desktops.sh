#!/usr/bin/env bash
# Checks, from Linux, that every crate of the workspace, its tests and its benchmarks
# compile for Windows (x86_64-pc-windows-gnu) and macOS (aarch64-apple-darwin), with
# clippy's lints as errors. Nothing is linked and nothing runs: this finds what the
# compiler can find (a Unix-only call left unguarded, an import only one desktop uses),
# not what only those desktops can show. `.github/workflows/ci.yml` builds and tests on
# real macOS and Windows runners.
#
# Installs what is missing: the two Rust targets, zig (from PyPI, in a venv of its own)
# with cargo-zigbuild to compile the C the crates carry, and MinGW's resource compiler
# for the Windows icon and manifest. Apple's SDK is not to be had here, so Objective-C
# sources (mac-notification-sys's) are compiled as an empty file: their Rust side is
# still checked. Takes about 10 minutes the first time, a minute after that.
#
#   bash scripts/check-other-desktops.sh [windows|macos]...
set -euo pipefail
here="$(dirname "$0")"
cd "$here/.."

desktops=("$@")
[ ${#desktops[@]} -gt 0 ] || desktops=(windows macos)

# shellcheck source=debian-packages.sh
. "$here/debian-packages.sh"
install_missing_packages "check-other-desktops" gcc-mingw-w64-x86-64 binutils-mingw-w64-x86-64 python3-venv

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
done
echo "check-other-desktops: ${desktops[*]}: no finding"
