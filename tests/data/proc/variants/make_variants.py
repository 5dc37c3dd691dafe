#!/usr/bin/env python3
"""Writes the hand-made /proc fixtures of src/sampler/proc tests: two ticks 0.5 s apart
(t0/, t1/) with round numbers, so every parsed value and rate is known exactly:

- process 4242, comm "py) S 1 (x" (a ')' and spaces inside comm, as prctl allows),
  threads 4242 (sleeping) and 4243 (running), 100 % CPU between the ticks;
- process 4300, its DataLoader worker, whose /proc/4300/io is unreadable (EACCES) and
  which vanishes before t1;
- process 999, not in the tree (ppid 1);
- no /proc/pressure (a kernel without PSI).
Expected values are in src/sampler/proc/proc_sampler_test.cc. Run from this directory.
"""
import os
import shutil


def write(root, path, text):
    full = os.path.join(root, path.lstrip("/"))
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as f:
        f.write(text)


def stat_line(pid, comm, state, ppid, utime, stime, threads, rss, processor=1):
    # Fields 3..52 of proc(5); the ones the parser reads are set, the rest are 0.
    f = [0] * 50
    f[0], f[1], f[11], f[12], f[17], f[19], f[21], f[36] = state, ppid, utime, stime, threads, 1000, rss, processor
    return f"{pid} ({comm}) " + " ".join(str(x) for x in f) + "\n"


def status(threads, vol, invol, rss_kb):
    return (f"Name:\tpython3\nState:\tS (sleeping)\nThreads:\t{threads}\nVmRSS:\t{rss_kb:8d} kB\n"
            f"voluntary_ctxt_switches:\t{vol}\nnonvoluntary_ctxt_switches:\t{invol}\n")


def tick(root, cpu, ctxt, vm, disk, p4242, t4242, t4243, worker):
    shutil.rmtree(root, ignore_errors=True)
    write(root, "/proc/stat", f"cpu  {cpu}\ncpu0 0 0 0 0 0 0 0 0 0 0\ncpu1 0 0 0 0 0 0 0 0 0 0\n"
          f"intr 0\nctxt {ctxt}\nbtime 1700000000\nprocesses 5000\nprocs_running 3\nprocs_blocked 1\n")
    write(root, "/proc/vmstat", "nr_free_pages 100\npswpin {}\npswpout {}\npgmajfault {}\n".format(*vm))
    write(root, "/proc/diskstats",
          f" 254 0 vda 10 0 {disk[0]} 0 20 0 {disk[1]} 0 0 0 0 0 0 0 0 0 0\n"
          f" 254 1 vda1 10 0 {disk[0] - 1} 0 20 0 {disk[1] - 1} 0 0 0 0 0 0 0 0 0 0\n"
          f"   7 0 loop0 5 0 4000 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n")
    write(root, "/proc/meminfo", "MemTotal:       16384 kB\nMemFree:         1024 kB\nMemAvailable:    8192 kB\n")
    comm = "py) S 1 (x"
    utime, stime, io_read, io_write = p4242
    write(root, "/proc/4242/stat", stat_line(4242, comm, "R", 1, utime, stime, 2, 256))
    write(root, "/proc/4242/cmdline", "python3\0train.py\0")
    write(root, "/proc/4242/io", f"rchar: 0\nwchar: 0\nread_bytes: {io_read}\nwrite_bytes: {io_write}\n")
    for tid, (state, u, s, runq, vol, invol) in ((4242, t4242), (4243, t4243)):
        d = f"/proc/4242/task/{tid}/"
        write(root, d + "stat", stat_line(tid, comm, state, 1, u, s, 2, 256))
        write(root, d + "schedstat", f"1000000000 {runq} 50\n")
        write(root, d + "status", status(2, vol, invol, 1024))
    if worker:
        write(root, "/proc/4300/stat", stat_line(4300, "pt_data_worker", "S", 4242, 10, 0, 1, 100))
        write(root, "/proc/4300/cmdline", "python3\0train.py\0")
        write(root, "/proc/4300/io.errno", "13\n")
        d = "/proc/4300/task/4300/"
        write(root, d + "stat", stat_line(4300, "pt_data_worker", "S", 4242, 10, 0, 1, 100))
        write(root, d + "schedstat", "5000000 0 5\n")
        write(root, d + "status", status(1, 7, 0, 400))
    write(root, "/proc/999/stat", stat_line(999, "sshd", "S", 1, 0, 0, 1, 10))


tick("t0", "1000 0 500 8000 100 0 0 400 0 0", 5000, (10, 20, 100), (1000, 2000),
     (150, 50, 1000, 0), ("S", 50, 50, 0, 0, 0), ("R", 100, 0, 200000000, 100, 10), worker=True)
tick("t1", "1100 0 550 8200 130 0 0 420 0 0", 6000, (15, 40, 150), (2000, 2100),
     (190, 60, 513000, 4096), ("S", 50, 55, 0, 50, 0), ("R", 145, 0, 250000000, 300, 15), worker=False)
