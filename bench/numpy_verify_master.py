#!/usr/bin/python3
"""A plain numpy version of `ropekit verify master` (spec rf-rope.md sections 1 and 4), for make bench.

The same estimator on the same inputs: D blocks of content drawn as ropekit draws it (content "random":
q_i, k_i entries N(0, 1) from ropekit's seeded stream, reproduced below bit for bit), A_i = q_i . k_i,
B_i = q_i^T J k_i; N trials, each drawing w_1..w_D ~ N(0, sigma^-2) afresh (numpy's own generator: the
frequencies are not ropekit's random numbers) and scoring S = sum_i A_i cos(t w_i) + B_i sin(t w_i) at
every lag t. Printed per lag as ropekit prints them: expected = (q . k) Phi(t), Phi(t) = exp(-t^2 / (2 sigma^2)),
the mean of S, its standard error s / sqrt(N), z = (mean - expected) / hypot(stderr, rounding), Prop 4's
variance and the sample variance s^2, and pass (|z| <= the two-sided normal bound at alpha / L).

--compare FILE reads ropekit's CSV for the same inputs and checks that both sets of statistics agree within
Monte Carlo error (the two runs are independent): means by z = dmean / sqrt(se1^2 + se2^2), variances by
z = dvar / (sqrt(2) se(s^2)), se(s^2) from this run's fourth moment, each against the normal bound at
false-alarm rate 1e-6 over all lags (Bonferroni). Exit status 1 if they disagree.

Usage: numpy_verify_master.py --spectrum gaussian:sigma=1 --blocks 64 --trials 20000 --lags 0.1,0.2,...
       [--seed 20240521] [--alpha 1e-6] [--compare ropekit.csv] [--out FILE]
"""
import argparse
import csv
import math
import sys
from statistics import NormalDist

import numpy as np

MASK = (1 << 64) - 1
DEFAULT_SEED = 20240521       # ropekit's kDefaultSeed (lib/ropekit/core/rng.hpp)
STREAM_CONTENT = 0xC047E47    # ropekit's content stream (lib/ropekit/mc/rf_estimator.cpp)


def mix64(x):
    """splitmix64 finaliser, as ropekit::mix64."""
    x = (x + 0x9E3779B97F4A7C15) & MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


class RopekitRng:
    """xoshiro256++ keyed by (seed, stream, index) and its scalar Box-Muller normal, as ropekit::Rng."""

    def __init__(self, seed, stream, index=0):
        x = (mix64((mix64(mix64(seed) ^ stream) + index) & MASK))
        self.s = []
        for _ in range(4):
            x = (x + 0x9E3779B97F4A7C15) & MASK
            self.s.append(mix64((x - 0x9E3779B97F4A7C15) & MASK))
        self.spare = None

    def next(self):
        s = self.s
        rotl = lambda v, k: ((v << k) | (v >> (64 - k))) & MASK
        result = (rotl((s[0] + s[3]) & MASK, 23) + s[0]) & MASK
        t = (s[1] << 17) & MASK
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        return result

    def uniform(self):
        return ((self.next() >> 11) + 0.5) * 2.0 ** -53

    def normal(self):
        if self.spare is not None:
            v, self.spare = self.spare, None
            return v
        r = math.sqrt(-2.0 * math.log(self.uniform()))
        phase = 2.0 * math.pi * self.uniform()
        self.spare = r * math.sin(phase)
        return r * math.cos(phase)


def random_content(blocks, seed):
    """ropekit::make_content(ContentKind::random, blocks, seed): per block q0, q1, k0, k1."""
    rng = RopekitRng(seed, STREAM_CONTENT)
    q = np.empty((blocks, 2))
    k = np.empty((blocks, 2))
    for i in range(blocks):
        q[i] = rng.normal(), rng.normal()
        k[i] = rng.normal(), rng.normal()
    return q, k


def parse_lags(text):
    """ropekit's 1-D lag list: numbers and ranges start:stop[:step] (stop excluded), comma separated."""
    out = []
    for item in text.split(","):
        item = item.strip()
        if ":" in item:
            parts = [float(p) for p in item.split(":")]
            start, stop = parts[0], parts[1]
            step = parts[2] if len(parts) == 3 else 1.0
            i = 0
            while start + i * step < stop:
                out.append(start + i * step)
                i += 1
        else:
            out.append(float(item))
    return np.array(out)


def parse_sigma(spectrum):
    family, _, params = spectrum.partition(":")
    if family != "gaussian":
        sys.exit(f"error: numpy_verify_master.py: --spectrum = '{spectrum}' (must be gaussian[:sigma=S])")
    sigma = 1.0
    for kv in filter(None, params.split(",")):
        key, _, value = kv.partition("=")
        if key != "sigma":
            sys.exit(f"error: numpy_verify_master.py: --spectrum parameter '{key}' (must be sigma)")
        sigma = float(value)
    return sigma


