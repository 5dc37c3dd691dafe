#!/usr/bin/env bash
# Fails when a file includes a layer it may not use (docs/ARCHITECTURE.md, "Layers").
#
# The allowed graph has one source: the chokepoint_layer(NAME DIR DEPS ...) lines of
# src/CMakeLists.txt (and its `set(cli_deps ...)` for src/cli/), the same lines from which
# cmake/layers.cmake gives each layer its include root. A layer may include itself and
# its DEPS, transitively. Checked:
# - every file under src/<layer>/ (tests and cuda/ folders included: the CUDA tools are
#   compiled only where the toolkit is, so the build alone does not check them here);
# - files under tests/, fuzz/, benchmarks/: the layers that the CMakeLists.txt of their
#   folder (or the nearest one above) names as chokepoint_<layer>;
# - relative paths into another layer (`../../analyses/x.cc` in a CMakeLists.txt or an
#   #include), which would bypass both.
# Usage: scripts/check_layers.sh   (from anywhere in the repository; exit 1 on a violation)
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 - "$@" <<'EOF'
import os, re, sys

cmake = open("src/CMakeLists.txt").read()
cmake = re.sub(r"#[^\n]*", "", cmake)
deps = {}  # layer -> direct chokepoint_* deps, in declaration order
for m in re.finditer(r"chokepoint_layer\(\s*(\w+)\s+([\w/]+)([^)]*)\)", cmake):
    name, folder, rest = m.group(1), m.group(2), m.group(3)
    if name != folder:
        sys.exit(f"check_layers: layer {name} is not the folder src/{name}")
    deps[name] = re.findall(r"\bchokepoint_(\w+)", rest)
m = re.search(r"set\(\s*cli_deps([^)]*)\)", cmake)
if not m:
    sys.exit("check_layers: src/CMakeLists.txt has no set(cli_deps ...)")
deps["cli"] = re.findall(r"\bchokepoint_(\w+)", m.group(1))

allowed = {}
def closure(layer, seen=()):
    if layer in allowed:
        return allowed[layer]
    if layer in seen:
        sys.exit(f"check_layers: dependency cycle through {layer}")
    if layer not in deps:
        sys.exit(f"check_layers: unknown layer {layer}")
    s = {layer}
    for d in deps[layer]:
        s |= closure(d, seen + (layer,))
    allowed[layer] = frozenset(s)
    return allowed[layer]
for layer in deps:
    closure(layer)

layers = set(deps)
missing = sorted(d for d in os.listdir("src") if os.path.isdir(os.path.join("src", d)) and d not in layers)
if missing:
    sys.exit(f"check_layers: folders of src/ that src/CMakeLists.txt declares no layer for: {missing}")

# Quoted and angle includes alike: `#include <analyses/x.h>` finds the layer through the
# same include roots, so it must obey the same graph (system headers have no layer's name).
include_re = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]', re.M)
relative_re = re.compile(r"(?:\.\./)+(\w+)/")
code_ext = (".h", ".cc", ".cu", ".cuh", ".hpp", ".cpp")
errors = []

def check_file(path, ok, owner):
    try:
        text = open(path, errors="replace").read()
    except OSError:
        return
    if path.endswith(code_ext):
        for m in include_re.finditer(text):
            inc = m.group(1)
            line = text.count("\n", 0, m.start()) + 1
            top = inc.split("/")[0]
            if inc.startswith("../"):
                errors.append(f"{path}:{line}: #include {inc}: a relative path out of the folder")
            elif "/" in inc and top in layers and top not in ok:
                errors.append(f"{path}:{line}: #include {inc}: {owner} may not use {top} "
                              f"(may use: {', '.join(sorted(ok))})")
    elif os.path.basename(path) == "CMakeLists.txt" and path.startswith("src/"):
        for m in relative_re.finditer(text):
            top = m.group(1)
            line = text.count("\n", 0, m.start()) + 1
            if top in layers and top not in ok:
                errors.append(f"{path}:{line}: {m.group(0)}: {owner} may not use {top}")

def walk(root):
    for d, subdirs, files in os.walk(root):
        subdirs[:] = sorted(s for s in subdirs if s not in ("corpus", "data"))
        for f in sorted(files):
            yield d, os.path.join(d, f)

for layer in sorted(layers):
    for _, path in walk(os.path.join("src", layer)):
        check_file(path, allowed[layer], f"layer {layer}")

# Tests and tools outside src/: what the nearest CMakeLists.txt links.
for root in ("tests", "fuzz", "benchmarks"):
    if not os.path.isdir(root):
        continue
    cache = {}
    def linked(d):
        if d not in cache:
            cm = os.path.join(d, "CMakeLists.txt")
            if os.path.exists(cm):
                text = re.sub(r"#[^\n]*", "", open(cm).read())
                s = set()
                for name in re.findall(r"\bchokepoint_(\w+)", text):
                    if name in layers:
                        s |= allowed[name]
                cache[d] = (frozenset(s), cm)
            elif d in (root, ".", ""):
                cache[d] = (frozenset(), None)
            else:
                cache[d] = linked(os.path.dirname(d))
        return cache[d]
    for d, path in walk(root):
        ok, cm = linked(d)
        check_file(path, ok, f"{path} (built by {cm or 'nothing'})")

# A namespace inside a layer never takes another layer's name (rules::machine beside the
# machine layer, analyses::live beside the live layer): `machine::x` would mean two things.
ns_re = re.compile(r'^\s*namespace\s+chokepoint((?:::\w+)+)\s*\{', re.M)
for layer in sorted(layers):
    for _, path in walk(os.path.join("src", layer)):
        if not path.endswith(code_ext):
            continue
        text = open(path, errors="replace").read()
        for m in ns_re.finditer(text):
            parts = m.group(1).split("::")[1:]
            for inner in parts[1:]:
                if inner in layers:
                    line = text.count("\n", 0, m.start()) + 1
                    errors.append(f"{path}:{line}: namespace chokepoint{m.group(1)}: '{inner}' is a layer's name")
        for m in re.finditer(r'^\s*namespace\s+(\w+)\s*\{', text, re.M):
            if m.group(1) in layers and m.group(1) != layer:
                line = text.count("\n", 0, m.start()) + 1
                errors.append(f"{path}:{line}: namespace {m.group(1)} in layer {layer}: '{m.group(1)}' is a layer's name")

for e in errors:
    print(e)
if errors:
    print(f"check_layers: {len(errors)} include(s) going up or across layers, or namespaces named like a layer")
    sys.exit(1)
print(f"check_layers: ok ({len(layers)} layers)")
EOF
