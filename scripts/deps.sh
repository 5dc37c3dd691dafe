#!/usr/bin/env bash
# Installs the Debian packages chokepoint builds and tests with, when any is missing.
# Usage: scripts/deps.sh [--test]   (--test adds what the sanitizer and fuzzer builds need)
set -euo pipefail
pkgs=(build-essential cmake ninja-build pkg-config libsimdjson-dev libcli11-dev libfmt-dev
      nlohmann-json3-dev zlib1g-dev)
if [[ "${1:-}" == "--test" ]]; then
  pkgs+=(libgtest-dev libgmock-dev libbenchmark-dev clang libclang-rt-dev python3)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "chokepoint: installing ${missing[*]}" >&2
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
