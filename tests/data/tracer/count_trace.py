#!/usr/bin/env python3
"""Counts the records of chokepoint trace files (src/tracer/trace_format.h), independently
of the C++ importer: the GPU test compares them with what the traced program did.

Usage: count_trace.py DIR_OR_FILE...   prints JSON {kind: count, ...} summed over files
"""
import glob
import json
import os
import struct
import sys

KINDS = {2: "kernel", 3: "memcpy", 4: "memset", 5: "sync", 6: "runtime_api", 7: "driver_api", 10: "device",
         11: "marker"}
MARKER = {1: "start", 2: "end", 3: "instant"}
COPY = {1: "HtoD", 2: "DtoH", 8: "DtoD", 9: "HtoH", 10: "PtoP"}
MEM = {1: "pageable", 2: "pinned", 3: "device", 4: "array", 5: "managed"}
SYNC = {1: "event", 2: "stream_wait_event", 3: "stream", 4: "context"}


def read(path, out):
    data = open(path, "rb").read()
    assert data[:8] == b"CPTRACE1", path
    status = struct.unpack_from("<I", data, 40)[0]
    out.setdefault("pids", []).append(struct.unpack_from("<q", data, 16)[0])
    out["files"] = out.get("files", 0) + 1
    if status:
        out["status_%d" % status] = out.get("status_%d" % status, 0) + 1
    strings = {}
    pos = 64
    ended = False
    while pos + 64 <= len(data):
        kind, device, flags, sub, name, start, end, corr, stream = struct.unpack_from("<BBBBIQQII", data, pos)
        pos += 64
        if kind == 1:  # string: `start` bytes follow in 64-byte blocks
            strings[name] = data[pos:pos + start].decode("utf-8", "replace")
            pos += (start + 63) // 64 * 64
            continue
        if kind == 9:
            ended = True
            out["dropped"] = out.get("dropped", 0) + end
            break
        k = KINDS.get(kind, "other")
        out[k] = out.get(k, 0) + 1
        if k == "memcpy":
            nbytes, src, dst = struct.unpack_from("<QBB", data, pos - 32)
            key = "memcpy_%s_%s_to_%s" % (COPY.get(sub, "?"), MEM.get(src, "?"), MEM.get(dst, "?"))
            out[key] = out.get(key, 0) + 1
        elif k == "sync":
            key = "sync_" + SYNC.get(sub, "?")
            out[key] = out.get(key, 0) + 1
        elif k in ("runtime_api", "driver_api"):
            key = "api_" + strings.get(name, "?").split("_v")[0]
            out[key] = out.get(key, 0) + 1
            # thread ids: Linux tids (the sampler's) when cuptiSetThreadIdType(SYSTEM) took
            tids = out.setdefault("api_thread_ids", [])
            if stream not in tids:
                tids.append(stream)
        elif k == "marker":
            key = "marker_%s" % MARKER.get(sub, "?")
            out[key] = out.get(key, 0) + 1
            if sub == 1:
                key = "marker_name_" + strings.get(name, "?")
                out[key] = out.get(key, 0) + 1
        elif k == "device":
            out["device_name"] = strings.get(name, "?")
    if not ended:
        out["unended_files"] = out.get("unended_files", 0) + 1


def main():
    out = {}
    for arg in sys.argv[1:]:
        files = sorted(glob.glob(os.path.join(arg, "*.cptrace"))) if os.path.isdir(arg) else [arg]
        for f in files:
            read(f, out)
    print(json.dumps(out, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
