#!/usr/bin/env bash
# Installing the Debian packages a script needs, once: sourced by install-deps.sh and
# install-test-deps.sh.

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# install_missing_packages WHO PACKAGE...: installs those of PACKAGE not installed yet,
# saying so as WHO.
install_missing_packages() {
  local who="$1"
  shift
  local missing=()
  local package
  for package in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$package")
    fi
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "$who: installing ${#missing[@]} Debian packages: ${missing[*]}"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
  else
    echo "$who: Debian packages already present"
  fi
}
