#!/usr/bin/env python3
"""`chokepoint serve` scraped by a real Prometheus server (Debian's `prometheus`).

Two exporters stand for two nodes of a fleet: one with two H200s (the fake NVML of
tests/fake_nvml, scenario h200_busy_2gpu) following a CPU-bound job whose process name and
command line are hostile (quotes, backslashes, newlines, invalid UTF-8), one without NVML.
The test checks, in order:
  - `promtool check metrics` on the page: no parse error; the only lint is the camelCase
    `modelName` label that dcgm-exporter's series carry (kept for compatibility);
  - HTTP: / and /metrics answer, other paths 404, other methods 405;
  - scrapers that disconnect mid-response (a reset after the first bytes, a half-sent
    request) leave the exporter serving;
  - Prometheus scrapes both targets and answers PromQL for the exported series (GPU
    activity under dcgm-exporter's names, the job's CPU, its bound category, the no-GPU
    node's flag), and /federate returns them (the path of a global Prometheus);
  - every expression of dashboards/chokepoint-fleet.json is valid PromQL for this
    Prometheus and names only series the page declares;
  - a second exporter on a port in use fails with the reason; SIGTERM stops cleanly.
Usage: prometheus_test.py CHOKEPOINT FAKE_NVML_LIB SCENARIO DASHBOARD. Exits 77 (skipped)
without prometheus/promtool (scripts/deps.sh --test installs them).
"""
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

CHOKEPOINT, FAKE_NVML, SCENARIO, DASHBOARD = sys.argv[1:5]
PROMETHEUS = shutil.which("prometheus")
PROMTOOL = shutil.which("promtool")
if not PROMETHEUS or not PROMTOOL:
    print("SKIP: prometheus/promtool not installed (scripts/deps.sh --test)")
    sys.exit(77)

failures = []
procs = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url, method="GET", timeout=5):
    req = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read().decode("utf-8")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", "replace")
    except (urllib.error.URLError, OSError) as e:  # not listening yet
        return 0, str(e)


def start_serve(env_extra, args, log):
    env = dict(os.environ, **env_extra)
    p = subprocess.Popen([CHOKEPOINT, "serve", "--listen", "127.0.0.1:0", "--interval", "200ms",
                          "--diagnose-every", "1s", "--window", "10s"] + args,
                         env=env, stderr=open(log, "w"), stdout=subprocess.DEVNULL)
    procs.append(p)
    for _ in range(100):
        m = re.search(r"http://(\S+)/metrics", open(log).read())
        if m:
            return p, m.group(1)
        if p.poll() is not None:
            break
        time.sleep(0.1)
    sys.exit("serve did not start: " + open(log).read())


def promql(base, query):
    status, body = get(base + "/api/v1/query?" + urllib.parse.urlencode({"query": query}))
    return json.loads(body) if body.startswith("{") else {"status": "http %d" % status, "error": body}


def wait_for(base, query, pred, timeout=30):
    deadline = time.time() + timeout
    res = None
    while time.time() < deadline:
        res = promql(base, query)
        if res.get("status") == "success" and pred(res["data"]["result"]):
            return res["data"]["result"]
        time.sleep(0.5)
    print("  last answer to %s: %s" % (query, json.dumps(res)[:400]))
    return None


def metric_names(expr):
    """The metric names a PromQL expression selects: identifiers outside label matchers
    and strings, not functions, keywords or grouping labels."""
    expr = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    expr = re.sub(r"\{[^}]*\}", "", expr)
    expr = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", expr)
    expr = re.sub(r"\[[^\]]*\]", "", expr)
    keywords = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or",
                "unless", "offset", "inf", "nan"}
    names = set()
    for m in re.finditer(r"[a-zA-Z_:][a-zA-Z0-9_:]*", expr):
        tail = expr[m.end():].lstrip()
        if tail.startswith("(") or m.group(0).lower() in keywords:
            continue
        if m.start() > 0 and (expr[m.start() - 1].isdigit() or expr[m.start() - 1] == "."):
            continue  # 1e3, 0.5
        names.add(m.group(0))
    return names


