// vecmath's AVX2 path (compiled with -mavx2 -mfma; run only where the CPU has them): SLEEF's avx2 functions,
// four doubles per register, tails by masked loads and stores. The fused kernels keep eight lanes in two
// registers (lanes 0-3 and 4-7) so that they sum in the AVX-512 path's order. Includes no header with inline
// functions (see vecmath_kernels.hpp).
#include <immintrin.h>
#include <sleef.h>

#include "ropekit/core/vecmath_cos_sums.hpp"
#include "ropekit/core/vecmath_kernels.hpp"

namespace ropekit::detail {

namespace {

// Lanes j < left are all ones (load and store them), the others zero (read as 0.0, never written).
inline __m256i tail_mask(long long left) {
  return _mm256_cmpgt_epi64(_mm256_set1_epi64x(left), _mm256_setr_epi64x(0, 1, 2, 3));
}

inline long long remaining(std::size_t n, std::size_t i) { return static_cast<long long>(n - i); }

// Four doubles at p: all of them (inside the array) or the lanes of a tail mask.
struct Whole {
  __m256d load(const double* p) const { return _mm256_loadu_pd(p); }
  void store(double* p, __m256d v) const { _mm256_storeu_pd(p, v); }
};
struct Masked {
  __m256i m;
  __m256d load(const double* p) const { return _mm256_maskload_pd(p, m); }
  void store(double* p, __m256d v) const { _mm256_maskstore_pd(p, m, v); }
};

// body(i, lanes) for each block of four from i = 0: whole blocks, then the partial one masked.
template <class Body>
inline void blocks(std::size_t n, Body body) {
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) body(i, Whole{});
  if (i < n) body(i, Masked{tail_mask(remaining(n, i))});
}

void sincos256(const double* x, double* s, double* c, std::size_t n) {
  blocks(n, [&](std::size_t i, auto lanes) {
    const Sleef___m256d_2 r = Sleef_sincosd4_u10avx2(lanes.load(x + i));
    lanes.store(s + i, r.x);
    lanes.store(c + i, r.y);
  });
}

void cos256(const double* x, double* c, std::size_t n) {
  blocks(n, [&](std::size_t i, auto lanes) { lanes.store(c + i, Sleef_cosd4_u10avx2(lanes.load(x + i))); });
}

void log256(const double* x, double* y, std::size_t n) {
  blocks(n, [&](std::size_t i, auto lanes) { lanes.store(y + i, Sleef_logd4_u10avx2(lanes.load(x + i))); });
}

// SLEEF's sincospi returns (0, 1) for |x| >= 1e9: x - 2 round(x/2), exact for every double, first.
void sincospi256(const double* x, double* s, double* c, std::size_t n) {
  const __m256d half = _mm256_set1_pd(0.5), two = _mm256_set1_pd(2.0);
  blocks(n, [&](std::size_t i, auto lanes) {
    const __m256d v = lanes.load(x + i);
    const __m256d k = _mm256_round_pd(_mm256_mul_pd(v, half), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const Sleef___m256d_2 r = Sleef_sincospid4_u05avx2(_mm256_fnmadd_pd(two, k, v));
    lanes.store(s + i, r.x);
    lanes.store(c + i, r.y);
  });
}

// The fused kernels' sincos: SLEEF's 3.5-ulp one (see vecmath.hpp for the measured errors).
inline Sleef___m256d_2 sincos4(__m256d x) { return Sleef_sincosd4_u35avx2(x); }

void sincos_fast256(const double* x, double* s, double* c, std::size_t n) {
  blocks(n, [&](std::size_t i, auto lanes) {
    const Sleef___m256d_2 r = sincos4(lanes.load(x + i));
    lanes.store(s + i, r.x);
    lanes.store(c + i, r.y);
  });
}

// ((l0+l4) + (l2+l6)) + ((l1+l5) + (l3+l7)) for lo = l0..l3, hi = l4..l7: _mm512_reduce_add_pd's order.
inline double reduce8(__m256d lo, __m256d hi) {
  const __m256d h = _mm256_add_pd(lo, hi);                                                    // l0+l4 .. l3+l7
  const __m128d q = _mm_add_pd(_mm256_castpd256_pd128(h), _mm256_extractf128_pd(h, 1));      // (04+26, 15+37)
  return _mm_cvtsd_f64(_mm_add_sd(q, _mm_unpackhi_pd(q, q)));
}

// One block of eight terms starting at i: acc_lo gets terms i..i+3, acc_hi terms i+4..i+7.
template <class Phase, class Lo, class Hi>
inline void dot_block(Phase phase, const double* a, const double* b, std::size_t i, Lo lo_lanes, Hi hi_lanes,
                      __m256d& acc_lo, __m256d& acc_hi) {
  const Sleef___m256d_2 lo = sincos4(phase(i, lo_lanes));
  acc_lo = _mm256_fmadd_pd(lo_lanes.load(a + i), lo.y, acc_lo);
  acc_lo = _mm256_fmadd_pd(lo_lanes.load(b + i), lo.x, acc_lo);
  const Sleef___m256d_2 hi = sincos4(phase(i + 4, hi_lanes));
  acc_hi = _mm256_fmadd_pd(hi_lanes.load(a + i + 4), hi.y, acc_hi);
  acc_hi = _mm256_fmadd_pd(hi_lanes.load(b + i + 4), hi.x, acc_hi);
}

// Whole blocks of eight, then the last partial block masked (lanes past n read a = b = 0: they add nothing).
template <class Phase>
double dot256(Phase phase, const double* a, const double* b, std::size_t n) {
  __m256d lo = _mm256_setzero_pd(), hi = _mm256_setzero_pd();
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) dot_block(phase, a, b, i, Whole{}, Whole{}, lo, hi);
  if (i < n)
    dot_block(phase, a, b, i, Masked{tail_mask(remaining(n, i))}, Masked{tail_mask(remaining(n, i) - 4)}, lo, hi);
  return reduce8(lo, hi);
}

double dot_t256(double t, const double* w, const double* a, const double* b, std::size_t n) {
  const __m256d vt = _mm256_set1_pd(t);
  return dot256([&](std::size_t j, auto lanes) { return _mm256_mul_pd(vt, lanes.load(w + j)); }, a, b, n);
}

double dot_u256(const double* u, const double* a, const double* b, std::size_t n) {
  return dot256([&](std::size_t j, auto lanes) { return lanes.load(u + j); }, a, b, n);
}

// The angle-addition recurrence on G groups of four pairs from i at once (groups g = 0..G-1 are pairs i + 4g;
// independent chains hide the rotation's multiply-add latency): at lag m, direct sincos every kGridAnchor lags, else
// the previous values rotated by h w; visit(m, c, s) receives the groups' cosines and sines (lanes past n: w = 0).
template <int G, class Visit>
inline void recurrence(const double* t, std::size_t count, const double* w, std::size_t n, std::size_t i, Visit visit) {
  __m256d sx[G], sy[G], c[G], s[G];
  __m256i mask[G];
  const __m256d vh = _mm256_set1_pd(t[1] - t[0]);
  for (int g = 0; g < G; ++g) {
    mask[g] = tail_mask(remaining(n, i + 4 * g));
    const Sleef___m256d_2 step = sincos4(_mm256_mul_pd(vh, _mm256_maskload_pd(w + i + 4 * g, mask[g])));
    sx[g] = step.x;
    sy[g] = step.y;
  }
  for (std::size_t m = 0; m < count; ++m) {
    if (m % kGridAnchor == 0) {
      for (int g = 0; g < G; ++g) {
        const __m256d vw = _mm256_maskload_pd(w + i + 4 * g, mask[g]);
        const Sleef___m256d_2 r = sincos4(_mm256_mul_pd(_mm256_set1_pd(t[m]), vw));
        s[g] = r.x;
        c[g] = r.y;
      }
    } else {
      for (int g = 0; g < G; ++g) {
        const __m256d c2 = _mm256_fmsub_pd(c[g], sy[g], _mm256_mul_pd(s[g], sx[g]));
        s[g] = _mm256_fmadd_pd(s[g], sy[g], _mm256_mul_pd(c[g], sx[g]));
        c[g] = c2;
      }
    }
    visit(m, c, s);
  }
}

// The groups' weights a, b (zero past n) and the half of an 8-lane slot each adds into: 4 ((i/4 + g) % 2), so that
// the sums follow the AVX-512 path's lanes.
template <int G>
struct Weights {
  __m256d a[G], b[G];
  int half[G];
  Weights(const double* wa, const double* wb, std::size_t n, std::size_t i) {
    for (int g = 0; g < G; ++g) {
      const __m256i mask = tail_mask(remaining(n, i + 4 * g));
      a[g] = _mm256_maskload_pd(wa + i + 4 * g, mask);
      b[g] = _mm256_maskload_pd(wb + i + 4 * g, mask);
      half[g] = static_cast<int>((i + 4 * g) % 8);
    }
  }
};

// sum a c + b s into each lag's 8-lane slot; each slot receives its groups' terms in increasing block order, so the
// sums are those of one group at a time.
template <int G>
void grid_groups(const double* t, std::size_t count, const double* w, const double* a, const double* b, std::size_t n,
                 std::size_t i, double* scratch) {
  const Weights<G> v(a, b, n, i);
  recurrence<G>(t, count, w, n, i, [&](std::size_t m, const __m256d* c, const __m256d* s) {
    for (int g = 0; g < G; ++g) {
      double* slot = scratch + 8 * m + v.half[g];
      __m256d acc = _mm256_loadu_pd(slot);
      acc = _mm256_fmadd_pd(v.a[g], c[g], acc);
      acc = _mm256_fmadd_pd(v.b[g], s[g], acc);
      _mm256_storeu_pd(slot, acc);
    }
  });
}

void grid256(const double* t, std::size_t count, const double* w, const double* a, const double* b, std::size_t n,
             double* out, double* scratch) {
  for (std::size_t m = 0; m < 2 * count; ++m) _mm256_storeu_pd(scratch + 4 * m, _mm256_setzero_pd());
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) grid_groups<4>(t, count, w, a, b, n, i, scratch);
  for (; i < n; i += 4) grid_groups<1>(t, count, w, a, b, n, i, scratch);
  for (std::size_t m = 0; m < count; ++m)
    out[m] = reduce8(_mm256_loadu_pd(scratch + 8 * m), _mm256_loadu_pd(scratch + 8 * m + 4));
}

