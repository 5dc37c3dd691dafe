#!/usr/bin/env python3
"""`chokepoint serve` under hostile clients while a scraper keeps scraping.

Starts the real `chokepoint serve --listen 127.0.0.1:0 --no-gpu` and, for SECONDS (12 by
default), runs at once:
  - a scraper: a fresh connection and GET /metrics every 0.2 s, each must be answered 200
    within 2 s (the property the hostile clients must not break: scrapes served first);
  - 16 slowloris clients: a request head trickled a few bytes every 0.2 s (each must be
    closed by the server's head deadline, 10 s after its first byte);
  - 200 idle clients that connect and send nothing (reconnecting a second after a drop);
  - a flood of header bytes: 50 MB over 4 connections at a time (each refused with 431);
  - a GET with a 10 MB body (refused with 413, the body never read);
  - pipelined requests: 150 GET /metrics in one write on one connection, all answered in
    order, again and again;
then checks the exporter's peak RSS (VmRSS from /proc/PID/status, sampled throughout:
under 100 MB, and growing less than 50 MB; only the growth under a sanitizer),
stops it with SIGTERM (exit 0) and restarts it at once on the same port.
Only loopback addresses; every loop is bounded in count and time; it ends by itself.
Usage: soak_test.py CHOKEPOINT [SECONDS]
"""
import os
import re
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

CHOKEPOINT = sys.argv[1]
SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else 12.0
SCRAPE_DEADLINE_S = 2.0
RSS_LIMIT_KB = 100 * 1024
RSS_GROWTH_LIMIT_KB = 50 * 1024
HEAD_DEADLINE_S = 10.0  # http_server.h: a request head must be whole 10 s after its first byte
SLOWLORIS = 16
IDLE = 200
FLOOD_BYTES = 50 * 1024 * 1024
FLOOD_CONNECTIONS = 4
BODY_BYTES = 10 * 1024 * 1024
PIPELINED = 150

failures = []
lock = threading.Lock()
stop = threading.Event()
stats = {"scrapes": 0, "scrape_failures": [], "latencies": [], "slowloris_closed": [], "slowloris_open_too_long": 0,
         "idle_dropped": 0, "flood_bytes": 0, "flood_431": 0, "flood_connections": 0, "body_status": None,
         "pipelined_rounds": 0, "pipelined_bad": [], "rss_kb": [], "thread_errors": []}


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def start_serve(listen, log):
    # Under AddressSanitizer (the sanitizer build of scripts/test.sh) freed memory waits in
    # a 256 MB quarantine, which would measure ASan; a small one still catches a reuse.
    env = dict(os.environ)
    env["ASAN_OPTIONS"] = ":".join(filter(None, [env.get("ASAN_OPTIONS"), "quarantine_size_mb=8"]))
    p = subprocess.Popen([CHOKEPOINT, "serve", "--listen", listen, "--no-gpu", "--interval", "200ms"],
                         stderr=open(log, "w"), stdout=subprocess.DEVNULL, env=env)
    for _ in range(150):
        m = re.search(r"http://127\.0\.0\.1:(\d+)/metrics", open(log).read())
        if m:
            return p, int(m.group(1))
        if p.poll() is not None:
            break
        time.sleep(0.1)
    p.kill()
    p.wait()
    sys.exit("serve did not start: " + open(log).read())


def connect(port, timeout=5.0):
    return socket.create_connection(("127.0.0.1", port), timeout=timeout)


def read_response(sock, buf, head_only=False):
    """One HTTP response from sock: (status, body, rest of buf). Raises on EOF/timeout."""
    for _ in range(100000):
        end = buf.find(b"\r\n\r\n")
        if end >= 0:
            break
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed before a response head")
        buf += chunk
    else:
        raise ConnectionError("no response head")
    head = buf[:end].decode("latin-1")
    status = int(head[9:12])
    m = re.search(r"\r\nContent-Length: (\d+)", head, re.I)
    length = 0 if head_only or not m else int(m.group(1))
    buf = buf[end + 4:]
    for _ in range(100000):
        if len(buf) >= length:
            break
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed mid-body")
        buf += chunk
    return status, buf[:length], buf[length:]


def guarded(fn):
    def run(*args):
        try:
            fn(*args)
        except Exception as e:  # a bug of the test itself: report, do not hang
            with lock:
                stats["thread_errors"].append("%s: %r" % (fn.__name__, e))
    return run


@guarded
def scraper(port, until):
    for _ in range(int(SECONDS / 0.2) + 50):
        if time.time() >= until:
            return
        t0 = time.time()
        try:
            with connect(port, timeout=SCRAPE_DEADLINE_S) as s:
                s.sendall(b"GET /metrics HTTP/1.1\r\nHost: soak\r\nConnection: close\r\n\r\n")
                status, body, _ = read_response(s, b"")
            took = time.time() - t0
            ok = status == 200 and b"chokepoint_serve_scrapes_total" in body and took <= SCRAPE_DEADLINE_S
            with lock:
                stats["scrapes"] += 1
                stats["latencies"].append(took)
                if not ok:
                    stats["scrape_failures"].append("status %d in %.2f s" % (status, took))
        except OSError as e:
            with lock:
                stats["scrape_failures"].append("%r after %.2f s" % (e, time.time() - t0))
        time.sleep(max(0.0, 0.2 - (time.time() - t0)))


