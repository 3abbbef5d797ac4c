// vecmath's AVX-512 path (compiled with -mavx512f -mavx512dq -mavx2 -mfma; run only where the CPU has them):
// SLEEF's avx512f functions, eight doubles per register, tails by masked loads and stores (a lane past n
// reads 0 and is never stored). Includes no header with inline functions (see vecmath_kernels.hpp).
#include <immintrin.h>
#include <sleef.h>

#include "ropekit/core/vecmath_cos_sums.hpp"
#include "ropekit/core/vecmath_kernels.hpp"

namespace ropekit::detail {

namespace {

inline __mmask8 tail_mask(std::size_t left) { return left >= 8 ? 0xFF : static_cast<__mmask8>((1u << left) - 1); }

// Eight doubles at p: all of them (inside the array) or the lanes of a tail mask (others read 0, never written).
struct Whole {
  __m512d load(const double* p) const { return _mm512_loadu_pd(p); }
  void store(double* p, __m512d v) const { _mm512_storeu_pd(p, v); }
};
struct Masked {
  __mmask8 m;
  __m512d load(const double* p) const { return _mm512_maskz_loadu_pd(m, p); }
  void store(double* p, __m512d v) const { _mm512_mask_storeu_pd(p, m, v); }
};

// body(i, lanes) for each block of eight from i = 0: whole blocks, then the partial one masked.
template <class Body>
inline void blocks(std::size_t n, Body body) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) body(i, Whole{});
  if (i < n) body(i, Masked{tail_mask(n - i)});
}

void sincos512(const double* x, double* s, double* c, std::size_t n) {
  blocks(n, [&](std::size_t i, auto lanes) {
    const Sleef___m512d_2 r = Sleef_sincosd8_u10avx512f(lanes.load(x + i));
    lanes.store(s + i, r.x);
    lanes.store(c + i, r.y);
  });
}

void cos512(const double* x, double* c, std::size_t n) {
  blocks(n, [&](std::size_t i, auto lanes) { lanes.store(c + i, Sleef_cosd8_u10avx512f(lanes.load(x + i))); });
}

void log512(const double* x, double* y, std::size_t n) {
  blocks(n, [&](std::size_t i, auto lanes) { lanes.store(y + i, Sleef_logd8_u10avx512f(lanes.load(x + i))); });
}