// cos_sums' register type (vecmath_cos_sums.hpp): four doubles; two tiles per pass for the kernel alone, one with
// the squares (sixteen registers).
struct Avx2 {
  using reg = __m256d;
  static constexpr std::size_t W = 4, kGroup = 2, kGroupSquares = 1;
  static reg set1(double x) { return _mm256_set1_pd(x); }
  static reg zero() { return _mm256_setzero_pd(); }
  static reg load(const double* p) { return _mm256_loadu_pd(p); }
  static reg load_n(const double* p, std::size_t k) { return _mm256_maskload_pd(p, tail_mask(static_cast<long long>(k))); }
  static void store(double* p, reg v) { _mm256_storeu_pd(p, v); }
  static void store_n(double* p, reg v, std::size_t k) {
    _mm256_maskstore_pd(p, tail_mask(static_cast<long long>(k)), v);
  }
  static reg mul(reg a, reg b) { return _mm256_mul_pd(a, b); }
  static reg fma(reg a, reg b, reg c) { return _mm256_fmadd_pd(a, b, c); }
  static reg fnma(reg a, reg b, reg c) { return _mm256_fnmadd_pd(a, b, c); }
  static reg fms(reg a, reg b, reg c) { return _mm256_fmsub_pd(a, b, c); }
  static void sincos(reg x, reg& s, reg& c) {
    const Sleef___m256d_2 r = Sleef_sincosd4_u10avx2(reduce_2pi<Avx2>(x));
    s = r.x;
    c = r.y;
  }
  static reg round(reg x) { return _mm256_round_pd(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static reg floor(reg x) { return _mm256_floor_pd(x); }
  static reg cos(reg x) { return poly_cos<Avx2>(x); }
  static reg sin(reg x) { return poly_sin<Avx2>(x); }
};

}  // namespace

const VecKernels kAvx2Kernels = {"avx2",      4,              sincos256, cos256,   log256,
                                 sincospi256, sincos_fast256, dot_t256, dot_u256, grid256,
                                 cos_sums_v<Avx2>, grid_tables<Avx2>, cos_sums_grid_v<Avx2>,
    sin_sums_v<Avx2>, sin_sums_grid_v<Avx2>};

}  // namespace ropekit::detail
