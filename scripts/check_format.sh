#!/usr/bin/env bash
# Checks C++ formatting against .clang-format; changes nothing.
# Usage: scripts/check_format.sh              every tracked C++ file (src, tests, fuzz, benchmarks):
#                                            lists the files clang-format would change and how
#                                            many lines, exit 1 if any
#        scripts/check_format.sh --base REV   only the lines changed since REV (git clang-format),
#                                            exit 1 if any of them is off
# CLANG_FORMAT names the binary (default clang-format).
set -euo pipefail
cd "$(dirname "$0")/.."
cf=${CLANG_FORMAT:-clang-format}
if [[ "${1:-}" == "--base" ]]; then
  out=$(git clang-format --binary "$(command -v "$cf")" --diff --extensions cc,h,cu,cuh "${2:?--base REV}" -- src tests fuzz benchmarks || true)
  if [[ -z "$out" || "$out" == *"no modified files to format"* || "$out" == *"did not modify any files"* ]]; then
    echo "check_format: ok (lines changed since $2)"
    exit 0
  fi
  printf '%s\n' "$out"
  echo "check_format: the lines above are not formatted (git clang-format $2 fixes them)"
  exit 1
fi
files=0 lines=0
while IFS= read -r f; do
  n=$("$cf" --style=file "$f" | diff "$f" - | grep -c '^<' || true)
  if ((n > 0)); then
    printf '%6d  %s\n' "$n" "$f"
    files=$((files + 1)) lines=$((lines + n))
  fi
done < <(git ls-files -- 'src/*.cc' 'src/*.h' 'src/*.cu' 'src/*.cuh' 'tests/*.cc' 'tests/*.h' 'fuzz/*.cc' 'benchmarks/*.cc')
if ((files > 0)); then
  echo "check_format: $lines lines in $files files differ from .clang-format"
  exit 1
fi
echo "check_format: ok"
