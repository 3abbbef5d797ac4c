#pragma once
// Vectorised double-precision sine and cosine over arrays (SLEEF, max error 1.0 ulp), with a
// scalar std::sin/std::cos fallback when the build targets a CPU without AVX.

#include <cstddef>

namespace ropekit {

/// s[i] = sin(x[i]), c[i] = cos(x[i]) for i < n. Any of the arrays may alias none of the others.
void sincos_array(const double* x, double* s, double* c, std::size_t n);

/// c[i] = cos(x[i]) for i < n (c may equal x).
void cos_array(const double* x, double* c, std::size_t n);

/// The SIMD width in doubles this build uses (8: AVX-512, 4: AVX/AVX2, 1: scalar fallback).
int simd_width();

}  // namespace ropekit
