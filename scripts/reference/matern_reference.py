#!/usr/bin/env python3
"""Reference values of the Matern correlation for tests/spectral/test_spectral.cpp, computed outside ropekit.

Phi(x) = 2^(1-nu) / Gamma(nu) x^nu K_nu(x) with mpmath's besselk at 150 significant digits, and the
quantities of Prop 4 from their definitions at that precision:
  psi = 1 - Phi(x), psi2 = 1 - Phi(2x), var_cos = (1 + Phi(2x))/2 - Phi(x)^2, var_sin = (1 - Phi(2x))/2.
For nu >= 1e5 (where besselk is slow), Phi comes from the gamma mixture Phi = E[exp(-a/V)], V ~ Gamma(nu, rate nu),
a = x^2/(4 nu), integrated by mpmath.quad around the peak of V; for nu >= 1e20 the Gaussian limit exp(-a) plus its
first correction exp(-a) (a^2 - 2a)/(2 nu) (the remainder is O(a^3/nu^2), below 1e-30 here).
Every value is computed twice, at 150 and 200 digits (the mixture: 60 and 80), and the two must agree to 1e-60
(1e-35): the route has converged.

Run: python3 scripts/reference/matern_reference.py > tests/data/matern-reference.csv   (needs mpmath)
"""
import sys
import mpmath as mp

mp.mp.dps = 150


def phi_besselk(nu, x):
    return 2 ** (1 - nu) / mp.gamma(nu) * x ** nu * mp.besselk(nu, x)


def phi_mixture(nu, x):
    # E[exp(-a/V)], V ~ Gamma(nu, rate nu), as an integral over t = log V, used for nu >= 1e5: the log-integrand
    # F(t) = log(nu^nu / Gamma(nu)) + nu t - nu e^t - a e^-t is log-concave with its peak where nu (e^t - 1) e^t = a,
    # i.e. e^t = (1 + sqrt(1 + 4a/nu))/2, and is -(t - tp)^2 / (2 w^2) to within O(w): beyond 40 widths it is below
    # e^-700 of the peak. exp(F - F(tp)) is integrated (mpmath's quad tests convergence in absolute terms, so a
    # value of 1e-87 would stop it at once) on one-width pieces by tanh-sinh and by Gauss-Legendre, which must agree.
    a = x * x / (4 * nu)
    logc = nu * mp.log(nu) - mp.loggamma(nu)
    F = lambda t: logc + nu * t - nu * mp.exp(t) - a * mp.exp(-t)
    tp = mp.log((1 + mp.sqrt(1 + 4 * a / nu)) / 2)
    w = 1 / mp.sqrt(nu * mp.exp(tp) + a * mp.exp(-tp))
    peak = F(tp)
    g = lambda z: mp.exp(F(tp + z * w) - peak)
    assert g(-40) < mp.mpf(10) ** -200 and g(40) < mp.mpf(10) ** -200
    value, other = mp.quad(g, range(-40, 41)), mp.quad(g, range(-40, 41), method="gauss-legendre")
    if abs(value - other) > value * mp.mpf(10) ** -40:
        sys.exit(f"mixture quadrature rules disagree at nu={nu}, x={x}: {value} vs {other}")
    return mp.exp(peak) * w * value


def phi_limit(nu, x):
    a = x * x / (4 * nu)
    return mp.exp(-a) * (1 + (a * a - 2 * a) / (2 * nu))


def phi_route(nu, x):
    if nu >= mp.mpf(10) ** 20:
        return phi_limit(nu, x)
    if nu >= 100000:
        return phi_mixture(nu, x)
    return phi_besselk(nu, x)


def phi(nu, x):
    # besselk at 150 and 200 digits; the mixture quadrature (slow at high precision) at 60 and 80, which still leaves
    # 15 digits of var_cos ~ a^2 at a = 1e-12.
    dps, check_dps, agree = (150, 200, 60) if nu < 100000 else (60, 80, 35)
    with mp.workdps(check_dps):
        check = phi_route(nu, x)
    with mp.workdps(dps):
        p = phi_route(nu, x)
    if abs(check - p) > abs(p) * mp.mpf(10) ** -agree:
        sys.exit(f"{dps} and {check_dps} digits disagree at nu={nu}, x={x}: {p} vs {check}")
    return p


def fmt(v):
    return mp.nstr(v, 20, strip_zeros=False, min_fixed=-1, max_fixed=-1) if v != 0 else "0"


nus = ["0.05", "0.3", "0.5", "1", "1.5", "2", "2.5", "3.5", "7.3", "50", "150", "203", "203.5", "204", "300",
       "1000", "10000"]
xs = ["1e-8", "1e-6", "1e-4", "1e-3", "0.01", "0.05", "0.0999", "0.1", "0.1001", "0.2", "0.5", "1", "2", "5",
      "10", "20", "50", "100", "300", "1000"]
# Very large nu: x = 2 sqrt(nu a) for a = (|Dp|/l)^2 / 2 spanning the kernel's range.
big_nus = ["1e5", "1e9", "1e15", "1e28", "1e100"]
big_as = ["1e-12", "1e-6", "0.01", "0.28125", "1", "5", "50", "300"]

rows = [(mp.mpf(n), mp.mpf(x)) for n in nus for x in xs]
rows += [(mp.mpf(n), 2 * mp.sqrt(mp.mpf(n) * mp.mpf(a))) for n in big_nus for a in big_as]

print("nu,x,phi,psi,phi2,psi2,var_cos,var_sin")
for nu, x in rows:
    p, p2 = phi(nu, x), phi(nu, 2 * x)
    print(",".join(fmt(v) for v in (nu, x, p, 1 - p, p2, 1 - p2, (1 + p2) / 2 - p * p, (1 - p2) / 2)))
    sys.stdout.flush()
