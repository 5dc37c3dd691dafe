#!/usr/bin/env bash
# scripts/check_layers.sh fails on each kind of violation it claims to find (includes going
# up or across layers, namespaces named like a layer), and passes the
# tree as it is. Each case runs on a copy of src/ and scripts/ with one file changed.
# Usage: tests/scripts/check_layers_test.sh REPO_ROOT
set -uo pipefail
repo=${1:?usage: check_layers_test.sh REPO_ROOT}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

fresh() {
  rm -rf "$work/tree" && mkdir -p "$work/tree"
  cp -r "$repo/src" "$repo/scripts" "$work/tree/"
}

# expect_violation NAME FILE LINE_TO_ADD WORDS: the check fails and names FILE and WORDS.
expect_violation() {
  local name=$1 file=$2 text=$3 words=$4 out rc
  fresh
  mkdir -p "$(dirname "$work/tree/$file")"
  printf '%s\n' "$text" >> "$work/tree/$file"
  out=$(bash "$work/tree/scripts/check_layers.sh" 2>&1)
  rc=$?
  if ((rc == 0)) || ! grep -q "$file" <<<"$out" || ! grep -q "$words" <<<"$out"; then
    echo "FAIL $name: rc $rc, output: $out"
    failures=$((failures + 1))
  else
    echo "ok   $name"
  fi
}

fresh
if out=$(bash "$work/tree/scripts/check_layers.sh" 2>&1); then echo "ok   the tree as it is passes"; else
  echo "FAIL the tree as it is: $out"; failures=$((failures + 1)); fi

expect_violation "a quoted include going up" src/analyses/planted.cc '#include "report/report.h"' \
  "analyses may not use report"
expect_violation "an angle include going up" src/timeline/planted.cc '#include <rules/rule.h>' \
  "timeline may not use rules"
expect_violation "an angle include in a cuda/ folder" src/bench/cuda/planted.cu '#include <pipeline/analyze.h>' \
  "bench may not use pipeline"
expect_violation "a relative include out of the folder" src/base/planted.h '#include "../analyses/x.h"' \
  "a relative path out of the folder"
expect_violation "a relative path in a CMakeLists.txt" src/base/CMakeLists.txt 'add_library(x ../../report/x.cc)' \
  "base may not use report"
expect_violation "a namespace named like a layer" src/rules/planted.h 'namespace chokepoint::rules::machine {}' \
  "'machine' is a layer's name"

((failures == 0)) || { echo "$failures case(s) failed"; exit 1; }
