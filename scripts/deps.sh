#!/usr/bin/env bash
# Installs the Debian packages chokepoint builds and tests with, when any is missing.
# Usage: scripts/deps.sh [--test] [--yes]
#   --test  adds what the sanitizer and fuzzer builds need
#   --yes   installs without asking (also CHOKEPOINT_YES=1). On a terminal it lists the
#           packages and the apt-get commands it will run (with sudo unless root) and asks
#           first; without a terminal on stdin (CI) it installs without asking.
set -euo pipefail
test_deps=0
yes="${CHOKEPOINT_YES:-0}"
for a in "$@"; do
  case "$a" in
    --test) test_deps=1 ;;
    --yes|-y) yes=1 ;;
    *) echo "deps.sh: unknown option '$a' (usage: scripts/deps.sh [--test] [--yes])" >&2; exit 2 ;;
  esac
done
pkgs=(build-essential cmake ninja-build pkg-config libsimdjson-dev libcli11-dev libfmt-dev
      nlohmann-json3-dev zlib1g-dev
      libsqlite3-dev  # Nsight Systems exports (importers/nsys)
      libre2-dev)  # RE2: tune's --metric patterns in linear time
if ((test_deps)); then
  pkgs+=(libgtest-dev libgmock-dev libbenchmark-dev clang libclang-rt-dev clang-format clang-tidy python3
            chromium   # chromium: the HTML reports' browser test (tests/html)
            prometheus)  # prometheus, promtool: chokepoint serve scraped by a real server (tests/serve)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo "
  echo "chokepoint: missing packages: ${missing[*]}" >&2
  echo "chokepoint: will run: ${sudo}apt-get update && ${sudo}apt-get install --no-install-recommends ${missing[*]}" >&2
  if [[ "$yes" != 1 && -t 0 ]]; then
    read -r -p "Proceed? [y/N] " answer
    case "$answer" in
      [yY]|[yY][eE][sS]) ;;
      *) echo "chokepoint: nothing installed; install the packages above and run again" >&2; exit 1 ;;
    esac
  fi
  ${sudo}apt-get update -qq
  DEBIAN_FRONTEND=noninteractive ${sudo}apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
