#!/usr/bin/env bash
# Installs missing packages and builds build/chokepoint (Release).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCHOKEPOINT_TESTS=OFF >/dev/null
cmake --build build --target chokepoint -j"$(nproc)"
