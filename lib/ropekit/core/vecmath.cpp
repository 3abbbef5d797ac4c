#include "ropekit/core/vecmath.hpp"

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
#if defined(__AVX512F__) && defined(__AVX512DQ__)

namespace {
inline __mmask8 tail_mask(std::size_t left) { return left >= 8 ? 0xFF : static_cast<__mmask8>((1u << left) - 1); }

// sin and cos of 8 angles for the fused kernels (see kFastSincosMax in vecmath.hpp):
// q = nearest integer to x 2/pi; r = x - q pi/2 with pi/2 = P1 + P2 + P3 (three doubles, each step one
// FMA, so q P_j enters exactly and each step rounds once); sin r and cos r by their Taylor polynomials
// to degree 17 and 18 on |r| <= pi/4 (+ a rounding of q), truncation below 1e-19; then the quadrant.
// Lanes with |x| > kFastSincosMax, infinite or NaN take SLEEF's 1-ulp sincos.
inline Sleef___m512d_2 sincos8(__m512d x) {
  const __m512d P1 = _mm512_set1_pd(0x1.921fb54442d18p+0), P2 = _mm512_set1_pd(0x1.1a62633145c07p-54),
                P3 = _mm512_set1_pd(-0x1.f1976b7ed8fbcp-110), two_over_pi = _mm512_set1_pd(0x1.45f306dc9c883p-1);
  const __m512d q =
      _mm512_roundscale_pd(_mm512_mul_pd(x, two_over_pi), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512d r = _mm512_fnmadd_pd(q, P1, x);
  r = _mm512_fnmadd_pd(q, P2, r);
  r = _mm512_fnmadd_pd(q, P3, r);
  const __m512d z = _mm512_mul_pd(r, r);
  // (-1)^k / (2k+1)! for k = 1..8 and (-1)^k / (2k)! for k = 2..9, highest first.
  __m512d ps = _mm512_set1_pd(1.0 / 355687428096000.0);                       // 1/17!
  ps = _mm512_fmadd_pd(ps, z, _mm512_set1_pd(-1.0 / 1307674368000.0));         // -1/15!
  ps = _mm512_fmadd_pd(ps, z, _mm512_set1_pd(1.0 / 6227020800.0));             // 1/13!
  ps = _mm512_fmadd_pd(ps, z, _mm512_set1_pd(-1.0 / 39916800.0));              // -1/11!
  ps = _mm512_fmadd_pd(ps, z, _mm512_set1_pd(1.0 / 362880.0));                 // 1/9!
  ps = _mm512_fmadd_pd(ps, z, _mm512_set1_pd(-1.0 / 5040.0));                  // -1/7!
  ps = _mm512_fmadd_pd(ps, z, _mm512_set1_pd(1.0 / 120.0));                    // 1/5!
  ps = _mm512_fmadd_pd(ps, z, _mm512_set1_pd(-1.0 / 6.0));                     // -1/3!
  const __m512d sin_r = _mm512_fmadd_pd(_mm512_mul_pd(r, z), ps, r);
  __m512d pc = _mm512_set1_pd(-1.0 / 6402373705728000.0);                      // -1/18!
  pc = _mm512_fmadd_pd(pc, z, _mm512_set1_pd(1.0 / 20922789888000.0));         // 1/16!
  pc = _mm512_fmadd_pd(pc, z, _mm512_set1_pd(-1.0 / 87178291200.0));           // -1/14!
  pc = _mm512_fmadd_pd(pc, z, _mm512_set1_pd(1.0 / 479001600.0));              // 1/12!
  pc = _mm512_fmadd_pd(pc, z, _mm512_set1_pd(-1.0 / 3628800.0));               // -1/10!
  pc = _mm512_fmadd_pd(pc, z, _mm512_set1_pd(1.0 / 40320.0));                  // 1/8!
  pc = _mm512_fmadd_pd(pc, z, _mm512_set1_pd(-1.0 / 720.0));                   // -1/6!
  pc = _mm512_fmadd_pd(pc, z, _mm512_set1_pd(1.0 / 24.0));                     // 1/4!
  const __m512d cos_r = _mm512_fmadd_pd(z, _mm512_fmadd_pd(z, pc, _mm512_set1_pd(-0.5)), _mm512_set1_pd(1.0));
  // Quadrant q mod 4: (sin, cos)(x) = (s, c), (c, -s), (-s, -c), (-c, s) for (s, c) = (sin r, cos r).
  const __m512i qi = _mm512_cvtpd_epi64(q);
  const __m512i one = _mm512_set1_epi64(1), two = _mm512_set1_epi64(2);
  const __mmask8 swap = _mm512_test_epi64_mask(qi, one);
  const __mmask8 flip_sin = _mm512_test_epi64_mask(qi, two);
  const __mmask8 flip_cos = _mm512_test_epi64_mask(_mm512_add_epi64(qi, one), two);
  const __m512d sign = _mm512_set1_pd(-0.0);
  __m512d s = _mm512_mask_blend_pd(swap, sin_r, cos_r);
  __m512d c = _mm512_mask_blend_pd(swap, cos_r, sin_r);
  s = _mm512_mask_xor_pd(s, flip_sin, s, sign);
  c = _mm512_mask_xor_pd(c, flip_cos, c, sign);
  const __mmask8 far = _mm512_cmp_pd_mask(_mm512_abs_pd(x), _mm512_set1_pd(kFastSincosMax), _CMP_NLE_UQ);
  if (far) {
    const Sleef___m512d_2 exact = Sleef_sincosd8_u10(x);
    s = _mm512_mask_mov_pd(s, far, exact.x);
    c = _mm512_mask_mov_pd(c, far, exact.y);
  }
  return {s, c};
}
}  // namespace

void sincos_array_fast(const double* x, double* s, double* c, std::size_t n) {
  for (std::size_t i = 0; i < n; i += 8) {
    const __mmask8 m = tail_mask(n - i);
    const Sleef___m512d_2 r = sincos8(_mm512_maskz_loadu_pd(m, x + i));
    _mm512_mask_storeu_pd(s + i, m, r.x);
    _mm512_mask_storeu_pd(c + i, m, r.y);
  }
}

double dot_cos_sin(double t, const double* w, const double* a, const double* b, std::size_t n) {
  __m512d acc = _mm512_setzero_pd();
  const __m512d vt = _mm512_set1_pd(t);
  for (std::size_t i = 0; i < n; i += 8) {
    const __mmask8 m = tail_mask(n - i);
    const Sleef___m512d_2 r = sincos8(_mm512_mul_pd(vt, _mm512_maskz_loadu_pd(m, w + i)));
    acc = _mm512_fmadd_pd(_mm512_maskz_loadu_pd(m, a + i), r.y, acc);
    acc = _mm512_fmadd_pd(_mm512_maskz_loadu_pd(m, b + i), r.x, acc);
  }
  return _mm512_reduce_add_pd(acc);
}

double dot_cos_sin(const double* u, const double* a, const double* b, std::size_t n) {
  __m512d acc = _mm512_setzero_pd();
  for (std::size_t i = 0; i < n; i += 8) {
    const __mmask8 m = tail_mask(n - i);
    const Sleef___m512d_2 r = sincos8(_mm512_maskz_loadu_pd(m, u + i));
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
    const Sleef___m512d_2 step = sincos8(_mm512_mul_pd(vh, vw));
    __m512d c = _mm512_setzero_pd(), s = _mm512_setzero_pd();
    for (std::size_t m = 0; m < count; ++m) {
      if (m % kAnchor == 0) {
        const Sleef___m512d_2 r = sincos8(_mm512_mul_pd(_mm512_set1_pd(t[m]), vw));
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

void sincos_array_fast(const double* x, double* s, double* c, std::size_t n) { sincos_array(x, s, c, n); }

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
