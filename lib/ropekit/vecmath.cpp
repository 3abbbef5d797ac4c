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
