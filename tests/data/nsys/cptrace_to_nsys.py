#!/usr/bin/env python3
"""Writes a CUPTI trace of `chokepoint run --trace` (src/tracer/trace_format.h) as an
Nsight Systems SQLite export would hold the same CUPTI records, for the nsys importer's
golden test (src/importers/nsys, tests/golden/nsys_golden_test.cc).

Nsight Systems is not installed on the GPU machines this project records on, so no export
of ours could be made with `nsys export --type sqlite`. Nsight Systems is itself a CUPTI
client: its CUPTI_ACTIVITY_KIND_* tables are the activity records the tracer also gets.
This script stores a real recording's records in those tables, with the columns, value
encodings and enum tables of a real export of Nsight Systems 2024.5 (export schema 3.13;
docs/FORMATS.md, "Nsight Systems export"): times in ns from the capture's start, its UTC
start in TARGET_INFO_SESSION_START_TIME, names in StringIds, processes and threads as
GlobalIds (pid << 24 | tid), memory kinds in nsys' own ENUM_CUDA_MEM_KIND (CUPTI's minus
one), copy kinds and synchronization types as CUPTI's, NVTX start/end ranges as eventType
60. What a real export has and this does not: the `_v7000` version suffix of runtime API
names (the importer and `analyze` strip it; the two real exports checked by hand had it),
the OS runtime and sampling tables (not read).

Usage: cptrace_to_nsys.py TRACE.cptrace[.gz] OUT.sqlite
"""
import gzip
import os
import sqlite3
import struct
import subprocess
import sys

SCHEMA = """
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, busLocation TEXT,
  isDiscrete INTEGER, l2CacheSize INTEGER, totalMemory INTEGER, memoryBandwidth INTEGER, clockRate INTEGER,
  smCount INTEGER, pwGpuId INTEGER, uuid TEXT, luid INTEGER, chipName TEXT, cuDevice INTEGER,
  ctxswDevPath TEXT, ctrlDevPath TEXT, revision INTEGER, nodeMask INTEGER, constantMemory INTEGER,
  maxIPC INTEGER, maxRegistersPerBlock INTEGER, maxShmemPerBlock INTEGER, maxShmemPerBlockOptin INTEGER,
  maxShmemPerSm INTEGER, maxRegistersPerSm INTEGER, threadsPerWarp INTEGER, asyncEngines INTEGER,
  maxWarpsPerSm INTEGER, maxBlocksPerSm INTEGER, maxThreadsPerBlock INTEGER, maxBlockDimX INTEGER,
  maxBlockDimY INTEGER, maxBlockDimZ INTEGER, maxGridDimX INTEGER, maxGridDimY INTEGER, maxGridDimZ INTEGER,
  computeMajor INTEGER, computeMinor INTEGER, smMajor INTEGER, smMinor INTEGER);
CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, label TEXT);
CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, label TEXT);
CREATE TABLE ENUM_CUPTI_SYNC_TYPE (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, label TEXT);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
  eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL,
  returnValue INTEGER NOT NULL, callchainId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL,
  mangledName INTEGER, launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER NOT NULL,
  gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL,
  blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL,
  dynamicSharedMemory INTEGER NOT NULL, localMemoryPerThread INTEGER NOT NULL,
  localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL, sharedMemoryExecuted INTEGER,
  graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL,
  deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER, srcDeviceId INTEGER, srcContextId INTEGER,
  dstDeviceId INTEGER, dstContextId INTEGER, migrationCause INTEGER, graphNodeId INTEGER,
  virtualAddress INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT NULL,
  graphNodeId INTEGER, memKind INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER NOT NULL, end INTEGER NOT NULL,
  deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL,
  correlationId INTEGER, globalPid INTEGER, syncType INTEGER NOT NULL, eventId INTEGER NOT NULL);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
  category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER,
  domainId INTEGER, uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER,
  int32Value INTEGER, floatValue REAL, jsonTextId INTEGER, jsonText TEXT);
"""
# The enum tables' rows, as the 2024.5 export has them.
MEM_KINDS = ["PAGEABLE", "PINNED", "DEVICE", "ARRAY", "MANAGED", "DEVICE_STATIC", "MANAGED_STATIC", "UNKNOWN"]
COPY_KINDS = {0: "UNKNOWN", 1: "HTOD", 2: "DTOH", 3: "HTOA", 4: "ATOH", 5: "ATOA", 6: "ATOD", 7: "DTOA",
              8: "DTOD", 9: "HTOH", 10: "PTOP", 11: "UVM_HTOD", 12: "UVM_DTOH", 13: "UVM_DTOD"}
SYNC_TYPES = {0: "UNKNOWN", 1: "EVENT_SYNCHRONIZE", 2: "STREAM_WAIT_EVENT", 3: "STREAM_SYNCHRONIZE",
              4: "CONTEXT_SYNCHRONIZE"}
NVTX_START_END = 60


def records(data):
    """(kind, device, flags, sub, name, start, end, corr, stream, union bytes) of each record;
    strings as ("string", id, text)."""
    assert data[:8] == b"CPTRACE1", "not a chokepoint trace"
    pos = 64
    while pos + 64 <= len(data):
        kind, device, flags, sub, name, start, end, corr, stream = struct.unpack_from("<BBBBIQQII", data, pos)
        body = data[pos + 32:pos + 64]
        pos += 64
        if kind == 1:
            yield ("string", name, data[pos:pos + start].decode("utf-8", "replace"))
            pos += (start + 63) // 64 * 64
            continue
        if kind == 9:
            return
        yield (kind, device, flags, sub, name, start, end, corr, stream, body)


