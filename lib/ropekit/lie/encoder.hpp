#pragma once
// R(x) = exp(sum_i x_i B_i) of a generator set and the kernel it induces, Phi(dx) = tr R(dx) / n (spec nd-rope.md
// section 1): closed form on the maximal torus, else the matrix exponential.

#include <optional>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "ropekit/core/budget.hpp"
#include "ropekit/core/error.hpp"
#include "ropekit/lie/generators.hpp"

namespace ropekit {

// ------------------------------------------------------------------------------------------------
// R(x) and the induced kernel.

enum class Route {
  automatic,    ///< closed form when available, else matrix exponential
  closed_form,  ///< Q diag_b(R(w_b . x)) Q^T; only for a torus with an orthogonal (or no) Q
  matrix_exp,   ///< exp(sum_i x_i B_i) by Eigen's MatrixFunctions (scaling and squaring, Pade 13)
};

/// The --route option of `ropekit lie check | kernel` (and ropekit.lie_check): "auto", "closed-form" or "matrix-exp".
/// @throws InputError "<command>: --route = '<text>' (must be auto, closed-form or matrix-exp)".
Route parse_route_option(const std::string& command, const std::string& text);

/// Precomputes B_i = Q T_i Q^T and, when the T_i are exactly on the maximal torus and Q is orthogonal to
/// the tolerance of LieCheck::orthogonal, the frequencies for the closed form.
class Encoder {
 public:
  /// @throws InputError if the set is invalid.
  explicit Encoder(const GeneratorSet& set);

  /// R(x), n x n. @throws InputError for x.size() != N, or Route::closed_form without a closed form.
  Eigen::MatrixXd operator()(const Eigen::VectorXd& x, Route route = Route::automatic) const;
  /// Phi(dx) = tr R(dx) / n; closed form (2/n) sum_b cos(w_b . dx) on the torus.
  double kernel(const Eigen::VectorXd& dx, Route route = Route::automatic) const;

  bool has_closed_form() const { return frequencies_.has_value(); }
  const std::optional<Eigen::MatrixXd>& frequencies() const { return frequencies_; }  ///< N x n/2
  const std::vector<Eigen::MatrixXd>& acting() const { return acting_; }
  int dim() const { return dim_; }
  int axes() const { return static_cast<int>(acting_.size()); }
  /// The route that `route` resolves to. @throws InputError for closed_form without a closed form, naming
  /// `where`'s spelling of "route".
  Route resolve(Route route, const Where& where = Where("generator encoder")) const;

 private:
  int dim_ = 0;
  std::vector<Eigen::MatrixXd> acting_;      // B_i, n x n
  std::optional<Eigen::MatrixXd> mixing_;    // Q, n x n
  std::optional<Eigen::MatrixXd> frequencies_;
};

/// The largest scale s = sum_i |x_i| |B_i|_2 of a position x (or offset) that the float64 checks can resolve:
/// 1 / (16 sqrt(n) eps). Beyond it rounding of the phases (about s eps) is no longer small against the
/// 1/sqrt(n) resolution of Phi = tr R / n, and the relativity tolerance 32 n eps (1 + s) exceeds 2 sqrt(n),
/// the largest defect orthogonal R can show, so relativity could not fail.
double max_position_scale(int n);

/// Estimated memory and run time of induced_kernel for `rows` offsets (budget.hpp): per offset the
/// closed form's N n/2 phases, or one matrix exponential of about (10 + squarings) 2 n^3 flops.
Cost induced_kernel_cost(const GeneratorSet& set, double rows, double max_offset, Route route);

/// The checks induced_kernel makes before any work: a valid set with a usable Q, the route, and every offset's
/// scale sum_i |dx_i| |B_i|_2 within max_position_scale(n). @throws InputError naming "offsets" or "route" as
/// `where` spells them.
void check_offsets(const GeneratorSet& set, const Eigen::MatrixXd& offsets, Route route, const Where& where);

/// Phi at each row of offsets (rows = K, cols = N): K values. @throws InputError as check_offsets.
Eigen::VectorXd induced_kernel(const GeneratorSet& set, const Eigen::MatrixXd& offsets, Route route = Route::automatic,
                               const Where& where = Where("induced kernel"));

/// The frequencies W (N x n/2) if every T_i is exactly diag_b(w J) (entries outside the 2x2 diagonal blocks
/// zero, each block [[0, -w], [w, 0]] to the bit), else nullopt.
std::optional<Eigen::MatrixXd> detect_torus(const std::vector<Eigen::MatrixXd>& T);

}  // namespace ropekit