def monte_carlo(t, A, B, sigma, trials, rng, chunk=256):
    """All N scores at every lag, rows = trials: S = cos(t w) @ A + sin(t w) @ B per trial."""
    S = np.empty((trials, t.size))
    for first in range(0, trials, chunk):
        n = min(chunk, trials - first)
        w = rng.standard_normal((n, A.size)) / sigma           # (n, D)
        u = t[None, :, None] * w[:, None, :]                   # (n, L, D)
        S[first:first + n] = np.cos(u) @ A + np.sin(u) @ B     # (n, L)
    return S


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spectrum", default="gaussian:sigma=1")
    ap.add_argument("--blocks", type=int, default=64)
    ap.add_argument("--trials", type=int, default=20000)
    ap.add_argument("--lags", default="0,0.5,1,2,4")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED, help="content seed (as ropekit's --seed)")
    ap.add_argument("--numpy-seed", type=int, default=1, help="seed of numpy's frequency draws")
    ap.add_argument("--alpha", type=float, default=1e-6)
    ap.add_argument("--compare", help="ropekit verify master's CSV for the same inputs")
    ap.add_argument("--out", help="write the CSV here instead of standard output")
    a = ap.parse_args()
    sigma = parse_sigma(a.spectrum)
    t = parse_lags(a.lags)
    q, k = random_content(a.blocks, a.seed)
    A = np.einsum("ij,ij->i", q, k)
    B = q[:, 1] * k[:, 0] - q[:, 0] * k[:, 1]

    S = monte_carlo(t, A, B, sigma, a.trials, np.random.default_rng(a.numpy_seed))
    N = a.trials
    mean = S.mean(axis=0)
    d = S - mean
    var = (d * d).sum(axis=0) / (N - 1)
    m4 = (d ** 4).sum(axis=0) / N
    se_var = np.sqrt(np.maximum(0.0, (m4 - var * var * (N - 3) / (N - 1)) / N))
    stderr = np.sqrt(var / N)

    phi = np.exp(-t * t / (2 * sigma * sigma))
    phi2 = np.exp(-(2 * t) ** 2 / (2 * sigma * sigma))
    expected = A.sum() * phi
    var_expected = (A * A).sum() * ((1 + phi2) / 2 - phi * phi) + (B * B).sum() * (1 - phi2) / 2
    rounding = 8 * (a.blocks + 8) * np.finfo(float).eps * (np.abs(A).sum() + np.abs(B).sum())
    z = (mean - expected) / np.hypot(stderr, rounding)
    z_crit = NormalDist().inv_cdf(1 - a.alpha / t.size / 2)

    lines = ["lag,expected,mean,stderr,z,var_expected,var_observed,pass"]
    for i in range(t.size):
        lines.append(f"{t[i]!r},{expected[i]!r},{mean[i]!r},{stderr[i]!r},{z[i]!r},{var_expected[i]!r},"
                     f"{var[i]!r},{'true' if abs(z[i]) <= z_crit else 'false'}")
    text = "\n".join(lines) + "\n"
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    elif not a.compare:
        sys.stdout.write(text)
    print(f"numpy verify master: {'PASS' if np.all(np.abs(z) <= z_crit) else 'FAIL'} ({t.size} lags, max |z| = "
          f"{np.max(np.abs(z)):.3g}, bound {z_crit:.3g}); D = {a.blocks}, N = {N}", file=sys.stderr)

    if a.compare:
        with open(a.compare) as f:
            rows = list(csv.DictReader(f))
        if len(rows) != t.size:
            sys.exit(f"error: --compare: {len(rows)} rows in '{a.compare}' (must be {t.size}, one per lag)")
        worst_mean = worst_var = 0.0
        print(f"{'lag':>6} {'mean ropekit':>13} {'mean numpy':>13} {'z':>6}   {'var ropekit':>12} {'var numpy':>12} "
              f"{'var Prop 4':>12} {'z_var':>6}")
        for i, r in enumerate(rows):
            lag, m_rk, se_rk, v_rk = float(r["lag"]), float(r["mean"]), float(r["stderr"]), float(r["var_observed"])
            if abs(lag - t[i]) > 1e-12 * max(1.0, abs(lag)):
                sys.exit(f"error: --compare: lag {lag} in row {i + 1} (must be {t[i]!r}, as --lags)")
            z_m = (mean[i] - m_rk) / math.hypot(stderr[i], se_rk, rounding)
            z_v = (var[i] - v_rk) / math.hypot(math.sqrt(2) * se_var[i], rounding)
            worst_mean, worst_var = max(worst_mean, abs(z_m)), max(worst_var, abs(z_v))
            print(f"{lag:6.3g} {m_rk:13.6g} {mean[i]:13.6g} {z_m:6.2f}   {v_rk:12.6g} {var[i]:12.6g} "
                  f"{var_expected[i]:12.6g} {z_v:6.2f}")
        agree = worst_mean <= z_crit and worst_var <= z_crit
        print(f"ropekit and numpy {'agree' if agree else 'DISAGREE'} within Monte Carlo error: max |z| of the "
              f"means {worst_mean:.2f}, of the variances {worst_var:.2f}; bound {z_crit:.2f} (false-alarm rate "
              f"{a.alpha:g} over {t.size} lags)")
        if not agree:
            sys.exit(1)


if __name__ == "__main__":
    main()
