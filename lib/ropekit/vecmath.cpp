#include "ropekit/vecmath.hpp"

#include <cmath>

#if defined(__AVX512F__) || defined(__AVX__)
#include <immintrin.h>
#include <sleef.h>
#endif

namespace ropekit {

int simd_width() {
#if defined(__AVX512F__)
  return 8;
#elif defined(__AVX__)
  return 4;
#else
  return 1;
#endif
}

void sincos_array(const double* x, double* s, double* c, std::size_t n) {
  std::size_t i = 0;
#if defined(__AVX512F__)
  for (; i + 8 <= n; i += 8) {
    const Sleef___m512d_2 r = Sleef_sincosd8_u10(_mm512_loadu_pd(x + i));
    _mm512_storeu_pd(s + i, r.x);
    _mm512_storeu_pd(c + i, r.y);
  }
#elif defined(__AVX__)
  for (; i + 4 <= n; i += 4) {
    const Sleef___m256d_2 r = Sleef_sincosd4_u10(_mm256_loadu_pd(x + i));
    _mm256_storeu_pd(s + i, r.x);
    _mm256_storeu_pd(c + i, r.y);
  }
#endif
  for (; i < n; ++i) {
    const double xi = x[i];
    s[i] = std::sin(xi);
    c[i] = std::cos(xi);
  }
}

void cos_array(const double* x, double* c, std::size_t n) {
  std::size_t i = 0;
#if defined(__AVX512F__)
  for (; i + 8 <= n; i += 8) _mm512_storeu_pd(c + i, Sleef_cosd8_u10(_mm512_loadu_pd(x + i)));
#elif defined(__AVX__)
  for (; i + 4 <= n; i += 4) _mm256_storeu_pd(c + i, Sleef_cosd4_u10(_mm256_loadu_pd(x + i)));
#endif
  for (; i < n; ++i) c[i] = std::cos(x[i]);
}

}  // namespace ropekit

