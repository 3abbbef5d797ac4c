#pragma once
// Internal to vecmath: the kernel sums sum_i a_i cos(t w_i) (and sum_i b_i cos^2(t w_i)) written once over a
// register type V, included by each vecmath_<isa>.cpp with its own V. Lags sit in a register's lanes and each lag
// adds its terms in order i = 0, 1, ... (no horizontal reduction, the same order on every path). Everything here
// has internal linkage and this header includes nothing, so no function compiled with one ISA's flags can be merged
// into another's (see vecmath_kernels.hpp).
//
// V provides: reg, W (doubles per register), kGroup / kGroupSquares (tiles per pass of the grid kernel, as its
// registers allow), set1, zero, load, load_n / store_n (the first k < W lanes; others read 0, never written),
// store, mul, fma (a b + c), fnma (c - a b), fms (a b - c), round (to nearest), floor, sincos (accurate: the 2 pi
// reduction then a 1-ulp sincos), cos and sin (poly_cos, poly_sin below on the vector paths, glibc's on the scalar).

#include <cstddef>

#include "ropekit/core/vecmath_kernels.hpp"

namespace ropekit::detail {

namespace {

template <class V>
inline typename V::reg load_k(const double* p, std::size_t k) {
  return k == V::W ? V::load(p) : V::load_n(p, k);
}
template <class V>
inline void store_k(double* p, typename V::reg v, std::size_t k) {
  if (k == V::W) {
    V::store(p, v);
  } else {
    V::store_n(p, v, k);
  }
}
inline std::size_t lanes_left(std::size_t count, std::size_t m, std::size_t w) {
  return m >= count ? 0 : (count - m < w ? count - m : w);
}

// x - 2 pi k, k the integer nearest x / 2 pi, for |x| <= 1e14 (the kernel sums' callers' range): k C1 is exact in
// the FMA and x - k C1 needs at most 53 bits (|.| < 8, C1's last bit 2^-50), so the only roundings are the C2
// product's and half an ulp; the next term of 2 pi (1e-32 k) is below 2e-19. SLEEF's sincos (V::sincos) then takes
// its |x| <= pi path.
template <class V>
inline typename V::reg reduce_2pi(typename V::reg x) {
  const typename V::reg k = V::round(V::mul(x, V::set1(0.15915494309189535)));
  const typename V::reg r = V::fnma(k, V::set1(6.283185307179586), x);
  return V::fnma(k, V::set1(2.4492935982947064e-16), r);
}

// sin r for |r| <= pi/2 (a rounding beyond): its Taylor polynomial to r^23 (truncation (pi/2)^25 / 25! < 1e-20).
template <class V>
inline typename V::reg taylor_sin(typename V::reg r) {
  using reg = typename V::reg;
  const reg z = V::mul(r, r);
  // sin r = r - r^3 P(z), P(z) = sum_j (-1)^j z^j / (2j+3)! for j = 10 .. 0 (Horner, highest first).
  reg p = V::set1(1.0 / 25852016738884976640000.0);         // 1/23!
  p = V::fma(p, z, V::set1(-1.0 / 51090942171709440000.0));  // -1/21!
  p = V::fma(p, z, V::set1(1.0 / 121645100408832000.0));     // 1/19!
  p = V::fma(p, z, V::set1(-1.0 / 355687428096000.0));       // -1/17!
  p = V::fma(p, z, V::set1(1.0 / 1307674368000.0));          // 1/15!
  p = V::fma(p, z, V::set1(-1.0 / 6227020800.0));            // -1/13!
  p = V::fma(p, z, V::set1(1.0 / 39916800.0));               // 1/11!
  p = V::fma(p, z, V::set1(-1.0 / 362880.0));                // -1/9!
  p = V::fma(p, z, V::set1(1.0 / 5040.0));                   // 1/7!
  p = V::fma(p, z, V::set1(-1.0 / 120.0));                   // -1/5!
  p = V::fma(p, z, V::set1(1.0 / 6.0));                      // 1/3!
  return V::fnma(V::mul(r, z), p, r);                        // r - r^3 (1/3! - ...)
}

// x = r + q pi/2 for the integer q of a given parity nearest x 2/pi, r by two FMA steps of pi/2 = P1 + P2 (q P_j
// exact inside the FMA; the rest of pi/2, 1e-33, times |q| <= 1e14 is below 1e-19), so |r| <= pi/2 (a rounding of
// k aside): cos(r + q pi/2) = (-1)^(k+1) sin r for odd q = 2k + 1, sin(r + q pi/2) = (-1)^k sin r for even q = 2k.
// For |x| <= 1e14 (the kernel sums' callers' range). Inline: a library call (SLEEF's) spills every vector
// register, and the AVX2 path ran at 2.2x numpy on SLEEF's u35 cosine.
template <class V, bool Odd>
inline typename V::reg reduced_sin(typename V::reg x) {
  using reg = typename V::reg;
  // k = rint(x/pi - 1/2) for the odd q, rint(x/pi) for the even one.
  const reg k = Odd ? V::round(V::fms(x, V::set1(0x1.45f306dc9c883p-2), V::set1(0.5)))
                    : V::round(V::mul(x, V::set1(0x1.45f306dc9c883p-2)));
  const reg q = Odd ? V::fma(V::set1(2.0), k, V::set1(1.0)) : V::mul(V::set1(2.0), k);
  reg r = V::fnma(q, V::set1(0x1.921fb54442d18p+0), x);
  r = V::fnma(q, V::set1(0x1.1a62633145c07p-54), r);
  // (-1)^k = 1 - 2 (k mod 2), k mod 2 = k - 2 floor(k / 2); the cosine's sign is its opposite.
  const reg parity = V::fnma(V::set1(2.0), V::floor(V::mul(k, V::set1(0.5))), k);
  const reg sign = Odd ? V::fma(V::set1(2.0), parity, V::set1(-1.0)) : V::fnma(V::set1(2.0), parity, V::set1(1.0));
  return V::mul(sign, taylor_sin<V>(r));
}

template <class V>
inline typename V::reg poly_cos(typename V::reg x) {
  return reduced_sin<V, true>(x);
}
template <class V>
inline typename V::reg poly_sin(typename V::reg x) {
  return reduced_sin<V, false>(x);
}

// out_a[m] += sum_i a_i cos(t_m w_i), and with Squares out_b[m] += sum_i b_i cos^2(t_m w_i): W lags at a time.
// With Sine, sin for cos (no squares).
template <class V, bool Squares, bool Sine = false>
void cos_sums_lags(const double* t, std::size_t count, const double* w, const double* a, const double* b,
                   std::size_t n, double* out_a, double* out_b) {
  for (std::size_t m = 0; m < count; m += V::W) {
    const std::size_t k = lanes_left(count, m, V::W);
    const typename V::reg vt = load_k<V>(t + m, k);
    typename V::reg acc_a = load_k<V>(out_a + m, k), acc_b = V::zero();
    if constexpr (Squares) acc_b = load_k<V>(out_b + m, k);
    for (std::size_t i = 0; i < n; ++i) {
      const typename V::reg x = V::mul(vt, V::set1(w[i]));
      const typename V::reg c = Sine ? V::sin(x) : V::cos(x);
      acc_a = V::fma(V::set1(a[i]), c, acc_a);
      if constexpr (Squares) acc_b = V::fma(V::set1(b[i]), V::mul(c, c), acc_b);
    }
    store_k<V>(out_a + m, acc_a, k);
    if constexpr (Squares) store_k<V>(out_b + m, acc_b, k);
  }
}

// The grid kernel's layout: a tile is kTileVectors registers of lags; per pair i the tile's offset table
// C_j = cos(w_i j h), S_j = sin(w_i j h) (j < tile) at tables + 2 tile i, then per r < kGridSuper the rotations
// (cos, sin)(w_i r tile h) at tables + 2 tile n + 2 r n (+ n for the sines).
constexpr std::size_t kTileVectors = 4;

template <class V>
constexpr std::size_t tile() {
  return kTileVectors * V::W;
}

// f(i, k) for each register of pairs from i = 0 (k lanes valid).
template <class V, class F>
inline void over_pairs(std::size_t n, F f) {
  for (std::size_t i = 0; i < n; i += V::W) f(i, lanes_left(n, i, V::W));
}

// x[0..k) <- cos, s[0..k) <- sin of the phases held in x.
template <class V>
inline void sincos_in_place(double* x, double* s, std::size_t k) {
  typename V::reg vs, vc;
  V::sincos(load_k<V>(x, k), vs, vc);
  store_k<V>(x, vc, k);
  store_k<V>(s, vs, k);
}

template <class V>
void grid_tables(double h, const double* w, std::size_t n, double* tables) {
  constexpr std::size_t T = tile<V>();
  for (std::size_t i = 0; i < n; ++i) {
    double* c = tables + 2 * T * i;
    for (std::size_t j = 0; j < T; ++j) c[j] = w[i] * (static_cast<double>(j) * h);
    for (std::size_t j = 0; j < T; j += V::W) sincos_in_place<V>(c + j, c + T + j, V::W);
  }
  for (std::size_t r = 0; r < kGridSuper; ++r) {
    double* c = tables + 2 * T * n + 2 * r * n;
    const double step = static_cast<double>(r * T) * h;
    for (std::size_t i = 0; i < n; ++i) c[i] = w[i] * step;
    over_pairs<V>(n, [&](std::size_t i, std::size_t k) { sincos_in_place<V>(c + i, c + n + i, k); });
  }
}

// G tiles from tile q: per pair, the anchors (cos, sin)(w_i t_a) of each tile broadcast and the pair's offset table
// loaded once for all G; the term of lag t_a + j h is c_a C_j - s_a S_j (angle addition). Without Squares the
// anchors carry the weight a_i already.
template <class V, bool Squares, std::size_t G, bool Sine = false>
void grid_pass(std::size_t q, std::size_t count, const double* a, const double* b, std::size_t n,
               const double* tables, const double* anchors, double* out_a, double* out_b) {
  constexpr std::size_t T = tile<V>();
  using reg = typename V::reg;
  reg acc_a[G][kTileVectors], acc_b[G][kTileVectors];
  std::size_t k[G][kTileVectors];
  for (std::size_t g = 0; g < G; ++g) {
    for (std::size_t v = 0; v < kTileVectors; ++v) {
      const std::size_t m = (q + g) * T + v * V::W;
      k[g][v] = lanes_left(count, m, V::W);
      acc_a[g][v] = k[g][v] ? load_k<V>(out_a + m, k[g][v]) : V::zero();
      acc_b[g][v] = V::zero();
      if constexpr (Squares) {
        if (k[g][v]) acc_b[g][v] = load_k<V>(out_b + m, k[g][v]);
      }
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    const double* c = tables + 2 * T * i;
    reg ac[G], as[G];
    for (std::size_t g = 0; g < G; ++g) {
      ac[g] = V::set1(anchors[2 * n * g + i]);
      as[g] = V::set1(anchors[2 * n * g + n + i]);
    }
    for (std::size_t v = 0; v < kTileVectors; ++v) {
      const reg cv = V::load(c + v * V::W), sv = V::load(c + T + v * V::W);
      for (std::size_t g = 0; g < G; ++g) {
        if constexpr (Squares) {
          const reg x = V::fms(ac[g], cv, V::mul(as[g], sv));
          acc_a[g][v] = V::fma(V::set1(a[i]), x, acc_a[g][v]);
          acc_b[g][v] = V::fma(V::mul(V::set1(b[i]), x), x, acc_b[g][v]);
        } else if constexpr (Sine) {
          acc_a[g][v] = V::fma(as[g], cv, V::fma(ac[g], sv, acc_a[g][v]));  // sin(x + y) = s_a C + c_a S
        } else {
          acc_a[g][v] = V::fnma(as[g], sv, V::fma(ac[g], cv, acc_a[g][v]));
        }
      }
    }
  }
  for (std::size_t g = 0; g < G; ++g) {
    for (std::size_t v = 0; v < kTileVectors; ++v) {
      if (!k[g][v]) continue;
      const std::size_t m = (q + g) * T + v * V::W;
      store_k<V>(out_a + m, acc_a[g][v], k[g][v]);
      if constexpr (Squares) store_k<V>(out_b + m, acc_b[g][v], k[g][v]);
    }
  }
}

// The sums over an exact even grid t_m = t_0 + m h (tables from grid_tables with this h): each tile's anchor is
// a sincos at every kGridSuper-th tile (of w_i t at its first lag) rotated by the table's (r tile h) rotation.
// `work` holds 2 n (1 + max G) doubles.
template <class V, bool Squares, bool Sine = false>
void cos_sums_tiles(const double* t, std::size_t count, const double* a, const double* b, std::size_t n,
                    const double* w, const double* tables, double* out_a, double* out_b, double* work) {
  constexpr std::size_t T = tile<V>();
  constexpr std::size_t G = Squares ? V::kGroupSquares : V::kGroup;
  double* sup = work;        // cos, sin of the last sincos anchor
  double* anchors = work + 2 * n;  // per tile of the pass: cos, sin (times a without Squares)
  const std::size_t tiles = (count + T - 1) / T;
  for (std::size_t q = 0; q < tiles; q += G) {
    const std::size_t g_count = tiles - q < G ? tiles - q : G;
    for (std::size_t g = 0; g < g_count; ++g) {
      const std::size_t r = (q + g) % kGridSuper;
      if (r == 0) {
        const double t_a = t[(q + g) * T];
        over_pairs<V>(n, [&](std::size_t i, std::size_t k) {
          typename V::reg s, c;
          V::sincos(V::mul(V::set1(t_a), load_k<V>(w + i, k)), s, c);
          store_k<V>(sup + i, c, k);
          store_k<V>(sup + n + i, s, k);
        });
      }
      const double* rot = tables + 2 * T * n + 2 * r * n;
      double* anc = anchors + 2 * n * g;
      over_pairs<V>(n, [&](std::size_t i, std::size_t k) {
        const typename V::reg c0 = load_k<V>(sup + i, k), s0 = load_k<V>(sup + n + i, k);
        const typename V::reg cr = load_k<V>(rot + i, k), sr = load_k<V>(rot + n + i, k);
        typename V::reg c = V::fms(c0, cr, V::mul(s0, sr)), s = V::fma(s0, cr, V::mul(c0, sr));
        if constexpr (!Squares) {
          const typename V::reg va = load_k<V>(a + i, k);
          c = V::mul(va, c);
          s = V::mul(va, s);
        }
        store_k<V>(anc + i, c, k);
        store_k<V>(anc + n + i, s, k);
      });
    }
    if (g_count == G) {
      grid_pass<V, Squares, G, Sine>(q, count, a, b, n, tables, anchors, out_a, out_b);
    } else {
      grid_pass<V, Squares, 1, Sine>(q, count, a, b, n, tables, anchors, out_a, out_b);
    }
  }
}

template <class V>
void cos_sums_grid_v(const double* t, std::size_t count, const double* w, const double* a, const double* b,
                     std::size_t n, const double* tables, double* out_a, double* out_b, double* work) {
  if (b) {
    cos_sums_tiles<V, true>(t, count, a, b, n, w, tables, out_a, out_b, work);
  } else {
    cos_sums_tiles<V, false>(t, count, a, b, n, w, tables, out_a, out_b, work);
  }
}

// out[m] += sum_i a_i sin(t_m w_i): scattered lags, and an exact even grid with its tables.
template <class V>
void sin_sums_v(const double* t, std::size_t count, const double* w, const double* a, std::size_t n, double* out) {
  cos_sums_lags<V, false, true>(t, count, w, a, nullptr, n, out, nullptr);
}
template <class V>
void sin_sums_grid_v(const double* t, std::size_t count, const double* w, const double* a, std::size_t n,
                     const double* tables, double* out, double* work) {
  cos_sums_tiles<V, false, true>(t, count, a, nullptr, n, w, tables, out, nullptr, work);
}

template <class V>
void cos_sums_v(const double* t, std::size_t count, const double* w, const double* a, const double* b, std::size_t n,
                double* out_a, double* out_b) {
  if (b) {
    cos_sums_lags<V, true>(t, count, w, a, b, n, out_a, out_b);
  } else {
    cos_sums_lags<V, false>(t, count, w, a, b, n, out_a, out_b);
  }
}

}  // namespace

}  // namespace ropekit::detail
