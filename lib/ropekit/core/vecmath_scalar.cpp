// vecmath's scalar path (baseline flags): glibc's sin, cos and log, and the fused kernels' eight-lane
// summation emulated in plain code, so that the order of the sums is the vector paths'.
#include <cmath>

#include "ropekit/core/vecmath.hpp"
#include "ropekit/core/vecmath_cos_sums.hpp"
#include "ropekit/core/vecmath_kernels.hpp"

namespace ropekit::detail {

namespace {

void sincos_scalar(const double* x, double* s, double* c, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const double xi = x[i];
    s[i] = std::sin(xi);
    c[i] = std::cos(xi);
  }
}

void cos_scalar(const double* x, double* c, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) c[i] = std::cos(x[i]);
}

void log_scalar(const double* x, double* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] = std::log(x[i]);
}

// sincos(pi x) with an exact phase: reduce x to [-1/4, 1/4] by exact subtraction of a multiple of 1/2
// (Sterbenz), then one rounding in pi * r (|r| <= 1/4, error <= 0.5 ulp) before glibc's sin and cos.
void sincospi_one(double x, double* s, double* c) {
  if (!std::isfinite(x)) {
    *s = *c = x - x;  // NaN for inf and NaN, as SLEEF
    return;
  }
  const double k = std::nearbyint(2.0 * x);
  const double r = x - 0.5 * k;
  const double sr = std::sin(M_PI * r), cr = std::cos(M_PI * r);
  switch (static_cast<long long>(std::fmod(k, 4.0) + 4) % 4) {
    case 0: *s = sr; *c = cr; break;
    case 1: *s = cr; *c = -sr; break;
    case 2: *s = -sr; *c = -cr; break;
    default: *s = -cr; *c = sr; break;
  }
}

void sincospi_scalar(const double* x, double* s, double* c, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) sincospi_one(x[i], s + i, c + i);
}

// _mm512_reduce_add_pd's order: (l0+l4 + l2+l6) + (l1+l5 + l3+l7).
double reduce8(const double* l) { return ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7])); }

// Term i (phase(i)) into lane i mod 8, by FMA, then the vector paths' reduction.
template <class Phase>
double dot_scalar(Phase phase, const double* a, const double* b, std::size_t n) {
  double lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (std::size_t i = 0; i < n; ++i) {
    const double u = phase(i);
    lane[i % 8] = std::fma(a[i], std::cos(u), lane[i % 8]);
    lane[i % 8] = std::fma(b[i], std::sin(u), lane[i % 8]);
  }
  return reduce8(lane);
}

double dot_u_scalar(const double* u, const double* a, const double* b, std::size_t n) {
  return dot_scalar([u](std::size_t i) { return u[i]; }, a, b, n);
}

double dot_t_scalar(double t, const double* w, const double* a, const double* b, std::size_t n) {
  return dot_scalar([t, w](std::size_t i) { return t * w[i]; }, a, b, n);
}

// The angle-addition recurrence for pair i over the lags: visit(m, c, s) with cos and sin of t[m] w[i], direct every
// kAnchor lags, else the previous pair rotated by h w[i].
template <class Visit>
void recurrence(const double* t, std::size_t count, double w, Visit visit) {
  const double h = t[1] - t[0];
  const double sh = std::sin(h * w), ch = std::cos(h * w);
  double c = 0, s = 0;
  for (std::size_t m = 0; m < count; ++m) {
    if (m % kAnchor == 0) {
      c = std::cos(t[m] * w);
      s = std::sin(t[m] * w);
    } else {
      const double c2 = std::fma(c, ch, -(s * sh));
      s = std::fma(s, ch, c * sh);
      c = c2;
    }
    visit(m, c, s);
  }
}

void grid_scalar(const double* t, std::size_t count, const double* w, const double* a, const double* b,
                 std::size_t n, double* out, double* scratch) {
  for (std::size_t m = 0; m < 8 * count; ++m) scratch[m] = 0;
  for (std::size_t i = 0; i < n; ++i) {
    recurrence(t, count, w[i], [&](std::size_t m, double c, double s) {
      double& acc = scratch[8 * m + i % 8];
      acc = std::fma(a[i], c, acc);
      acc = std::fma(b[i], s, acc);
    });
  }
  for (std::size_t m = 0; m < count; ++m) out[m] = reduce8(scratch + 8 * m);
}

// cos_sums' register type: one double, glibc's sin and cos (they reduce any double exactly).
struct Scalar1 {
  using reg = double;
  static constexpr std::size_t W = 1, kGroup = 2, kGroupSquares = 2;
  static reg set1(double x) { return x; }
  static reg zero() { return 0; }
  static reg load(const double* p) { return *p; }
  static reg load_n(const double*, std::size_t) { return 0; }  // k < W = 1: no lane
  static void store(double* p, reg v) { *p = v; }
  static void store_n(double*, reg, std::size_t) {}
  static reg mul(reg a, reg b) { return a * b; }
  static reg fma(reg a, reg b, reg c) { return std::fma(a, b, c); }
  static reg fnma(reg a, reg b, reg c) { return std::fma(-a, b, c); }
  static reg fms(reg a, reg b, reg c) { return std::fma(a, b, -c); }
  static void sincos(reg x, reg& s, reg& c) {
    s = std::sin(x);
    c = std::cos(x);
  }
  static reg round(reg x) { return std::nearbyint(x); }
  static reg floor(reg x) { return std::floor(x); }
  static reg cos(reg x) { return std::cos(x); }
  static reg sin(reg x) { return std::sin(x); }
};

}  // namespace

const VecKernels kScalarKernels = {"scalar",        1,           sincos_scalar, cos_scalar,  log_scalar,
                                   sincospi_scalar, sincos_scalar, dot_t_scalar, dot_u_scalar, grid_scalar,
                                   cos_sums_v<Scalar1>, grid_tables<Scalar1>, cos_sums_grid_v<Scalar1>,
    sin_sums_v<Scalar1>, sin_sums_grid_v<Scalar1>};

}  // namespace ropekit::detail
