#!/usr/bin/env bash
# Runs clang-tidy (.clang-tidy: cognitive complexity <= 35 and a few bug-prone checks,
# warnings are errors) over the sources of src/ and tests/, unit and golden tests included
# (not the CUDA folders, which need the toolkit), from the compile_commands.json of a
# build directory.
# Usage: scripts/check_tidy.sh BUILD_DIR [REGEX]   (REGEX narrows the files, e.g. 'src/rules/')
# JOBS (default 2) clang-tidy processes run at once; CLANG_TIDY names the binary.
#
# Which clang-tidy: CLANG_TIDY when set; else clang-tidy 22 from PyPI, installed once into
# a virtual environment (TIDY_VENV, default ~/.cache/chokepoint/clang-tidy-22.1.8), because
# since LLVM 21 it does not match its checks inside system headers (llvm-project PR 151035):
# over this tree it takes 7.2 minutes on 2 cores where Debian's clang-tidy 14 takes 10.5
# (docs/BENCHMARKS.md); else, when PyPI cannot be reached, Debian's clang-tidy. A clang-tidy
# other than the build's clang cannot load the build's precompiled headers: it reads a copy
# of the compile commands without them, and leaves the compiler's own warnings to the build
# (newer clangs add warnings, e.g. to libstdc++ 12's headers, that the build's clang 14 does
# not have).
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
tidy=${CLANG_TIDY:-}
db=$build
extra=()
if [[ -z "$tidy" ]]; then
  venv=${TIDY_VENV:-$HOME/.cache/chokepoint/clang-tidy-22.1.8}
  if [[ ! -x "$venv/bin/clang-tidy" ]]; then
    { python3 -m venv "$venv" && "$venv/bin/pip" install -q --disable-pip-version-check clang-tidy==22.1.8; } \
      >/dev/null 2>&1 || rm -rf "$venv"
  fi
  tidy=clang-tidy
  [[ -x "$venv/bin/clang-tidy" ]] && tidy=$venv/bin/clang-tidy
fi
echo "check_tidy: $("$tidy" --version | grep -m1 -o 'version [0-9.]*')"
if ! "$tidy" --version | grep -q "version $(clang --version 2>/dev/null | grep -m1 -oE '[0-9]+\.[0-9]+\.[0-9]+')"; then
  # Another clang than the build's: the commands without the precompiled headers, and the
  # compiler's warnings off (the build has its own, as errors).
  db=$(mktemp -d)
  trap 'rm -rf "$log" "$db"' EXIT
  python3 - "$build/compile_commands.json" "$db/compile_commands.json" <<'PY'
import json, shlex, sys
out = []
for e in json.load(open(sys.argv[1])):
    a, kept, i = shlex.split(e["command"]), [], 0
    while i < len(a):
        if a[i] == "-Xclang" and i + 1 < len(a) and a[i + 1] in ("-include-pch", "-include"):
            i += 4  # -Xclang -include-pch -Xclang FILE
            continue
        if a[i] != "-Winvalid-pch":
            kept.append(a[i])
        i += 1
    out.append(dict(e, command=shlex.join(kept)))
json.dump(out, open(sys.argv[2], "w"))
PY
  extra=(--extra-arg=-Wno-everything)
fi
# One clang-tidy per file, JOBS at a time; the output of each kept whole.
export CT=$tidy BUILD=$db EXTRA="${extra[*]}"
xargs -P "${JOBS:-2}" -I{} sh -c 't=$(mktemp); "$CT" -p "$BUILD" --quiet $EXTRA "$1" > "$t" 2>/dev/null; cat "$t"; rm -f "$t"' _ {} \
  <<<"$files" > "$log" || true
diags=$(grep -E '(warning|error): ' "$log" | sed 's/,-warnings-as-errors//' | sort -u || true)
[[ -z "$diags" ]] || printf '%s\n' "$diags"
n=$(grep -c . <<<"$diags" || true)
if ((n > 0)); then
  echo "check_tidy: $n diagnostics"
  exit 1
fi
echo "check_tidy: ok"