// SLEEF's sincospi returns (0, 1) for |x| >= 1e9: x - 2 round(x/2), exact for every double, first.
void sincospi512(const double* x, double* s, double* c, std::size_t n) {
  const __m512d half = _mm512_set1_pd(0.5), two = _mm512_set1_pd(2.0);
  blocks(n, [&](std::size_t i, auto lanes) {
    const __m512d v = lanes.load(x + i);
    const __m512d k = _mm512_roundscale_pd(_mm512_mul_pd(v, half), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const Sleef___m512d_2 r = Sleef_sincospid8_u05avx512f(_mm512_fnmadd_pd(two, k, v));
    lanes.store(s + i, r.x);
    lanes.store(c + i, r.y);
  });
}

// The fused kernels' sincos: SLEEF's 3.5-ulp one (see vecmath.hpp for the measured errors).
inline Sleef___m512d_2 sincos8(__m512d x) { return Sleef_sincosd8_u35avx512f(x); }

void sincos_fast512(const double* x, double* s, double* c, std::size_t n) {
  blocks(n, [&](std::size_t i, auto lanes) {
    const Sleef___m512d_2 r = sincos8(lanes.load(x + i));
    lanes.store(s + i, r.x);
    lanes.store(c + i, r.y);
  });
}

// Lane l of acc holds the terms i = l mod 8 (lanes past n read a = b = 0 and add nothing); the reduction is
// ((l0+l4) + (l2+l6)) + ((l1+l5) + (l3+l7)), which the other paths copy.
template <class Phase>
double dot512(Phase phase, const double* a, const double* b, std::size_t n) {
  __m512d acc = _mm512_setzero_pd();
  blocks(n, [&](std::size_t i, auto lanes) {
    const Sleef___m512d_2 r = sincos8(phase(i, lanes));
    acc = _mm512_fmadd_pd(lanes.load(a + i), r.y, acc);
    acc = _mm512_fmadd_pd(lanes.load(b + i), r.x, acc);
  });
  return _mm512_reduce_add_pd(acc);
}

double dot_t512(double t, const double* w, const double* a, const double* b, std::size_t n) {
  const __m512d vt = _mm512_set1_pd(t);
  return dot512([&](std::size_t j, auto lanes) { return _mm512_mul_pd(vt, lanes.load(w + j)); }, a, b, n);
}

double dot_u512(const double* u, const double* a, const double* b, std::size_t n) {
  return dot512([&](std::size_t j, auto lanes) { return lanes.load(u + j); }, a, b, n);
}

// The angle-addition recurrence on G registers of eight pairs from i at once (independent chains hide the rotation's
// multiply-add latency): at lag m, direct sincos every kGridAnchor lags, else the previous values rotated by h w;
// visit(m, c, s) receives the registers' cosines and sines (lanes past n have w = 0: c = 1, s = 0). The frequencies
// are read from memory at the anchors only, so that G = 4 leaves registers for the visitor's weights.
template <int G, class Visit>
inline void recurrence(const double* t, std::size_t count, const double* w, std::size_t n, std::size_t i, Visit visit) {
  __m512d sx[G], sy[G], c[G], s[G];
  __mmask8 mask[G];
  const __m512d vh = _mm512_set1_pd(t[1] - t[0]);
  for (int g = 0; g < G; ++g) {
    mask[g] = tail_mask(n - (i + 8 * g));
    const Sleef___m512d_2 step = sincos8(_mm512_mul_pd(vh, _mm512_maskz_loadu_pd(mask[g], w + i + 8 * g)));
    sx[g] = step.x;
    sy[g] = step.y;
  }
  for (std::size_t m = 0; m < count; ++m) {
    if (m % kGridAnchor == 0) {
      for (int g = 0; g < G; ++g) {
        const __m512d vw = _mm512_maskz_loadu_pd(mask[g], w + i + 8 * g);
        const Sleef___m512d_2 r = sincos8(_mm512_mul_pd(_mm512_set1_pd(t[m]), vw));
        s[g] = r.x;
        c[g] = r.y;
      }
    } else {
      for (int g = 0; g < G; ++g) {
        const __m512d c2 = _mm512_fmsub_pd(c[g], sy[g], _mm512_mul_pd(s[g], sx[g]));
        s[g] = _mm512_fmadd_pd(s[g], sy[g], _mm512_mul_pd(c[g], sx[g]));
        c[g] = c2;
      }
    }
    visit(m, c, s);
  }
}

// The G registers' weights a, b (zero past n).
template <int G>
struct Weights {
  __m512d a[G], b[G];
  Weights(const double* wa, const double* wb, std::size_t n, std::size_t i) {
    for (int g = 0; g < G; ++g) {
      const __mmask8 mask = tail_mask(n - (i + 8 * g));
      a[g] = _mm512_maskz_loadu_pd(mask, wa + i + 8 * g);
      b[g] = _mm512_maskz_loadu_pd(mask, wb + i + 8 * g);
    }
  }
};

// sum a c + b s into each lag's 8-lane slot; each slot receives the registers' terms in increasing block order, so
// the sums are those of one register at a time.
template <int G>
void grid_groups(const double* t, std::size_t count, const double* w, const double* a, const double* b, std::size_t n,
                 std::size_t i, double* scratch) {
  const Weights<G> v(a, b, n, i);
  recurrence<G>(t, count, w, n, i, [&](std::size_t m, const __m512d* c, const __m512d* s) {
    __m512d acc = _mm512_loadu_pd(scratch + 8 * m);
    for (int g = 0; g < G; ++g) {
      acc = _mm512_fmadd_pd(v.a[g], c[g], acc);
      acc = _mm512_fmadd_pd(v.b[g], s[g], acc);
    }
    _mm512_storeu_pd(scratch + 8 * m, acc);
  });
}

void grid512(const double* t, std::size_t count, const double* w, const double* a, const double* b, std::size_t n,
             double* out, double* scratch) {
  for (std::size_t m = 0; m < count; ++m) _mm512_storeu_pd(scratch + 8 * m, _mm512_setzero_pd());
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) grid_groups<4>(t, count, w, a, b, n, i, scratch);
  for (; i < n; i += 8) grid_groups<1>(t, count, w, a, b, n, i, scratch);
  for (std::size_t m = 0; m < count; ++m) out[m] = _mm512_reduce_add_pd(_mm512_loadu_pd(scratch + 8 * m));
}

// cos_sums' register type (vecmath_cos_sums.hpp): eight doubles, two tiles per pass.
struct Avx512 {
  using reg = __m512d;
  static constexpr std::size_t W = 8, kGroup = 2, kGroupSquares = 2;
  static reg set1(double x) { return _mm512_set1_pd(x); }
  static reg zero() { return _mm512_setzero_pd(); }
  static reg load(const double* p) { return _mm512_loadu_pd(p); }
  static reg load_n(const double* p, std::size_t k) { return _mm512_maskz_loadu_pd(tail_mask(k), p); }
  static void store(double* p, reg v) { _mm512_storeu_pd(p, v); }
  static void store_n(double* p, reg v, std::size_t k) { _mm512_mask_storeu_pd(p, tail_mask(k), v); }
  static reg mul(reg a, reg b) { return _mm512_mul_pd(a, b); }
  static reg fma(reg a, reg b, reg c) { return _mm512_fmadd_pd(a, b, c); }
  static reg fnma(reg a, reg b, reg c) { return _mm512_fnmadd_pd(a, b, c); }
  static reg fms(reg a, reg b, reg c) { return _mm512_fmsub_pd(a, b, c); }
  static void sincos(reg x, reg& s, reg& c) {
    const Sleef___m512d_2 r = Sleef_sincosd8_u10avx512f(reduce_2pi<Avx512>(x));
    s = r.x;
    c = r.y;
  }
  static reg round(reg x) { return _mm512_roundscale_pd(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static reg floor(reg x) { return _mm512_roundscale_pd(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); }
  static reg cos(reg x) { return poly_cos<Avx512>(x); }
  static reg sin(reg x) { return poly_sin<Avx512>(x); }
};

}  // namespace

const VecKernels kAvx512Kernels = {"avx512",    8,          sincos512,      cos512,   log512,
                                   sincospi512, sincos_fast512, dot_t512, dot_u512, grid512,
                                   cos_sums_v<Avx512>, grid_tables<Avx512>, cos_sums_grid_v<Avx512>,
    sin_sums_v<Avx512>, sin_sums_grid_v<Avx512>};

}  // namespace ropekit::detail
