"""Ctrl-C stops a long call between chunks with KeyboardInterrupt, and the GIL is released while it runs."""

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import ropekit

# A fit of ~10 s on this machine: 2^22 evaluation lags x 2 encodings (streamed in windows of 1024 lags).
LONG = 'ropekit.fit(["rope:dim=256", "jordan:m=3,dim=128"], ["mixed"], 1024, [1 << 22])'


def test_ctrl_c_interrupts_a_long_fit():
    code = textwrap.dedent(f"""
        import sys, time, ropekit
        print("start", flush=True)
        t0 = time.monotonic()
        try:
            {LONG}
            print("finished", flush=True)
        except KeyboardInterrupt:
            print(f"interrupted {{time.monotonic() - t0:.2f}}", flush=True)
    """)
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=os.environ)
    assert p.stdout.readline().strip() == "start"
    time.sleep(1.0)
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=30)
    assert out.startswith("interrupted"), out
    assert time.monotonic() - t0 < 2.0  # stopped within a few windows, not at the end of the run


def test_gil_is_released_during_a_fit():
    # A Python thread keeps counting while the fit runs on the main thread.
    ticks = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            ticks.append(1)
            time.sleep(0.001)

    t = threading.Thread(target=count)
    t.start()
    t0 = time.monotonic()
    ropekit.fit(["rope:dim=128"], ["mixed"], 1024, [1 << 19])
    elapsed = time.monotonic() - t0
    stop.set()
    t.join()
    assert elapsed > 0.05 and len(ticks) > 10 * elapsed  # ~1000 per second when the GIL is free
