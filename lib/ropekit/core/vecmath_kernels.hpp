#pragma once
// Internal to vecmath: one table of kernel entry points per instruction set, each defined in its own
// translation unit compiled with that set's flags (CMakeLists.txt). This header includes nothing that
// defines inline functions, so no function compiled with AVX-512 flags can be merged into the others.

#include <cstddef>

namespace ropekit::detail {

/// vecmath.hpp's kAnchor (the grid kernel's re-anchoring period), here so the ISA files need not include it.
constexpr std::size_t kGridAnchor = 32;
/// cos_sums_grid's layout (vecmath_cos_sums.hpp): tiles of at most kGridTileMax lags, a sincos anchor every
/// kGridSuper tiles; its tables hold n (2 kGridTileMax + 2 kGridSuper) doubles, its work 6 n.
constexpr std::size_t kGridTileMax = 32, kGridSuper = 16;

/// The kernels of vecmath.hpp, same contracts; `name` is the ROPEKIT_SIMD word, `width` doubles per register.
struct VecKernels {
  const char* name;
  int width;
  void (*sincos)(const double* x, double* s, double* c, std::size_t n);
  void (*cos)(const double* x, double* c, std::size_t n);
  void (*log)(const double* x, double* y, std::size_t n);
  void (*sincospi)(const double* x, double* s, double* c, std::size_t n);
  void (*sincos_fast)(const double* x, double* s, double* c, std::size_t n);
  double (*dot_t)(double t, const double* w, const double* a, const double* b, std::size_t n);
  double (*dot_u)(const double* u, const double* a, const double* b, std::size_t n);
  void (*grid)(const double* t, std::size_t count, const double* w, const double* a, const double* b, std::size_t n,
               double* out, double* scratch);
  void (*cos_sums)(const double* t, std::size_t count, const double* w, const double* a, const double* b, std::size_t n,
                   double* out_a, double* out_b);
  void (*cos_sums_grid_tables)(double h, const double* w, std::size_t n, double* tables);
  void (*cos_sums_grid)(const double* t, std::size_t count, const double* w, const double* a, const double* b,
                        std::size_t n, const double* tables, double* out_a, double* out_b, double* work);
  void (*sin_sums)(const double* t, std::size_t count, const double* w, const double* a, std::size_t n, double* out);
  void (*sin_sums_grid)(const double* t, std::size_t count, const double* w, const double* a, std::size_t n,
                        const double* tables, double* out, double* work);
};

extern const VecKernels kScalarKernels;  // vecmath_scalar.cpp: baseline x86-64 flags, glibc
extern const VecKernels kAvx2Kernels;    // vecmath_avx2.cpp: -mavx2 -mfma, SLEEF's avx2 functions
extern const VecKernels kAvx512Kernels;  // vecmath_avx512.cpp: -mavx512f -mavx512dq, SLEEF's avx512f functions

}  // namespace ropekit::detail
