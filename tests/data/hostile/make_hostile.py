#!/usr/bin/env python3
"""Writes hostile_names.json: a small Kineto trace whose names carry terminal escapes.

Issue 13 ("hostile input"): a trace, a process or a file name is written by someone
else, and printed raw it drives the terminal that shows the report. Each name below
holds one of
  - OSC 0, which sets the window title:       ESC ] 0 ; pwned BEL
  - OSC 52, which writes the clipboard:       ESC ] 52 ; c ; aGk= BEL
  - CSI 2J, which clears the screen:          ESC [ 2 J
  - the C1 CSI (U+009B), the 8-bit form of ESC [
in the kernel names, the device name, a thread name, a Python frame's file name and
the step annotation's argument. tests/cli/analyze_cli_test.cc runs `chokepoint analyze`
on it (text and Markdown, under a hostile file name too) and checks that no control
character reaches the output. Run: python3 make_hostile.py (writes beside itself).
"""
import json
import os

TITLE = "\u001b]0;pwned\u0007"
CLIP = "\u001b]52;c;aGk=\u0007"
CLEAR = "\u001b[2J"
C1 = "\u009b2J"
ALL = TITLE + CLIP + CLEAR + C1

BASE_US = 5105435920000.0
STEP_US = 10000.0


def main():
    events = [
        {"ph": "M", "name": "process_name", "pid": 10, "tid": 0, "args": {"name": "python " + TITLE}},
        {"ph": "M", "name": "thread_name", "pid": 10, "tid": 10, "args": {"name": "thread " + CLIP + CLEAR}},
        {"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "GPU 0 " + C1}},
    ]
    corr = 1
    for step in range(3):
        t0 = BASE_US + step * STEP_US
        events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step + 1}", "pid": 10,
                       "tid": 10, "ts": t0, "dur": STEP_US - 100, "args": {"External id": corr}})
        events.append({"ph": "X", "cat": "python_function", "name": "/tmp/" + TITLE + "train.py(12): step",
                       "pid": 10, "tid": 10, "ts": t0 + 10, "dur": 500, "args": {"Python id": step + 1}})
        for k, name in enumerate(["gemm_" + TITLE + CLIP, "elementwise_" + CLEAR + C1]):
            launch = t0 + 100 + k * 50
            events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 10,
                           "ts": launch, "dur": 5, "args": {"External id": corr, "correlation": corr}})
            events.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": launch + 20,
                           "dur": 2000 + 1000 * k,
                           "args": {"External id": corr, "device": 0, "stream": 7, "correlation": corr,
                                    "grid": [132, 1, 1], "block": [256, 1, 1]}})
            corr += 1
    trace = {
        "schemaVersion": 1,
        "deviceProperties": [{"id": 0, "name": "NVIDIA H200 " + ALL, "totalGlobalMem": 150109880320,
                              "computeMajor": 9, "computeMinor": 0, "numSms": 132}],
        "traceEvents": events,
        "baseTimeNanoseconds": 1790857026000000000,
    }
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "hostile_names.json"), "w") as f:
        json.dump(trace, f, indent=1)  # json escapes every control character as \uXXXX
        f.write("\n")


if __name__ == "__main__":
    main()
