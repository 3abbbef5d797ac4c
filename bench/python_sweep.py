"""Wall time of a sweep of 10^4 fits (100 encodings x 100 targets), serially and on a 2-worker LocalCluster.

    PYTHONPATH=build/python /usr/bin/python3 bench/python_sweep.py [repeats]

Encodings: RoPE, damped RoPE and Jordan-RoPE (m = 2) of head dimension 64 over geometric bases 1e2..1e6 (34 + 33 +
33); targets: phase, mixed, seasonal-trend and damped-wave at frequency indices 0..24 (4 x 25). Each is fitted on the
lags 0..1023 and scored on 0..4095 (ridge 1e-4): the scale of a base-and-family search for one head.
"""

import sys
import time

import numpy as np


def grid():
    bases = np.geomspace(1e2, 1e6, 34)
    encodings = [f"rope:dim=64,base={b:.6g}" for b in bases]
    encodings += [f"damped:dim=64,base={b:.6g},gamma=1e-3" for b in bases[:33]]
    encodings += [f"jordan:m=2,dim=64,base={b:.6g}" for b in bases[1:]]
    targets = [f"{t}:idx={i}" for t in ("phase", "mixed", "seasonal-trend") for i in range(25)]
    targets += [f"damped-wave:idx={i},gamma=1e-3" for i in range(25)]
    return encodings, targets


def main():
    import distributed
    import ropekit

    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    encodings, targets = grid()
    assert len(encodings) * len(targets) == 10_000
    run = lambda client=None: ropekit.sweep(encodings, targets, 1024, [4096], client=client)
    serial_times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        serial = run()
        serial_times.append(time.perf_counter() - t0)
    print(f"serial (one process, both cores): min {min(serial_times):.2f} s of {repeats}, {len(serial)} rows")
    t0 = time.perf_counter()
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        start = time.perf_counter() - t0
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            df = run(client)
            times.append(time.perf_counter() - t0)
    print(f"LocalCluster (2 processes x 1 thread): min {min(times):.2f} s of {repeats} (cluster start {start:.2f} s); "
          f"equal to serial: {df.equals(serial)}")


if __name__ == "__main__":
    main()
