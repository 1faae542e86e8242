#!/usr/bin/env bash
# Builds the Docker image the tests run agents in, from Debian packages only (no
# registry is reachable): a minimal Debian root filesystem with git, imported as
# handoff-test-agent:bookworm. Skips the work when the image is already there.
set -euo pipefail

image="${HANDOFF_TEST_IMAGE:-handoff-test-agent:bookworm}"
if docker image inspect "$image" >/dev/null 2>&1; then
  echo "build-test-image: $image already present"
  exit 0
fi

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

mirror=$(grep -h -E '^(URIs:|deb )' /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null \
  | grep -v security | head -n 1 | sed -E 's/^URIs: *//; s/^deb +(\[[^]]*\] +)?//; s/ .*//' || true)
mirror="${mirror:-http://deb.debian.org/debian}"
rootfs=$(mktemp -d /tmp/handoff-rootfs.XXXXXX)
trap 'as_root rm -rf "$rootfs"' EXIT

echo "build-test-image: debootstrap bookworm from $mirror (a few minutes)"
as_root debootstrap --variant=minbase --include=git,ca-certificates bookworm "$rootfs" "$mirror" >/dev/null
as_root rm -rf "$rootfs/var/cache/apt/archives"/*.deb "$rootfs/var/lib/apt/lists"/*
as_root tar -C "$rootfs" -c . | docker import \
  --change 'CMD ["/bin/sh"]' \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  - "$image" >/dev/null
echo "build-test-image: built $image"