@guarded
def slowloris(port, until):
    """SLOWLORIS connections trickling a head; each server close is timed from the first byte."""
    conns = {}  # socket -> time of its first byte

    def open_one():
        s = connect(port)
        s.setblocking(False)
        s.send(b"GET /metrics HTTP/1.1\r\n")
        conns[s] = time.time()

    for _ in range(SLOWLORIS):
        open_one()
    for i in range(int(SECONDS / 0.2) + 50):
        if time.time() >= until:
            break
        readable, _, _ = select.select(list(conns), [], [], 0.2)
        for s in list(conns):
            closed = False
            try:
                if s in readable:
                    closed = s.recv(4096) == b""
                if not closed:
                    s.send(b"X-%d: y\r\n" % i)
            except OSError:
                closed = True
            if closed:
                with lock:
                    stats["slowloris_closed"].append(time.time() - conns[s])
                del conns[s]
                s.close()
                open_one()
    now = time.time()
    with lock:
        stats["slowloris_open_too_long"] = sum(1 for t in conns.values() if now - t > HEAD_DEADLINE_S + 2.0)
    for s in conns:
        s.close()


@guarded
def idlers(port, until):
    """IDLE connections that send nothing; one the server drops is opened again a second
    later (a crowd of idle clients, not a connection flood: that would evict a fresh
    scrape's connection before its request arrives, by design of the connection cap)."""
    conns = [connect(port) for _ in range(IDLE)]
    dropped = []  # times at which a dropped connection is opened again
    for _ in range(int(SECONDS / 0.25) + 50):
        tick = time.time()
        if tick >= until:
            break
        readable, _, _ = select.select(conns, [], [], 0.25)
        for s in readable:
            try:
                gone = s.recv(4096) == b""
            except OSError:
                gone = True
            if gone:
                conns.remove(s)
                s.close()
                dropped.append(time.time() + 1.0)
                with lock:
                    stats["idle_dropped"] += 1
        due = [t for t in dropped if t <= time.time()]
        dropped = [t for t in dropped if t > time.time()]
        conns += [connect(port) for _ in due]
        time.sleep(max(0.0, 0.25 - (time.time() - tick)))
    for s in conns:
        s.close()


@guarded
def flooder(port, until, budget):
    """Header bytes without end, 64 KiB at a time, reconnecting when refused."""
    chunk = (b"X-Flood: " + b"a" * 1000 + b"\r\n") * 64
    sent = 0
    for _ in range(10000):
        if sent >= budget or time.time() >= until:
            break
        with lock:
            stats["flood_connections"] += 1
        s = connect(port, timeout=3.0)
        try:
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: soak\r\n")
            for _ in range(2000):
                if sent >= budget or time.time() >= until:
                    break
                s.sendall(chunk)
                sent += len(chunk)
                with lock:
                    stats["flood_bytes"] += len(chunk)
        except OSError:
            pass  # refused and closed: the next connection goes on
        try:
            s.settimeout(0.5)
            if s.recv(64).startswith(b"HTTP/1.1 431"):
                with lock:
                    stats["flood_431"] += 1
        except OSError:
            pass
        s.close()


