#!/usr/bin/env bash
# Install HolisticTraceAnalysis (HTA) into benchmarks/.venv for the comparison in
# docs/BENCHMARKS.md. PyPI package `traceinsight` (HTA's new name, imports as `hta`);
# falls back to the old name `HolisticTraceAnalysis`.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="$here/.venv"
if [[ ! -x "$venv/bin/python" ]]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --upgrade pip
fi
if ! "$venv/bin/python" -c 'import hta' 2>/dev/null; then
  "$venv/bin/pip" install -q traceinsight || "$venv/bin/pip" install -q HolisticTraceAnalysis
fi
"$venv/bin/python" -c 'from hta.version import __version__ as v; print("hta", v)'
