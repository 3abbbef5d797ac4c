"""make bench: ropekit's kernel against numpy doing the same thing (issue 23's goal), one core, in one run.

The kernel of Llama 3.1 8B's encoding (rope:dim=128,base=500000, llama3 scaling) over 2^20 lags, on an even grid
(0, 1, ..., 2^20 - 1) and on scattered lags (2^20 uniform draws in [0, 2^20), sorted), by ropekit.kernel on each SIMD
path this CPU has (ROPEKIT_SIMD, a fresh process each) with columns=["kernel"] (what numpy computes) and with every
column (lag, kernel, content_variance), and by the numpy one-liner a researcher would write,
np.cos(np.outer(lags, theta)).mean(1) in blocks of 32768 lags, theta from ropekit.frequencies. Best of 3 process-CPU
times; the largest difference between the two results is printed beside them.
Usage: python3 bench/numpy_kernel.py [--lags N]
"""

import argparse
import math
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import best_cpu  # noqa: E402

SPELLING = "rope:dim=128,base=500000,scaling=llama3(factor=8,low=1,high=4,orig=8192)"
FEATURES = "rope:dim=96,base=1e4"  # 1 + 2 x 48 = 97 columns: 1, cos(theta_i d), sin(theta_i d)
JORDAN = "jordan:m=3,dim=64"  # gamma 1e-4, bounded shear, L 1024, eta 1/L, 32 frequencies of base 1e4


def lag_sets(n):
    rng = np.random.default_rng(0)
    return {"grid": np.arange(n, dtype=np.float64), "scattered": np.sort(rng.uniform(0, n, n))}


def numpy_kernel(lags, theta):
    out = np.empty(len(lags))
    for i in range(0, len(lags), 32768):
        out[i:i + 32768] = np.cos(np.outer(lags[i:i + 32768], theta)).mean(1)
    return out


def numpy_jordan_variance(lags, theta, m=3, gamma=1e-4, L=1024):
    # Var[q^T G k] = ||G||_F^2 + tr G^2 (rho = 1) of the Jordan chain c_p = e^{-gamma d} (tau(d)/L)^p / p!,
    # tau(d) = d / (1 + |d|/L), on each frequency's 2m x 2m block: 2 F sum_p (m - p) c_p^2 + 2 m c_0^2 sum_i cos 2 theta_i d.
    out = np.empty(len(lags))
    for i in range(0, len(lags), 32768):
        x = lags[i:i + 32768]
        c = [np.exp(-gamma * x) * (x / (1 + np.abs(x) / L) / L) ** p / math.factorial(p) for p in range(m)]
        fro = 2 * len(theta) * sum((m - p) * c[p] ** 2 for p in range(m))
        out[i:i + 32768] = fro + 2 * m * c[0] ** 2 * np.cos(2 * np.outer(x, theta)).sum(1)
    return out


def numpy_features(lags, theta):
    p = np.outer(lags, theta)
    return np.hstack([np.ones((len(lags), 1)), np.cos(p), np.sin(p)])