@guarded
def big_body(port, until):
    s = connect(port, timeout=5.0)
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: soak\r\nContent-Length: %d\r\n\r\n" % BODY_BYTES)
    piece = b"b" * (1024 * 1024)
    try:
        for _ in range(BODY_BYTES // len(piece)):
            s.sendall(piece)
    except OSError:
        pass  # the server may close once its lingering is over; the answer was sent first
    try:
        status, _, _ = read_response(s, b"")
    except OSError as e:
        status = repr(e)
    with lock:
        stats["body_status"] = status
    s.close()


@guarded
def pipeliner(port, until):
    request = b"GET /metrics HTTP/1.1\r\nHost: soak\r\n\r\n"
    for _ in range(1000):
        if time.time() >= until:
            return
        with connect(port, timeout=5.0) as s:
            s.sendall(request * PIPELINED)
            buf = b""
            answered = 0
            try:
                for _ in range(PIPELINED):
                    status, body, buf = read_response(s, buf)
                    if status != 200:
                        break
                    answered += 1
            except OSError:
                pass
        with lock:
            stats["pipelined_rounds"] += 1
            if answered != PIPELINED:
                stats["pipelined_bad"].append(answered)
        time.sleep(0.5)


def sanitized(pid):
    """Whether the binary runs under a sanitizer (its runtime is mapped): its shadow memory
    makes RSS large from the start, so only the growth is checked then."""
    maps = open("/proc/%d/maps" % pid).read()
    return "libasan" in maps or "libubsan" in maps or "libtsan" in maps


def rss_kb(pid):
    m = re.search(r"^VmRSS:\s+(\d+) kB", open("/proc/%d/status" % pid).read(), re.M)
    return int(m.group(1)) if m else 0


tmp = tempfile.mkdtemp(prefix="chokepoint-soak-")
serve, port = start_serve("127.0.0.1:0", os.path.join(tmp, "serve.log"))
restarted = None
try:
    time.sleep(0.5)
    rss_start = rss_kb(serve.pid)
    asan = sanitized(serve.pid)
    until = time.time() + SECONDS
    threads = [threading.Thread(target=scraper, args=(port, until)),
               threading.Thread(target=slowloris, args=(port, until)),
               threading.Thread(target=idlers, args=(port, until)),
               threading.Thread(target=big_body, args=(port, until)),
               threading.Thread(target=pipeliner, args=(port, until))]
    threads += [threading.Thread(target=flooder, args=(port, until, FLOOD_BYTES // FLOOD_CONNECTIONS))
                for _ in range(FLOOD_CONNECTIONS)]
    for t in threads:
        t.daemon = True
        t.start()
    for _ in range(int(SECONDS / 0.25) + 20):
        if time.time() >= until + 0.5:
            break
        stats["rss_kb"].append(rss_kb(serve.pid))
        time.sleep(0.25)
    for t in threads:
        t.join(timeout=15)
    check(not any(t.is_alive() for t in threads), "every client thread ended")
    check(not stats["thread_errors"], "no client failed unexpectedly %s" % stats["thread_errors"][:3])

    lat = sorted(stats["latencies"])
    worst = lat[-1] if lat else float("nan")
    p50 = lat[len(lat) // 2] if lat else float("nan")
    print("scrapes %d, latency p50 %.3f s, max %.3f s" % (stats["scrapes"], p50, worst))
    check(stats["scrapes"] >= SECONDS / 0.2 * 0.5 and not stats["scrape_failures"],
          "every scrape answered 200 within %.0f s (%d scrapes, max %.3f s) %s"
          % (SCRAPE_DEADLINE_S, stats["scrapes"], worst, stats["scrape_failures"][:3]))
    closed = stats["slowloris_closed"]
    print("slowloris closed by the server: %d, after %.1f-%.1f s" %
          (len(closed), min(closed or [0]), max(closed or [0])))
    check(len(closed) >= SLOWLORIS and max(closed) <= HEAD_DEADLINE_S + 2.0 and stats["slowloris_open_too_long"] == 0,
          "slowloris heads closed by the %.0f s deadline (%d closed, longest %.1f s)"
          % (HEAD_DEADLINE_S, len(closed), max(closed or [0])))
    print("idle connections dropped to make room: %d" % stats["idle_dropped"])
    print("flood: %.1f MB of header bytes over %d connections, %d answered 431" %
          (stats["flood_bytes"] / 1e6, stats["flood_connections"], stats["flood_431"]))
    check(stats["flood_bytes"] >= FLOOD_BYTES * 0.9 and stats["flood_431"] >= 1,
          "a 50 MB header flood was refused with 431")
    check(stats["body_status"] == 413, "a GET with a 10 MB body answered 413 (%s)" % stats["body_status"])
    check(stats["pipelined_rounds"] >= 1 and not stats["pipelined_bad"],
          "%d rounds of %d pipelined requests all answered (short rounds: %s)"
          % (stats["pipelined_rounds"], PIPELINED, stats["pipelined_bad"][:3]))
    peak = max(stats["rss_kb"] or [0])
    print("RSS: %.1f MB at start, peak %.1f MB, %.1f MB at the end%s" %
          (rss_start / 1024, peak / 1024, stats["rss_kb"][-1] / 1024 if stats["rss_kb"] else 0,
           " (sanitizer build)" if asan else ""))
    if not asan:
        check(0 < peak < RSS_LIMIT_KB, "RSS stayed under %d MB (peak %.1f MB)" % (RSS_LIMIT_KB // 1024, peak / 1024))
    check(peak > 0 and peak - rss_start < RSS_GROWTH_LIMIT_KB, "RSS grew less than %d MB under the attack (%.1f MB)"
          % (RSS_GROWTH_LIMIT_KB // 1024, (peak - rss_start) / 1024))

    check(serve.poll() is None, "serve still running")
    t0 = time.time()
    serve.send_signal(signal.SIGTERM)
    rc = serve.wait(timeout=10)
    check(rc == 0, "SIGTERM: exit %d in %.2f s" % (rc, time.time() - t0))
    restarted, again = start_serve("127.0.0.1:%d" % port, os.path.join(tmp, "restart.log"))
    with connect(port) as s:
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: soak\r\n\r\n")
        status, _, _ = read_response(s, b"")
    check(again == port and status == 200, "restarted at once on the same port %d and serving" % port)
    restarted.send_signal(signal.SIGTERM)
    check(restarted.wait(timeout=10) == 0, "the restarted serve stops on SIGTERM")
finally:
    stop.set()
    for p in (serve, restarted):
        if p is not None and p.poll() is None:
            p.kill()
            p.wait()
    if failures:
        print("logs kept in", tmp)
    else:
        for f in os.listdir(tmp):
            os.unlink(os.path.join(tmp, f))
        os.rmdir(tmp)

if failures:
    print("%d check(s) failed" % len(failures))
    sys.exit(1)
print("OK")
