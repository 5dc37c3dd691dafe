#!/usr/bin/env bash
# Installs missing packages and builds build/chokepoint (Release), with the CUPTI tracer
# of `run --trace` (build/libchokepoint_tracer.so) and the `bench` module when the CUDA
# toolkit is found (both are dependencies of the chokepoint target).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCHOKEPOINT_TESTS=OFF >/dev/null
cmake --build build --target chokepoint -j"$(nproc)"
if [ ! -e build/libchokepoint_tracer.so ]; then
  echo "build.sh: no CUDA toolkit with CUPTI was found, so build/ has no libchokepoint_tracer.so and" \
       "\`chokepoint run --trace\` is unavailable (everything else works). Install the CUDA toolkit" \
       "(nvcc and CUPTI, e.g. under /usr/local/cuda), then run this again." >&2
fi
