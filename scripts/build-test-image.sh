#!/usr/bin/env bash
# Builds the Docker image the tests run agents in, from Debian packages only (no
# registry is reachable): a minimal Debian root filesystem with git, imported as
# handoff-test-agent:bookworm. Skips the work when the image is already there.
set -euo pipefail

image="${HANDOFF_TEST_IMAGE:-handoff-test-agent:bookworm}"

# The certificate authorities this machine adds to Debian's (a network that inspects
# TLS, as here, has one): the image trusts them too, so that an agent image built on it
# can fetch its agent from PyPI. The image is labelled with their hash, and gets them
# again when they change.
trust_this_machines_authorities() {
  local extra=/usr/local/share/ca-certificates
  local hash=none
  if compgen -G "$extra/*.crt" >/dev/null; then
    hash=$(cat "$extra"/*.crt | sha256sum | cut -c1-16)
  fi
  local labelled
  labelled=$(docker image inspect --format '{{ index .Config.Labels "dev.handoff.test.extra-cas" }}' "$image" 2>/dev/null || true)
  if [ "$hash" = none ] || [ "$labelled" = "$hash" ]; then
    return
  fi
  echo "build-test-image: adding this machine's certificate authorities to $image"
  local context
  context=$(mktemp -d)
  mkdir -p "$context/cas"
  cp "$extra"/*.crt "$context/cas/"
  printf 'FROM %s\nCOPY cas/ /usr/local/share/ca-certificates/\nRUN update-ca-certificates >/dev/null\nLABEL dev.handoff.test.extra-cas=%s\n' \
    "$image" "$hash" >"$context/Dockerfile"
  docker build --quiet --tag "$image" "$context" >/dev/null
  rm -rf "$context"
}

if docker image inspect "$image" >/dev/null 2>&1; then
  echo "build-test-image: $image already present"
  trust_this_machines_authorities
  exit 0
fi

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# This machine's own Debian mirror when it has one (a machine here may reach no other);
# on Ubuntu the first mirror is Ubuntu's, which has no bookworm, so Debian's is used.
mirror=$(grep -h -E '^(URIs:|deb )' /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null \
  | grep -v security | sed -E 's/^URIs: *//; s/^deb +(\[[^]]*\] +)?//; s/ .*//' \
  | grep -i debian | head -n 1 || true)
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
trust_this_machines_authorities
