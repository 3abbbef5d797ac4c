#pragma once
// Vectorised double-precision sin, cos and log over arrays, and the fused RF-RoPE score kernels
// sum_i a_i cos(t w_i) + b_i sin(t w_i) that the Monte Carlo runs spend their time in.
//
// Three implementations of every kernel, compiled in separate translation units with their own ISA flags
// (vecmath_scalar.cpp, vecmath_avx2.cpp with -mavx2 -mfma, vecmath_avx512.cpp with -mavx512f -mavx512dq),
// one of them chosen at run time from the CPU, once: AVX-512 (F+DQ) if present, else AVX2+FMA, else
// scalar. So a build without -march=native runs the best path of whatever x86-64 runs it. The environment
// variable ROPEKIT_SIMD=scalar|avx2|avx512 forces a path (tests and benchmarks).
//
// Error bounds per path, in ulp of the exact result (SLEEF's documented bounds; glibc's manual lists 1 ulp for
// sin, cos and log on x86-64); tests/core/test_vecmath.cpp checks each path against long double:
//
//   kernel                                 scalar              avx2, avx512
//   sincos_array, cos_array                glibc, 1 ulp        SLEEF u10, 1.0 ulp
//   log_array                              glibc, 1 ulp        SLEEF u10, 1.0 ulp
//   sincospi_array                         2 ulp (see below)   SLEEF u05, 0.506 ulp
//   sincos_array_fast, the fused kernels   glibc, 1 ulp        SLEEF u35, 3.5 ulp
//   cos_sums, sin_sums                     glibc, 1 ulp        ropekit's cos, sin: 2 ulp, 2^-52 absolute (below)
//   CosSumsGrid's tables and anchors       glibc, 1 ulp        SLEEF u10, 1.0 ulp
//
// The fused kernels use SLEEF's 3.5-ulp sincos: a Monte Carlo mean over 20000 trials has a relative
// statistical error near 1e-2, so a few ulp per term cannot be seen. Measured against long double (2^18 random
// angles per range up to |x| = 1e9): at most 2.97 ulp, 1.9e-16 absolute; next to multiples of pi/2 at most
// 1.1 ulp of the tiny result. It replaced ropekit's own Cody-Waite + Taylor polynomial (1.45 ulp), which was
// faster (dot_cos_sin 1.17 against 1.51 ns per angle on AVX-512, 1.59 against 2.58 on AVX2; this machine,
// minimum of 15 runs) but is a polynomial of our own where a library's meets the need; the goals (>= 8x and
// >= 5x the scalar loop) still hold here (9.1x, 5.2x: make bench).
//
// cos_sums (the kernel of a sum of rotations at scattered lags) is the exception: SLEEF's cosine is a call, which
// spills every vector register each term, and the AVX2 path stayed at 2.2x numpy (issue 23 asks 3x); an inline
// cosine (vecmath_cos_sums.hpp: odd-multiple pi/2 reduction by FMA, Taylor sine to r^23) gives 3.7x; the sine
// (even multiples) alike. Measured against long double (2^20 random angles per range, |x| <= 1, 4, ..., 1e14): at
// most 1.99 ulp (cos) and 1.93 ulp (sin) for |x| <= 1e9, and at most 2.22e-16 absolute everywhere (near the zeros of huge angles the reduction's rounding, 1e-19 absolute, dominates the
// tiny result); the kernel sums need the absolute bound.

#include <cstddef>
#include <string_view>
#include <vector>