namespace ropekit {

void log_array(const double* x, double* y, std::size_t n) {
  std::size_t i = 0;
#if defined(__AVX512F__)
  for (; i + 8 <= n; i += 8) _mm512_storeu_pd(y + i, Sleef_logd8_u10(_mm512_loadu_pd(x + i)));
#elif defined(__AVX__)
  for (; i + 4 <= n; i += 4) _mm256_storeu_pd(y + i, Sleef_logd4_u10(_mm256_loadu_pd(x + i)));
#endif
  for (; i < n; ++i) y[i] = std::log(x[i]);
}

namespace {
// Scalar sincos(pi x) with an exact phase: reduce x to [-1/4, 1/4] by exact subtraction of a
// multiple of 1/2 (Sterbenz), then one rounding in pi * r (|r| <= 1/4, error <= 1 ulp).
void sincospi_scalar(double x, double* s, double* c) {
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
}  // namespace

void sincospi_array(const double* x, double* s, double* c, std::size_t n) {
  std::size_t i = 0;
#if defined(__AVX512F__)
  for (; i + 8 <= n; i += 8) {
    const Sleef___m512d_2 r = Sleef_sincospid8_u05(_mm512_loadu_pd(x + i));
    _mm512_storeu_pd(s + i, r.x);
    _mm512_storeu_pd(c + i, r.y);
  }
#elif defined(__AVX__)
  for (; i + 4 <= n; i += 4) {
    const Sleef___m256d_2 r = Sleef_sincospid4_u05(_mm256_loadu_pd(x + i));
    _mm256_storeu_pd(s + i, r.x);
    _mm256_storeu_pd(c + i, r.y);
  }
#endif
  for (; i < n; ++i) sincospi_scalar(x[i], s + i, c + i);
}

bool is_even_grid(const double* t, std::size_t count) {
  if (count < 2) return false;
  const double h = t[1] - t[0];
  if (!(h != 0) || !std::isfinite(h)) return false;
  for (std::size_t m = 2; m < count; ++m)
    if (t[m] != t[0] + static_cast<double>(m) * h) return false;
  return true;
}

// The fused kernels work on 8 lanes. With AVX-512 a lane group is one register and the tail is
// masked (zero a, b contribute nothing); elsewhere the same lane structure is emulated in scalar
// code (std::sin/std::cos), so the summation order is the same function of n on any build.
#if defined(__AVX512F__)

namespace {
inline __mmask8 tail_mask(std::size_t left) { return left >= 8 ? 0xFF : static_cast<__mmask8>((1u << left) - 1); }
}  // namespace

double dot_cos_sin(double t, const double* w, const double* a, const double* b, std::size_t n) {
  __m512d acc = _mm512_setzero_pd();
  const __m512d vt = _mm512_set1_pd(t);
  for (std::size_t i = 0; i < n; i += 8) {
    const __mmask8 m = tail_mask(n - i);
    const Sleef___m512d_2 r = Sleef_sincosd8_u10(_mm512_mul_pd(vt, _mm512_maskz_loadu_pd(m, w + i)));
    acc = _mm512_fmadd_pd(_mm512_maskz_loadu_pd(m, a + i), r.y, acc);
    acc = _mm512_fmadd_pd(_mm512_maskz_loadu_pd(m, b + i), r.x, acc);
  }
  return _mm512_reduce_add_pd(acc);
}

double dot_cos_sin(const double* u, const double* a, const double* b, std::size_t n) {
  __m512d acc = _mm512_setzero_pd();
  for (std::size_t i = 0; i < n; i += 8) {
    const __mmask8 m = tail_mask(n - i);
    const Sleef___m512d_2 r = Sleef_sincosd8_u10(_mm512_maskz_loadu_pd(m, u + i));
    acc = _mm512_fmadd_pd(_mm512_maskz_loadu_pd(m, a + i), r.y, acc);
    acc = _mm512_fmadd_pd(_mm512_maskz_loadu_pd(m, b + i), r.x, acc);
  }
  return _mm512_reduce_add_pd(acc);
}

void dot_cos_sin_grid(const double* t, std::size_t count, const double* w, const double* a, const double* b,
                      std::size_t n, double* out, double* scratch) {
  for (std::size_t m = 0; m < count; ++m) _mm512_storeu_pd(scratch + 8 * m, _mm512_setzero_pd());
  const __m512d vh = _mm512_set1_pd(t[1] - t[0]);
  for (std::size_t i = 0; i < n; i += 8) {
    const __mmask8 mask = tail_mask(n - i);
    const __m512d vw = _mm512_maskz_loadu_pd(mask, w + i);
    const __m512d va = _mm512_maskz_loadu_pd(mask, a + i);
    const __m512d vb = _mm512_maskz_loadu_pd(mask, b + i);
    const Sleef___m512d_2 step = Sleef_sincosd8_u10(_mm512_mul_pd(vh, vw));
    __m512d c = _mm512_setzero_pd(), s = _mm512_setzero_pd();
    for (std::size_t m = 0; m < count; ++m) {
      if (m % kAnchor == 0) {
        const Sleef___m512d_2 r = Sleef_sincosd8_u10(_mm512_mul_pd(_mm512_set1_pd(t[m]), vw));
        s = r.x;
        c = r.y;
      } else {
        const __m512d c2 = _mm512_fmsub_pd(c, step.y, _mm512_mul_pd(s, step.x));
        s = _mm512_fmadd_pd(s, step.y, _mm512_mul_pd(c, step.x));
        c = c2;
      }
      __m512d acc = _mm512_loadu_pd(scratch + 8 * m);
      acc = _mm512_fmadd_pd(va, c, acc);
      acc = _mm512_fmadd_pd(vb, s, acc);
      _mm512_storeu_pd(scratch + 8 * m, acc);
    }
  }
  for (std::size_t m = 0; m < count; ++m) out[m] = _mm512_reduce_add_pd(_mm512_loadu_pd(scratch + 8 * m));
}

#else

namespace {
// _mm512_reduce_add_pd's order: (l0+l4 + l2+l6) + (l1+l5 + l3+l7).
double reduce8(const double* l) { return ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7])); }
}  // namespace

double dot_cos_sin(const double* u, const double* a, const double* b, std::size_t n) {
  double lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (std::size_t i = 0; i < n; ++i) {
    lane[i % 8] = std::fma(a[i], std::cos(u[i]), lane[i % 8]);
    lane[i % 8] = std::fma(b[i], std::sin(u[i]), lane[i % 8]);
  }
  return reduce8(lane);
}

double dot_cos_sin(double t, const double* w, const double* a, const double* b, std::size_t n) {
  double lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (std::size_t i = 0; i < n; ++i) {
    const double u = t * w[i];
    lane[i % 8] = std::fma(a[i], std::cos(u), lane[i % 8]);
    lane[i % 8] = std::fma(b[i], std::sin(u), lane[i % 8]);
  }
  return reduce8(lane);
}

void dot_cos_sin_grid(const double* t, std::size_t count, const double* w, const double* a, const double* b,
                      std::size_t n, double* out, double* scratch) {
  for (std::size_t m = 0; m < 8 * count; ++m) scratch[m] = 0;
  const double h = t[1] - t[0];
  for (std::size_t i = 0; i < n; ++i) {
    const double sh = std::sin(h * w[i]), ch = std::cos(h * w[i]);
    double c = 0, s = 0;
    for (std::size_t m = 0; m < count; ++m) {
      if (m % kAnchor == 0) {
        c = std::cos(t[m] * w[i]);
        s = std::sin(t[m] * w[i]);
      } else {
        const double c2 = std::fma(c, ch, -(s * sh));
        s = std::fma(s, ch, c * sh);
        c = c2;
      }
      double& acc = scratch[8 * m + i % 8];
      acc = std::fma(a[i], c, acc);
      acc = std::fma(b[i], s, acc);
    }
  }
  for (std::size_t m = 0; m < count; ++m) out[m] = reduce8(scratch + 8 * m);
}

#endif

}  // namespace ropekit