def child(n):
    # One SIMD path (ROPEKIT_SIMD set by the parent): ropekit's times and results, saved for the comparison (the
    # features' first 4096 rows: the whole matrix is 800 MB).
    import ropekit
    for name, lags in lag_sets(n).items():
        t = best_cpu(lambda: ropekit.kernel(SPELLING, lags, columns=["kernel"]))
        k = ropekit.kernel(SPELLING, lags, columns=["kernel"])["kernel"]
        np.save(f"{os.environ['OUT']}/{name}.npy", k)
        print(name, t)
        t = best_cpu(lambda: ropekit.kernel(SPELLING, lags))  # every column: lag, kernel, content_variance
        np.save(f"{os.environ['OUT']}/{name}+.npy", ropekit.kernel(SPELLING, lags)["kernel"])
        print(name + "+", t)
    grid = lag_sets(n)["grid"]
    t = best_cpu(lambda: ropekit.kernel(JORDAN, grid, columns=["content_variance"]))
    np.save(f"{os.environ['OUT']}/jordan.npy", ropekit.kernel(JORDAN, grid, columns=["content_variance"])["content_variance"])
    print("jordan", t)
    t = best_cpu(lambda: ropekit.features(FEATURES, grid), runs=2)
    np.save(f"{os.environ['OUT']}/features.npy", ropekit.features(FEATURES, grid[:4096])[0])
    print("features", t)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lags", type=int, default=1 << 20)
    ap.add_argument("--child", action="store_true")
    args = ap.parse_args()
    if args.child:
        return child(args.lags)
    import tempfile
    import ropekit
    theta = np.asarray(ropekit.frequencies(SPELLING)["theta"], dtype=np.float64)
    sets = lag_sets(args.lags)
    ref = {name: numpy_kernel(lags, theta) for name, lags in sets.items()}
    numpy_t = {name: best_cpu(lambda: numpy_kernel(lags, theta)) for name, lags in sets.items()}
    theta_j = np.asarray(ropekit.frequencies(JORDAN)["theta"], dtype=np.float64)
    ref["jordan"] = numpy_jordan_variance(sets["grid"], theta_j)
    numpy_t["jordan"] = best_cpu(lambda: numpy_jordan_variance(sets["grid"], theta_j))
    theta_f = np.asarray(ropekit.frequencies(FEATURES)["theta"], dtype=np.float64)
    numpy_t["features"] = best_cpu(lambda: numpy_features(sets["grid"], theta_f), runs=2)
    ref["features"] = numpy_features(sets["grid"][:4096], theta_f)
    paths = [p for p in ("scalar", "avx2", "avx512") if subprocess.run(
        [sys.executable, "-c", "import ropekit, numpy as np; ropekit.kernel('rope:dim=4', np.arange(2.0))"],
        env={**os.environ, "ROPEKIT_SIMD": p}, capture_output=True).returncode == 0]
    print(f"Kernel of Llama 3.1 8B's encoding over {args.lags} lags (one core, best of 3 CPU times); numpy: "
          f"np.cos(np.outer(lags, theta)).mean(1) in blocks of 32768 (the kernel alone, in every row). {JORDAN}'s content variance (rho = 1) over the grid, "
          f"numpy by its closed form (chain coefficients, cos of the doubled phases). Features of {FEATURES} (97 columns) "
          f"over the grid lags, best of 2; numpy: hstack of 1, cos and sin of np.outer(lags, theta)")
    print()
    print("| lags | numpy | " + " | ".join(f"ropekit {p}" for p in paths) + " |")
    print("|---|---|" + "---|" * len(paths))
    for name in list(sets):
        numpy_t[name + "+"], ref[name + "+"] = numpy_t[name], ref[name]
    names = [x for name in sets for x in (name, name + "+")] + ["jordan", "features"]
    label = {"grid": "even grid, kernel", "grid+": "even grid, every column", "scattered": "scattered, kernel",
             "scattered+": "scattered, every column", "jordan": f"{JORDAN} content variance, grid",
             "features": "features, grid"}
    rows = {name: [f"{numpy_t[name]:.3f} s"] for name in names}
    for p in paths:
        with tempfile.TemporaryDirectory() as out:
            env = {**os.environ, "ROPEKIT_SIMD": p, "OUT": out, "OMP_NUM_THREADS": "1"}
            res = subprocess.run([sys.executable, __file__, "--child", "--lags", str(args.lags)], env=env,
                                 capture_output=True, text=True, check=True).stdout.split()
            times = dict(zip(res[0::2], map(float, res[1::2])))
            for name in names:
                diff = np.abs(np.load(f"{out}/{name}.npy") - ref[name]).max()
                rows[name].append(f"{times[name]:.3f} s ({numpy_t[name] / times[name]:.1f}x; max diff {diff:.1e})")
    for name in names:
        print(f"| {label[name]} | " + " | ".join(rows[name]) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