namespace ropekit {

namespace detail {
struct VecKernels;
}

/// The kernel implementations, by the widest instruction set they use.
enum class SimdPath { scalar, avx2, avx512 };

/// The path the kernels run (the CPU's best, or ROPEKIT_SIMD's). Chosen on the first call of any kernel.
/// @throws InputError if ROPEKIT_SIMD is set to an unknown name or to a path this CPU lacks.
SimdPath simd_path();
/// "scalar", "avx2" or "avx512" (the words of ROPEKIT_SIMD).
std::string_view simd_path_name(SimdPath path);
/// True if this CPU (and its OS) runs `path`: scalar always; avx2 needs AVX2 and FMA; avx512 needs AVX-512 F and DQ.
bool simd_path_supported(SimdPath path);
/// The supported paths, narrowest first.
std::vector<SimdPath> supported_simd_paths();
/// Forces `path` for every later kernel call in every thread (tests and benchmarks loop over the paths with it;
/// do not call it while kernels run in other threads).
/// @throws InputError "simd path: path = avx512 (must be supported by this CPU: scalar or avx2)".
void set_simd_path(SimdPath path);
/// The active path's register width in doubles (8: avx512, 4: avx2, 1: scalar).
int simd_width();

/// s[i] = sin(x[i]), c[i] = cos(x[i]) for i < n. Any of the arrays may alias none of the others.
void sincos_array(const double* x, double* s, double* c, std::size_t n);

/// c[i] = cos(x[i]) for i < n (c may equal x).
void cos_array(const double* x, double* c, std::size_t n);

/// y[i] = log(x[i]) for i < n (y may equal x).
void log_array(const double* x, double* y, std::size_t n);

/// s[i] = sin(pi x[i]), c[i] = cos(pi x[i]) for i < n. The phase pi x is never rounded as a whole: the SIMD
/// paths subtract 2 round(x/2) exactly before SLEEF's sincospi (which returns (0, 1) from |x| = 1e9 on); the
/// scalar path subtracts the nearest multiple of 1/2 exactly (Sterbenz), then rounds pi r once (|r| <= 1/4,
/// 0.5 ulp) before glibc's 1-ulp sin/cos: at most 2 ulp. Both give exact zeros at the multiples of 1/2.
void sincospi_array(const double* x, double* s, double* c, std::size_t n);

/// s[i], c[i] = sin, cos of x[i] by the fused kernels' sincos (SLEEF u35 or glibc, see above), for the
/// normal sampler, tests and benchmarks.
void sincos_array_fast(const double* x, double* s, double* c, std::size_t n);

/// sum_i a[i] cos(t w[i]) + b[i] sin(t w[i]) over i < n: one RF-RoPE score (spec rf-rope.md section 1,
/// S = sum_i A_i cos u_i + B_i sin u_i with u_i = t w_i). Every path sums in eight lanes (term i into lane
/// i mod 8, by FMA) and then reduces ((l0+l4) + (l2+l6)) + ((l1+l5) + (l3+l7)): the order depends on n only,
/// never on threads or alignment.
double dot_cos_sin(double t, const double* w, const double* a, const double* b, std::size_t n);

/// The same with the phases given: sum_i a[i] cos(u[i]) + b[i] sin(u[i]).
double dot_cos_sin(const double* u, const double* a, const double* b, std::size_t n);

/// out[m] = dot_cos_sin(t[m], w, a, b, n) for m < count on an evenly spaced grid t[m] = t[0] + m h,
/// by the angle-addition recurrence (cos, sin)(t[m+1] w) = rotation of (cos, sin)(t[m] w) by h w,
/// re-anchored with a direct sincos every kAnchor steps so that rounding cannot accumulate beyond
/// about kAnchor * 2 eps per term. `scratch` holds count * 8 doubles. Requires count >= 2 and
/// t[m] == t[0] + m (t[1] - t[0]) exactly (see is_even_grid).
void dot_cos_sin_grid(const double* t, std::size_t count, const double* w, const double* a, const double* b,
                      std::size_t n, double* out, double* scratch);
constexpr std::size_t kAnchor = 32;

/// A kernel and its content variance from one cosine per term (cos 2x = 2 cos^2 x - 1): for m < count,
/// out_a[m] += sum_i a[i] cos(t[m] w[i]) and, where b is not null, out_b[m] += sum_i b[i] cos^2(t[m] w[i]). The lags
/// sit in a register's lanes and each adds its terms in order i = 0, 1, ... (the same order on every path); each
/// cosine is the fused kernels' of t[m] w[i] rounded once and reduced by 2 pi exactly. Phases |t w| <= 1e14.
void cos_sums(const double* t, std::size_t count, const double* w, const double* a, const double* b, std::size_t n,
              double* out_a, double* out_b);

/// out[m] += sum_i a[i] sin(t[m] w[i]): cos_sums' route with the sine (the same reduction: even multiples of pi/2).
void sin_sums(const double* t, std::size_t count, const double* w, const double* a, std::size_t n, double* out);

/// cos_sums on an exact even grid t[m] = t[0] + m h (is_even_grid), by angle addition from tables made once for
/// (h, w): the lags in tiles of 4 registers (32 lags on AVX-512, 16 on AVX2, 4 scalar), each tile's anchor
/// (cos, sin)(w t_a) a 1-ulp sincos of w t[first lag] every 16 tiles rotated by the table's (cos, sin)(w r tile h), and
/// the term of lag t_a + j h is cos(w t_a) C_j - sin(w t_a) S_j with C_j, S_j = (cos, sin)(w j h) from a 1-ulp
/// sincos. So each term is a product of three 1-ulp values (no recurrence: the error does not grow with the lag
/// count), on the phase fl(w t) + fl(w r tile h) + fl(w j h), apart from fl(w t_m) by at most half an ulp of each.
/// Tables for one path: made on the path active at construction, used there whatever is set later.
class CosSumsGrid {
 public:
  CosSumsGrid(double h, const double* w, std::size_t n);
  /// out_a, out_b as cos_sums for count lags of the grid (t[1] - t[0] == h unless count < 2), with the weights a, b
  /// of the frequencies given at construction.
  void add(const double* t, std::size_t count, const double* a, const double* b, double* out_a, double* out_b);
  /// out[m] += sum_i a[i] sin(t[m] w[i]) on the grid (the term sin(w t_a) C_j + cos(w t_a) S_j).
  void add_sin(const double* t, std::size_t count, const double* a, double* out);

 private:
  const detail::VecKernels* path_;
  const double* w_;
  std::size_t n_;
  std::vector<double> tables_, work_;
};

/// Which function trig_sums adds.
enum class TrigSum { cos, sin };

/// The kernels' sums for any number of lags and pairs, as the encodings call them: out_a[j] += sum_i a[i] f(w[i] t[j])
/// (f cos or sin) and, for cos where b is not null, out_b[j] += sum_i b[i] cos^2(w[i] t[j]). Chunks of 1024 pairs
/// (an even grid's CosSumsGrid tables made once per chunk) and of 8192 lags, Ctrl-C (cancel.hpp) seen between them;
/// a lag chunk whose phases pass 1e14 rad lag by lag in glibc (which reduces any double exactly), the others by
/// sin_sums / cos_sums, or CosSumsGrid when `grid` (the lags are then an exact even grid: is_even_grid).
void add_trig_sums(TrigSum f, const double* t, std::size_t count, const double* w, const double* a, const double* b,
                   std::size_t n, double* out_a, double* out_b, bool grid);

/// True if count >= 2 and every t[m] equals t[0] + m (t[1] - t[0]) exactly, with t[1] != t[0].
bool is_even_grid(const double* t, std::size_t count);

}  // namespace ropekit
