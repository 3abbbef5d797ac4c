#pragma once
// Feature columns of a fixed relative-position basis at integer causal lags
// (Jordan-RoPE paper, sections 5.2-5.5; spec fixed-basis.md sections 1-2).
// Columns of an order-m Jordan method are the first block row of the realified exp(d J_m),
// J_m = (-gamma + i omega) I + eta N_m (paper section 3.3), with the weights absorbing eta.

#include <optional>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "ropekit/core/error.hpp"
#include "ropekit/encodings/method.hpp"

namespace ropekit {

/// Run parameters shared by every method of a probe.
struct BasisParams {
  int num_freqs = 16;        ///< 1 <= F <= kMaxNumFreqs: frequencies omega_k, k = 0..F-1
  int head_dim = 64;         ///< h, positive and even: grid omega_k = base^(-2k/h) (h, not 2F)
  double base = 1e4;         ///< RoPE base B (config key position.theta, option --theta), finite, > 0
  double gamma = 1e-4;       ///< damping of E = exp(-gamma d), finite, >= 0
  int train_context = 1024;  ///< L >= 1: x = d/L
  bool bounded_tau = true;   ///< shear time tau = d/(1+d/L) (stabilized) or d (raw)
  /// Shear rate of that = eta tau; default 1/train_context. Given: finite, > 0, 1/eta finite, and method::Jordan's
  /// columns use eta tau(d), tau(d) = d/(1 + d/L) (bounded) or eta d (raw); every other method keeps x = d/L and its that.
  std::optional<double> eta;
  /// Explicit frequencies (an encoding's scaled or listed schedule) instead of the grid; size = num_freqs,
  /// each finite and > 0. Empty: the grid base^(-2k/h).
  std::optional<Eigen::VectorXd> omega;

  /// @throws InputError naming the first broken constraint, spelled by `where` (num_freqs -> --num-freqs).
  void validate(const Where& where = Where("basis parameters")) const;
  /// omega_k = base^(-2k/h), k = 0..F-1 (descending from omega_0 = 1 when base > 1), or `omega` when given.
  Eigen::VectorXd frequencies() const;
  /// The largest omega_k: 1, or base^(-2(F-1)/h) when base < 1 (max of `omega` when given).
  double max_frequency() const;
};

/// Largest F: every method's column count 1 + 2 m F (m <= 32) stays an int. Memory bounds F far below.
inline constexpr int kMaxNumFreqs = 1 << 24;

/// Number of feature columns of `method` under `params` (spec section 2, column "count").
int n_features(const Method& method, const BasisParams& params);

/// Bytes that BasisEvaluator(params, `rows` lags).features(method) holds: the trigonometric tables
/// (2 F per lag), the feature matrix and the working columns. Double arithmetic: never overflows.
double features_bytes(const Method& method, const BasisParams& params, double rows);

/// ln of the largest |column| of `method` at lag d >= 0 (0 for bounded columns): the powers of raw shear
/// time, (x^p/p!) e^{-gamma d} or e^{-c x}, and x^p, are the only columns that can leave float64.
double log_max_column(const Method& method, const BasisParams& params, double d);

/// A lag at which a column would exceed the float64 range (log_max_column > ln DBL_MAX, or a phase
/// omega_k d beyond DBL_MAX), and the largest lag below it at which every column is still finite.
struct LagOverflow {
  double lag = 0;     ///< the first such lag of the list
  double limit = 0;   ///< largest d in [0, lag] with every column finite (to ~1e-9 relative)
  std::string cause;  ///< "the phase omega_k d" or "a power of the raw shear time"
};
std::optional<LagOverflow> find_lag_overflow(const Method& method, const BasisParams& params,
                                             const Eigen::VectorXd& lags);

/// Column names in order, e.g. "1", "cos0", "sin0", "x", "E", "that*E", "that^2/2!*E*cos3", "x*e^-cx*sin1".
std::vector<std::string> feature_names(const Method& method, const BasisParams& params);

/// Evaluates many methods on one lag grid, computing the trigonometric table once.
class BasisEvaluator {
 public:
  /// @param lags finite and >= 0 (causal lags; integers in the paper's probes).
  /// @throws InputError on invalid params or lags. features() throws InputError where a column would leave
  ///         the float64 range (see find_lag_overflow, which callers use to refuse such lags up front).
  BasisEvaluator(const BasisParams& params, Eigen::VectorXd lags);

  /// rows = lags.size(), cols = n_features(method, params), in the spec's column order.
  Eigen::MatrixXd features(const Method& method) const;
  /// The rows [first, first + count) of features(method), computed alone (bounded memory for long grids).
  Eigen::MatrixXd features(const Method& method, Eigen::Index first, Eigen::Index count) const;

  /// features(method::Rope{}) without a copy: the table itself (1, cos, sin), the evaluator left without it.
  Eigen::MatrixXd take_rope_features() &&;

  const BasisParams& params() const { return params_; }
  const Eigen::VectorXd& lags() const { return lags_; }

 private:
  BasisParams params_;
  Eigen::VectorXd lags_;
  /// rows = lags, cols = 1 + 2F: 1, cos(omega_k d), sin(omega_k d): plain RoPE's features, in their order.
  Eigen::MatrixXd table_;
  Eigen::Index F_ = 0;
};

/// One-shot convenience: BasisEvaluator(params, lags).features(method).
Eigen::MatrixXd features(const Method& method, const BasisParams& params, const Eigen::VectorXd& lags);

}  // namespace ropekit