tmp = tempfile.mkdtemp(prefix="chokepoint-prom-")
try:
    # The job: a busy Python loop whose name and argv are hostile.
    job = subprocess.Popen([sys.executable, "-c",
                            "import sys\n"
                            "open('/proc/self/comm','wb').write(b'x\"}\\\\\\n\\xff{y')\n"
                            "while True: pass\n",
                            'evil"} 1\nfake_metric 666', "\\", "\xe9"])
    procs.append(job)
    time.sleep(0.3)

    gpu_serve, gpu_addr = start_serve({"CHOKEPOINT_NVML_LIB": FAKE_NVML, "FAKE_NVML_CONFIG": SCENARIO},
                                      ["--pid", str(job.pid)], os.path.join(tmp, "gpu.log"))
    cpu_serve, cpu_addr = start_serve({"CHOKEPOINT_NVML_LIB": os.path.join(tmp, "no-libnvidia-ml.so")}, [],
                                      os.path.join(tmp, "cpu.log"))
    time.sleep(1.5)  # a few ticks and the first diagnosis

    # The page and promtool.
    status, page = get("http://%s/metrics" % gpu_addr)
    check(status == 200, "GET /metrics answers 200")
    open(os.path.join(tmp, "page.prom"), "w").write(page)
    lint = subprocess.run([PROMTOOL, "check", "metrics"], input=page.encode(), capture_output=True)
    out = (lint.stdout + lint.stderr).decode()
    problems = [l for l in out.splitlines()
                if l.strip() and not re.match(r"^DCGM_FI_\w+ label names should be written in 'snake_case' not "
                                              r"'camelCase'$", l)]
    check(lint.returncode in (0, 3) and not problems,
          "promtool check metrics: no error, only dcgm-exporter's modelName lint (rc %d) %s"
          % (lint.returncode, problems[:3]))
    # The page recorded on the H200 under a bf16 GEMM (tests/data/serve/gpu_serve.sh).
    fixture = os.path.join(os.path.dirname(DASHBOARD), "..", "tests", "data", "serve", "h200_gemm.prom")
    h200 = open(fixture).read()
    lint = subprocess.run([PROMTOOL, "check", "metrics"], input=h200.encode(), capture_output=True)
    bad = [l for l in (lint.stdout + lint.stderr).decode().splitlines()
           if l.strip() and "label names should be written in 'snake_case' not 'camelCase'" not in l]
    check(lint.returncode in (0, 3) and not bad, "promtool check metrics on the H200 page: %s" % bad[:3])
    sm = re.search(r'^DCGM_FI_PROF_SM_ACTIVE\{gpu="0".*\} (\S+)$', h200, re.M)
    check(sm is not None and float(sm.group(1)) > 0.9 and
          re.search(r'^chokepoint_job_bound\{[^}]*category="compute"\} 1$', h200, re.M) is not None,
          "the H200 page: SM activity > 0.9 and the GEMM job bound by compute")
    check("\nfake_metric" not in page, "a hostile command line forged no sample")
    declared = set(re.findall(r"^# TYPE (\S+) ", page, re.M))
    check({"DCGM_FI_PROF_SM_ACTIVE", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "DCGM_FI_PROF_DRAM_ACTIVE",
           "DCGM_FI_DEV_GPU_UTIL", "chokepoint_job_bound", "chokepoint_job_finding_active"} <= declared,
          "the page declares the GPU, job and diagnosis families")

    # HTTP surface.
    check(get("http://%s/" % gpu_addr)[0] == 200, "GET / answers 200")
    check(get("http://%s/nothing" % gpu_addr)[0] == 404, "GET /nothing answers 404")
    check(get("http://%s/metrics" % gpu_addr, method="POST")[0] == 405, "POST /metrics answers 405")
    check(get("http://%s/metrics" % gpu_addr, method="DELETE")[0] == 405, "DELETE /metrics answers 405")

    # Scrapers that go away mid-response.
    host, port = gpu_addr.rsplit(":", 1)
    for i in range(30):
        s = socket.create_connection((host, int(port)))
        if i % 3 == 2:
            s.sendall(b"GET /metr")  # half a request line
        else:
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            s.recv(64 if i % 3 == 0 else 1)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # reset, not FIN
        s.close()
    status, again = get("http://%s/metrics" % gpu_addr)
    check(status == 200 and gpu_serve.poll() is None and "chokepoint_serve_scrapes_total" in again,
          "still serving after 30 clients disconnected mid-response")

    # Prometheus scraping both nodes.
    prom_port = free_port()
    cfg = os.path.join(tmp, "prometheus.yml")
    open(cfg, "w").write(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
        "scrape_configs:\n  - job_name: chokepoint\n    static_configs:\n"
        "      - targets: ['%s', '%s']\n" % (gpu_addr, cpu_addr))
    prom = subprocess.Popen([PROMETHEUS, "--config.file=" + cfg, "--storage.tsdb.path=" + os.path.join(tmp, "tsdb"),
                             "--web.listen-address=127.0.0.1:%d" % prom_port, "--log.level=warn"],
                            stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "prometheus.log"), "w"))
    procs.append(prom)
    base = "http://127.0.0.1:%d" % prom_port
    up = wait_for(base, 'up{job="chokepoint"} == 1', lambda r: len(r) == 2)
    check(up is not None, "Prometheus scrapes both exporters (up == 1)")

    r = wait_for(base, 'DCGM_FI_PROF_SM_ACTIVE{gpu="0",modelName="NVIDIA H200"}', lambda r: len(r) == 1)
    check(r is not None and abs(float(r[0]["value"][1]) - 0.966) < 1e-6,
          "DCGM_FI_PROF_SM_ACTIVE of GPU 0 is the fake's 96.6% as a ratio")
    r = wait_for(base, 'DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{gpu="0"}', lambda r: len(r) == 1)
    check(r is not None and abs(float(r[0]["value"][1]) - 0.937) < 1e-6, "tensor activity 0.937")
    r = wait_for(base, "DCGM_FI_DEV_POWER_USAGE", lambda r: len(r) == 2)
    check(r is not None and sorted(float(x["value"][1]) for x in r) == [120.0, 689.0], "power of both GPUs in W")
    r = wait_for(base, 'chokepoint_process_cpu_cores{pid="%d"}' % job.pid,
                 lambda r: len(r) == 1 and float(r[0]["value"][1]) > 0.3)
    check(r is not None, "the job's busy process uses CPU (chokepoint_process_cpu_cores > 0.3)")
    r = wait_for(base, 'sum by (job_pid) (chokepoint_job_bound{job_pid="%d"})' % job.pid,
                 lambda r: len(r) == 1 and float(r[0]["value"][1]) == 1)
    check(r is not None, "the job has exactly one bound category")
    r = wait_for(base, 'chokepoint_job_info{job_pid="%d"}' % job.pid, lambda r: len(r) == 1)
    check(r is not None and "fake_metric 666" in r[0]["metric"].get("command", ""),
          "the hostile command line arrives as a label value, intact in meaning")
    r = wait_for(base, "chokepoint_gpu_available", lambda r: len(r) == 2)
    check(r is not None and sorted(float(x["value"][1]) for x in r) == [0.0, 1.0],
          "chokepoint_gpu_available: 1 on the GPU node, 0 on the other")
    r = wait_for(base, "chokepoint_gpu_unavailable_info", lambda r: len(r) == 1)
    check(r is not None and "no-libnvidia-ml.so" in r[0]["metric"].get("reason", ""), "the no-GPU node says why")

    status, fed = get(base + "/federate?" + urllib.parse.urlencode(
        {"match[]": '{__name__=~"chokepoint_job_bound|DCGM_FI_PROF_SM_ACTIVE"}'}))
    check(status == 200 and "DCGM_FI_PROF_SM_ACTIVE{" in fed and "chokepoint_job_bound{" in fed,
          "/federate returns the node series for a global Prometheus")

    # The dashboard's queries.
    dash = json.load(open(DASHBOARD))
    exprs = []

    def walk(o):
        if isinstance(o, dict):
            for k, v in o.items():
                if k == "expr" and isinstance(v, str):
                    exprs.append(v)
                else:
                    walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)
    walk(dash)
    check(len(exprs) >= 6, "the dashboard has queries (%d)" % len(exprs))
    for e in exprs:
        q = re.sub(r"\$__rate_interval|\$__interval|\$__range", "1m", e)
        q = re.sub(r"\$\{?\w+\}?", ".*", q)  # template variables ($node) match everything
        res = promql(base, q)
        names = metric_names(q)
        missing = names - declared - {"up"}
        check(res.get("status") == "success" and names and not missing,
              "dashboard query valid and on exported series: %s %s" % (e[:70], sorted(missing)))

    # A second exporter on a port that is taken; SIGTERM.
    taken = subprocess.run([CHOKEPOINT, "serve", "--listen", gpu_addr, "--no-gpu"], capture_output=True, timeout=20)
    err = taken.stderr.decode()
    check(taken.returncode == 1 and "Address already in use" in err, "a port in use: exit 1 and why: " + err.strip())
    t0 = time.time()
    gpu_serve.send_signal(signal.SIGTERM)
    rc = gpu_serve.wait(timeout=10)
    check(rc == 0 and time.time() - t0 < 5, "SIGTERM stops serve cleanly (exit %d in %.2f s)" % (rc, time.time() - t0))
    cpu_serve.send_signal(signal.SIGINT)
    check(cpu_serve.wait(timeout=10) == 0, "SIGINT stops serve cleanly")
finally:
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()
    if failures:
        print("logs kept in", tmp)
    else:
        shutil.rmtree(tmp, ignore_errors=True)

if failures:
    print("%d check(s) failed" % len(failures))
    sys.exit(1)
print("OK")
