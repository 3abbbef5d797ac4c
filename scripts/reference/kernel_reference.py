#!/usr/bin/env python3
"""Reference values of the RF-RoPE kernels and Prop 4's variances for tests/spectral/test_spectral.cpp, computed outside
ropekit: each family's Phi from its closed form (spec rf-rope.md section 2) at 80 significant digits, then from the
definitions
  psi = 1 - Phi(Dp), var_cos = (1 + Phi(2 Dp))/2 - Phi(Dp)^2, var_sin = (1 - Phi(2 Dp))/2,
whose cancellation at tiny lags (var_cos is O(Dp^4) for kernels smooth at 0) costs nothing at this precision.
Lags of k-D spectra are written with their components separated by spaces.

Run: python3 scripts/reference/kernel_reference.py > tests/data/kernel-reference.csv   (needs mpmath)
"""
import mpmath as mp

mp.mp.dps = 80
M = mp.mpf


def gaussian(sigma):
    return lambda d: mp.exp(-sum(x * x for x in d) / (2 * M(sigma) ** 2))


def cauchy(b):
    return lambda d: mp.fprod(1 / (1 + (x / M(b)) ** 2) for x in d)


def exponential(l):
    return lambda d: mp.exp(-mp.sqrt(sum(x * x for x in d)) / M(l))


def sinc(*W):
    return lambda d: mp.fprod(mp.sinc(M(w) * x) for w, x in zip(W, d))


def matern(nu, l):
    nu, l = M(nu), M(l)

    def phi(d):
        x = mp.sqrt(2 * nu) * mp.sqrt(sum(v * v for v in d)) / l
        return M(1) if x == 0 else 2 ** (1 - nu) / mp.gamma(nu) * x ** nu * mp.besselk(nu, x)
    return phi


def mixture(weights, mu, s):
    # mu: one row of k values per component; s: one row of k standard deviations per component.
    total = sum(M(w) for w in weights)

    def phi(d):
        return sum(M(w) / total * mp.exp(-sum((M(sj) * x) ** 2 for sj, x in zip(sq, d)) / 2) *
                   mp.cos(sum(M(mj) * x for mj, x in zip(mq, d))) for w, mq, sq in zip(weights, mu, s))
    return phi


tiny = ["1e-9", "1e-7", "3.7e-9", "1e-5", "1e-3", "0.1", "1", "3", "20"]
cases = [
    ("gaussian:sigma=1", gaussian("1"), [[x] for x in tiny]),
    ("gaussian:sigma=2,dims=2", gaussian("2"), [["1e-7", "-2e-7"], ["0.3", "0.4"], ["3", "-1"]]),
    ("cauchy:b=2", cauchy("2"), [[x] for x in tiny] + [["1e160"]]),
    ("cauchy:b=0.5,dims=2", cauchy("0.5"), [["1e-7", "2e-7"], ["1e-4", "0"], ["0.7", "-1.3"], ["30", "1e-3"]]),
    ("exponential:l=3", exponential("3"), [[x] for x in tiny]),
    ("exponential:l=0.8,dims=3", exponential("0.8"), [["1e-8", "2e-8", "-2e-8"], ["0.5", "0", "1"]]),
    ("sinc:W=0.5", sinc("0.5"), [[x] for x in tiny] + [["1.999"], ["2.001"]]),
    ("sinc:W=1,3", sinc("1", "3"), [["1e-7", "-1e-7"], ["0.2", "0.3"], ["0.9", "0.2"], ["2", "5"]]),
    ("matern:nu=3.7,l=0.37", matern("3.7", "0.37"), [[x] for x in tiny]),
    ("matern:nu=1.5,l=2", matern("1.5", "2"), [[x] for x in tiny]),
    ("matern:nu=2.5,l=0.6", matern("2.5", "0.6"), [[x] for x in tiny]),
    ("matern:nu=0.5,l=1.3", matern("0.5", "1.3"), [[x] for x in tiny]),
    ("matern:nu=0.7,l=1.3", matern("0.7", "1.3"), [[x] for x in tiny]),
    ("matern:nu=1.2,l=2,dims=2", matern("1.2", "2"), [["1e-7", "2e-7"], ["0.5", "-0.5"]]),
    ("mixture:weights=0.7,0.3,mu=0,2,s=0.5,0.1", mixture(["0.7", "0.3"], [["0"], ["2"]], [["0.5"], ["0.1"]]),
     [[x] for x in tiny]),
    ("mixture:weights=1,2,mu=1,0,0,2,s=0.3,0.1,0.2,0.4,dims=2",
     mixture(["1", "2"], [["1", "0"], ["0", "2"]], [["0.3", "0.1"], ["0.2", "0.4"]]),
     [["1e-7", "3e-7"], ["0.9", "0.4"], ["5", "-3"]]),
]


def fmt(v):
    return mp.nstr(v, 20, strip_zeros=False, min_fixed=-1, max_fixed=-1) if v != 0 else "0"


print("spectrum,lag,phi,psi,var_cos,var_sin")
for text, phi, lags in cases:
    for lag in lags:
        d = [M(x) for x in lag]
        p, p2 = phi(d), phi([2 * x for x in d])
        print(f'"{text}",{" ".join(lag)},' + ",".join(fmt(v) for v in (p, 1 - p, (1 + p2) / 2 - p * p, (1 - p2) / 2)))
