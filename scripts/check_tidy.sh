#!/usr/bin/env bash
# Runs clang-tidy (.clang-tidy: cognitive complexity <= 35 and a few bug-prone checks,
# warnings are errors) over the sources of src/ and tests/, unit and golden tests included
# (not the CUDA folders, which need the toolkit), from the compile_commands.json of a
# build directory.
# Usage: scripts/check_tidy.sh BUILD_DIR [REGEX]   (REGEX narrows the files, e.g. 'src/rules/')
# JOBS (default 2) clang-tidy processes run at once; CLANG_TIDY names the binary.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: scripts/check_tidy.sh BUILD_DIR [REGEX]}
[[ -f "$build/compile_commands.json" ]] || { echo "check_tidy: no $build/compile_commands.json (configure first)" >&2; exit 2; }
root=$PWD
files=$(python3 - "$build/compile_commands.json" "$root" "${2:-}" <<'PY'
import json, re, sys
db, root, narrow = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
seen = set()
for e in db:
    f = e["file"]
    if not (f.startswith(root + "/src/") or f.startswith(root + "/tests/")) or "/cuda/" in f or f in seen:
        continue
    if narrow and not re.search(narrow, f):
        continue
    seen.add(f)
    print(f)
PY
)
[[ -n "$files" ]] || { echo "check_tidy: no files" >&2; exit 2; }
echo "check_tidy: $(wc -l <<<"$files") files"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# One clang-tidy per file, JOBS at a time; the output of each kept whole.
export CT=${CLANG_TIDY:-clang-tidy} BUILD=$build
xargs -P "${JOBS:-2}" -I{} sh -c 't=$(mktemp); "$CT" -p "$BUILD" --quiet "$1" > "$t" 2>/dev/null; cat "$t"; rm -f "$t"' _ {} \
  <<<"$files" > "$log" || true
diags=$(grep -E '(warning|error): ' "$log" | sed 's/,-warnings-as-errors//' | sort -u || true)
[[ -z "$diags" ]] || printf '%s\n' "$diags"
n=$(grep -c . <<<"$diags" || true)
if ((n > 0)); then
  echo "check_tidy: $n diagnostics"
  exit 1
fi
echo "check_tidy: ok"
