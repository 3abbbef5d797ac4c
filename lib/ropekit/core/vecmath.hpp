#pragma once
// Vectorised double-precision sine and cosine over arrays (SLEEF, max error 1.0 ulp), with a
// scalar std::sin/std::cos fallback when the build targets a CPU without AVX; plus the fused
// RF-RoPE score kernels sum_i a_i cos(t w_i) + b_i sin(t w_i) that the Monte Carlo runs spend their time in.

#include <cstddef>

namespace ropekit {

/// s[i] = sin(x[i]), c[i] = cos(x[i]) for i < n. Any of the arrays may alias none of the others.
void sincos_array(const double* x, double* s, double* c, std::size_t n);

/// c[i] = cos(x[i]) for i < n (c may equal x).
void cos_array(const double* x, double* c, std::size_t n);

/// y[i] = log(x[i]) for i < n (SLEEF, 1 ulp; y may equal x).
void log_array(const double* x, double* y, std::size_t n);

/// s[i] = sin(pi x[i]), c[i] = cos(pi x[i]) for i < n (SLEEF, 0.5 ulp: the phase pi x is never rounded).
void sincospi_array(const double* x, double* s, double* c, std::size_t n);

/// Up to this |x| the fused kernels below use ropekit's own AVX-512 sincos (Cody-Waite reduction by a
/// three-part pi/2 with FMA, Taylor polynomials of degree 17 and 18 on [-pi/4, pi/4]). Measured against
/// long double over |x| <= 2e9 (tests/test_vecmath.cpp): absolute error below 1.4e-16, at most 1.5 ulp where
/// |result| > 1e-3 (SLEEF u10: 0.9 ulp), four times faster than SLEEF u10. Beyond kFastSincosMax, and for
/// inf/NaN, SLEEF's 1-ulp sincos. Builds without AVX-512DQ use SLEEF or std:: throughout.
constexpr double kFastSincosMax = 0x1p30;

/// s[i], c[i] = sin, cos of x[i] by the fused kernels' sincos (see kFastSincosMax), for tests and benchmarks.
void sincos_array_fast(const double* x, double* s, double* c, std::size_t n);

/// sum_i a[i] cos(t w[i]) + b[i] sin(t w[i]) over i < n: one RF-RoPE score (spec rf-rope.md section 1,
/// S = sum_i A_i cos u_i + B_i sin u_i with u_i = t w_i). The summation order depends on n only
/// (eight lane sums, then a fixed reduction), never on threads or alignment.
double dot_cos_sin(double t, const double* w, const double* a, const double* b, std::size_t n);

/// The same with the phases given: sum_i a[i] cos(u[i]) + b[i] sin(u[i]).
double dot_cos_sin(const double* u, const double* a, const double* b, std::size_t n);

/// out[m] = dot_cos_sin(t[m], w, a, b, n) for m < count on an evenly spaced grid t[m] = t[0] + m h,
/// by the angle-addition recurrence (cos, sin)(t[m+1] w) = rotation of (cos, sin)(t[m] w) by h w,
/// re-anchored with exact sincos every kAnchor steps so that rounding cannot accumulate beyond
/// about kAnchor * 2 eps per term. `scratch` holds count * 8 doubles. Requires count >= 2 and
/// t[m] == t[0] + m (t[1] - t[0]) exactly (see is_even_grid).
void dot_cos_sin_grid(const double* t, std::size_t count, const double* w, const double* a, const double* b,
                      std::size_t n, double* out, double* scratch);
constexpr std::size_t kAnchor = 32;

/// True if count >= 2 and every t[m] equals t[0] + m (t[1] - t[0]) exactly, with t[1] != t[0].
bool is_even_grid(const double* t, std::size_t count);

/// The SIMD width in doubles this build uses (8: AVX-512, 4: AVX/AVX2, 1: scalar fallback).
int simd_width();

}  // namespace ropekit
