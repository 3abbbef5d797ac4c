"""Timing helper of the Python benchmarks (bench/*.py): the best of a few process-CPU times."""

import time


def best_cpu(fn, runs=3):
    """The smallest process-CPU time of `runs` calls of fn(), in seconds."""
    best = None
    for _ in range(runs):
        t0 = time.process_time()
        fn()
        t = time.process_time() - t0
        best = t if best is None or t < best else best
    return best