def demangle(names):
    """Kernel names as nsys' demangledName holds them (the tracer keeps CUPTI's mangled ones)."""
    if not names:
        return {}
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True)
    return dict(zip(names, out.stdout.split("\n")))


def main():
    src, dst = sys.argv[1], sys.argv[2]
    raw = open(src, "rb").read()
    data = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
    pid = struct.unpack_from("<q", data, 16)[0]
    recs = list(records(data))
    strings = {r[1]: r[2] for r in recs if r[0] == "string"}
    recs = [r for r in recs if r[0] != "string"]
    timed = [r[5] for r in recs if r[0] in (2, 3, 4, 5, 6, 7, 11) and r[5] > 0]
    t0 = min(timed)  # the capture's start: times in the export count from it

    if os.path.exists(dst):
        os.remove(dst)
    db = sqlite3.connect(dst)
    db.executescript(SCHEMA)
    ids = {}

    def sid(text):
        if text not in ids:
            ids[text] = len(ids) + 1
            db.execute("INSERT INTO StringIds VALUES (?, ?)", (ids[text], text))
        return ids[text]

    def gtid(p, tid):
        return (p << 24) | (tid & 0xFFFFFF)

    db.execute("INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (?, NULL, NULL)", (t0,))
    for i, n in enumerate(MEM_KINDS):
        db.execute("INSERT INTO ENUM_CUDA_MEM_KIND VALUES (?, ?, ?)", (i, "CUDA_MEMOPR_MEMORY_KIND_" + n, n.title()))
    for i, n in COPY_KINDS.items():
        db.execute("INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (?, ?, ?)", (i, "CUDA_MEMCPY_KIND_" + n, n))
    for i, n in SYNC_TYPES.items():
        db.execute("INSERT INTO ENUM_CUPTI_SYNC_TYPE VALUES (?, ?, ?)",
                   (i, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_" + n, n))
    names = demangle(sorted({strings.get(r[4], "") for r in recs if r[0] == 2}))
    open_ranges = {}
    for kind, device, flags, sub, name, start, end, corr, stream, body in recs:
        if kind == 10:  # the GPU: name, memory bytes, SMs, compute capability
            db.execute("INSERT INTO TARGET_INFO_GPU (vmId, id, name, totalMemory, smCount, cuDevice, computeMajor, "
                       "computeMinor) VALUES (0, ?, ?, ?, ?, ?, ?, ?)",
                       (device, strings.get(name, ""), start, corr, device, stream // 10, stream % 10))
        elif kind in (6, 7):
            api_pid, cbid, result = struct.unpack_from("<IiI", body)
            p = api_pid or pid
            db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, ?, ?, ?, ?, ?, NULL)",
                       (start - t0, end - t0, 0 if kind == 6 else 1, gtid(p, stream), corr,
                        sid(strings.get(name, "")), result))
        elif kind == 2:
            grid, block = struct.unpack_from("<3i", body), struct.unpack_from("<3i", body, 12)
            shared, regs = struct.unpack_from("<iH", body, 24)
            n = sid(names.get(strings.get(name, ""), strings.get(name, "")))
            db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, "
                       "correlationId, globalPid, demangledName, shortName, registersPerThread, gridX, gridY, gridZ, "
                       "blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, "
                       "localMemoryTotal, gridId) VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, 0, "
                       "0)", (start - t0, end - t0, device, stream, corr, pid << 24, n, n, regs, *grid, *block, shared))
        elif kind == 3:
            nbytes, src_kind, dst_kind = struct.unpack_from("<QBB", body)
            db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, "
                       "correlationId, globalPid, bytes, copyKind, srcKind, dstKind) VALUES (?, ?, ?, 1, ?, ?, ?, ?, "
                       "?, ?, ?)", (start - t0, end - t0, device, stream, corr, pid << 24, nbytes, sub,
                                    src_kind - 1 if src_kind else 7, dst_kind - 1 if dst_kind else 7))
        elif kind == 4:
            nbytes, _, dst_kind = struct.unpack_from("<QBB", body)
            db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId, "
                       "correlationId, globalPid, value, bytes, memKind) VALUES (?, ?, ?, 1, ?, ?, ?, 0, ?, ?)",
                       (start - t0, end - t0, device, stream, corr, pid << 24, nbytes,
                        dst_kind - 1 if dst_kind else 7))
        elif kind == 5:
            _, event_id = struct.unpack_from("<QI", body)
            db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES (?, ?, ?, 1, NULL, ?, ?, ?, ?, ?)",
                       (start - t0, end - t0, device, stream, corr, pid << 24, sub, event_id))
        elif kind == 11:
            marker_pid, _ = struct.unpack_from("<II", body)
            p = marker_pid or pid
            if sub == 1:
                open_ranges[(p, corr)] = (start, strings.get(name, ""), stream)
            elif sub == 2 and (p, corr) in open_ranges:
                s, text, tid = open_ranges.pop((p, corr))
                db.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, rangeId, text, globalTid) "
                           "VALUES (?, ?, ?, ?, ?, ?)", (s - t0, start - t0, NVTX_START_END, corr, text, gtid(p, tid)))
    for (p, corr), (s, text, tid) in open_ranges.items():  # still open at the end: no end time
        db.execute("INSERT INTO NVTX_EVENTS (start, end, eventType, rangeId, text, globalTid) "
                   "VALUES (?, NULL, ?, ?, ?, ?)", (s - t0, NVTX_START_END, corr, text, gtid(p, tid)))
    db.commit()
    db.execute("VACUUM")
    db.close()


if __name__ == "__main__":
    main()
