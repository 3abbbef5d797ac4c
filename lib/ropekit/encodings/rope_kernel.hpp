#pragma once
// Deterministic RoPE through the RF-RoPE lens (spec rf-rope.md section 3; RF-RoPE paper, "Analytical
// re-assessment of standard RoPE"). k = 1, frequencies theta_i = B^{-2i/d}, i = 0..D-1, D = d/2.
//  * empirical kernel (1/D) sum_i cos(theta_i Dm): the score for content isotropic across blocks;
//  * sine residual (1/D) sum_i sin(theta_i Dm): non-zero (positive frequencies, no symmetry), which is
//    why RoPE has no exact (q . k) Phi(Dm) form;
//  * continuum kernel: the grid is the left-endpoint quantile grid of the log-uniform density
//    p(theta) = 1/(theta ln B) on [1/B, 1], whose kernel is [Ci(Dm) - Ci(Dm/B)] / ln B
//    = 1 - [Cin(Dm) - Cin(Dm/B)] / ln B, and whose sine transform is [Si(Dm) - Si(Dm/B)] / ln B.

#include <string>
#include <string_view>
#include <vector>

namespace ropekit {

/// Standard RoPE's frequency grid.
struct RopeGrid {
  int dim = 128;      ///< d: positive, even
  double base = 1e4;  ///< B: finite, > 1

  /// @throws InputError naming the first broken constraint.
  void validate() const;
  /// theta_i = base^{-2i/dim}, i = 0..dim/2 - 1 (descending from 1).
  std::vector<double> frequencies() const;
};

struct RopeKernelValues {
  double kernel = 1;          ///< (1/D) sum_i cos(theta_i Dm)
  double sine_residual = 0;   ///< (1/D) sum_i sin(theta_i Dm)
  double continuum = 1;       ///< [Ci(|Dm|) - Ci(|Dm|/B)] / ln B (1 at 0)
  double continuum_sine = 0;  ///< [Si(Dm) - Si(Dm/B)] / ln B
};
/// @throws InputError for an invalid grid or a non-finite lag.
RopeKernelValues rope_kernel(const RopeGrid& grid, double lag);
/// The same with the grid's frequencies given (grid.frequencies(), computed once for many lags).
RopeKernelValues rope_kernel(const RopeGrid& grid, const std::vector<double>& theta, double lag);

/// The sine residual, continuum and continuum sine (any of them null: not computed) of n lags at once: the sine sums
/// through the vector kernels (vecmath.hpp's sin_sums; an exact even grid of lags by CosSumsGrid when `grid`, as
/// rotary_kernel does), the continuum pair per lag (Cin, Si). Interruptible.
/// @throws InputError for an invalid grid or a non-finite lag.
void rope_kernel_columns(const RopeGrid& grid, const std::vector<double>& theta, const double* lags, std::size_t n,
                         double* sine_residual, double* continuum, double* continuum_sine, bool use_grid = false);

}  // namespace ropekit
