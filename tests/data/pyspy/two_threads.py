"""A main thread and a worker thread, for the py-spy reader's test (record.sh)."""
import threading
import time


def spin(n):
    s = 0
    for i in range(n):
        s += i
    return s


def worker():
    while True:
        spin(50_000)
        time.sleep(0.005)


def main():
    threading.Thread(target=worker, name="feeder", daemon=True).start()
    t0 = time.time()
    while time.time() - t0 < 1.0:
        spin(200_000)
        time.sleep(0.02)


if __name__ == "__main__":
    main()
