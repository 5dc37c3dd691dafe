#!/usr/bin/env bash
# Records two_threads.chrometrace.json.gz, the py-spy reader's fixture
# (src/importers/pyspy/pyspy_reader_test.cc). py-spy 0.4.3 (pip install py-spy==0.4.3),
# the options `run` uses (sampler/pyspy/pyspy_process.cc).
set -euo pipefail
cd "$(dirname "$0")"
py-spy record --format chrometrace --rate 100 --idle --threads --subprocesses --nonblocking \
  --output /tmp/two_threads.chrometrace.json -- python3 two_threads.py
gzip -9 -c /tmp/two_threads.chrometrace.json > two_threads.chrometrace.json.gz
